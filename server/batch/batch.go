// Package batch registers batches of a product made from screened plots
// and assesses their risk: it checks a batch against its supplier mapping
// and its polygons, records it ASSESSING with its polygons (which can then
// no longer be deleted), and its job scores it (package risk), records the
// risk-assessment document, moves it to VERIFIED or HIGH_RISK and fires
// batch.risk_assessed. It also keeps the supplier mappings (ERP vendor to
// EU operator) that batches name.
package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/risk"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// maxListedRefusals is the most polygons a 404 or 422 lists; a last
// detail counts the others.
const maxListedRefusals = 1000

// Options are what the service needs.
type Options struct {
	DB     *storage.DB
	Jobs   *work.Queue
	Events *event.Publisher
	// Benchmark is the country benchmark batches are assessed with.
	Benchmark *risk.Benchmark
	// MaxScore is the highest risk score of a NEGLIGIBLE batch.
	MaxScore int
	// AppVersion is the application's version, recorded in each
	// risk-assessment document.
	AppVersion string
}

// Service registers, assesses and reads batches, and keeps supplier
// mappings.
type Service struct {
	o Options
}

// New returns the service and registers its job with o.Jobs.
func New(o Options) *Service {
	s := &Service{o: o}
	o.Jobs.Handle(work.BatchRiskAssessment, s.runAssessment)
	return s
}

// Register records b ASSESSING with its polygons, which can then no longer
// be deleted, and queues the job that assesses it, in the caller's
// transaction; it sets b's ID, job, status and creation time. It writes
// nothing when it refuses: a 404 naming each missing reference (the
// supplier mapping, polygons) or a 422 naming each broken rule (an hsCode
// Annex I lists only for other commodities, polygons not COMPLIANT or of
// another commodity).
func (s *Service) Register(tx *storage.Tx, t storage.Tenant, b *storage.Batch, polygonIDs []string) error {
	if err := checkRules(tx, t, b, polygonIDs); err != nil {
		return err
	}
	b.ID = storage.NewID("bat", tx.Now())
	input, err := json.Marshal(JobInput{BatchID: b.ID})
	if err != nil {
		return err
	}
	job, err := s.o.Jobs.Enqueue(tx, t, work.BatchRiskAssessment, 1, input)
	if err != nil {
		return err
	}
	b.JobID, b.Status, b.CreatedAt = job.ID, storage.BatchAssessing, tx.Now()
	if err := tx.PutBatch(t, b); err != nil {
		return err
	}
	return tx.PutBatchPolygons(t, b.ID, polygonIDs)
}

