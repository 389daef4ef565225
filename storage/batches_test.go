package storage_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/eudr/eudr/storage"
)

// batchID is a batch ID whose ULID sorts by n.
func batchID(n int) string { return fmt.Sprintf("bat_01JD%022d", n) }

func putBatch(t *testing.T, db *storage.DB, tn storage.Tenant, n int, status, supplier string, polygons ...string) *storage.Batch {
	t.Helper()
	unit := json.Number("12.5")
	b := &storage.Batch{ID: batchID(n), JobID: fmt.Sprintf("job_01JD%022d", n), Reference: fmt.Sprint("REF-", n), Commodity: "cocoa",
		HSCode: "1801", SupplierID: supplier, PolygonCount: len(polygons), NetMassKg: "1000", SupplementaryUnit: &unit,
		SupplementaryUnitType: "NAR", HarvestStart: "2026-01-01", Status: status, CreatedAt: testNow}
	mustUpdate(t, db, func(tx *storage.Tx) error {
		if err := tx.PutBatch(tn, b); err != nil {
			return err
		}
		return tx.PutBatchPolygons(tn, b.ID, polygons)
	})
	return b
}

func TestTx_Batches(t *testing.T) {
	db := MustOpenDB(t)
	p1 := putPolygon(t, db, polT, olderJob, 1, "COMPLIANT", "V-1", "cocoa")
	p2 := putPolygon(t, db, polT, olderJob, 2, "COMPLIANT", "V-1", "cocoa")
	p3 := putPolygon(t, db, polT, olderJob, 3, "COMPLIANT", "V-2", "cocoa")
	b1 := putBatch(t, db, polT, 1, storage.BatchAssessing, "V-1", p2, p1)
	putBatch(t, db, polT, 2, storage.BatchVerified, "V-1", p1)
	putBatch(t, db, polT, 3, storage.BatchHighRisk, "V-2", p3)
	other := storage.Tenant{Org: "b", Env: storage.Sandbox}
	putBatch(t, db, other, 4, storage.BatchVerified, "V-1", p1)

	mustView(t, db, func(tx *storage.Tx) error {
		got, err := tx.FindBatch(polT, b1.ID)
		if err != nil || got.Reference != "REF-1" || *got.SupplementaryUnit != "12.5" || got.PolygonCount != 2 || !got.CreatedAt.Equal(testNow) {
			t.Errorf("FindBatch = %+v, %v", got, err)
		}
		if _, err := tx.FindBatch(other, b1.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("FindBatch of another tenant: %v, want ErrNotFound", err)
		}
		ids, err := tx.FindBatchPolygons(polT, b1.ID)
		if err != nil || !slices.Equal(ids, []string{p2, p1}) {
			t.Errorf("FindBatchPolygons = %v, %v; want the order given", ids, err)
		}
		for _, c := range []struct {
			polygon string
			want    []string
		}{{p1, []string{batchID(1), batchID(2)}}, {p2, []string{batchID(1)}}, {p3, []string{batchID(3)}}, {"pol_nope", nil}} {
			if got, err := tx.PolygonBatches(polT, c.polygon); err != nil || !slices.Equal(got, c.want) {
				t.Errorf("PolygonBatches(%s) = %v, %v; want %v", c.polygon, got, err, c.want)
			}
		}
		// A polygon ID that extends another is not confused with it.
		if got, _ := tx.PolygonBatches(polT, p1[:len(p1)-1]); got != nil {
			t.Errorf("PolygonBatches of a prefix: %v", got)
		}
		return nil
	})

	ids := func(f storage.BatchFilter, p storage.Page) ([]string, bool) {
		var out []string
		var more bool
		mustView(t, db, func(tx *storage.Tx) error {
			list, m, err := tx.FindBatches(polT, f, p)
			for _, b := range list {
				out = append(out, b.ID)
			}
			more = m
			return err
		})
		return out, more
	}
	all := storage.Page{Limit: 100}
	for _, c := range []struct {
		f    storage.BatchFilter
		want []string
	}{
		{storage.BatchFilter{}, []string{batchID(3), batchID(2), batchID(1)}},
		{storage.BatchFilter{SupplierID: "V-1"}, []string{batchID(2), batchID(1)}},
		{storage.BatchFilter{Status: storage.BatchVerified}, []string{batchID(2)}},
		{storage.BatchFilter{Status: storage.BatchVerified, SupplierID: "V-2"}, nil},
	} {
		if got, more := ids(c.f, all); !slices.Equal(got, c.want) || more {
			t.Errorf("FindBatches(%+v) = %v (more %v), want %v", c.f, got, more, c.want)
		}
	}
	if got, more := ids(storage.BatchFilter{}, storage.Page{Limit: 2}); !slices.Equal(got, []string{batchID(3), batchID(2)}) || !more {
		t.Errorf("first page of 2: %v (more %v)", got, more)
	}
	if got, more := ids(storage.BatchFilter{}, storage.Page{Limit: 2, After: batchID(2)}); !slices.Equal(got, []string{batchID(1)}) || more {
		t.Errorf("second page of 2: %v (more %v)", got, more)
	}
	mustView(t, db, func(tx *storage.Tx) error {
		list, more, err := tx.FindBatches(storage.Tenant{Org: "none", Env: storage.Production}, storage.BatchFilter{}, all)
		if err != nil || len(list) != 0 || more {
			t.Errorf("FindBatches of a tenant without batches: %v %v %v", list, more, err)
		}
		return nil
	})

	// The assessment is kept byte for byte; none until recorded.
	mustView(t, db, func(tx *storage.Tx) error {
		if _, err := tx.FindBatchAssessment(polT, b1.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("FindBatchAssessment before: %v, want ErrNotFound", err)
		}
		return nil
	})
	doc := json.RawMessage(`{"riskScore":25,"note":"<&>"}`)
	now := testNow.Add(time.Minute)
	score := 25
	mustUpdate(t, db, func(tx *storage.Tx) error {
		b1.Status, b1.RiskScore, b1.RiskLevel, b1.AssessedAt = storage.BatchVerified, &score, "NEGLIGIBLE", &now
		if err := tx.PutBatch(polT, b1); err != nil {
			return err
		}
		return tx.PutBatchAssessment(polT, b1.ID, doc)
	})
	mustView(t, db, func(tx *storage.Tx) error {
		got, err := tx.FindBatchAssessment(polT, b1.ID)
		if err != nil || string(got) != string(doc) {
			t.Errorf("FindBatchAssessment = %s, %v", got, err)
		}
		b, err := tx.FindBatch(polT, b1.ID)
		if err != nil || b.Status != storage.BatchVerified || *b.RiskScore != 25 || !b.AssessedAt.Equal(now) {
			t.Errorf("FindBatch after assessment = %+v, %v", b, err)
		}
		return nil
	})
}

