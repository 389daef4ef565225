package polygon_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// mixedPlots is a collection of n plots: every 7th in the sandbox's
// deforestation box (HIGH_RISK), every 11th of the others in its box
// without data (FAILED), the rest COMPLIANT; and the counts by status
// that the job must end with.
func mixedPlots(n int) (string, map[string]int) {
	feats := make([]string, n)
	counts := map[string]int{}
	for i := range feats {
		var coords string
		switch {
		case i%7 == 0:
			coords, counts[geo.StatusHighRisk] = square(-61.5+float64(i)*1e-4, -10.5, 0.0001), counts[geo.StatusHighRisk]+1
		case i%11 == 0:
			coords, counts[geo.StatusFailed] = square(10.5+float64(i)*1e-4, 10.5, 0.0001), counts[geo.StatusFailed]+1
		default:
			coords, counts[geo.StatusCompliant] = square(5+float64(i%50)*0.01, 6+float64(i/50)*0.01, 0.001), counts[geo.StatusCompliant]+1
		}
		feats[i] = plot(fmt.Sprintf("plot-%d", i), coords)
	}
	return collection(feats...), counts
}

// screened queues body as one job, runs it to its end and returns it.
func screened(tb testing.TB, b *apitest.Bench, s *polygon.Service, body string) *storage.Job {
	tb.Helper()
	job := submit(tb, b, s, body)
	b.RunJobs(tb)
	if job = b.WaitJob(tb, tenant, job.ID); job.Status != storage.JobCompleted {
		tb.Fatalf("job %s: %s %+v", job.ID, job.Status, job.Error)
	}
	return job
}

// decodeResults decodes a page of a polygon job's results.
func decodeResults(tb testing.TB, raws []json.RawMessage) []polygon.Result {
	tb.Helper()
	out := make([]polygon.Result, len(raws))
	for i, raw := range raws {
		if err := json.Unmarshal(raw, &out[i]); err != nil {
			tb.Fatalf("result %s: %v", raw, err)
		}
	}
	return out
}

// checkProofs checks that the page's proofs are those of its results'
// ledger entries, in their order, and that each proves its entry.
func checkProofs(tb testing.TB, p *work.Page) {
	tb.Helper()
	rs := decodeResults(tb, p.Results)
	if len(p.Proofs) != len(rs) {
		tb.Fatalf("%d proofs for %d results", len(p.Proofs), len(rs))
	}
	for i, pr := range p.Proofs {
		if pr.Index != rs[i].LedgerIndex {
			tb.Fatalf("proof %d is of entry %d, result %+v", i, pr.Index, rs[i])
		}
		hashes := make([]tlog.Hash, len(pr.Proof))
		for k, h := range pr.Proof {
			hashes[k] = mustHash(tb, h)
		}
		if err := tlog.CheckRecord(hashes, pr.TreeSize, mustHash(tb, pr.RootHash), pr.Index, mustHash(tb, pr.TransactionHash)); err != nil {
			tb.Fatalf("proof of entry %d: %v", pr.Index, err)
		}
	}
}

func mustHash(tb testing.TB, s string) tlog.Hash {
	tb.Helper()
	var h tlog.Hash
	if b, err := hex.DecodeString(s); err != nil || len(b) != len(h) {
		tb.Fatalf("hash %q: %v", s, err)
	} else {
		copy(h[:], b)
	}
	return h
}

