// Package euis is the appliance's client of the EU information system for
// the deforestation regulation (EUDR), which runs on TRACES NT: it files due
// diligence statements and follows them. It is a library of the server's
// DDS workflow: no HTTP server, store or tenants here.
//
// Only API V3 is built: V1 and V2 are decommissioned (Operator API
// Reference V3, section 1.5.2).
//
// # Sources
//
//   - EUDR Information System, Operator API Reference, documentation 1.0,
//     API specification V3, DG ENV, 2026-05-29 ("OpRef"): transport,
//     WS-Security, operations, limits (2.3), lifecycle, types, samples
//     (5.1), validation rules (10.3).
//   - EUDR Downstream Operator and Trader API Reference 1.0 (V3):
//     verifyDeclaration.
//   - The WSDL and XSD the acceptance environment serves for
//     EUDRDueDiligenceStatementServiceV3 and
//     EUDRVerifyDeclarationServiceV3 (release 8.2.1), and the EudrEchoService
//     WSDL: element names, XSD sequences, SOAPActions, fault types.
//   - EUDR DDS, Units of Measure Guidance for Economic Operators (API
//     documents 1.4): net weight, percentage and supplementary units.
//   - Observed behaviour of the acceptance environment, as reported by the
//     authors of the open-source client mfrntic/eudr-api-client
//     (docs/analysis/v3-live-test-plan.md, release-8.2.1-conformance.md):
//     faults arrive as HTTP 500, NotFoundException on reads, statuses are
//     eventually consistent.
//   - For the sandbox's simulated system: docs/dds.md.
//
// # Client
//
// Client is what the server's workflow calls: Submit, Get (at most 100 per
// call), Withdraw, Amend (a filed statement replaced, within the amendment
// window), VerifyDeclaration, Echo, and GetByIdentifiers, the
// look-up of a statement another operator filed by its reference and
// verification numbers. SOAPClient is the real one, Simulator the
// sandbox's. Both also have FindByInternalReference, the way to find a
// statement whose submission answer was lost. SDClient, which both
// implement beside Client, files and follows simplified declarations
// (sd.go; docs/simplified.md).
//
// # Requests
//
// SOAP 1.1 over HTTPS, POSTed to Credentials.Endpoint + "/ws/<service>":
//
//	operation                  service                            SOAPAction
//	submitDds                  EUDRDueDiligenceStatementServiceV3 <NSDDS>/submitDds
//	withdrawDds                EUDRDueDiligenceStatementServiceV3 <NSDDS>/withdrawDds
//	amendDds                   EUDRDueDiligenceStatementServiceV3 <NSDDS>/amendDds
//	getDds                     EUDRDueDiligenceStatementServiceV3 <NSDDS>/getDds
//	getDdsByInternalReference  EUDRDueDiligenceStatementServiceV3 <NSDDS>/getDdsByInternalReference
//	getDdsByIdentifiers        EUDRDueDiligenceStatementServiceV3 <NSDDS>/getDdsByIdentifiers
//	submitSd, withdrawSd       EUDRSimplifiedDeclarationServiceV3 <NSSD>/submitSd, <NSSD>/withdrawSd
//	getSd                      EUDRSimplifiedDeclarationServiceV3 <NSDDS>/getSd
//	getSdByInternalReference   EUDRSimplifiedDeclarationServiceV3 <NSDDS>/getSdByInternalReference
//	verifyDeclaration          EUDRVerifyDeclarationServiceV3     http://ec.europa.eu/tracesnt/certificate/eudr/verification/v3/verify-declaration
//	testEcho                   EudrEchoService                    http://ec.europa.eu/tracesnt/eudr/echo
//
// The SOAPActions are those of the WSDL bindings, quoted as SOAP 1.1 asks.
// The header of every request:
//
//	<wsse:Security>
//	  <wsu:Timestamp wsu:Id="TS-..."><wsu:Created/><wsu:Expires/></wsu:Timestamp>
//	  <wsse:UsernameToken wsu:Id="UT-...">
//	    <wsse:Username/> <wsse:Password Type="...#PasswordDigest"/>
//	    <wsse:Nonce EncodingType="...#Base64Binary"/> <wsu:Created/>
//	  </wsse:UsernameToken>
//	</wsse:Security>
//	<v4:WebServiceClientId/>
//
// Password is Base64(SHA-1(nonce || created || authentication key)) over
// the 16 raw bytes of a nonce drawn afresh for each request and the exact
// text of wsu:Created (UTC, milliseconds); Expires is Created plus 5
// minutes. The information system refuses a Created more than 5 minutes
// from its clock: keep the appliance's clock on NTP.
//
// Bodies are encoding/xml structs whose fields are in the order of the XSD
// sequences (envelope.go), with the prefixes of the reference's samples:
// dds for the statement namespace, eudrCommon for the shared types
// (descriptors, goods measure, represented operator, grouped declaration),
// verify, echo. Geometries are base64-encoded GeoJSON, one
// groupedDeclarations wrapper per referenced statement (reference number
// only: the type has no verification number), positions numbered from 1.
//
// The client waits for its rate limiter before each call: 5 calls per
// second (the limit is per IP address, so the appliance has one
// SOAPClient). It does not retry: the caller's job queue does, with
// IsTransient.
//
// Where an endpoint may point is the caller's policy, enforced by the HTTP
// client: NewHTTPClient's (netguard.NewClient, shared with the webhook
// dispatcher) refuses at dial time to connect to loopback, link-local,
// cloud metadata, multicast and unspecified addresses (netguard.Refused)
// unless HTTPOptions.AllowPrivate. The SOAPClient never follows a redirect,
// whatever client it is given: that would post the UsernameToken to the
// host the Location names.
//
// # Answers and errors
//
// Answers are read by local names, so the prefixes JAX-WS chooses (S, ns3,
// ns5) do not matter, elements the client does not know are skipped, and a
// status it does not know is kept as sent. Errors:
//
//   - *Fault for a SOAP fault (HTTP 500 with a Fault body), of a kind by
//     its detail element: BusinessRulesValidationException (FaultBusinessRules,
//     a rejection; Reasons are the EUDR_... error IDs),
//     PermissionDeniedException (FaultPermissionDenied), NotFoundException
//     (FaultNotFound; Get and FindByInternalReference answer nothing
//     instead), UnauthenticatedException or a WS-Security fault code
//     (FaultAuthentication), an XSD violation (FaultInvalidRequest), any
//     other (FaultServer, as InternalSystemException after a withdrawal).
//   - *HTTPError for an HTTP status without a SOAP fault (proxies, 429), and
//     for a redirect, with its Location.
//   - An error wrapping netguard.ErrTargetNotAllowed for an endpoint the
//     address guard refuses; nothing was sent.
//   - *ProtocolError for a 2xx answer that cannot be read.
//   - Violations for a statement or reference that breaks a rule before
//     anything is sent; ErrNotConfigured (wrapped) for missing credentials.
//
// IsTransient sorts them: FaultServer, 408, 429, 5xx without a fault,
// unreadable answers, timeouts and connection errors are transient; the
// rest is permanent. After a transient error of Submit the statement may
// have been filed all the same: look for it with FindByInternalReference
// before submitting again.
//
// # Validation and splitting
//
// Validate checks every rule of the information system that can be checked
// before filing, and reports each broken one as a Violation with a code,
// the path of the field, the limit and what was found: the size limits
// (MaxCommodities 100, MaxProducersPerCommodity 1,000, MaxProducers 10,000,
// MaxGeolocationBytes 25 MB counted as base64), the internal reference (35
// characters), the HS heading ([0-9]{2,6}), the role and activity values,
// the EORI for IMPORT and EXPORT, IMPORT only for an operator outside the
// EU, the countries (EU27 and XI for the country of activity and border
// crossing), the units-of-measure matrix (net weight, percentage 0-25,
// supplementary units of Appendix I and II), species for wood (Annex I by
// server/risk), producers and geometry types, field lengths, and the
// formats of referenced reference and verification numbers. Split divides
// a statement over the size limits into statements that fit; its doc
// comment states the rule.
//
// # Simulator
//
// Simulator implements the sandbox's EU system (docs/dds.md) over a SimStore
// (key-value; the server backs it with a bbolt bucket) and a clock, so that
// it survives a restart and tests are deterministic. Its doc comment states
// its rules.
package euis
