package pdf

import (
	"context"
	"time"

	"github.com/eudr/eudr/storage"
)

// Batch is what a batch's report is made of.
type Batch struct {
	Batch *storage.Batch
	// Plots are the batch's plots, each as its own report is made of.
	Plots []Plot
	// PlotPages is the most plots given a page each; past it, a table.
	PlotPages int
}

// BatchReport renders a batch's report. It is dated at the batch's
// creation, so the same records give the same bytes.
func BatchReport(ctx context.Context, b Batch) ([]byte, error) {
	d := newDocument("Batch report "+b.Batch.ID, "Batch report · batch "+b.Batch.ID, b.Batch.CreatedAt.UTC().Truncate(time.Second))
	if err := d.batchPages(ctx, b); err != nil {
		return nil, err
	}
	return d.bytes()
}

// batchPages writes a batch's pages, from a new page: the statement's
// report writes each of its batches with it.
func (d *document) batchPages(ctx context.Context, b Batch) error {
	d.AddPage()
	d.font(sans, "B", 16)
	d.CellFormat(contentW, 8, "Batch report", "", 1, "L", false, 0, "")
	d.field("Batch", b.Batch.ID, true)
	d.field("Reference", b.Batch.Reference, false)
	return nil
}

// batch reads what the report of the tenant's batch id is made of.
func (s Source) batch(ctx context.Context, t storage.Tenant, id string) (Batch, error) {
	b, polygonIDs, err := s.Batches.Find(ctx, t, id)
	if err != nil {
		return Batch{}, err
	}
	out := Batch{Batch: b, PlotPages: s.BatchPlotPages}
	for _, pid := range polygonIDs {
		p, err := s.plot(ctx, t, pid)
		if err != nil {
			return Batch{}, err
		}
		out.Plots = append(out.Plots, p)
	}
	return out, nil
}

// BatchReport renders the report of the tenant's batch id (BatchReport).
// It fails with apierr.NotFound for a batch the tenant does not have.
func (s Source) BatchReport(ctx context.Context, t storage.Tenant, id string) ([]byte, error) {
	b, err := s.batch(ctx, t, id)
	if err != nil {
		return nil, err
	}
	return BatchReport(ctx, b)
}