// checkRules refuses a well-formed batch, writing nothing, whose supplier
// mapping or polygons do not exist (404, each named), or that breaks a
// business rule (422, each case named): an hsCode Annex I lists only for
// other commodities, polygons not COMPLIANT or not of its commodity.
func checkRules(tx *storage.Tx, t storage.Tenant, b *storage.Batch, polygonIDs []string) error {
	var missing apierr.Problems
	if _, err := tx.FindSupplier(t, b.SupplierID); errors.Is(err, storage.ErrNotFound) {
		missing.Add(apierr.DetailSupplierNotFound, "supplierId", fmt.Sprintf("no supplier mapping has erpVendorId %s in this organisation and environment (POST /suppliers)", b.SupplierID))
	} else if err != nil {
		return err
	}
	var refused apierr.Problems
	otherProduct := 0
	if _, ok := risk.AnnexI().Match(b.Commodity, b.HSCode); !ok {
		otherProduct = 1
		refused.Add(apierr.DetailHSCodeNotInAnnexI, "hsCode", risk.AnnexI().CheckHSCode(b.Commodity, b.HSCode))
	}
	notCompliant, otherCommodity, unknown := 0, 0, 0
	for i, id := range polygonIDs {
		field := fmt.Sprintf("polygonIds[%d]", i)
		p, err := tx.FindPolygon(t, id)
		if errors.Is(err, storage.ErrNotFound) {
			unknown++
			if unknown <= maxListedRefusals {
				missing.Add(apierr.DetailPolygonNotFound, field, fmt.Sprintf("no polygon %s in this organisation and environment", id))
			}
			continue
		}
		if err != nil {
			return err
		}
		if p.Status != geo.StatusCompliant {
			notCompliant++
			if len(refused) < maxListedRefusals {
				issue := fmt.Sprintf("polygon %s is %s", id, p.Status)
				if p.FailureReason != "" {
					issue += " (" + p.FailureReason + ")"
				}
				refused.Add(apierr.DetailPolygonNotCompliant, field, issue+": only COMPLIANT polygons may be in a batch; delete it and submit a corrected plot")
			}
		}
		if p.Commodity != b.Commodity {
			otherCommodity++
			if len(refused) < maxListedRefusals {
				refused.Add(apierr.DetailCommodityMismatch, field, fmt.Sprintf("polygon %s is a plot of %s, the batch is of %s", id, p.Commodity, b.Commodity))
			}
		}
	}
	if len(missing) > 0 {
		if unknown > maxListedRefusals {
			missing.Add(geo.CodeTooManyProblems, "polygonIds", fmt.Sprintf("%d more unknown polygons are not listed", unknown-maxListedRefusals))
		}
		msg := missing[0].Issue
		if len(missing) > 1 {
			msg = fmt.Sprintf("%d of the batch's references were not found", len(missing))
		}
		return &apierr.Error{Status: apierr.StatusNotFound, Code: apierr.CodeNotFound, Message: msg, Details: missing}
	}
	if len(refused) == 1 && otherProduct == 1 {
		return apierr.BusinessRule(refused[0].Code, refused[0].Field, refused[0].Issue)
	}
	if len(refused) > 0 {
		if n := otherProduct + notCompliant + otherCommodity - len(refused); n > 0 {
			refused.Add(geo.CodeTooManyProblems, "polygonIds", fmt.Sprintf("%d more refusals are not listed", n))
		}
		var parts []string
		if otherProduct > 0 {
			parts = append(parts, fmt.Sprintf("hsCode %s is not a product of %s", b.HSCode, b.Commodity))
		}
		if notCompliant > 0 {
			parts = append(parts, fmt.Sprintf("%d not COMPLIANT", notCompliant))
		}
		if otherCommodity > 0 {
			parts = append(parts, fmt.Sprintf("%d of another commodity", otherCommodity))
		}
		return &apierr.Error{Status: apierr.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
			Message: "a batch must be a product of its commodity from COMPLIANT plots of it: " + strings.Join(parts, ", "), Details: refused}
	}
	return nil
}

// List returns the tenant's batches that match f, newest first, one page,
// and whether more follow. It fails only when the store does.
func (s *Service) List(ctx context.Context, t storage.Tenant, f storage.BatchFilter, p storage.Page) ([]*storage.Batch, bool, error) {
	var list []*storage.Batch
	var more bool
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		list, more, err = tx.FindBatches(t, f, p)
		return err
	})
	return list, more, err
}

// Find returns the batch and its polygon IDs in the order it was
// registered with, or apierr.NotFound.
func (s *Service) Find(ctx context.Context, t storage.Tenant, id string) (*storage.Batch, []string, error) {
	var b *storage.Batch
	var ids []string
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if b, err = tx.FindBatch(t, id); err != nil {
			return err
		}
		ids, err = tx.FindBatchPolygons(t, id)
		return err
	})
	if err != nil {
		return nil, nil, apierr.Named(err, "batch", id)
	}
	return b, ids, nil
}

// Assessment returns the batch's risk-assessment document as it was
// recorded, and done; while the batch is ASSESSING, a RiskAssessment with
// its IDs and status only, and not done. It returns apierr.NotFound for
// an unknown batch.
func (s *Service) Assessment(ctx context.Context, t storage.Tenant, id string) (doc json.RawMessage, done bool, err error) {
	var b *storage.Batch
	err = s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if b, err = tx.FindBatch(t, id); err != nil {
			return err
		}
		if b.Status == storage.BatchAssessing {
			return nil
		}
		doc, err = tx.FindBatchAssessment(t, id)
		return err
	})
	if err != nil {
		return nil, false, apierr.Named(err, "batch", id)
	}
	if doc != nil {
		return doc, true, nil
	}
	doc, err = storage.MarshalJSON(RiskAssessment{BatchID: b.ID, JobID: b.JobID, Status: b.Status, Factors: []risk.Factor{}})
	return doc, false, err
}