// TestQueue_FindAndResults pages through the results of a polygon job of
// a few chunks: the first page with the counts of all the results and the
// proofs of its own entries, then every page after it by cursor, in
// feature order; and the refusals of a cursor that is not one of the job's.
func TestQueue_FindAndResults(t *testing.T) {
	b, s := newService(t, 1000)
	ctx := context.Background()
	const n = 2*polygon.ChunkSize + 37
	body, counts := mixedPlots(n)
	job := screened(t, b, s, body)
	wantCounts := storage.JobResultCounts{Total: n, ByStatus: counts}
	if job.ResultCounts == nil || !reflect.DeepEqual(*job.ResultCounts, wantCounts) || len(job.LedgerIndexes) != 0 {
		t.Fatalf("job counts %+v, ledger indexes %d; want %+v kept with the job, the entries in the results", job.ResultCounts, len(job.LedgerIndexes), wantCounts)
	}

	first, err := b.Jobs.Find(ctx, tenant, job.ID, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Results) != 100 || first.Next != job.ID+"_99" || !reflect.DeepEqual(first.Counts, wantCounts) {
		t.Fatalf("first page: %d results, next %q, counts %+v; want 100, %s_99, %+v", len(first.Results), first.Next, first.Counts, job.ID, wantCounts)
	}
	checkProofs(t, first)

	// Following the cursors yields every feature once, in order.
	var all []polygon.Result
	all = append(all, decodeResults(t, first.Results)...)
	for next := first.Next; next != ""; {
		p, err := b.Jobs.Results(ctx, tenant, job.ID, storage.Page{After: next, Limit: 150})
		if err != nil {
			t.Fatalf("page after %s: %v", next, err)
		}
		if p.Proofs != nil || p.Counts.Total != 0 {
			t.Errorf("page after %s carries proofs or counts", next)
		}
		all = append(all, decodeResults(t, p.Results)...)
		next = p.Next
	}
	got := map[string]int{}
	for i, r := range all {
		if r.FeatureIndex != i || r.PolygonID != storage.PolygonID(job.ID, i) || r.LedgerIndex != int64(i) {
			t.Fatalf("result %d of the pages: %+v", i, r)
		}
		got[r.EUDRStatus]++
	}
	if len(all) != n || !reflect.DeepEqual(got, counts) {
		t.Errorf("pages hold %d results counted %v, want %d counted %v", len(all), got, n, counts)
	}

	// One page of everything; a page from the last item on is empty.
	if p, err := b.Jobs.Find(ctx, tenant, job.ID, 1000); err != nil || len(p.Results) != n || p.Next != "" || len(p.Proofs) != n {
		t.Errorf("Find with room for all: %d results, next %q, %d proofs, %v", len(p.Results), p.Next, len(p.Proofs), err)
	}
	last := fmt.Sprintf("%s_%d", job.ID, n-1)
	if p, err := b.Jobs.Results(ctx, tenant, job.ID, storage.Page{After: last, Limit: 10}); err != nil || len(p.Results) != 0 || p.Next != "" {
		t.Errorf("page after the last result: %+v %v, want empty and no next", p, err)
	}

	other := submit(t, b, s, collection(fixtures[3]))
	for _, tc := range []struct{ name, cursor, issue string }{
		{"Garbage", "nope", "must be the X-Next-Cursor"},
		{"Negative", job.ID + "_-1", "must be the X-Next-Cursor"},
		{"NotCanonical", job.ID + "_007", "must be the X-Next-Cursor"},
		{"NoItem", job.ID + "_", "must be the X-Next-Cursor"},
		{"AnotherJob", other.ID + "_99", "is a cursor of job " + other.ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.Jobs.Results(ctx, tenant, job.ID, storage.Page{After: tc.cursor, Limit: 10})
			e := apierr.From(err)
			if e.Status != 400 || e.Code != apierr.CodeValidationFailed || len(e.Details) != 1 || e.Details[0].Field != "query.cursor" ||
				e.Details[0].Code != apierr.DetailInvalidValue || !strings.Contains(e.Details[0].Issue, tc.issue) {
				t.Errorf("cursor %q: %v %+v, want a 400 at query.cursor saying %q", tc.cursor, err, e.Details, tc.issue)
			}
		})
	}
	// A job's own cursor does not page another job.
	if _, err := b.Jobs.Results(ctx, tenant, other.ID, storage.Page{After: first.Next, Limit: 10}); apierr.From(err).Status != 400 {
		t.Errorf("job %s's cursor on job %s: %v, want a 400", job.ID, other.ID, err)
	}
	production := storage.Tenant{Org: tenant.Org, Env: storage.Production}
	for name, read := range map[string]func(t storage.Tenant, id string) error{
		"Find": func(t storage.Tenant, id string) error { _, err := b.Jobs.Find(ctx, t, id, 10); return err },
		"Results": func(t storage.Tenant, id string) error {
			_, err := b.Jobs.Results(ctx, t, id, storage.Page{Limit: 10})
			return err
		},
	} {
		if err := read(tenant, "job_nope"); !errors.As(err, new(apierr.NotFound)) {
			t.Errorf("%s of an unknown job: %v, want apierr.NotFound", name, err)
		}
		if err := read(production, job.ID); !errors.As(err, new(apierr.NotFound)) {
			t.Errorf("%s of the sandbox's job in production: %v, want apierr.NotFound", name, err)
		}
	}
}

