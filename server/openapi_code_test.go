package server

// The OpenAPI document against the code: its schemas say what the Go types
// encode and what the validators, patterns and limits accept
// (TestOpenAPI_MatchesCode).

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/repair"
	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/server/config"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/devca"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/server/report"
	"github.com/eudr/eudr/server/risk"
	"github.com/eudr/eudr/server/shipment"
	"github.com/eudr/eudr/server/webhook"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// Documents the server assembles from more than one Go value, as the Go
// types that encode to the same members (TestOpenAPI_MatchesCode checks
// that they do).
type (
	// oaServedEvidence is the answer of GET /polygons/{polygonId}/evidence:
	// the stored polygon.Evidence with the "ledger" member anchor.WithProof
	// appends.
	oaServedEvidence struct {
		polygon.Evidence
		Ledger *anchor.DocumentLedger `json:"ledger"`
	}
	// oaScreeningEntry and oaShipmentEntry are ledger entries as stored:
	// the fields anchored and the "prev" member ledger.Append adds.
	oaScreeningEntry struct {
		anchor.ScreeningEntry
		Prev string `json:"prev"`
	}
	oaShipmentEntry struct {
		anchor.ShipmentEntry
		Prev string `json:"prev"`
	}
)

// TestOpenAPI_MatchesCode checks the schemas against the Go types and the
// validators they describe.
func TestOpenAPI_MatchesCode(t *testing.T) {
	doc := loadOpenAPI(t)

	t.Run("ErrorCodes", func(t *testing.T) {
		codes, details := oaErrorCodeConstants(t)
		got := oaStrings(oaMust(t, doc, "/components/schemas/Error/properties/code/enum"))
		sort.Strings(got)
		sort.Strings(codes)
		if !slices.Equal(got, codes) {
			t.Errorf("Error.code enum: got %v, want the Code* constants of apierr %v", got, codes)
		}
		desc := oaMust(t, doc, "/components/schemas/ErrorDetail/description").(string)
		intro := oaMust(t, doc, "/info/description").(string)
		for _, d := range details {
			if !strings.Contains(desc, "`"+d+"`") {
				t.Errorf("detail code %s is not listed in ErrorDetail's description", d)
			}
			if !strings.Contains(intro, "`"+d+"`") {
				t.Errorf("detail code %s is not listed in the error table of info.description", d)
			}
		}
	})

	t.Run("Structs", func(t *testing.T) {
		cases := []struct {
			v        any
			schema   string
			response bool
		}{
			{account.LoginRequest{}, "LoginRequest", false},
			{loginResponse{}, "LoginResponse", true},
			{keyCreateRequest{}, "ApiKeyCreateRequest", false},
			{keyResponse{}, "ApiKey", true},
			{keyCreatedResponse{}, "ApiKeyWithValue", true},
			{userCreateRequest{}, "UserCreateRequest", false},
			{userResponse{}, "User", true},
			{userCreatedResponse{}, "UserWithPassword", true},
			{sessionResponse{}, "Session", true},
			{batch.SupplierRequest{}, "SupplierRequest", false},
			{supplierResponse{}, "Supplier", true},
			{healthResponse{}, "Health", true},
			{storeHealth{}, "StoreHealth", true},
			{probeResponse{}, "ProbeStatus", true},
			{apierr.Error{}, "Error", true},
			{apierr.Detail{}, "ErrorDetail", true},
			{webhook.Request{}, "WebhookRequest", false},
			{webhookResponse{}, "Webhook", true},
			{secretResponse{}, "WebhookSecret", true},
			{attemptResponse{}, "WebhookDelivery", true},
			{dlqListResponse{}, "DlqList", true},
			{dlqMessage{}, "DlqMessage", true},
			{webhook.EventIDsRequest{}, "DlqEventIds", false},
			{jobResponse{}, "Job", true},
			{progressBody{}, "JobProgress", true},
			{resultCountsBody{}, "JobResultCounts", true},
			{jobErrorBody{}, "JobError", true},
			{jobAttemptBody{}, "JobAttempt", true},
			{storage.JobError{}, "JobError", true},
			{event.JobFailedData{}, "JobFailedData", true},
			{sandboxEventRequest{}, "SandboxEventRequest", false},
			{sandboxEventResponse{}, "SandboxEventResponse", true},
			{sandboxJobRequest{}, "SandboxJobRequest", false},
			{jobAcceptedResponse{}, "JobAccepted", true},
			{devca.Request{}, "ListenerCertificateRequest", false},
			{listenerCertificateResponse{}, "ListenerCertificate", true},
			{layer.ImportRequest{}, "LayerImportRequest", false},
			{layerResponse{}, "Layer", true},
			{coverageSummary{}, "LayerCoverage", true},
			{polygonsAcceptedResponse{}, "PolygonsAccepted", true},
			{polygonResponse{}, "Polygon", true},
			{riskBody{}, "PolygonRisk", true},
			{polygon.Risk{}, "PolygonRisk", true},
			{polygonStatusResponse{}, "PolygonStatus", true},
			{oaServedEvidence{}, "PolygonEvidence", true},
			{anchor.DocumentLedger{}, "PolygonEvidenceLedger", true},
			{polygon.EvidenceRules{}, "PolygonEvidenceRules", true},
			{polygon.EvidenceRepair{}, "PolygonEvidenceRepair", true},
			{polygonsRepairResponse{}, "PolygonRepair", true},
			{polygon.FeatureRepair{}, "PolygonFeatureRepair", true},
			{repair.Change{}, "PolygonRepairChange", true},
			{repair.Unrepaired{}, "PolygonRepairUnrepaired", true},
			{polygon.EvidenceLayer{}, "PolygonEvidenceLayer", true},
			{polygon.EvidenceOverlap{}, "PolygonEvidenceOverlap", true},
			{polygon.Result{}, "PolygonJobResult", true},
			{event.PolygonVerifiedData{}, "PolygonVerifiedData", true},
			{event.PolygonFailedData{}, "PolygonFailedData", true},
			{batch.Request{}, "BatchRequest", false},
			{batch.QuantityRequest{}, "BatchQuantityRequest", false},
			{batchAcceptedResponse{}, "BatchAccepted", true},
			{batchResponse{}, "Batch", true},
			{batchQuantityBody{}, "BatchQuantity", true},
			{batch.JobResult{}, "BatchJobResult", true},
			{risk.Factor{}, "RiskFactor", true},
			{risk.CountryFactorInputs{}, "CountryFactorInputs", true},
			{risk.CountryPlotsInputs{}, "CountryPlots", true},
			{risk.PlotFactorInputs{}, "PlotFactorInputs", true},
			{risk.SupplierFactorInputs{}, "SupplierFactorInputs", true},
			{batch.RiskAssessment{}, "RiskAssessment", true},
			{batch.DataVersions{}, "RiskDataVersions", true},
			{batch.DataSet{}, "RiskDataSet", true},
			{event.BatchRiskAssessedData{}, "BatchRiskAssessedData", true},
			{shipment.LinkRequest{}, "ShipmentLinkRequest", false},
			{shipmentLinkAccepted{}, "ShipmentLinkAccepted", true},
			{shipmentResponse{}, "Shipment", true},
			{event.ShipmentLinkedData{}, "ShipmentLinkedData", true},
			{checkpointResponse{}, "LedgerCheckpoint", true},
			{publicKeyResponse{}, "LedgerPublicKey", true},
			{entryResponse{}, "LedgerEntry", true},
			{oaScreeningEntry{}, "LedgerEntryPolygonScreened", true},
			{oaShipmentEntry{}, "LedgerEntryShipmentLinked", true},
			{inclusionResponse{}, "LedgerInclusionProof", true},
			{consistencyResponse{}, "LedgerConsistencyProof", true},
			{anchor.Proof{}, "LedgerProof", true},
			{evidenceVerifyResponse{}, "EvidenceVerification", true},
			{dds.DraftRequest{}, "DdsRequest", false},
			{dds.Reference{}, "DdsReference", true},
			{ddsResponse{}, "Dds", true},
			{ddsChangeBody{}, "DdsChange", true},
			{ddsSubmissionBody{}, "DdsSubmission", true},
			{dds.Payload{}, "DdsStatement", true},
			{dds.PayloadOperator{}, "DdsStatementOperator", true},
			{dds.PayloadCommodity{}, "DdsStatementCommodity", true},
			{dds.PayloadProducer{}, "DdsStatementProducer", true},
			{ddsSubmitAccepted{}, "JobAccepted", true},
			{event.DDSSubmittedData{}, "DdsSubmittedData", true},
			{event.DDSValidatedData{}, "DdsValidatedData", true},
			{event.DDSRejectedData{}, "DdsRejectedData", true},
			{event.DDSAmendedData{}, "DdsAmendedData", true},
			{dds.AmendRequest{}, "DdsAmendRequest", false},
			{dds.CommodityChange{}, "DdsCommodityChange", false},
			{oaDDSEntry{}, "LedgerEntryDdsStatus", true},
			{dds.CredentialsRequest{}, "CredentialsRequest", false},
			{dds.CredentialsView{}, "Credentials", true},
			{report.ArchiveRequest{}, "ArchiveRequest", false},
			{archiveAccepted{}, "ArchiveAccepted", true},
			{reportResponse{}, "Report", true},
			{event.ReportReadyData{}, "ReportReadyData", true},
			{report.Manifest{}, "ArchiveManifest", true},
			{report.ManifestFile{}, "ArchiveManifestFile", true},
			{report.DDSLedgerLine{}, "ArchiveDdsLedger", true},
			{report.DDSLedgerEntry{}, "ArchiveDdsLedgerEntry", true},
			{report.Checkpoint{}, "LedgerCheckpoint", true},
			{report.PublicKey{}, "LedgerPublicKey", true},
		}
		for _, c := range cases {
			t.Run(c.schema, func(t *testing.T) {
				oaCheckStruct(t, doc, reflect.TypeOf(c.v), c.schema, c.response)
			})
		}

		// The stand-in types decode what the server assembles, member
		// for member: the evidence with its ledger member, the entries
		// with prev.
		reason := geo.ReasonSelfIntersection
		evidence, err := ledger.CanonicalJSON(polygon.Evidence{FailureReason: &reason, Layers: []polygon.EvidenceLayer{}, Overlaps: []polygon.EvidenceOverlap{}})
		if err != nil {
			t.Fatal(err)
		}
		served, err := anchor.WithProof(nil, storage.Tenant{}, evidence, nil)
		if err != nil {
			t.Fatal(err)
		}
		screened, err := ledger.Canonical(anchor.ScreeningEntry{Type: anchor.EntryPolygonScreened}, "")
		if err != nil {
			t.Fatal(err)
		}
		linked, err := ledger.Canonical(anchor.ShipmentEntry{Type: anchor.EntryShipmentLinked, BillOfLading: "BL", ContainerNumbers: []string{"CSQU3054383"},
			PortOfEntry: "NLRTM", ETA: "2026-12-01"}, strings.Repeat("0", 64))
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []struct {
			data []byte
			v    any
		}{{served, &oaServedEvidence{}}, {screened, &oaScreeningEntry{}}, {linked, &oaShipmentEntry{}}} {
			dec := json.NewDecoder(bytes.NewReader(a.data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(a.v); err != nil {
				t.Errorf("%T does not decode %s: %v", a.v, a.data, err)
				continue
			}
			again, err := ledger.CanonicalJSON(a.v)
			var want map[string]any
			json.Unmarshal(a.data, &want)
			if canon, _ := ledger.CanonicalJSON(want); err != nil || !bytes.Equal(again, canon) {
				t.Errorf("%T encodes %s, the server %s", a.v, again, canon)
			}
		}
	})

	t.Run("Constraints", func(t *testing.T) {
		const sr = "/components/schemas/SupplierRequest/properties/"
		const resp = "/content/application~1json/schema/allOf/1/properties/message/const"
		const pp = "/components/schemas/PolygonFeatureProperties/properties/"
		checks := []struct {
			ptr  string
			want any
		}{
			{sr + "erpVendorId/pattern", batch.ERPVendorIDPattern.String()},
			{sr + "euOperatorUuid/pattern", euis.UUIDPattern.String()},
			{sr + "eori/pattern", batch.EORIPattern.String()},
			{sr + "name/maxLength", float64(batch.MaxSupplierNameLen)},
			{sr + "role/enum", []any{batch.RoleOperator, batch.RoleTrader, nil}},
			{sr + "role/default", batch.RoleOperator},
			{"/components/schemas/Supplier/properties/erpVendorId/pattern", batch.ERPVendorIDPattern.String()},
			{"/components/schemas/Supplier/properties/eori/pattern", batch.EORIPattern.String()},
			{"/components/parameters/ErpVendorId/schema/pattern", batch.ERPVendorIDPattern.String()},
			{"/components/schemas/ApiKeyCreateRequest/properties/name/maxLength", float64(account.MaxKeyNameLen)},
			{"/components/schemas/ApiKeyCreateRequest/properties/scopes/default", []any{account.ScopeRead, account.ScopeWrite}},
			{"/components/schemas/Scope/enum", []any{account.ScopeRead, account.ScopeWrite}},
			{"/components/schemas/Environment/enum", []any{string(storage.Production), string(storage.Sandbox)}},
			{"/components/parameters/Limit/schema/minimum", float64(1)},
			{"/components/parameters/Limit/schema/maximum", float64(maxPageLimit)},
			{"/components/parameters/Limit/schema/default", float64(defaultPageLimit)},
			{"/components/parameters/JobResultsLimit/schema/maximum", float64(maxPageLimit)},
			{"/components/parameters/JobResultsLimit/schema/default", float64(maxPageLimit)},
			{"/components/parameters/IdempotencyKeyRequired/schema/maxLength", float64(maxIdempotencyKeyLen)},
			{"/components/parameters/IdempotencyKeyOptional/schema/maxLength", float64(maxIdempotencyKeyLen)},
			{"/components/schemas/Error/properties/message/maxLength", float64(maxEchoedText)},
			{"/components/schemas/ErrorDetail/properties/field/maxLength", float64(maxEchoedField)},
			{"/components/schemas/ErrorDetail/properties/issue/maxLength", float64(maxEchoedText)},
			{"/components/responses/Unauthorized" + resp, apierr.MsgUnauthorized},
			{"/components/responses/Forbidden" + resp, apierr.MsgForbidden},
			{"/components/schemas/EventType/enum", oaAnys(event.Subscribable...)},
			{"/components/schemas/AnyEventType/enum", oaAnys(append(slices.Clone(event.Subscribable), event.WebhookPing)...)},
			{"/components/schemas/WebhookRequest/properties/targetUrl/maxLength", float64(webhook.MaxTargetURLLen)},
			{"/components/schemas/WebhookRequest/properties/targetUrl/pattern", "^https://"},
			{"/components/schemas/Webhook/properties/status/const", webhookStatusRegistered},
			{"/components/schemas/WebhookDelivery/properties/errorClass/enum", oaAnys("", queue.ErrorClassTimeout,
				queue.ErrorClassConnection, queue.ErrorClassTLS, queue.ErrorClassTargetNotAllowed, queue.ErrorClassHTTPStatus, queue.ErrorClassRedirect)},
			{"/components/schemas/WebhookDelivery/properties/attempt/maximum", float64(queue.MaxAttempts - 1)},
			{"/components/schemas/WebhookEnvelope/properties/attempt/maximum", float64(queue.MaxAttempts - 1)},
			{"/components/schemas/DlqMessage/properties/attempts/maximum", float64(queue.MaxAttempts)},
			{"/components/schemas/Job/properties/status/enum", oaAnys(storage.JobQueued, storage.JobRunning, storage.JobCompleted, storage.JobFailed)},
			{"/components/schemas/DdsSubmission/properties/status/enum", oaAnys(storage.JobQueued, storage.JobRunning, storage.JobFailed)},
			{"/components/parameters/DeliveryLimit/schema/maximum", float64(maxPageLimit)},
			{"/components/parameters/DeliveryLimit/schema/default", float64(defaultPageLimit)},
			{"/components/parameters/DlqLimit/schema/maximum", float64(webhook.MaxDLQLimit)},
			{"/components/parameters/DlqLimit/schema/default", float64(webhook.DefaultDLQLimit)},
			{"/components/parameters/DlqReplayLimit/schema/maximum", float64(webhook.MaxDLQLimit)},
			{"/components/schemas/SandboxJobRequest/properties/items/maximum", float64(maxSandboxItems)},
			{"/components/schemas/SandboxJobRequest/properties/itemMillis/maximum", float64(maxSandboxItemMillis)},
			{"/components/schemas/SandboxJobRequest/properties/failAtItem/maximum", float64(maxSandboxItems - 1)},
			{"/components/schemas/EudrStatus/enum", oaAnys(geo.StatusCompliant, geo.StatusHighRisk, geo.StatusFailed)},
			{"/components/schemas/Commodity/enum", oaAnys(geo.Commodities()...)},
			{pp + "producerName/maxLength", float64(geo.MaxNameLen)},
			{pp + "productionPlace/maxLength", float64(geo.MaxNameLen)},
			{pp + "externalId/maxLength", float64(geo.MaxExternalIDLen)},
			{"/components/schemas/PolygonEvidence/properties/engineVersion/examples", []any{geo.EngineVersion}},
			{"/components/schemas/Polygon/properties/geometryType/enum", oaAnys(geo.TypePolygon, geo.TypeMultiPolygon, geo.TypePoint, geo.TypeMultiPoint)},
			{"/components/schemas/Job/allOf/0/if/properties/type/const", work.PolygonIngestion},
			{"/components/schemas/Job/allOf/0/then/properties/results/items/$ref", "#/components/schemas/PolygonJobResult"},
			{"/components/schemas/Job/allOf/1/if/properties/type/const", work.BatchRiskAssessment},
			{"/components/schemas/Job/allOf/1/then/properties/results/items/$ref", "#/components/schemas/BatchJobResult"},
			{"/components/schemas/BatchStatus/enum", oaAnys(storage.BatchAssessing, storage.BatchVerified, storage.BatchHighRisk)},
			{"/components/schemas/BatchJobResult/properties/status/enum", oaAnys(storage.BatchVerified, storage.BatchHighRisk)},
			{"/components/schemas/RiskLevel/enum", oaAnys(risk.LevelNegligible, risk.LevelNotNegligible)},
			{"/components/schemas/RiskFactorName/enum", oaAnys(risk.FactorCountryBenchmark, risk.FactorPlotRisk, risk.FactorSupplierHistory)},
			{"/components/schemas/CountryPlots/properties/riskClass/enum", oaAnys(risk.CountryLow, risk.CountryStandard, risk.CountryHigh)},
			{"/components/schemas/HsCode/pattern", risk.HSCodePattern.String()},
			{"/components/schemas/SupplementaryUnitType/enum", oaAnys(batch.SupplementaryUnitTypes...)},
			{"/components/schemas/BatchRequest/properties/polygonIds/maxItems", float64(batch.MaxPolygons)},
			{"/components/schemas/BatchRequest/properties/batchReference/maxLength", float64(batch.MaxReferenceLen)},
			{"/components/schemas/BatchRequest/properties/supplierId/pattern", batch.ERPVendorIDPattern.String()},
			{"/components/schemas/BatchQuantityRequest/properties/netMassKg/exclusiveMaximum", float64(batch.MaxQuantity)},
			{"/components/schemas/BatchQuantityRequest/properties/supplementaryUnit/exclusiveMaximum", float64(batch.MaxQuantity)},
			{"/components/schemas/RiskAssessment/properties/engineVersion/examples", []any{risk.EngineVersion}},
			{"/components/schemas/ShipmentId/pattern", shipment.IDPattern.String()},
			{"/components/schemas/ShipmentLinkRequest/properties/shipmentId/$ref", "#/components/schemas/ShipmentId"},
			{"/components/schemas/ContainerNumber/pattern", shipment.ContainerPattern.String()},
			{"/components/schemas/ShipmentLinkRequest/properties/containerNumbers/items/$ref", "#/components/schemas/ContainerNumber"},
			{"/components/schemas/ShipmentLinkRequest/properties/containerNumbers/maxItems", float64(shipment.MaxContainers)},
			{"/components/schemas/UnLocode/pattern", shipment.UNLOCODEPattern.String()},
			{"/components/schemas/Shipment/properties/portOfEntry/pattern", shipment.UNLOCODEPattern.String()},
			{"/components/schemas/ShipmentLinkRequest/properties/billOfLading/maxLength", float64(shipment.MaxBillOfLadingLen)},
			{"/components/schemas/ShipmentLinkStatus/enum", oaAnys(storage.LinkPending, storage.LinkLinked, storage.LinkFailed)},
			{"/components/schemas/Shipment/allOf/0/if/properties/status/const", storage.LinkLinked},
			{"/components/schemas/Job/properties/ledgerProofs/items/$ref", "#/components/schemas/LedgerProof"},
			{"/components/schemas/Job/allOf/2/if/properties/type/const", work.ShipmentLink},
			{"/components/schemas/LedgerEntryPolygonScreened/properties/type/const", anchor.EntryPolygonScreened},
			{"/components/schemas/LedgerEntryShipmentLinked/properties/type/const", anchor.EntryShipmentLinked},
			{"/components/schemas/EvidenceVerification/properties/steps/items/enum", oaAnys(polygon.StepDocument, polygon.StepEntry,
				polygon.StepInclusion, polygon.StepCheckpoint, polygon.StepLog)},
			{"/components/schemas/LedgerEntry/properties/data/contentSchema/$ref", "#/components/schemas/LedgerEntryData"},
			{"/components/schemas/PolygonEvidenceLedger/properties/data/contentSchema/$ref", "#/components/schemas/LedgerEntryPolygonScreened"},
			{"/components/schemas/DdsStatus/enum", oaAnys(storage.DDSDraft, storage.DDSSubmitted, storage.DDSValidated, storage.DDSRejected, storage.DDSRevoked)},
			{"/components/schemas/ActivityType/enum", oaAnys(euis.ActivityImport, euis.ActivityExport, euis.ActivityDomestic)},
			{"/components/schemas/DdsRequest/properties/batchIds/maxItems", float64(dds.MaxBatches)},
			{"/components/schemas/DdsRequest/properties/operatorUuid/pattern", euis.UUIDPattern.String()},
			{"/components/schemas/DdsRequest/properties/internalReference/maxLength", float64(euis.MaxInternalReferenceLen)},
			{"/components/schemas/DdsStatement/properties/internalReferenceNumber/maxLength", float64(euis.MaxInternalReferenceLen)},
			{"/components/schemas/DdsStatement/properties/operatorRole/enum", oaAnys(euis.RoleOperator, euis.RoleRepresentativeOperator)},
			{"/components/schemas/DdsRequest/properties/operatorRole/enum", oaAnys(euis.RoleOperator, euis.RoleRepresentativeOperator)},
			{"/components/schemas/LedgerEntryDdsStatus/properties/type/enum", oaAnys(anchor.EntryDDSStatus, anchor.EntryDDSAmended)},
			{"/components/schemas/DdsAmendRequest/properties/justification/maxLength", float64(dds.MaxJustificationLen)},
			{"/components/schemas/Job/allOf/3/if/properties/type/const", work.DDSSubmission},
			{"/components/schemas/DdsRejectedData/properties/reasons/examples", []any{oaAnys(euis.ReasonOperatorUUIDMismatch)}},
			{"/components/schemas/ReportStatus/enum", oaAnys(storage.ReportPending, storage.ReportReady, storage.ReportFailed, storage.ReportExpired)},
			{"/components/schemas/ArchiveManifest/properties/format/const", report.Format},
			{"/components/schemas/Job/allOf/4/if/properties/type/const", work.ArchiveReport},
			{"/components/schemas/Job/allOf/4/then/properties/results/items/$ref", "#/components/schemas/ReportReadyData"},
		}
		for _, c := range checks {
			if got := oaMust(t, doc, c.ptr); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: got %#v, want %#v", c.ptr, got, c.want)
			}
		}
	})

	t.Run("JobTypes", func(t *testing.T) {
		for _, ptr := range []string{"/components/schemas/Job/properties/type/description", "/components/schemas/JobFailedData/properties/type/description"} {
			for _, typ := range []string{work.PolygonIngestion, work.BatchRiskAssessment, work.ShipmentLink, work.DDSSubmission, work.ArchiveReport, work.SandboxTest} {
				if d, _ := oaMust(t, doc, ptr).(string); !strings.Contains(d, "`"+typ+"`") {
					t.Errorf("%s does not list the job type %s", ptr, typ)
				}
			}
		}
		// The job error codes, where JobError's code is described.
		for _, code := range []string{apierr.JobFailed, apierr.JobLedgerConsensusTimeout} {
			if d, _ := oaMust(t, doc, "/components/schemas/JobError/properties/code/description").(string); !strings.Contains(d, "`"+code+"`") {
				t.Errorf("JobError's code does not list %s", code)
			}
		}
	})

	// Every failureReason the geo package can give (its Reason* constants)
	// is in the FailureReason enum, with a sentence of its own.
	t.Run("FailureReasons", func(t *testing.T) {
		var reasons []string
		for name, v := range oaStringConstants(t, filepath.Join("..", "geo", "*.go")) {
			if strings.HasPrefix(name, "Reason") {
				reasons = append(reasons, v)
			}
		}
		if len(reasons) == 0 {
			t.Fatal("found no Reason* constants in the geo package")
		}
		got := oaStrings(oaMust(t, doc, "/components/schemas/FailureReason/enum"))
		sort.Strings(got)
		sort.Strings(reasons)
		if !slices.Equal(got, reasons) {
			t.Errorf("FailureReason enum: got %v, want the Reason* constants of the geo package %v", got, reasons)
		}
		desc := oaMust(t, doc, "/components/schemas/FailureReason/description").(string)
		for _, r := range reasons {
			if !strings.Contains(desc, "- `"+r+"`: ") {
				t.Errorf("reason %s has no sentence in FailureReason's description", r)
			}
		}
	})

	// The detail codes of the GeoJSON parser (the geo package's Code*
	// constants) are listed where the server's are, and in the 400 of
	// POST /polygons.
	t.Run("GeoDetailCodes", func(t *testing.T) {
		var codes []string
		for name, v := range oaStringConstants(t, filepath.Join("..", "geo", "*.go")) {
			if strings.HasPrefix(name, "Code") {
				codes = append(codes, v)
			}
		}
		if len(codes) == 0 {
			t.Fatal("found no Code* constants in the geo package")
		}
		sort.Strings(codes)
		post := oaFindOperation(t, doc, "POST", eudrPrefix+"/polygons")
		texts := map[string]string{
			"ErrorDetail's description": oaMust(t, doc, "/components/schemas/ErrorDetail/description").(string),
			"info.description":          oaMust(t, doc, "/info/description").(string),
			"the 400 of POST /polygons": oaMust(t, post, "/responses/400/description").(string),
		}
		for where, text := range texts {
			for _, c := range codes {
				if !strings.Contains(text, "`"+c+"`") {
					t.Errorf("detail code %s is not listed in %s", c, where)
				}
			}
		}
	})

	t.Run("Countries", func(t *testing.T) {
		got := oaStrings(oaMust(t, doc, "/components/schemas/CountryCode/enum"))
		for _, c := range got {
			if !geo.IsCountryCode(c) {
				t.Errorf("CountryCode enum has %q, which geo.IsCountryCode refuses", c)
			}
		}
		accepted := 0
		for a := 'A'; a <= 'Z'; a++ {
			for b := 'A'; b <= 'Z'; b++ {
				if geo.IsCountryCode(string([]rune{a, b})) {
					accepted++
				}
			}
		}
		if len(got) != accepted {
			t.Errorf("CountryCode enum has %d codes, geo.IsCountryCode accepts %d", len(got), accepted)
		}
		// The EU's countries: exactly what a statement's countries may be.
		var eu []string
		for a := 'A'; a <= 'Z'; a++ {
			for b := 'A'; b <= 'Z'; b++ {
				if c := string([]rune{a, b}); euis.IsEUCountry(c) {
					eu = append(eu, c)
				}
			}
		}
		if got := oaStrings(oaMust(t, doc, "/components/schemas/EuCountryCode/enum")); !slices.Equal(slices.Sorted(slices.Values(got)), eu) {
			t.Errorf("EuCountryCode enum: got %v, want what euis.IsEUCountry accepts %v", got, eu)
		}
	})

	t.Run("Patterns", func(t *testing.T) {
		now := time.Date(2026, 11, 20, 10, 15, 30, 123456789, time.FixedZone("CET", 3600))
		secret, err := webhooksig.NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		_, vkey, err := note.GenerateKey(rand.Reader, "eudr-appliance")
		if err != nil {
			t.Fatal(err)
		}
		matches := []struct {
			ptr   string
			value string
		}{
			{"/components/schemas/Timestamp/pattern", storage.FormatTime(now)},
			{"/components/schemas/Timestamp/pattern", storage.FormatTime(now.Truncate(time.Second))},
			{"/components/schemas/ApiKeyWithValue/properties/key/pattern", account.NewKeyValue(storage.Sandbox)},
			{"/components/schemas/ApiKeyWithValue/properties/key/pattern", account.NewKeyValue(storage.Production)},
			{"/components/schemas/ApiKey/properties/prefix/pattern", account.NewKeyValue(storage.Production)[:12]},
			{"/components/schemas/ApiKey/properties/keyId/pattern", storage.NewID("key", now)},
			{"/components/schemas/Supplier/properties/supplierId/pattern", storage.NewID("sup", now)},
			{"/components/schemas/WebhookId/pattern", storage.NewID("wh", now)},
			{"/components/schemas/EventId/pattern", storage.NewID("evt", now)},
			{"/components/schemas/JobId/pattern", storage.NewID("job", now)},
			{"/components/schemas/BatchId/pattern", storage.NewID("bat", now)},
			{"/components/schemas/LinkId/pattern", storage.NewID("lnk", now)},
			{"/components/schemas/DdsId/pattern", storage.NewID("dds", now)},
			{"/components/schemas/ReportId/pattern", storage.NewID("rpt", now)},
			{"/components/schemas/ReportReadyData/properties/downloadPath/pattern", reportDownloadPath(storage.NewID("rpt", now))},
			{"/components/schemas/LedgerPublicKey/properties/verifierKey/pattern", vkey},
			{"/components/schemas/LedgerPublicKey/properties/keyName/pattern", "eudr-appliance"},
			{"/components/schemas/PolygonId/pattern", storage.PolygonID(storage.NewID("job", now), 0)},
			{"/components/schemas/PolygonId/pattern", storage.PolygonID(storage.NewID("job", now), config.MaxFeaturesCeiling-1)},
			{"/components/schemas/Webhook/properties/signingSecret/pattern", secret},
			{"/components/schemas/Webhook/properties/signingSecret/pattern", webhook.Redact(secret)},
			{"/components/parameters/ServiceSignature/schema/pattern", webhooksig.Sign(secret, []byte(`{}`))},
			{"/components/parameters/StandardWebhookSignature/schema/pattern", webhooksig.SignStandard(secret, storage.NewID("evt", now), now, []byte(`{}`))},
		}
		for _, m := range matches {
			re := regexp.MustCompile(oaMust(t, doc, m.ptr).(string))
			if !re.MatchString(m.value) {
				t.Errorf("%s does not match %q, which the server produces", m.ptr, m.value)
			}
		}

		// The header patterns accept exactly what the server accepts.
		idemRE := regexp.MustCompile(oaMust(t, doc, "/components/parameters/IdempotencyKeyRequired/schema/pattern").(string))
		traceRE := regexp.MustCompile(oaMust(t, doc, "/components/parameters/TraceId/schema/pattern").(string))
		for _, s := range []string{"a", "vendor-100234-v1", "a b", "x\x7f", "caf\u00e9", strings.Repeat("k", 255),
			strings.Repeat("k", 256), "~!@#$%^&*()", "trace.id_1-2", strings.Repeat("t", 128), strings.Repeat("t", 129)} {
			key, err := idempotencyKey(s)
			if got, want := idemRE.MatchString(s), err == nil && key == s; got != want {
				t.Errorf("Idempotency-Key %q: pattern matches %v, server accepts %v", s, got, want)
			}
			if got, want := traceRE.MatchString(s), validTraceID(s); got != want {
				t.Errorf("X-Trace-Id %q: pattern matches %v, server accepts %v", s, got, want)
			}
		}

		// EU reference and verification numbers: the patterns accept
		// what the EU client does.
		refRE := regexp.MustCompile(oaMust(t, doc, "/components/schemas/EuReferenceNumber/pattern").(string))
		verRE := regexp.MustCompile(oaMust(t, doc, "/components/schemas/EuVerificationNumber/pattern").(string))
		verMin, _ := oaMust(t, doc, "/components/schemas/EuVerificationNumber/minLength").(float64)
		verMax, _ := oaMust(t, doc, "/components/schemas/EuVerificationNumber/maxLength").(float64)
		for _, s := range []string{"26NL7XTVCZAQ2S", "S26FRNMNBSA96Q", "26nl7XTVCZAQ2S", "26NL7XTVCZAQ2", "26NL7XTVCZAQ2SX", "S26FRNMNBSA96QX", "2026NL7XTVCZAQ", "",
			"K7Q2M9XB", "abcde", "abcd", "a b c d e", strings.Repeat("v", 35), strings.Repeat("v", 36), "tab\tnumber"} {
			if got, want := refRE.MatchString(s), euis.IsReferenceNumber(s); got != want {
				t.Errorf("reference number %q: pattern matches %v, the EU client accepts %v", s, got, want)
			}
			n := float64(utf8.RuneCountInString(s))
			if got, want := verRE.MatchString(s) && n >= verMin && n <= verMax, euis.IsVerificationNumber(s); got != want {
				t.Errorf("verification number %q: pattern and length match %v, the EU client accepts %v", s, got, want)
			}
		}

		// A ledger key name: the pattern accepts exactly what the config
		// (and so the signed-note format) does.
		keyNameRE := regexp.MustCompile(oaMust(t, doc, "/components/schemas/LedgerPublicKey/properties/keyName/pattern").(string))
		for _, s := range []string{"", "eudr-appliance", "a+b", "a b", "caf\u00e9", "x\x7f", "~!@#$%^&*()", strings.Repeat("k", 64), strings.Repeat("k", 65)} {
			if got, want := keyNameRE.MatchString(s), config.ValidKeyName(s); got != want {
				t.Errorf("ledger.key_name %q: pattern matches %v, config accepts %v", s, got, want)
			}
		}

		// A feature's properties.supplierId: the pattern accepts exactly
		// what the GeoJSON parser does.
		sidRE := regexp.MustCompile(oaMust(t, doc, "/components/schemas/PolygonFeatureProperties/properties/supplierId/pattern").(string))
		for _, s := range []string{"", "100234", "V-1", "a.b_c-d", "-x", ".x", "a b", "caf\u00e9", strings.Repeat("s", 64), strings.Repeat("s", 65)} {
			body := collection(`{"type":"Feature","geometry":{"type":"Point","coordinates":[5.000000,6.000000]},` +
				`"properties":{"commodity":"cocoa","producerCountry":"GH","area":1,"supplierId":` + strconv.Quote(s) + `}}`)
			_, err := geo.ParseFeatureCollection([]byte(body), geo.ParseOptions{})
			if got, want := sidRE.MatchString(s), err == nil; got != want {
				t.Errorf("properties.supplierId %q: pattern matches %v, parser accepts %v (%v)", s, got, want, err)
			}
		}
	})

	// The deliveries: one webhook (OpenAPI 3.1 top-level webhooks) per
	// event type a delivery can carry, each declaring the signature
	// headers and the envelope with its type; the registration lists
	// the same as callbacks.
	t.Run("Webhooks", func(t *testing.T) {
		want := append(slices.Clone(event.Subscribable), event.WebhookPing)
		sort.Strings(want)
		hooks, _ := doc["webhooks"].(map[string]any)
		if got := slices.Sorted(maps.Keys(hooks)); !slices.Equal(got, want) {
			t.Errorf("webhooks: got %v, want %v", got, want)
		}
		cbs, _ := oaFindOperation(t, doc, "POST", eudrPrefix+"/webhooks")["callbacks"].(map[string]any)
		if got := slices.Sorted(maps.Keys(cbs)); !slices.Equal(got, want) {
			t.Errorf("createWebhook callbacks: got %v, want %v", got, want)
		}
		for _, ev := range want {
			t.Run(ev, func(t *testing.T) {
				item := oaDeref(t, doc, hooks[ev])
				if cb, ok := cbs[ev].(map[string]any); ok {
					if !reflect.DeepEqual(oaDeref(t, doc, cb["{$request.body#/targetUrl}"]), item) {
						t.Error("the createWebhook callback is not the same Path Item as the webhook")
					}
				}
				post, ok := item["post"].(map[string]any)
				if !ok {
					t.Fatal("no post operation")
				}
				params := map[string]map[string]any{}
				for _, p := range oaList(post["parameters"]) {
					pm := oaDeref(t, doc, p)
					if pm["in"] == "header" {
						params[fmt.Sprint(pm["name"])] = pm
					}
				}
				for _, h := range []string{webhooksig.HeaderSignature, webhooksig.HeaderEventID, webhooksig.HeaderEventType,
					webhooksig.HeaderWebhookID, webhooksig.HeaderWebhookTimestamp, webhooksig.HeaderWebhookSignature} {
					if p, ok := params[h]; !ok || p["required"] != true {
						t.Errorf("header %s is not declared as a required parameter", h)
					}
				}
				if got, _ := oaPointer(params[webhooksig.HeaderEventType], "/schema/const"); got != ev {
					t.Errorf("%s: const %v, want %s", webhooksig.HeaderEventType, got, ev)
				}
				body, ok := oaPointer(post, "/requestBody/content/application~1json/schema/allOf")
				if !ok {
					t.Fatal("the request body schema is not allOf [WebhookEnvelope, {...}]")
				}
				all := oaList(body)
				if len(all) != 2 || all[0].(map[string]any)["$ref"] != "#/components/schemas/WebhookEnvelope" {
					t.Errorf("request body: allOf %v does not start with WebhookEnvelope", oaShort(all))
				}
				if got, _ := oaPointer(all[len(all)-1], "/properties/eventType/const"); got != ev {
					t.Errorf("request body: eventType const %v, want %s", got, ev)
				}
				if _, ok := oaPointer(all[len(all)-1], "/properties/data/$ref"); !ok {
					t.Error("request body: data has no schema of its own")
				}
				if _, ok := oaPointer(post, "/responses/410"); !ok {
					t.Error("no 410 response (a 410 answer dead-letters the event)")
				}
			})
		}
	})
}

// oaAnys is a list as JSON decodes it.
func oaAnys(ss ...string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func oaMust(t *testing.T, doc map[string]any, ptr string) any {
	t.Helper()
	v, ok := oaPointer(doc, ptr)
	if !ok {
		t.Fatalf("openapi.json has nothing at %s", ptr)
	}
	return v
}

func oaStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// oaErrorCodeConstants reads the values of the Code* and apierr.Detail* constants of
// the package (errors.go and the handlers' own, such as webhooks.go), so a
// new code cannot be forgotten here.
func oaErrorCodeConstants(t *testing.T) (codes, details []string) {
	t.Helper()
	for name, v := range oaStringConstants(t, "apierr/*.go") {
		switch {
		case strings.HasPrefix(name, "Code"):
			codes = append(codes, v)
		case strings.HasPrefix(name, "Detail"):
			details = append(details, v)
		}
	}
	if len(codes) == 0 || len(details) == 0 {
		t.Fatal("found no Code* or apierr.Detail* constants in the package")
	}
	return codes, details
}

// oaStringConstants returns the string constants declared with a literal
// value in the non-test Go files matching glob, by name.
func oaStringConstants(t *testing.T, glob string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					out[n.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	return out
}

// oaCheckStruct compares a component schema with the JSON encoding of a
// Go struct: the same members, of matching types; a response member is
// always present (required) and nullable exactly when it is a pointer.
// The members of an embedded struct are the struct's, as encoding/json has
// them.
func oaCheckStruct(t *testing.T, doc map[string]any, typ reflect.Type, name string, response bool) {
	t.Helper()
	schema := oaMust(t, doc, "/components/schemas/"+name).(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	if schema["additionalProperties"] != false {
		t.Errorf("additionalProperties: got %v, want false", schema["additionalProperties"])
	}
	required := map[string]bool{}
	for _, r := range oaStrings(schema["required"]) {
		required[r] = true
	}
	var fields []string
	for _, f := range oaJSONFields(typ) {
		tag := f.Tag.Get("json")
		jsonName, opts, _ := strings.Cut(tag, ",")
		if jsonName == "" {
			jsonName = f.Name
		}
		fields = append(fields, jsonName)
		prop, ok := props[jsonName]
		if !ok {
			t.Errorf("member %q (%s.%s) is not in the schema", jsonName, typ.Name(), f.Name)
			continue
		}
		types := oaSchemaTypes(t, doc, prop)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft == reflect.TypeFor[json.RawMessage]() {
			// Raw JSON: any value the handler puts there; the schema
			// must still say which.
			if len(types) == 0 {
				t.Errorf("member %q (raw JSON) has no type in the schema", jsonName)
			}
		} else if want := oaGoType(ft); !types[want] {
			t.Errorf("member %q: schema types %v do not include %s (Go %s)", jsonName, slices.Sorted(maps.Keys(types)), want, f.Type)
		}
		if response {
			if !required[jsonName] && !strings.Contains(opts, "omitempty") {
				t.Errorf("member %q is always sent, so it must be required", jsonName)
			}
			if isPtr := f.Type.Kind() == reflect.Pointer; types["null"] != isPtr {
				t.Errorf("member %q: nullable %v, but the Go field is %s", jsonName, types["null"], f.Type)
			}
		}
	}
	for p := range props {
		if !slices.Contains(fields, p) {
			t.Errorf("schema member %q is not a member of %s", p, typ.Name())
		}
	}
	for r := range required {
		if !slices.Contains(fields, r) {
			t.Errorf("required member %q is not a member of %s", r, typ.Name())
		}
	}
}

// oaJSONFields lists the fields of a struct that encoding/json encodes,
// those of embedded structs without a JSON name in their place.
func oaJSONFields(typ reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct && tag == "" {
			out = append(out, oaJSONFields(f.Type)...)
			continue
		}
		if f.IsExported() {
			out = append(out, f)
		}
	}
	return out
}

func oaGoType(t reflect.Type) string {
	// Numbers kept as their decimal text are numbers in JSON.
	if t == reflect.TypeFor[json.Number]() || t == reflect.TypeFor[euis.Decimal]() {
		return "number"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	default:
		return "object"
	}
}

// oaSchemaTypes is the set of JSON types a schema allows, from type, const or
// enum, through $ref and allOf.
func oaSchemaTypes(t *testing.T, doc map[string]any, v any) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	s, _ := v.(map[string]any)
	if ref, ok := s["$ref"].(string); ok {
		target, ok := oaResolve(doc, ref)
		if !ok {
			t.Fatalf("$ref %q does not resolve", ref)
		}
		return oaSchemaTypes(t, doc, target)
	}
	switch ty := s["type"].(type) {
	case string:
		out[ty] = true
	case []any:
		for _, x := range ty {
			out[fmt.Sprint(x)] = true
		}
	}
	if len(out) > 0 {
		return out
	}
	if c, ok := s["const"]; ok {
		out[oaJSONType(c)] = true
	}
	for _, e := range oaList(s["enum"]) {
		out[oaJSONType(e)] = true
	}
	for _, sub := range append(oaList(s["allOf"]), oaList(s["anyOf"])...) {
		for k := range oaSchemaTypes(t, doc, sub) {
			out[k] = true
		}
	}
	if out["number"] {
		out["integer"] = true
	}
	return out
}

func oaList(v any) []any { l, _ := v.([]any); return l }
