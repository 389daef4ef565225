package storage_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/eudr/eudr/storage"
)

var polT = storage.Tenant{Org: "a", Env: storage.Sandbox}

// Two jobs, the second newer: job ULIDs sort by time.
const (
	olderJob = "job_01JD0000000000000000000000"
	newerJob = "job_01JD0000010000000000000000"
)

func TestPolygonID(t *testing.T) {
	if got := storage.PolygonID(olderJob, 42); got != "pol_01JD0000000000000000000000_000042" {
		t.Errorf("PolygonID = %q", got)
	}
	// Feature order within a job, job order across jobs.
	ids := []string{storage.PolygonID(olderJob, 9), storage.PolygonID(olderJob, 10), storage.PolygonID(olderJob, 999999),
		storage.PolygonID(newerJob, 0)}
	if !slices.IsSorted(ids) {
		t.Errorf("IDs out of order: %v", ids)
	}
}

func putPolygon(t *testing.T, db *storage.DB, tn storage.Tenant, jobID string, i int, status, supplier, commodity string) string {
	t.Helper()
	p := &storage.Polygon{ID: storage.PolygonID(jobID, i), JobID: jobID, FeatureIndex: i, Status: status,
		SupplierID: supplier, Commodity: commodity}
	d := &storage.PolygonDetail{Feature: json.RawMessage(fmt.Sprintf(`{"i":%d,"s":"<&>"}`, i)), Evidence: json.RawMessage(`{"e":1}`)}
	mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutPolygon(tn, p, d) })
	return p.ID
}

func findPolygons(t *testing.T, db *storage.DB, f storage.PolygonFilter, p storage.Page) ([]string, bool) {
	t.Helper()
	var ids []string
	var more bool
	mustView(t, db, func(tx *storage.Tx) error {
		list, m, err := tx.FindPolygons(polT, f, p)
		if err != nil {
			return err
		}
		for _, pol := range list {
			ids = append(ids, pol.ID)
		}
		more = m
		return nil
	})
	return ids, more
}

func TestTx_FindPolygons(t *testing.T) {
	db := MustOpenDB(t)
	var all []string // newest first, as listed
	for _, job := range []string{olderJob, newerJob} {
		for i := range 5 {
			status, supplier, commodity := "COMPLIANT", "V-1", "cocoa"
			if i%2 == 1 {
				status, supplier, commodity = "FAILED", "V-2", "coffee"
			}
			all = append([]string{putPolygon(t, db, polT, job, i, status, supplier, commodity)}, all...)
		}
	}
	putPolygon(t, db, storage.Tenant{Org: "b", Env: storage.Sandbox}, newerJob, 7, "COMPLIANT", "V-1", "cocoa")

	pick := func(keep func(i int) bool) []string {
		var out []string
		for i, id := range all {
			if keep(i) {
				out = append(out, id)
			}
		}
		return out
	}
	first := storage.Page{Limit: 100}
	cases := []struct {
		name string
		f    storage.PolygonFilter
		want []string
	}{
		{"all", storage.PolygonFilter{}, all},
		{"newer job", storage.PolygonFilter{JobID: newerJob}, all[:5]},
		{"older job", storage.PolygonFilter{JobID: olderJob}, all[5:]},
		{"unknown job", storage.PolygonFilter{JobID: "job_01JD0000020000000000000000"}, nil},
		{"not a job ID", storage.PolygonFilter{JobID: "nope"}, nil},
		{"the ULID of a job with another prefix", storage.PolygonFilter{JobID: "bat_" + newerJob[4:]}, nil},
		{"failed", storage.PolygonFilter{Status: "FAILED"}, pick(func(i int) bool { return i%5 == 1 || i%5 == 3 })},
		{"supplier and job", storage.PolygonFilter{JobID: olderJob, SupplierID: "V-1"}, pick(func(i int) bool { return i >= 5 && i%2 == 1 })},
		{"commodity", storage.PolygonFilter{Commodity: "coffee", Status: "COMPLIANT"}, nil},
	}
	for _, c := range cases {
		if got, more := findPolygons(t, db, c.f, first); !slices.Equal(got, c.want) || more {
			t.Errorf("%s: got %v (more %v), want %v", c.name, got, more, c.want)
		}
	}

	// Pages of 3 through the older job's polygons, and through everything.
	for _, c := range []struct {
		f    storage.PolygonFilter
		want []string
	}{{storage.PolygonFilter{JobID: olderJob}, all[5:]}, {storage.PolygonFilter{}, all}} {
		var got []string
		p := storage.Page{Limit: 3}
		for range 10 {
			ids, more := findPolygons(t, db, c.f, p)
			got = append(got, ids...)
			if !more {
				break
			}
			p.After = ids[len(ids)-1]
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("paged %+v: got %v, want %v", c.f, got, c.want)
		}
	}
	// A cursor past the job's range starts at its newest polygon.
	if got, _ := findPolygons(t, db, storage.PolygonFilter{JobID: olderJob}, storage.Page{Limit: 1, After: all[0]}); !slices.Equal(got, all[5:6]) {
		t.Errorf("cursor from another job: got %v, want %v", got, all[5:6])
	}
}

