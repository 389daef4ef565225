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

var reportT = storage.Tenant{Org: "a", Env: storage.Sandbox}

var reportDay = time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)

// putScreened writes polygon i of job screened at at.
func putScreened(t *testing.T, db *storage.DB, tn storage.Tenant, jobID string, i int, at time.Time) string {
	t.Helper()
	p := &storage.Polygon{ID: storage.PolygonID(jobID, i), JobID: jobID, FeatureIndex: i, Status: "COMPLIANT", ScreenedAt: at}
	d := &storage.PolygonDetail{Feature: json.RawMessage(`{}`), Evidence: json.RawMessage(`{}`)}
	mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutPolygon(tn, p, d) })
	return p.ID
}

// eachPolygon lists the IDs EachPolygon gives after after, stopping after
// limit (0: all).
func eachPolygon(t *testing.T, db *storage.DB, tn storage.Tenant, from, to time.Time, after string, limit int) []string {
	t.Helper()
	stop := errors.New("stop")
	var ids []string
	mustView(t, db, func(tx *storage.Tx) error {
		err := tx.EachPolygon(tn, from, to, after, func(p *storage.Polygon) error {
			if limit > 0 && len(ids) == limit {
				return stop
			}
			ids = append(ids, p.ID)
			return nil
		})
		if errors.Is(err, stop) {
			return nil
		}
		return err
	})
	return ids
}

func TestReports_EachPolygon(t *testing.T) {
	db := MustOpenDB(t)
	var in []string
	for i := range 5 {
		in = append(in, putScreened(t, db, reportT, olderJob, i, reportDay.Add(time.Duration(i)*time.Hour)))
	}
	late := putScreened(t, db, reportT, newerJob, 0, reportDay.Add(-time.Hour)) // newer job, screened earlier
	putScreened(t, db, reportT, newerJob, 1, reportDay.Add(24*time.Hour))       // after the range
	putScreened(t, db, storage.Tenant{Org: "b", Env: storage.Sandbox}, olderJob, 9, reportDay)

	t.Run("Range", func(t *testing.T) {
		// [from, to): the first hour's polygon is in, the one at to is out.
		got := eachPolygon(t, db, reportT, reportDay, reportDay.Add(4*time.Hour), "", 0)
		if want := in[:4]; !slices.Equal(got, want) {
			t.Errorf("got %v, want %v", got, want)
		}
		got = eachPolygon(t, db, reportT, reportDay.Add(-2*time.Hour), reportDay.Add(24*time.Hour), "", 0)
		if want := append(slices.Clone(in), late); !slices.Equal(got, want) {
			t.Errorf("whole day: got %v, want %v", got, want)
		}
	})
	t.Run("Pages", func(t *testing.T) {
		var got []string
		for after := ""; ; {
			page := eachPolygon(t, db, reportT, reportDay.Add(-2*time.Hour), reportDay.Add(24*time.Hour), after, 2)
			if len(page) == 0 {
				break
			}
			got = append(got, page...)
			after = page[len(page)-1]
		}
		if want := append(slices.Clone(in), late); !slices.Equal(got, want) {
			t.Errorf("pages of 2: got %v, want %v", got, want)
		}
		// An after that is not a key starts at the next one.
		if got := eachPolygon(t, db, reportT, reportDay, reportDay.Add(24*time.Hour), in[1]+"x", 0); !slices.Equal(got, in[2:]) {
			t.Errorf("after a missing key: got %v, want %v", got, in[2:])
		}
	})
	t.Run("NoPolygons", func(t *testing.T) {
		if got := eachPolygon(t, db, storage.Tenant{Org: "none", Env: storage.Production}, reportDay, reportDay.Add(time.Hour), "", 0); got != nil {
			t.Errorf("tenant without polygons: got %v", got)
		}
	})
}

