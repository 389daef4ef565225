package main_test

// End-to-end test of a large job's results: GET /jobs/{jobId} answers the
// first page of them with the counts of all and a link to the rest, which
// GET /jobs/{jobId}/results pages through in feature order.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// resultsPlots is a collection of n small square plots: every 10th in the
// sandbox's deforestation box (HIGH_RISK), every 25th of the others in its
// box without data (FAILED), the rest COMPLIANT; and the counts by status
// the job must end with.
func resultsPlots(n int) (string, map[string]int) {
	feats := make([]string, n)
	counts := map[string]int{}
	for i := range feats {
		lon, lat, country, status := -1.5+float64(i%50)*0.002, 6.5+float64(i/50)*0.002, "GH", "COMPLIANT"
		switch {
		case i%10 == 0:
			lon, lat, country, status = -61.9+float64(i)*0.0003, -10.5, "BR", "HIGH_RISK"
		case i%25 == 0:
			lon, lat, country, status = 10.1+float64(i)*0.0003, 10.5, "NG", "FAILED"
		}
		counts[status]++
		feats[i] = polFeature(polSquare(lon, lat, 0.0005),
			map[string]any{"commodity": "cocoa", "producerCountry": country, "externalId": fmt.Sprintf("plot-%d", i)})
	}
	return polCollection(feats...), counts
}

