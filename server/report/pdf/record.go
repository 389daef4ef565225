package pdf

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/storage"
)

// Report kinds: the record a report is of, in its ledger entry.
const (
	KindPolygon = "polygon"
	KindBatch   = "batch"
	KindDDS     = "dds"
)

// Made is a report as made for a request: its bytes, their SHA-256 and
// the record of their first making.
type Made struct {
	Body   []byte
	SHA256 [sha256.Size]byte
	Record *storage.PDFReport
}

// Make renders the report of the tenant's record id of kind (a polygon,
// a batch, or a statement by its ID or EU reference number) and records
// it (record). It fails with apierr.NotFound for a record the tenant does
// not have, and with an error for an unknown kind.
func (s Source) Make(ctx context.Context, t storage.Tenant, kind, id string) (Made, error) {
	render := map[string]func(context.Context, storage.Tenant, string) ([]byte, string, error){
		KindPolygon: s.plotReport, KindBatch: s.batchReport, KindDDS: s.statementReport}[kind]
	if render == nil {
		return Made{}, fmt.Errorf("report of unknown kind %q", kind)
	}
	body, recordID, err := render(ctx, t, id)
	if err != nil {
		return Made{}, err
	}
	m := Made{Body: body, SHA256: sha256.Sum256(body)}
	m.Record, err = s.record(ctx, t, kind, recordID, m)
	return m, err
}

// record records report m of the tenant's record id of kind the first
// time these bytes are made: a report.generated ledger entry with their
// SHA-256 under a signed checkpoint, and the report's record, in one
// transaction. Made again, the same bytes are found and nothing is
// written. It returns the record.
func (s Source) record(ctx context.Context, t storage.Tenant, kind, id string, m Made) (*storage.PDFReport, error) {
	hash := hex.EncodeToString(m.SHA256[:])
	var out *storage.PDFReport
	err := s.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		out, err = tx.FindPDFReport(t, hash)
		return err
	})
	if err == nil || !errors.Is(err, storage.ErrNotFound) {
		return out, err
	}
	err = s.DB.Batch(ctx, func(tx *storage.Tx) error {
		out = nil
		if r, err := tx.FindPDFReport(t, hash); err == nil {
			out = r // recorded by a request that raced this one
			return nil
		} else if !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		e, err := anchor.Append(tx, t, anchor.ReportEntry{Type: anchor.EntryReportGenerated, Report: kind, RecordID: id, SHA256: hash, Bytes: len(m.Body)})
		if err != nil {
			return err
		}
		if _, err := s.Ledger.Sign(tx, t); err != nil {
			return err
		}
		r := &storage.PDFReport{SHA256: hash, Kind: kind, RecordID: id, Bytes: len(m.Body), LedgerIndex: e.Index, GeneratedAt: tx.Now()}
		if err := tx.PutPDFReport(t, r); err != nil {
			return err
		}
		out = r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("record report of %s %s: %w", kind, id, err)
	}
	return out, nil
}

// Check is what the appliance knows of a report's bytes: whether it made
// them, of which record, and the ledger entry that records their hash
// with its inclusion proof in the latest checkpoint.
type Check struct {
	SHA256   string                 `json:"sha256"`
	Recorded bool                   `json:"recorded"`
	Report   *storage.PDFReport     `json:"report"`
	Ledger   *anchor.DocumentLedger `json:"ledger"`
}

// Check looks up report body among the tenant's recorded reports.
func (s Source) Check(ctx context.Context, t storage.Tenant, body []byte) (Check, error) {
	sum := sha256.Sum256(body)
	out := Check{SHA256: hex.EncodeToString(sum[:])}
	err := s.DB.View(ctx, func(tx *storage.Tx) error {
		r, err := tx.FindPDFReport(t, out.SHA256)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		cp, err := ledger.LatestCheckpoint(tx.Tx, anchor.Log(t))
		if err != nil {
			return fmt.Errorf("latest checkpoint: %w", err)
		}
		l, err := anchor.ProveEntryAt(tx, t, cp, r.LedgerIndex)
		if err != nil {
			return err
		}
		out.Recorded, out.Report, out.Ledger = true, r, &l
		return nil
	})
	return out, err
}
