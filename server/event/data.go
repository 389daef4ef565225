package event

import (
	"github.com/eudr/eudr/server/risk"
	"github.com/eudr/eudr/storage"
)

// PolygonVerifiedData is polygon.verified: the polygons of a finished job
// that were screened (COMPLIANT and HIGH_RISK).
type PolygonVerifiedData struct {
	JobID      string   `json:"jobId"`
	PolygonIDs []string `json:"polygonIds"`
}

// PolygonFailedData is polygon.failed: the polygons of a finished job
// that could not be screened, each with its reason.
type PolygonFailedData struct {
	JobID      string            `json:"jobId"`
	PolygonIDs []string          `json:"polygonIds"`
	Reasons    map[string]string `json:"reasons"`
}

// BatchRiskAssessedData is batch.risk_assessed (docs/batches.md).
type BatchRiskAssessedData struct {
	BatchID   string        `json:"batchId"`
	RiskScore int           `json:"riskScore"`
	RiskLevel string        `json:"riskLevel"`
	Factors   []risk.Factor `json:"factors"`
}

// ShipmentLinkedData is shipment.linked (docs/ledger.md): the link and
// where it is anchored.
type ShipmentLinkedData struct {
	LinkID          string `json:"linkId"`
	BatchID         string `json:"batchId"`
	ShipmentID      string `json:"shipmentId"`
	TransactionHash string `json:"transactionHash"`
	LedgerIndex     int64  `json:"ledgerIndex"`
	TreeSize        int64  `json:"treeSize"`
	RootHash        string `json:"rootHash"`
}

// DDSSubmittedData is dds.submitted: the EU system took the statement.
type DDSSubmittedData struct {
	DDSID           string  `json:"ddsId"`
	EUUUID          string  `json:"euUuid"`
	ReferenceNumber *string `json:"referenceNumber"`
}

// DDSValidatedData is dds.validated: the EU system accepted the statement.
type DDSValidatedData struct {
	DDSID              string `json:"ddsId"`
	ReferenceNumber    string `json:"referenceNumber"`
	VerificationNumber string `json:"verificationNumber"`
}

// DDSRejectedData is dds.rejected: the EU system refused the statement.
type DDSRejectedData struct {
	DDSID   string   `json:"ddsId"`
	Reasons []string `json:"reasons"`
}

// DDSAmendedData is dds.amended: the statement was amended in the EU
// system; its status is unchanged.
type DDSAmendedData struct {
	DDSID           string   `json:"ddsId"`
	ReferenceNumber string   `json:"referenceNumber"`
	StatementSHA256 string   `json:"statementSha256"`
	Changes         []string `json:"changes"`
	Justification   *string  `json:"justification"`
}

// JobFailedData is job.failed: a job that failed for good.
type JobFailedData struct {
	JobID string           `json:"jobId"`
	Type  string           `json:"type"`
	Error storage.JobError `json:"error"`
}

// ReportReadyData is report.ready, and the one result of an
// archive_report job.
type ReportReadyData struct {
	ReportID     string `json:"reportId"`
	SHA256       string `json:"sha256"`
	SizeBytes    int64  `json:"sizeBytes"`
	DownloadPath string `json:"downloadPath"`
}