func TestJobs_LargeJobResults(t *testing.T) {
	t.Parallel()
	p := startServer(t, noRateLimit...)
	key := p.createKey(t, sandbox)
	base := p.SandboxURL
	const n = 2500
	body, counts := resultsPlots(n)
	id := polMustPost(t, base, key, body, n)

	// Poll with a page of one result, which keeps each answer small.
	waitUntil(t, 2*time.Minute, "the job of 2,500 plots to finish", func() bool {
		var j struct{ Status string }
		apitest.Do(t, "GET", jobURL(base, id)+"?limit=1", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &j)
		return j.Status == "COMPLETED" || j.Status == "FAILED"
	})

	// The job: the first 1,000 results with their proofs, the counts of
	// all 2,500, the path of the next page; no list headers.
	r := apitest.Do(t, "GET", jobURL(base, id), apitest.WithKey(key), nil)
	j, msg := polCheckJob(r, id)
	if msg != "" {
		t.Fatal(msg)
	}
	next := eudrAPI + "/jobs/" + id + "/results?cursor=" + id + "_999&limit=1000"
	if j.Status != "COMPLETED" || len(j.Results) != 1000 || len(j.LedgerProofs) != 1000 || j.ResultCounts.Total != n ||
		len(j.ResultCounts.ByStatus) != len(counts) || j.NextResults == nil || *j.NextResults != next {
		t.Fatalf("job of %d plots: %s, %d results, %d proofs, counts %+v, next %v; want 1000 of %d counted %v, next %s",
			n, j.Status, len(j.Results), len(j.LedgerProofs), j.ResultCounts, j.NextResults, n, counts, next)
	}
	for s, c := range counts {
		if j.ResultCounts.ByStatus[s] != c {
			t.Errorf("resultCounts.byStatus[%s] = %d, want %d", s, j.ResultCounts.ByStatus[s], c)
		}
	}
	if r.Header.Get("Link") != "" || r.Header.Get("X-Next-Cursor") != "" {
		t.Errorf("the job answers list headers: Link %q, X-Next-Cursor %q", r.Header.Get("Link"), r.Header.Get("X-Next-Cursor"))
	}

	// Following nextResults, then each page's Link, yields every feature
	// once, in order (polAllResults checks it), counted as the job says.
	all := polAllResults(t, base, key, j)
	if len(all) != n {
		t.Fatalf("the pages hold %d results, want %d", len(all), n)
	}

	// The answer is bounded: all 2,500 results with their proofs would
	// take the bytes of the results and 2.5 times those of the page's
	// proofs; it takes less than half of that.
	whole := 0
	for _, res := range all {
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		whole += len(b)
	}
	for _, proof := range j.LedgerProofs {
		whole += len(proof) * n / 1000
	}
	if len(r.Body) >= whole/2 {
		t.Errorf("GET /jobs/{jobId} of %d plots: %d bytes, want under half of the %d all results and proofs would take", n, len(r.Body), whole)
	}
	t.Logf("GET /jobs/{jobId} of %d plots: %d bytes; all its results and proofs would take about %d", n, len(r.Body), whole)

	// ?limit= sizes the job's page and the pages of the list alike.
	small := apitest.Do(t, "GET", jobURL(base, id)+"?limit=10", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	var sj polJob
	small.Decode(t, &sj)
	if len(sj.Results) != 10 || len(sj.LedgerProofs) != 10 || sj.ResultCounts.Total != n || sj.NextResults == nil ||
		*sj.NextResults != eudrAPI+"/jobs/"+id+"/results?cursor="+id+"_9&limit=10" || len(small.Body)*20 > len(r.Body) {
		t.Errorf("job with ?limit=10: %d results, %d proofs, counts %+v, next %v, %d bytes", len(sj.Results), len(sj.LedgerProofs),
			sj.ResultCounts, sj.NextResults, len(small.Body))
	}
	page := apitest.Do(t, "GET", base+eudrAPI+"/jobs/"+id+"/results?limit=300&cursor="+id+"_1999", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	var items []polResult
	page.Decode(t, &items)
	if len(items) != 300 || items[0].FeatureIndex != 2000 || items[299].FeatureIndex != 2299 || page.Header.Get("X-Next-Cursor") != id+"_2299" ||
		page.Header.Get("Link") != "<"+eudrAPI+"/jobs/"+id+"/results?cursor="+id+"_2299&limit=300>; rel=\"next\"" {
		t.Errorf("300 results after feature 1999: %d, Link %q", len(items), page.Header.Get("Link"))
	}
	page = apitest.Do(t, "GET", base+eudrAPI+"/jobs/"+id+"/results", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	page.Decode(t, &items)
	if len(items) != 100 || items[0].FeatureIndex != 0 || page.Header.Get("X-Next-Cursor") != id+"_99" {
		t.Errorf("results without limit: %d from feature %d, X-Next-Cursor %q; want the lists' 100 from 0", len(items), items[0].FeatureIndex, page.Header.Get("X-Next-Cursor"))
	}

	// Refusals: a bad limit or cursor, another job's cursor, an unknown
	// job, the job from the other environment's listener.
	other := polMustPost(t, base, key, polCollection(polFeature(polSquare(-1.2, 6.2, 0.0005),
		map[string]any{"commodity": "cocoa", "producerCountry": "GH"})), 1)
	live := p.createKey(t, production)
	for _, c := range []struct {
		url, key, field string
		status          int
	}{
		{jobURL(base, id) + "?limit=1001", key, "query.limit", http.StatusBadRequest},
		{base + eudrAPI + "/jobs/" + id + "/results?limit=0", key, "query.limit", http.StatusBadRequest},
		{base + eudrAPI + "/jobs/" + id + "/results?cursor=999", key, "query.cursor", http.StatusBadRequest},
		{base + eudrAPI + "/jobs/" + other + "/results?cursor=" + id + "_999", key, "query.cursor", http.StatusBadRequest},
		{base + eudrAPI + "/jobs/job_01JD3R7F5G6H7J8K9M0N1P2Q3R/results", key, "", http.StatusNotFound},
		{p.ProductionURL + eudrAPI + "/jobs/" + id + "/results", live, "", http.StatusNotFound},
		{jobURL(p.ProductionURL, id), live, "", http.StatusNotFound},
	} {
		r := apitest.Do(t, "GET", c.url, apitest.WithKey(c.key), nil).WantStatus(t, c.status)
		var e struct {
			Code    string
			Details []struct{ Code, Field, Issue string }
		}
		r.Decode(t, &e)
		if c.status == http.StatusBadRequest && (e.Code != "VALIDATION_FAILED" || len(e.Details) != 1 || e.Details[0].Field != c.field ||
			e.Details[0].Code != "INVALID_VALUE") || c.status == http.StatusNotFound && e.Code != "NOT_FOUND" {
			t.Errorf("%s: %s", r.Request, r.Body)
		}
		if strings.Contains(c.url, "cursor="+id) && (len(e.Details) == 0 || !strings.Contains(e.Details[0].Issue, "is a cursor of job "+id)) {
			t.Errorf("%s: %s does not say the cursor is another job's", r.Request, r.Body)
		}
	}
}
