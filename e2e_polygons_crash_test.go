package main_test

// End-to-end test of a polygon job that survives kill -9 part way through
// its features.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// polCrashCollection is n small plots on a grid away from every fixture box.
func polCrashCollection(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		lon, lat := 20+float64(i%200)*0.005, float64(i/200)*0.005
		fmt.Fprintf(&b, `{"type":"Feature","geometry":%s,"properties":{"commodity":"wood","producerCountry":"CD","externalId":"plot-%d"}}`,
			polBoxGeometry(lon, lat, lon+0.002, lat+0.002, 6), i)
	}
	b.WriteString("]}")
	return b.Bytes()
}

func TestPolygon_CrashKill9(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, append([]string{jobsLeaseEnv, "EUDR_LIMITS_MAX_FEATURES=20000"}, noRateLimit...)...)
	key := p.createKey(t, sandbox)
	sub := subscribe(t, p, key, rc, "/polygons", "polygon.verified", "polygon.failed")

	// progress reads only a job's status and progress, for fast polling.
	progress := func(base, id string) (status string, processed, total int) {
		r := apitest.Do(t, "GET", jobURL(base, id), apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		var j struct {
			Status   string `json:"status"`
			Progress struct{ Processed, Total int }
		}
		r.Decode(t, &j)
		return j.Status, j.Progress.Processed, j.Progress.Total
	}

	var jobID string
	var total, killedAt int
	for attempt, n := range []int{5000, 10000, 20000} {
		id := polMustPost(t, p.SandboxURL, key, string(polCrashCollection(n)), n)
		deadline := time.Now().Add(60 * time.Second)
		for {
			status, processed, _ := progress(p.SandboxURL, id)
			if status == "RUNNING" && processed > 0 && processed < n {
				killedAt = processed
				break
			}
			if status == "COMPLETED" || status == "FAILED" || time.Now().After(deadline) {
				killedAt = -1
				break
			}
		}
		if killedAt < 0 {
			t.Logf("attempt %d: job of %d features finished before it was seen part way; trying a bigger one", attempt+1, n)
			continue
		}
		p.Kill(t)
		p = p.Restart(t)
		// The lease of the killed process holds the job for a while: right
		// after the restart it is still part way, unless it finished before
		// the kill.
		status, processed, _ := progress(p.SandboxURL, id)
		if status == "COMPLETED" {
			t.Logf("attempt %d: job of %d features completed before the kill (seen at %d)", attempt+1, n, killedAt)
			continue
		}
		if processed >= n || processed < 0 {
			t.Fatalf("after the restart: %s with %d of %d processed", status, processed, n)
		}
		t.Logf("attempt %d: killed with %d of %d features processed (seen just before); %d recorded after the restart",
			attempt+1, killedAt, n, processed)
		jobID, total = id, n
		break
	}
	if jobID == "" {
		t.Fatal("never killed the appliance while a polygon job was part way through its features (3 attempts, up to 20,000 features)")
	}

	waitUntil(t, jobsLease+40*time.Second, "the job to finish after the restart", func() bool {
		status, _, _ := progress(p.SandboxURL, jobID)
		return status == "COMPLETED" || status == "FAILED"
	})
	j := polGetJob(t, p.SandboxURL, key, jobID)
	if j.Status != "COMPLETED" {
		t.Fatalf("job after the restart: %s, error %+v; want COMPLETED", j.Status, j.Error)
	}
	if pr := j.Progress; pr.Total != total || pr.Processed != total || pr.Succeeded != total || pr.Failed != 0 ||
		j.ResultCounts.ByStatus["COMPLIANT"] != total || len(polAllResults(t, p.SandboxURL, key, j)) != total {
		t.Errorf("job after the restart: progress %+v, results %+v; want all %d features COMPLIANT", pr, j.ResultCounts, total)
	}
	list := polWalk(t, p.SandboxURL, key, "jobId="+jobID, 1000)
	if len(list) != total {
		t.Errorf("GET /polygons?jobId=%s: %d polygons, want %d", jobID, len(list), total)
	}
	indexes := make([]int, total)
	ids := make([]string, 0, total)
	for _, pol := range list {
		if pol.JobID != jobID || pol.FeatureIndex < 0 || pol.FeatureIndex >= total || pol.PolygonID != polIDOf(jobID, pol.FeatureIndex) {
			t.Errorf("polygon %s: job %s feature %d", pol.PolygonID, pol.JobID, pol.FeatureIndex)
			continue
		}
		indexes[pol.FeatureIndex]++
		ids = append(ids, pol.PolygonID)
	}
	for i, n := range indexes {
		if n != 1 {
			t.Errorf("feature %d: %d polygons, want 1", i, n)
		}
	}

	// polygon.verified: every delivery of it is the same event with every polygon.
	var reqs []apitest.Delivery
	waitUntil(t, 30*time.Second, "polygon.verified of the job delivered", func() bool {
		reqs = nil
		for _, r := range rc.Requests("/polygons", "") {
			if dataField(&r, "jobId") == jobID {
				reqs = append(reqs, r)
			}
		}
		return len(reqs) > 0 && rc.IsDelivered("/polygons", reqs[0].Env.EventID)
	})
	slices.Sort(ids)
	want := mustJSON(t, map[string]any{"jobId": jobID, "polygonIds": ids})
	for _, r := range reqs {
		apitest.CheckSignatures(t, r, sub.SigningSecret)
		if r.Env.EventType != "polygon.verified" || r.Env.EventID != reqs[0].Env.EventID {
			t.Errorf("delivery %s %s for the job, want only polygon.verified %s", r.Env.EventType, r.Env.EventID, reqs[0].Env.EventID)
		}
		var d struct {
			JobID      string   `json:"jobId"`
			PolygonIDs []string `json:"polygonIds"`
		}
		if err := json.Unmarshal(r.Env.Data, &d); err != nil {
			t.Fatalf("polygon.verified data: %v", err)
		}
		slices.Sort(d.PolygonIDs)
		if !sameJSON(t, mustJSON(t, d), want) {
			t.Errorf("polygon.verified data: job %s with %d polygonIds, want %s with all %d", d.JobID, len(d.PolygonIDs), jobID, total)
		}
	}
	t.Logf("%d delivery(ies) of polygon.verified for the job", len(reqs))
}