// legacyResult is a polygon job's result as versions that listed the
// job's ledger entries in the job record wrote it.
type legacyResult struct {
	FeatureIndex  int     `json:"featureIndex"`
	ExternalID    *string `json:"externalId"`
	PolygonID     string  `json:"polygonId"`
	EUDRStatus    string  `json:"eudrStatus"`
	FailureReason *string `json:"failureReason"`
}

// TestQueue_FindEarlierLayout reads a polygon job recorded by an earlier
// version: its results without their ledger entry, the entries listed in
// the job (the entry of feature i at i), no counts. Its pages read as
// this version's do, byte for byte, with the same counts and proofs.
func TestQueue_FindEarlierLayout(t *testing.T) {
	b, s := newService(t, 1000)
	ctx := context.Background()
	body, _ := mixedPlots(30)
	job := screened(t, b, s, body)
	want, err := b.Jobs.Find(ctx, tenant, job.ID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	b.Update(t, func(tx *storage.Tx) error {
		job.ResultCounts, job.LedgerIndexes = nil, nil
		for _, r := range decodeResults(t, want.Results) {
			old, err := json.Marshal(legacyResult{r.FeatureIndex, r.ExternalID, r.PolygonID, r.EUDRStatus, r.FailureReason})
			if err != nil {
				return err
			}
			if _, err := tx.PutJobResult(tenant, job.ID, r.FeatureIndex, old); err != nil {
				return err
			}
			job.LedgerIndexes = append(job.LedgerIndexes, r.LedgerIndex)
		}
		return tx.PutJob(tenant, job)
	})
	if j := b.Job(t, tenant, job.ID); j.ResultCounts != nil || len(j.LedgerIndexes) != 30 {
		t.Fatalf("the job as an earlier version left it: counts %+v, %d ledger indexes", j.ResultCounts, len(j.LedgerIndexes))
	}

	got, err := b.Jobs.Find(ctx, tenant, job.ID, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Counts, want.Counts) || !reflect.DeepEqual(got.Proofs, want.Proofs) || len(got.Results) != len(want.Results) {
		t.Fatalf("earlier layout: counts %+v, %d proofs, %d results; want %+v, %d, %d",
			got.Counts, len(got.Proofs), len(got.Results), want.Counts, len(want.Proofs), len(want.Results))
	}
	for i := range got.Results {
		if string(got.Results[i]) != string(want.Results[i]) {
			t.Errorf("result %d: %s, want %s", i, got.Results[i], want.Results[i])
		}
	}
	first, err := b.Jobs.Find(ctx, tenant, job.ID, 10)
	if err != nil || len(first.Proofs) != 10 || !reflect.DeepEqual(first.Proofs, want.Proofs[:10]) {
		t.Fatalf("first page of 10 of the earlier layout: %+v %v", first, err)
	}
	page, err := b.Jobs.Results(ctx, tenant, job.ID, storage.Page{After: first.Next, Limit: 10})
	if err != nil || len(page.Results) != 10 || string(page.Results[0]) != string(want.Results[10]) {
		t.Fatalf("second page of the earlier layout: %+v %v", page, err)
	}
}
