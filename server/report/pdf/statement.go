package pdf

import (
	"context"

	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/storage"
)

// Statement is what a due-diligence statement's report is made of.
type Statement struct {
	Declaration dds.Declaration
	// Batches are the statement's batches, each as its own report is made
	// of.
	Batches []Batch
}

// StatementReport renders a statement's report. It is dated at the last
// change of the statement's history, so the same records give the same
// bytes.
func StatementReport(ctx context.Context, st Statement) ([]byte, error) {
	s := st.Declaration.DDS
	id := s.ID
	at := s.CreatedAt
	if n := len(s.History); n > 0 {
		at = s.History[n-1].At
	}
	d := newDocument("Statement report "+id, "Due-diligence statement report · "+id, at)
	d.AddPage()
	d.font(sans, "B", 16)
	d.CellFormat(contentW, 8, "Due-diligence statement report", "", 1, "L", false, 0, "")
	d.field("Statement", id, true)
	for _, b := range st.Batches {
		if err := d.batchPages(ctx, b); err != nil {
			return nil, err
		}
	}
	return d.bytes()
}

// StatementReport renders the report of the tenant's statement id
// (StatementReport). It fails with apierr.NotFound for a statement the
// tenant does not have.
func (s Source) StatementReport(ctx context.Context, t storage.Tenant, id string) ([]byte, error) {
	decl, err := s.DDS.Find(ctx, t, id)
	if err != nil {
		return nil, err
	}
	st := Statement{Declaration: decl}
	return StatementReport(ctx, st)
}