func TestTx_DeletePolygonInUse(t *testing.T) {
	db := MustOpenDB(t)
	used := putPolygon(t, db, polT, olderJob, 1, "COMPLIANT", "V-1", "cocoa")
	free := putPolygon(t, db, polT, olderJob, 2, "COMPLIANT", "V-1", "cocoa")
	putBatch(t, db, polT, 1, storage.BatchVerified, "V-1", used)
	putBatch(t, db, polT, 2, storage.BatchAssessing, "V-1", used)

	var inUse *storage.PolygonInUseError
	mustUpdate(t, db, func(tx *storage.Tx) error {
		err := tx.DeletePolygon(polT, used)
		if !errors.As(err, &inUse) || inUse.PolygonID != used || !slices.Equal(inUse.BatchIDs, []string{batchID(1), batchID(2)}) {
			t.Errorf("DeletePolygon of a polygon in use: %v", err)
		}
		if err := tx.DeletePolygon(polT, free); err != nil {
			t.Errorf("DeletePolygon of a free polygon: %v", err)
		}
		return nil
	})
	mustView(t, db, func(tx *storage.Tx) error {
		if _, err := tx.FindPolygon(polT, used); err != nil {
			t.Errorf("the polygon in use was deleted: %v", err)
		}
		if _, err := tx.FindPolygonDetail(polT, used); err != nil {
			t.Errorf("the detail of the polygon in use was deleted: %v", err)
		}
		// Another tenant's batches do not hold this tenant's polygon.
		if got, _ := tx.PolygonBatches(storage.Tenant{Org: "b", Env: storage.Sandbox}, used); got != nil {
			t.Errorf("another tenant: %v", got)
		}
		return nil
	})
}

func TestTx_SupplierPolygonCounts(t *testing.T) {
	db := MustOpenDB(t)
	counts := func(supplier string) storage.StatusCounts {
		var c storage.StatusCounts
		mustView(t, db, func(tx *storage.Tx) error {
			var err error
			c, err = tx.SupplierPolygonCounts(polT, supplier)
			return err
		})
		return c
	}
	a := putPolygon(t, db, polT, olderJob, 0, "COMPLIANT", "V-1", "cocoa")
	putPolygon(t, db, polT, olderJob, 1, "HIGH_RISK", "V-1", "cocoa")
	putPolygon(t, db, polT, olderJob, 2, "FAILED", "V-1", "cocoa")
	putPolygon(t, db, polT, olderJob, 3, "COMPLIANT", "V-2", "cocoa")
	putPolygon(t, db, polT, olderJob, 4, "COMPLIANT", "", "cocoa")
	putPolygon(t, db, storage.Tenant{Org: "b", Env: storage.Sandbox}, olderJob, 5, "HIGH_RISK", "V-1", "cocoa")
	if got := counts("V-1"); fmt.Sprint(got) != "map[COMPLIANT:1 FAILED:1 HIGH_RISK:1]" {
		t.Errorf("V-1: %v", got)
	}
	// Screened again (a job resumed): replaced, not added.
	putPolygon(t, db, polT, olderJob, 2, "HIGH_RISK", "V-1", "cocoa")
	putPolygon(t, db, polT, olderJob, 0, "COMPLIANT", "V-1", "cocoa")
	if got := counts("V-1"); fmt.Sprint(got) != "map[COMPLIANT:1 HIGH_RISK:2]" {
		t.Errorf("V-1 after rewriting: %v", got)
	}
	// A rewrite under another supplier moves the count.
	putPolygon(t, db, polT, olderJob, 3, "COMPLIANT", "V-1", "cocoa")
	if got, v2 := counts("V-1"), counts("V-2"); fmt.Sprint(got) != "map[COMPLIANT:2 HIGH_RISK:2]" || len(v2) != 0 {
		t.Errorf("after moving a polygon: V-1 %v, V-2 %v", got, v2)
	}
	mustUpdate(t, db, func(tx *storage.Tx) error { return tx.DeletePolygon(polT, a) })
	if got := counts("V-1"); fmt.Sprint(got) != "map[COMPLIANT:1 HIGH_RISK:2]" {
		t.Errorf("V-1 after a delete: %v", got)
	}
	if got := counts("V-9"); len(got) != 0 {
		t.Errorf("unknown supplier: %v", got)
	}
}
