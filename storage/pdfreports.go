package storage

import "time"

var bucketPDFReports = []byte("pdf_reports")

// PDFReport records a PDF report the first time its bytes were made: the
// record it is of, its SHA-256 and size, and the ledger entry that
// anchors the hash. A report whose record changes (a statement's status
// moves on) has new bytes and gets a record of its own; the older one
// stays, so that any copy handed out can still be checked.
type PDFReport struct {
	SHA256 string `json:"sha256"`
	// Kind is the record's kind: "polygon", "batch" or "dds".
	Kind        string    `json:"kind"`
	RecordID    string    `json:"recordId"`
	Bytes       int       `json:"bytes"`
	LedgerIndex int64     `json:"ledgerIndex"`
	GeneratedAt time.Time `json:"generatedAt"`
}

// PutPDFReport records r under its SHA-256.
func (tx *Tx) PutPDFReport(t Tenant, r *PDFReport) error {
	b, err := tx.tenantBucket(t, bucketPDFReports)
	if err != nil {
		return err
	}
	return putJSON(b, []byte(r.SHA256), r)
}

// FindPDFReport returns the report recorded with SHA-256 sum (lower-case
// hex), or ErrNotFound.
func (tx *Tx) FindPDFReport(t Tenant, sum string) (*PDFReport, error) {
	b, err := tx.tenantBucket(t, bucketPDFReports)
	if err != nil {
		return nil, err
	}
	var r PDFReport
	if err := getJSON(b, []byte(sum), &r); err != nil {
		return nil, err
	}
	return &r, nil
}