func TestTx_PutPolygon(t *testing.T) {
	db := MustOpenDB(t)
	id := putPolygon(t, db, polT, olderJob, 3, "FAILED", "", "cocoa")
	// Written again (a feature screened twice): one record, the last.
	id2 := putPolygon(t, db, polT, olderJob, 3, "COMPLIANT", "", "cocoa")
	if id != id2 {
		t.Fatalf("IDs %s and %s", id, id2)
	}
	if got, _ := findPolygons(t, db, storage.PolygonFilter{}, storage.Page{Limit: 10}); !slices.Equal(got, []string{id}) {
		t.Errorf("after rewriting: %v", got)
	}
	mustView(t, db, func(tx *storage.Tx) error {
		p, err := tx.FindPolygon(polT, id)
		if err != nil || p.Status != "COMPLIANT" || p.FeatureIndex != 3 {
			t.Errorf("FindPolygon = %+v, %v", p, err)
		}
		d, err := tx.FindPolygonDetail(polT, id)
		// Stored byte for byte: no HTML escaping of <&>.
		if err != nil || string(d.Feature) != `{"i":3,"s":"<&>"}` || string(d.Evidence) != `{"e":1}` {
			t.Errorf("FindPolygonDetail = %s %s, %v", d.Feature, d.Evidence, err)
		}
		if _, err := tx.FindPolygon(storage.Tenant{Org: "b", Env: storage.Sandbox}, id); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("other tenant: %v, want ErrNotFound", err)
		}
		return nil
	})
	mustUpdate(t, db, func(tx *storage.Tx) error { return tx.DeletePolygon(polT, id) })
	mustUpdate(t, db, func(tx *storage.Tx) error {
		if err := tx.DeletePolygon(polT, id); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("second delete: %v, want ErrNotFound", err)
		}
		if _, err := tx.FindPolygonDetail(polT, id); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("detail after delete: %v, want ErrNotFound", err)
		}
		return nil
	})
}

func TestTx_JobResultsAndInput(t *testing.T) {
	db := MustOpenDB(t)
	mustUpdate(t, db, func(tx *storage.Tx) error {
		// Out of order, past one byte of index, one rewritten, and another
		// job's whose ID extends this one's.
		for k, i := range []int{256, 1, 0, 255, 1} {
			replaced, err := tx.PutJobResult(polT, olderJob, i, json.RawMessage(fmt.Sprint(i)))
			if err != nil {
				return err
			}
			if want := k == 4; replaced != want {
				t.Errorf("PutJobResult of item %d (put %d): replaced %v, want %v", i, k, replaced, want)
			}
		}
		if _, err := tx.PutJobResult(polT, olderJob+"X", 0, json.RawMessage(`"other"`)); err != nil {
			return err
		}
		return tx.PutJobInput(polT, olderJob, []byte(`{"type":"FeatureCollection"}`))
	})
	mustView(t, db, func(tx *storage.Tx) error {
		rs, err := tx.FindJobResults(polT, olderJob)
		var got []string
		for _, r := range rs {
			got = append(got, string(r))
		}
		if err != nil || !slices.Equal(got, []string{"0", "1", "255", "256"}) {
			t.Errorf("FindJobResults = %v, %v", got, err)
		}
		// Pages start at an item, recorded or not, and stop at the job's
		// last result.
		for _, tc := range []struct {
			from, limit int
			want        []int
			more        bool
		}{
			{0, 2, []int{0, 1}, true}, {1, 2, []int{1, 255}, true}, {2, 2, []int{255, 256}, false},
			{0, 4, []int{0, 1, 255, 256}, false}, {256, 1, []int{256}, false}, {257, 10, nil, false},
		} {
			page, more, err := tx.FindJobResultPage(polT, olderJob, tc.from, tc.limit)
			var items []int
			for _, r := range page {
				if string(r.Value) != fmt.Sprint(r.Item) {
					t.Errorf("FindJobResultPage(%d, %d): item %d holds %s", tc.from, tc.limit, r.Item, r.Value)
				}
				items = append(items, r.Item)
			}
			if err != nil || !slices.Equal(items, tc.want) || more != tc.more {
				t.Errorf("FindJobResultPage(%d, %d) = %v, more %v, %v; want %v, more %v", tc.from, tc.limit, items, more, err, tc.want, tc.more)
			}
		}
		if in, err := tx.FindJobInput(polT, olderJob); err != nil || string(in) != `{"type":"FeatureCollection"}` {
			t.Errorf("FindJobInput = %s, %v", in, err)
		}
		if _, err := tx.FindJobInput(polT, newerJob); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("FindJobInput of another job: %v, want ErrNotFound", err)
		}
		return nil
	})
	mustUpdate(t, db, func(tx *storage.Tx) error { return tx.DeleteJobInput(polT, olderJob) })
	mustView(t, db, func(tx *storage.Tx) error {
		if _, err := tx.FindJobInput(polT, olderJob); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("FindJobInput after delete: %v, want ErrNotFound", err)
		}
		return nil
	})
}
