package pdf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// Batch is what a batch's report is made of.
type Batch struct {
	Batch *storage.Batch
	// Supplier is the supplier mapping of the batch's SupplierID; nil when
	// none maps it.
	Supplier *storage.Supplier
	// Assessment is the batch's risk-assessment document as GET
	// /batches/{id}/risk-assessment answers it: as recorded when the batch
	// was assessed, or its IDs and status only while it is ASSESSING.
	Assessment json.RawMessage
	// Links are the batch's shipments, each by its latest link, newest
	// first, with the ledger entry that anchors it.
	Links []Link
	// Plots are the batch's plots in the order it was registered with, each
	// as its own report is made of.
	Plots []Plot
	// PlotPages is the most plots given a page each; past it, a table.
	PlotPages int
}

// Link is a shipment link with the ledger entry that anchors it, proved
// in the checkpoint signed with it; Ledger is nil for a link not anchored.
type Link struct {
	Link   *storage.ShipmentLink
	Ledger *anchor.DocumentLedger
}

// BatchReport renders a batch's report. It is dated at the batch's
// assessment (at its creation while it has none), so the same records
// give the same bytes.
func BatchReport(ctx context.Context, b Batch) ([]byte, error) {
	d := newDocument("Batch report "+b.Batch.ID, "Batch report · batch "+b.Batch.ID, batchDate(b.Batch))
	if err := d.batchPages(ctx, b); err != nil {
		return nil, err
	}
	d.thisPDF()
	return d.bytes()
}

// batchDate is when the batch's record last changed: its assessment, or
// its creation.
func batchDate(b *storage.Batch) time.Time {
	if b.AssessedAt != nil {
		return b.AssessedAt.UTC().Truncate(time.Second)
	}
	return b.CreatedAt.UTC().Truncate(time.Second)
}

// batchPages writes a batch's pages, from a new page: the statement's
// report writes each of its batches with it.
func (d *document) batchPages(ctx context.Context, b Batch) error {
	plots := make([]*evidenceDoc, len(b.Plots))
	for i, p := range b.Plots {
		ev, _, err := decodeEvidence(p)
		if err != nil {
			return err
		}
		plots[i] = ev
	}
	d.AddPage()
	d.batchHeader(b.Batch)
	d.batchSupplier(b.Batch.SupplierID, b.Supplier)
	if err := d.batchRisk(b.Assessment); err != nil {
		return fmt.Errorf("batch %s: %w", b.Batch.ID, err)
	}
	d.batchLinks(b.Links)
	if err := d.batchOverview(ctx, b, plots); err != nil {
		return fmt.Errorf("batch %s: %w", b.Batch.ID, err)
	}
	if len(b.Plots) > b.PlotPages {
		d.batchPlotTable(b.Plots, plots)
		return nil
	}
	for i, p := range b.Plots {
		caption := fmt.Sprintf("Batch %s · plot %d of %d (number %d on the overview map)", b.Batch.ID, i+1, len(b.Plots), i+1)
		if err := d.plotPages(ctx, p, plots[i], caption); err != nil {
			return err
		}
	}
	return nil
}

// batchHeader writes the title and the batch's record.
func (d *document) batchHeader(b *storage.Batch) {
	d.font(sans, "B", 16)
	d.CellFormat(contentW, 8, "Batch report", "", 1, "L", false, 0, "")
	d.font(sans, "", 9)
	d.SetTextColor(80, 80, 80)
	d.CellFormat(contentW, 5, "EU Deforestation Regulation (EU) 2023/1115 — due diligence evidence for one batch of a commodity", "", 1, "L", false, 0, "")
	d.SetTextColor(0, 0, 0)
	d.heading("The batch", 40)
	d.field("Batch", b.ID, true)
	d.field("Reference", orNone(b.Reference), false)
	d.field("Commodity, HS code", b.Commodity+", "+b.HSCode, false)
	d.field("Net mass", string(b.NetMassKg)+" kg", false)
	if b.SupplementaryUnit != nil {
		d.field("Supplementary unit", string(*b.SupplementaryUnit)+" "+b.SupplementaryUnitType, false)
	} else {
		d.field("Supplementary unit", "none", false)
	}
	harvest := "not given"
	if b.HarvestStart != "" || b.HarvestEnd != "" {
		harvest = orNone(b.HarvestStart) + " to " + orNone(b.HarvestEnd)
	}
	d.field("Harvest", harvest, false)
	d.field("Plots", strconv.Itoa(b.PolygonCount), false)
	status := b.Status
	if b.RiskScore != nil {
		status += fmt.Sprintf(" (risk score %d, level %s)", *b.RiskScore, b.RiskLevel)
	}
	d.field("Status", status, false)
	d.field("Created at", storage.FormatTime(b.CreatedAt)+" (registration job "+b.JobID+")", false)
	if b.AssessedAt != nil {
		d.field("Assessed at", storage.FormatTime(*b.AssessedAt), false)
	} else {
		d.field("Assessed at", "not assessed yet", false)
	}
}

// orNone is s, or "none" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// batch reads what the report of the tenant's batch id is made of.
func (s Source) batch(ctx context.Context, t storage.Tenant, id string) (Batch, error) {
	b, polygonIDs, err := s.Batches.Find(ctx, t, id)
	if err != nil {
		return Batch{}, err
	}
	out := Batch{Batch: b, PlotPages: s.BatchPlotPages}
	if out.Supplier, err = s.Batches.Supplier(ctx, t, b.SupplierID); errors.As(err, new(apierr.NotFound)) {
		out.Supplier = nil // a mapping deleted since, or never made
	} else if err != nil {
		return Batch{}, err
	}
	if out.Assessment, _, err = s.Batches.Assessment(ctx, t, id); err != nil {
		return Batch{}, err
	}
	for page := (storage.Page{Limit: 100}); ; {
		links, more, err := s.Shipments.List(ctx, t, id, page)
		if err != nil {
			return Batch{}, err
		}
		for _, l := range links {
			ledger, err := s.Shipments.LinkLedger(ctx, t, l)
			if err != nil {
				return Batch{}, err
			}
			out.Links = append(out.Links, Link{Link: l, Ledger: ledger})
		}
		if !more {
			break
		}
		page.After = links[len(links)-1].ID
	}
	for _, pid := range polygonIDs {
		p, err := s.plot(ctx, t, pid)
		if err != nil {
			return Batch{}, err
		}
		out.Plots = append(out.Plots, p)
	}
	return out, nil
}

// batchReport renders the report of the tenant's batch id (BatchReport).
// It fails with apierr.NotFound for a batch the tenant does not have.
func (s Source) batchReport(ctx context.Context, t storage.Tenant, id string) ([]byte, string, error) {
	b, err := s.batch(ctx, t, id)
	if err != nil {
		return nil, "", err
	}
	body, err := BatchReport(ctx, b)
	return body, id, err
}
