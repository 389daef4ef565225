package apierr

// Top-level error codes: one per class of failure; a detail's code names
// the case.
const (
	CodeValidationFailed     = "VALIDATION_FAILED"
	CodeUnauthorized         = "UNAUTHORIZED"
	CodeForbidden            = "FORBIDDEN"
	CodeNotFound             = "NOT_FOUND"
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"
	CodeConflict             = "CONFLICT"
	CodePayloadTooLarge      = "PAYLOAD_TOO_LARGE"
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
	CodeBusinessRule         = "BUSINESS_RULE"
	CodeResourceLocked       = "RESOURCE_LOCKED"
	CodeRateLimitExceeded    = "RATE_LIMIT_EXCEEDED"
	CodeInternal             = "INTERNAL"
	CodeServiceUnavailable   = "SERVICE_UNAVAILABLE"
)

// Detail codes: the case within a class.
const (
	DetailRequired               = "REQUIRED"
	DetailInvalidValue           = "INVALID_VALUE"
	DetailUnknownField           = "UNKNOWN_FIELD"
	DetailMalformedJSON          = "MALFORMED_JSON"
	DetailIdempotencyKeyMissing  = "IDEMPOTENCY_KEY_MISSING"
	DetailIdempotencyKeyReused   = "IDEMPOTENCY_KEY_REUSED"
	DetailIdempotencyInProgress  = "IDEMPOTENCY_IN_PROGRESS"
	DetailWrongEnvironment       = "WRONG_ENVIRONMENT"
	DetailKeyRotated             = "KEY_ROTATED"
	DetailJWTRequired            = "JWT_REQUIRED"
	DetailScopeRequired          = "SCOPE_REQUIRED"
	DetailAdminRequired          = "ADMIN_REQUIRED"           // 403: needs the admin role of the organisation
	DetailApplianceAdminRequired = "APPLIANCE_ADMIN_REQUIRED" // 403: needs an appliance administrator
	DetailUserExists             = "USER_EXISTS"              // 409: the username is taken
	DetailCannotDeleteSelf       = "CANNOT_DELETE_SELF"       // 409: a user cannot delete itself
	DetailLastApplianceAdmin     = "LAST_APPLIANCE_ADMIN"     // 409: the last appliance administrator stays
	DetailInvalidCredentials     = "INVALID_CREDENTIALS"      // 401, login: the username or password is wrong
	DetailMissingAPIKey          = "MISSING_API_KEY"          // 401: no API key (nothing, or a login token) where one is needed
	DetailMalformedAPIKey        = "MALFORMED_API_KEY"        // 401: a value not of a key's form, or Authorization without Bearer
	DetailMissingLoginToken      = "MISSING_LOGIN_TOKEN"      // 401: no login token where key management needs one
	DetailMissingSession         = "MISSING_SESSION"          // 401: no console session where the session endpoints need one
	DetailCSRFTokenRequired      = "CSRF_TOKEN_REQUIRED"      // 403: a write signed in by cookie without the session's X-CSRF-Token
	// Batches (docs/batches.md).
	DetailHSCodeNotInAnnexI   = "HS_CODE_NOT_IN_ANNEX_I" // 400: hsCode of no commodity; 422: of another commodity only
	DetailSupplierNotFound    = "SUPPLIER_NOT_FOUND"     // 404: no supplier mapping with that ERP vendor ID
	DetailPolygonNotFound     = "POLYGON_NOT_FOUND"      // 404: no such polygon
	DetailPolygonNotCompliant = "POLYGON_NOT_COMPLIANT"  // 422: a batch polygon is HIGH_RISK or FAILED
	DetailCommodityMismatch   = "COMMODITY_MISMATCH"     // 422: a batch polygon is of another commodity
	DetailPolygonInUse        = "POLYGON_IN_USE"         // 409: a polygon a batch uses cannot be deleted
	// Shipment links and the ledger (docs/ledger.md).
	DetailBatchNotVerified      = "BATCH_NOT_VERIFIED"      // 422: only a VERIFIED batch can be linked
	DetailShipmentAlreadyLinked = "SHIPMENT_ALREADY_LINKED" // 409: another link holds the shipment
	DetailBatchAlreadyLinked    = "BATCH_ALREADY_LINKED"    // 409: another link holds the batch
	DetailProofNotReproducible  = "PROOF_NOT_REPRODUCIBLE"  // 422: evidence that does not verify
	// Archive reports (docs/reports.md).
	DetailReportNotReady = "REPORT_NOT_READY" // 409: the report's job has not written the archive yet
	DetailReportFailed   = "REPORT_FAILED"    // 409: the report's job failed; there is no archive
	// Due-diligence statements (docs/dds.md).
	DetailEUSystemRule          = "EU_SYSTEM_RULE"           // 422: the statement breaks a rule or limit of the EU system
	DetailEUSystemNotConfigured = "EU_SYSTEM_NOT_CONFIGURED" // 422: no EU system credentials (production)
	DetailDDSNotDraft           = "DDS_NOT_DRAFT"            // 409: only a DRAFT can be submitted, once
	DetailDDSNotRevocable       = "DDS_NOT_REVOCABLE"        // 409: not SUBMITTED or VALIDATED, past 72 h, or grouped
	DetailDDSNotAmendable       = "DDS_NOT_AMENDABLE"        // 409: not VALIDATED, past the amendment period, or refused
	// Webhook subscriptions.
	DetailWebhookDuplicate = "WEBHOOK_DUPLICATE"  // 409: a webhook with that URL exists
	DetailTargetNotAllowed = "TARGET_NOT_ALLOWED" // 400: a private, loopback or metadata target
)

// Job error codes: a job's error.code when it failed for good.
const (
	JobFailed                 = "JOB_FAILED"
	JobLedgerConsensusTimeout = "LEDGER_CONSENSUS_TIMEOUT" // a link not anchored within ledger.consensus_timeout
)

// Codes of a failed attempt of a job to reach the EU information system
// (lastAttempt.code of the job and of the statement's submission):
// failures that may go away by themselves, after which the job tries
// again.
const (
	// AttemptEUSystemUnavailable: HTTP 5xx, or a SOAP server fault such as
	// InternalSystemException.
	AttemptEUSystemUnavailable = "EU_SYSTEM_UNAVAILABLE"
	// AttemptEUSystemTimeout: no answer within eu_system.timeout, or HTTP
	// 408 or 504 (a relay gave up waiting).
	AttemptEUSystemTimeout = "EU_SYSTEM_TIMEOUT"
	// AttemptEUSystemUnreachable: no connection (refused, reset, host not
	// found), or one closed before the answer.
	AttemptEUSystemUnreachable = "EU_SYSTEM_UNREACHABLE"
	// AttemptEUSystemRateLimited: HTTP 429.
	AttemptEUSystemRateLimited = "EU_SYSTEM_RATE_LIMITED"
	// AttemptEUSystemUnreadableAnswer: a 2xx answer that is not the SOAP
	// answer asked for (a maintenance page, say).
	AttemptEUSystemUnreadableAnswer = "EU_SYSTEM_UNREADABLE_ANSWER"
)

// The fixed messages of every 401 and every 403, whatever the reason: the
// details say it.
const (
	MsgUnauthorized = "Missing or invalid API key"
	MsgForbidden    = "API key does not have the required scope"
)
