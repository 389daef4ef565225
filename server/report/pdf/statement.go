package pdf

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/storage"
)

// Statement is what a due-diligence statement's report is made of: the
// statement with the ledger entries of its history, proved in the
// checkpoint signed with the last of them (dds.Service.FindProved), and
// its batches, read one at a time as their pages are written, so that a
// statement of many batches never holds them all.
type Statement struct {
	Proved dds.Proved
	// BatchIDs are the statement's batches the appliance has, in the
	// statement's order; Batch reads one as its own report is made of.
	BatchIDs []string
	Batch    func(ctx context.Context, id string) (Batch, error)
	// MissingBatches are the statement's batches the appliance no longer
	// has: the report names them, without their pages.
	MissingBatches []string
}

// StatementReport renders a statement's report: its identity and EU
// numbers, its Annex II content as stored (the JSON sent to the EU
// system), its status history with the ledger entry and proof of each
// change, then the report of each of its batches. It is dated at the last
// change of the statement's history, so the same records give the same
// bytes.
func StatementReport(ctx context.Context, st Statement) ([]byte, error) {
	s := st.Proved.DDS
	at := s.CreatedAt
	if n := len(s.History); n > 0 {
		at = s.History[n-1].At
	}
	d := newDocument("Statement report "+s.ID, "Due-diligence statement report · "+s.ID+" · as of "+storage.FormatTime(at), at.UTC().Truncate(time.Second))
	d.AddPage()
	d.statementHeader(s, st.MissingBatches)
	d.statementEU(s)
	if err := d.statementAnnex(s); err != nil {
		return nil, err
	}
	d.statementHistory(s)
	d.statementLedger(st.Proved)
	for _, id := range st.BatchIDs {
		b, err := st.Batch(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := d.batchPages(ctx, b); err != nil {
			return nil, err
		}
	}
	d.thisPDF()
	return d.bytes()
}

// statementHeader writes the title and the statement's identity in the
// appliance.
func (d *document) statementHeader(s *storage.DDS, missing []string) {
	d.font(sans, "B", 16)
	d.CellFormat(contentW, 8, "Due-diligence statement report", "", 1, "L", false, 0, "")
	d.font(sans, "", 9)
	d.SetTextColor(80, 80, 80)
	d.CellFormat(contentW, 5, "EU Deforestation Regulation (EU) 2023/1115 — a statement's Annex II information, its filing and its history", "", 1, "L", false, 0, "")
	d.SetTextColor(0, 0, 0)
	d.Ln(2)
	d.field("Statement", s.ID, true)
	d.field("Status", s.Status, false)
	if s.InternalReference != "" {
		d.field("Internal reference", s.InternalReference, false)
	}
	d.field("Operator UUID", s.OperatorUUID, true)
	d.field("Batches", strings.Join(s.BatchIDs, ", "), true)
	if len(missing) > 0 {
		d.field("Missing batches", strings.Join(missing, ", ")+": the appliance no longer has them, so their reports are not included", false)
	}
	if s.Part > 0 {
		part := "part " + strconv.Itoa(s.Part)
		if s.SplitOf != "" && s.SplitOf != s.ID {
			part += " of the statement split from " + s.SplitOf
		} else {
			part += " of a statement split to keep within the EU system's limits"
		}
		d.field("Split", part, false)
	}
	d.field("Created at", storage.FormatTime(s.CreatedAt), false)
	if s.SubmittedAt != nil {
		d.field("Submitted at", storage.FormatTime(*s.SubmittedAt), false)
	}
}

// statementEU writes what the EU information system assigned the
// statement, or that it has not yet.
func (d *document) statementEU(s *storage.DDS) {
	d.heading("EU information system", 30)
	if s.EUUUID == "" {
		notFiled := "not filed yet"
		if s.Status == storage.DDSRejected {
			notFiled = "none: the statement was refused before the EU system accepted it"
		}
		d.field("EU UUID", notFiled, false)
		d.field("Reference number", notFiled, false)
		d.field("Verification number", notFiled, false)
	} else {
		notYet := "not assigned yet: the EU system assigns it once it accepts the statement"
		d.field("EU UUID", s.EUUUID, true)
		d.field("Reference number", orText(s.ReferenceNumber, notYet), s.ReferenceNumber != "")
		d.field("Verification number", orText(s.VerificationNumber, notYet), s.VerificationNumber != "")
	}
	if len(s.ReferencedStatements) > 0 {
		var refs []string
		for _, r := range s.ReferencedStatements {
			refs = append(refs, r.ReferenceNumber+" / "+r.VerificationNumber)
		}
		d.field("References statements", strings.Join(refs, "\n"), true)
	}
	if len(s.Reasons) > 0 {
		d.field("Rejection reasons", strings.Join(s.Reasons, "\n"), false)
	}
}

// orText is s, or alt when s is empty.
func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// statementReport renders the report of the tenant's statement id, its
// ID or its EU reference number (StatementReport), and answers the
// statement's ID with it. It fails with apierr.NotFound for a statement
// the tenant does not have.
//
// The statement's batches share reports.batch_plot_pages: when their
// plots are more, every batch lists its plots in a table, so that the
// document, held in memory until it is written, stays as small as one
// batch's would.
func (s Source) statementReport(ctx context.Context, t storage.Tenant, id string) ([]byte, string, error) {
	proved, err := s.DDS.FindProved(ctx, t, id)
	if err != nil {
		return nil, "", err
	}
	st := Statement{Proved: proved}
	plots := 0
	for _, bid := range proved.DDS.BatchIDs {
		_, polygonIDs, err := s.Batches.Find(ctx, t, bid)
		var gone apierr.NotFound
		if errors.As(err, &gone) {
			// The statement's record still names it: the report says so
			// rather than failing (an archive would fail with it).
			st.MissingBatches = append(st.MissingBatches, bid)
			continue
		}
		if err != nil {
			return nil, "", err
		}
		st.BatchIDs = append(st.BatchIDs, bid)
		plots += len(polygonIDs)
	}
	pages := sharedPlotPages(plots, s.BatchPlotPages)
	st.Batch = func(ctx context.Context, bid string) (Batch, error) {
		b, err := s.batch(ctx, t, bid)
		b.PlotPages = pages
		return b, err
	}
	body, err := StatementReport(ctx, st)
	return body, proved.DDS.ID, err
}

// sharedPlotPages is the most plots each batch of a statement gives a
// page: limit while the statement's plots, all its batches together, are
// no more than limit, else none (every batch lists its plots in a table).
func sharedPlotPages(plots, limit int) int {
	if plots > limit {
		return 0
	}
	return limit
}