func TestReports_EachDDS(t *testing.T) {
	db := MustOpenDB(t)
	var ids []string
	for i := range 4 {
		d := &storage.DDS{ID: fmt.Sprintf("dds_01JD%022d", i), Status: storage.DDSDraft, CreatedAt: reportDay.Add(time.Duration(i) * time.Hour)}
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutDDS(reportT, d) })
		ids = append(ids, d.ID)
	}
	list := func(after string) []string {
		var out []string
		mustView(t, db, func(tx *storage.Tx) error {
			return tx.EachDDS(reportT, reportDay.Add(time.Hour), reportDay.Add(4*time.Hour), after, func(d *storage.DDS) error {
				out = append(out, d.ID)
				return nil
			})
		})
		return out
	}
	if got := list(""); !slices.Equal(got, ids[1:]) {
		t.Errorf("range: got %v, want %v", got, ids[1:])
	}
	if got := list(ids[2]); !slices.Equal(got, ids[3:]) {
		t.Errorf("after %s: got %v, want %v", ids[2], got, ids[3:])
	}
}

func TestTx_Reports(t *testing.T) {
	db := MustOpenDB(t)
	other := storage.Tenant{Org: "b", Env: storage.Production}
	done := func(h int) *time.Time { at := reportDay.Add(time.Duration(h) * time.Hour); return &at }
	reports := []struct {
		tn  storage.Tenant
		rep storage.Report
	}{
		{reportT, storage.Report{ID: "rpt_1", Status: storage.ReportReady, CompletedAt: done(1)}},
		{reportT, storage.Report{ID: "rpt_2", Status: storage.ReportReady, CompletedAt: done(5)}},
		{reportT, storage.Report{ID: "rpt_3", Status: storage.ReportPending}},
		{reportT, storage.Report{ID: "rpt_4", Status: storage.ReportFailed}},
		{other, storage.Report{ID: "rpt_5", Status: storage.ReportReady, CompletedAt: done(2)}},
	}
	for _, r := range reports {
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutReport(r.tn, &r.rep) })
	}
	mustView(t, db, func(tx *storage.Tx) error {
		got, err := tx.FindReport(reportT, "rpt_2")
		if err != nil || got.Status != storage.ReportReady || !got.CompletedAt.Equal(*done(5)) {
			t.Errorf("FindReport: %+v, %v", got, err)
		}
		if _, err := tx.FindReport(other, "rpt_1"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("FindReport of another tenant: %v, want ErrNotFound", err)
		}
		return nil
	})

	var expired []string
	mustUpdate(t, db, func(tx *storage.Tx) error {
		got, err := tx.ExpireReports(reportDay.Add(3 * time.Hour))
		for _, e := range got {
			expired = append(expired, e.Tenant.String()+" "+e.Report.ID)
		}
		return err
	})
	slices.Sort(expired)
	if want := []string{"a/sandbox rpt_1", "b/production rpt_5"}; !slices.Equal(expired, want) {
		t.Errorf("ExpireReports: got %v, want %v", expired, want)
	}
	mustView(t, db, func(tx *storage.Tx) error {
		for id, want := range map[string]string{"rpt_1": storage.ReportExpired, "rpt_2": storage.ReportReady,
			"rpt_3": storage.ReportPending, "rpt_4": storage.ReportFailed} {
			got, err := tx.FindReport(reportT, id)
			if err != nil || got.Status != want {
				t.Errorf("%s after expiry: %+v, %v; want %s", id, got, err, want)
			}
		}
		if got, _ := tx.FindReport(reportT, "rpt_1"); got.ExpiredAt == nil {
			t.Errorf("rpt_1: no expiredAt")
		}
		return nil
	})
	// Expired once: not again.
	mustUpdate(t, db, func(tx *storage.Tx) error {
		got, err := tx.ExpireReports(reportDay.Add(3 * time.Hour))
		if len(got) != 0 {
			t.Errorf("ExpireReports again: %d reports", len(got))
		}
		return err
	})
}
