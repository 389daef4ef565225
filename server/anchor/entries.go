package anchor

// Entry types: the "type" member of every entry.
const (
	EntryPolygonScreened = "polygon.screened"
	EntryShipmentLinked  = "shipment.linked"
	EntryDDSStatus       = "dds.status"
	EntryReportGenerated = "report.generated"
	// EntryDDSAmended anchors an amendment of a statement in the EU
	// system: its status unchanged, its new statementSha256, the fields
	// changed and the justification given.
	EntryDDSAmended = "dds.amended"
)

// ScreeningEntry is the ledger entry that anchors a plot's screening: the
// verdict and the hash of its evidence document.
type ScreeningEntry struct {
	Type           string  `json:"type"` // "polygon.screened"
	PolygonID      string  `json:"polygonId"`
	JobID          string  `json:"jobId"`
	EUDRStatus     string  `json:"eudrStatus"`
	FailureReason  *string `json:"failureReason"`
	EvidenceSHA256 string  `json:"evidenceSha256"`
}

// ShipmentEntry is the ledger entry of a link.
type ShipmentEntry struct {
	Type             string   `json:"type"` // "shipment.linked"
	LinkID           string   `json:"linkId"`
	BatchID          string   `json:"batchId"`
	ShipmentID       string   `json:"shipmentId"`
	BillOfLading     string   `json:"billOfLading,omitempty"`
	ContainerNumbers []string `json:"containerNumbers,omitempty"`
	PortOfEntry      string   `json:"portOfEntry,omitempty"`
	ETA              string   `json:"eta,omitempty"`
}

// DDSEntry is the ledger entry of a DDS state change or amendment.
type DDSEntry struct {
	Type               string   `json:"type"` // "dds.status" or "dds.amended"
	DDSID              string   `json:"ddsId"`
	Status             string   `json:"status"`
	Actor              string   `json:"actor"`
	StatementSHA256    string   `json:"statementSha256"`
	EUUUID             string   `json:"euUuid,omitempty"`
	ReferenceNumber    string   `json:"referenceNumber,omitempty"`
	VerificationNumber string   `json:"verificationNumber,omitempty"`
	Reasons            []string `json:"reasons,omitempty"`
	// Changes and Justification are a dds.amended entry's: the payload
	// paths of the fields changed, and why (none within the first 72
	// hours, when none was given).
	Changes       []string `json:"changes,omitempty"`
	Justification string   `json:"justification,omitempty"`
}

// ReportEntry is the ledger entry of a PDF report the first time its
// bytes were made: a copy handed to an auditor checks against it.
type ReportEntry struct {
	Type     string `json:"type"`   // "report.generated"
	Report   string `json:"report"` // "polygon", "batch" or "dds"
	RecordID string `json:"recordId"`
	SHA256   string `json:"sha256"`
	Bytes    int    `json:"bytes"`
}
