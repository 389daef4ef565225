package polygon_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/mod/sumdb/note"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/plotfile"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/storage"
)

var (
	tenant = storage.Tenant{Org: "default", Env: storage.Sandbox}
	start  = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
)

func newService(tb testing.TB, maxFeatures int) (*apitest.Bench, *polygon.Service) {
	b := apitest.NewBench(tb, start)
	ix := geo.NewIndex(geo.SandboxLayers()...)
	return b, polygon.New(polygon.Options{DB: b.DB, Jobs: b.Jobs, Events: b.Events, Ledger: b.Ledger, Logger: zerolog.Nop(),
		Index: func(storage.Environment) *geo.Index { return ix }, Rules: geo.DefaultRules(), AppVersion: "test",
		MaxFeatures: maxFeatures, Now: b.Clock.Now})
}

// square is a closed ring around (lon, lat), half a side of d degrees,
// written with 6 decimals.
func square(lon, lat, d float64) string {
	return fmt.Sprintf("[[[%.6f,%.6f],[%.6f,%.6f],[%.6f,%.6f],[%.6f,%.6f],[%.6f,%.6f]]]",
		lon-d, lat-d, lon+d, lat-d, lon+d, lat+d, lon-d, lat+d, lon-d, lat-d)
}

// plot is a Polygon feature of a cocoa plot from Ghana.
func plot(externalID, coordinates string) string {
	return fmt.Sprintf(`{"type":"Feature","geometry":{"type":"Polygon","coordinates":%s},`+
		`"properties":{"commodity":"cocoa","producerCountry":"GH","externalId":%q,"supplierId":"V-1"}}`, coordinates, externalID)
}

func collection(features ...string) string {
	return `{"type":"FeatureCollection","features":[` + strings.Join(features, ",") + `]}`
}

// fixtures holds one plot per row of the sandbox fixture table
// (docs/sandbox.md), in table order, and a self-intersecting one.
var fixtures = []string{
	plot("defo", square(-61.5, -10.5, 0.001)),
	plot("protected", square(-54.5, -4.5, 0.001)),
	plot("nodata", square(10.5, 10.5, 0.001)),
	plot("clean", square(5.0, 6.0, 0.001)),
	plot("bowtie", "[[[5.000000,6.000000],[5.001000,6.001000],[5.001000,6.000000],[5.000000,6.001000],[5.000000,6.000000]]]"),
}

// submit checks body and queues its job.
func submit(tb testing.TB, b *apitest.Bench, s *polygon.Service, body string) *storage.Job {
	tb.Helper()
	sub, err := s.Check([]byte(body), plotfile.GeoJSON, "")
	if err != nil {
		tb.Fatalf("Check: %v", err)
	}
	var job *storage.Job
	b.Update(tb, func(tx *storage.Tx) error {
		var err error
		job, err = s.Submit(tx, tenant, sub)
		return err
	})
	return job
}

// results reads a job's recorded results.
func results(tb testing.TB, b *apitest.Bench, jobID string) []polygon.Result {
	tb.Helper()
	var out []polygon.Result
	b.Update(tb, func(tx *storage.Tx) error {
		raw, err := tx.FindJobResults(tenant, jobID)
		for _, r := range raw {
			var res polygon.Result
			if err := json.Unmarshal(r, &res); err != nil {
				return err
			}
			out = append(out, res)
		}
		return err
	})
	return out
}

func TestService_Check(t *testing.T) {
	_, s := newService(t, 3)
	for _, tc := range []struct {
		name, body    string
		status        int
		detail, field string
	}{
		{"Empty", " \n", 400, apierr.DetailMalformedJSON, "body"},
		{"Truncated", `{"type":"FeatureCollection","features":[`, 400, apierr.DetailMalformedJSON, ""},
		{"BadGeometry", collection(plot("ok", square(5, 6, 0.001)),
			`{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]},"properties":{"commodity":"cocoa","producerCountry":"GH"}}`),
			400, geo.CodeInvalidGeometryType, "features[1].geometry.type"},
		{"TooMany", collection(fixtures[0], fixtures[1], fixtures[2], fixtures[3]), 413, apierr.DetailInvalidValue, "features"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := s.Check([]byte(tc.body), plotfile.GeoJSON, "")
			e := apierr.From(err)
			if sub != nil || e.Status != tc.status || len(e.Details) != 1 || e.Details[0].Code != tc.detail ||
				(tc.field != "" && e.Details[0].Field != tc.field) {
				t.Errorf("got %v (%+v), want %d with detail %s at %q", err, e.Details, tc.status, tc.detail, tc.field)
			}
		})
	}
	sub, err := s.Check([]byte(collection(fixtures[:3]...)), plotfile.GeoJSON, "")
	if err != nil || sub.FeatureCount() != 3 {
		t.Errorf("three features: %v %v, want 3", sub, err)
	}
}

// TestService_Screen screens the sandbox fixtures end to end: the job's
// results and progress, the plots recorded and anchored, the events, and
// the reads of what was recorded.
func TestService_Screen(t *testing.T) {
	b, s := newService(t, 10)
	ctx := context.Background()
	job := submit(t, b, s, collection(fixtures...))
	if job.Type != "polygon_ingestion" || job.Progress.Total != 5 {
		t.Fatalf("queued job %+v", job)
	}
	b.RunJobs(t)
	job = b.WaitJob(t, tenant, job.ID)
	// Each result names its ledger entry; the job counts them by status.
	wantCounts := storage.JobResultCounts{Total: 5, ByStatus: map[string]int{geo.StatusHighRisk: 2, geo.StatusFailed: 2, geo.StatusCompliant: 1}}
	if job.Status != storage.JobCompleted || job.Progress != (storage.JobProgress{Total: 5, Processed: 5, Succeeded: 3, Failed: 2}) ||
		len(job.LedgerIndexes) != 0 || job.ResultCounts == nil || !reflect.DeepEqual(*job.ResultCounts, wantCounts) {
		t.Fatalf("job %+v (counts %+v), want COMPLETED 3+2 counted %+v, its entries in its results", job, job.ResultCounts, wantCounts)
	}
	// polygon.verified and polygon.failed, published in the job's last
	// transaction (their data is the server's tests').
	if n := b.WaitPublished(t, 2); n != 2 {
		t.Errorf("%d events published, want polygon.verified and polygon.failed", n)
	}
	want := []struct{ status, reason string }{
		{geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff},
		{geo.StatusHighRisk, geo.ReasonProtectedAreaOverlap},
		{geo.StatusFailed, geo.ReasonNoReferenceCoverage},
		{geo.StatusCompliant, ""},
		{geo.StatusFailed, geo.ReasonSelfIntersection},
	}
	res := results(t, b, job.ID)
	if len(res) != len(want) {
		t.Fatalf("%d results, want %d", len(res), len(want))
	}
	for i, r := range res {
		reason := ""
		if r.FailureReason != nil {
			reason = *r.FailureReason
		}
		if r.FeatureIndex != i || r.PolygonID != storage.PolygonID(job.ID, i) || r.EUDRStatus != want[i].status || reason != want[i].reason ||
			r.LedgerIndex != int64(i) {
			t.Errorf("result %d: %+v (reason %q), want %+v", i, r, reason, want[i])
		}
		p, err := s.Find(ctx, tenant, r.PolygonID)
		if err != nil || p.Status != want[i].status || p.LedgerIndex == nil || *p.LedgerIndex != int64(i) || !p.ScreenedAt.Equal(start) {
			t.Errorf("polygon %d: %+v %v", i, p, err)
		}
	}

	// The whole record carries the geometry as sent.
	p, geom, err := s.FindWithGeometry(ctx, tenant, res[3].PolygonID)
	if err != nil || p.ExternalID != "clean" || string(geom) != `{"type":"Polygon","coordinates":`+square(5, 6, 0.001)+`}` {
		t.Errorf("FindWithGeometry: %+v %s %v", p, geom, err)
	}
	list, geoms, more, err := s.List(ctx, tenant, storage.PolygonFilter{JobID: job.ID, Status: geo.StatusFailed}, storage.Page{Limit: 10}, false)
	if err != nil || more || len(list) != 2 || list[0].FeatureIndex != 4 || list[1].FeatureIndex != 2 || len(geoms) != 2 || geoms[0] != nil {
		t.Errorf("FAILED of the job: %d items (more %v, %d geometries) %v", len(list), more, len(geoms), err)
	}
	// With geometry, each item's is its record's.
	list, geoms, _, err = s.List(ctx, tenant, storage.PolygonFilter{JobID: job.ID}, storage.Page{Limit: 10}, true)
	if err != nil || len(geoms) != len(list) || len(list) != 5 {
		t.Fatalf("List with geometry: %d items, %d geometries, %v", len(list), len(geoms), err)
	}
	for i, p := range list {
		if _, want, _ := s.FindWithGeometry(ctx, tenant, p.ID); string(geoms[i]) != string(want) {
			t.Errorf("List with geometry: %s has %s, its record %s", p.ID, geoms[i], want)
		}
	}
	if _, _, _, err := s.List(ctx, tenant, storage.PolygonFilter{Status: "compliant"}, storage.Page{Limit: 10}, false); apierr.From(err).Status != 400 {
		t.Errorf("List with a misspelt status: %v, want a 400", err)
	}
	if e := apierr.From(polygon.CheckList(storage.PolygonFilter{Status: "compliant"}, "geometries")); len(e.Details) != 2 ||
		e.Details[0].Field != "query.include" || e.Details[1].Field != "query.eudrStatus" {
		t.Errorf("CheckList with a bad include and status: %+v, want both problems", e.Details)
	}
	if err := polygon.CheckList(storage.PolygonFilter{}, "geometry"); err != nil {
		t.Errorf("CheckList(include=geometry): %v", err)
	}

	// The evidence, with its proof, names the overlap, hashes the feature
	// as sent and verifies.
	served, err := s.Evidence(ctx, tenant, res[0].PolygonID)
	if err != nil {
		t.Fatal(err)
	}
	var ev struct {
		polygon.Evidence
		Ledger anchor.DocumentLedger `json:"ledger"`
	}
	if err := json.Unmarshal(served, &ev); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(fixtures[0]))
	if ev.InputSHA256 != hex.EncodeToString(sum[:]) || len(ev.Overlaps) != 1 || ev.Overlaps[0].Kind != string(geo.DeforestationAfterCutoff) ||
		ev.Risk == nil || ev.Risk.DeforestedPct != 100 || ev.AppVersion != "test" || ev.Ledger.Index != 0 || ev.Ledger.TreeSize != 5 {
		t.Errorf("evidence: %s", served)
	}
	v, err := s.Verify(ctx, tenant, members(t, served))
	if err != nil || v.LedgerIndex != 0 || v.TreeSize != 5 || !slices.Equal(v.Steps, []string{polygon.StepDocument, polygon.StepEntry,
		polygon.StepInclusion, polygon.StepCheckpoint, polygon.StepLog}) {
		t.Errorf("Verify: %+v %v", v, err)
	}

	for name, read := range map[string]func(id string) error{
		"Find":             func(id string) error { _, err := s.Find(ctx, tenant, id); return err },
		"FindWithGeometry": func(id string) error { _, _, err := s.FindWithGeometry(ctx, tenant, id); return err },
		"Evidence":         func(id string) error { _, err := s.Evidence(ctx, tenant, id); return err },
	} {
		if err := read("pol_nope"); !errors.As(err, new(apierr.NotFound)) {
			t.Errorf("%s of an unknown polygon: %v, want apierr.NotFound", name, err)
		}
		if err := read(res[0].PolygonID); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// members decodes a served document one level, as POST /evidence/verify
// does.
func members(tb testing.TB, doc []byte) map[string]json.RawMessage {
	tb.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestService_Verify: each kind of tampering fails at its step.
func TestService_Verify(t *testing.T) {
	b, s := newService(t, 10)
	ctx := context.Background()
	job := submit(t, b, s, collection(fixtures[:2]...))
	b.RunJobs(t)
	b.WaitJob(t, tenant, job.ID)
	served, err := s.Evidence(ctx, tenant, storage.PolygonID(job.ID, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, step, field string
		edit              func(doc map[string]json.RawMessage, l map[string]any)
	}{
		{"VerdictChanged", polygon.StepDocument, "body", func(doc map[string]json.RawMessage, _ map[string]any) {
			doc["eudrStatus"] = json.RawMessage(`"COMPLIANT"`)
		}},
		{"EntryChanged", polygon.StepEntry, "ledger.transactionHash", func(_ map[string]json.RawMessage, l map[string]any) {
			l["data"] = "eyJldmlkZW5jZVNoYTI1NiI6IjAwIn0="
		}},
		{"ProofChanged", polygon.StepInclusion, "ledger.proof", func(_ map[string]json.RawMessage, l map[string]any) {
			l["proof"] = []string{strings.Repeat("0", 64)}
		}},
		{"OtherTree", polygon.StepCheckpoint, "ledger.checkpoint", func(_ map[string]json.RawMessage, l map[string]any) {
			l["treeSize"], l["proof"] = 1, []string{} // entry 0 alone: a true proof, not the signed tree
			l["rootHash"] = l["transactionHash"]
		}},
		{"MemberAdded", polygon.StepDocument, "body", func(doc map[string]json.RawMessage, _ map[string]any) {
			doc["note"] = json.RawMessage(`"ok"`)
		}},
		{"EntrySwapped", polygon.StepEntry, "ledger.transactionHash", func(_ map[string]json.RawMessage, l map[string]any) {
			l["data"] = base64.StdEncoding.EncodeToString([]byte(`{"evidenceSha256":"00","prev":""}`))
		}},
		{"ProofHashChanged", polygon.StepInclusion, "ledger.proof", func(_ map[string]json.RawMessage, l map[string]any) {
			p := l["proof"].([]any)
			p[0] = strings.Repeat("0", 64)
		}},
		{"OtherIndex", polygon.StepInclusion, "ledger.proof", func(_ map[string]json.RawMessage, l map[string]any) { l["index"] = 1 }},
		// The same checkpoint signed by another key of the same name.
		{"ForgedCheckpoint", polygon.StepCheckpoint, "ledger.checkpoint", func(_ map[string]json.RawMessage, l map[string]any) {
			skey, _, err := note.GenerateKey(rand.Reader, b.Ledger.KeyName())
			if err != nil {
				t.Fatal(err)
			}
			signer, err := note.NewSigner(skey)
			if err != nil {
				t.Fatal(err)
			}
			text, _, _ := strings.Cut(l["checkpoint"].(string), "\n\n")
			forged, err := note.Sign(&note.Note{Text: text + "\n"}, signer)
			if err != nil {
				t.Fatal(err)
			}
			l["checkpoint"] = string(forged)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := members(t, served)
			var l map[string]any
			if err := json.Unmarshal(doc["ledger"], &l); err != nil {
				t.Fatal(err)
			}
			tc.edit(doc, l)
			raw, err := json.Marshal(l)
			if err != nil {
				t.Fatal(err)
			}
			doc["ledger"] = raw
			_, err = s.Verify(ctx, tenant, doc)
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != 422 || len(e.Details) != 1 || e.Details[0].Code != apierr.DetailProofNotReproducible ||
				e.Details[0].Field != tc.field || !strings.HasPrefix(e.Details[0].Issue, tc.step+": ") {
				t.Errorf("got %v, want 422 at step %s, field %s", err, tc.step, tc.field)
			}
		})
	}
	doc := members(t, served)
	delete(doc, "ledger")
	if _, err := s.Verify(ctx, tenant, doc); apierr.From(err).Status != 400 {
		t.Errorf("without its ledger member: %v, want a 400", err)
	}
	// Another tenant's log does not hold the document.
	other := storage.Tenant{Org: "other", Env: storage.Sandbox}
	if _, err := s.Verify(ctx, other, members(t, served)); apierr.From(err).Status != 422 {
		t.Errorf("verified as another tenant's: %v, want a 422", err)
	}
}

func TestService_Delete(t *testing.T) {
	b, s := newService(t, 10)
	ctx := context.Background()
	job := submit(t, b, s, collection(fixtures[:2]...))
	b.RunJobs(t)
	b.WaitJob(t, tenant, job.ID)
	used, free := storage.PolygonID(job.ID, 0), storage.PolygonID(job.ID, 1)
	b.Update(t, func(tx *storage.Tx) error {
		// A polygon may be in several batches.
		for _, id := range []string{"bat_1", "bat_2"} {
			if err := tx.PutBatch(tenant, &storage.Batch{ID: id, Status: storage.BatchVerified, Commodity: "cocoa", CreatedAt: tx.Now()}); err != nil {
				return err
			}
			if err := tx.PutBatchPolygons(tenant, id, []string{used}); err != nil {
				return err
			}
		}
		return nil
	})
	del := func(id string) error {
		return b.DB.Update(ctx, func(tx *storage.Tx) error { return s.Delete(tx, tenant, id) })
	}

	var e *apierr.Error
	if err := del(used); !errors.As(err, &e) || e.Status != 409 || len(e.Details) != 1 || e.Details[0].Code != apierr.DetailPolygonInUse ||
		e.Details[0].Field != "polygonId" || !strings.Contains(e.Details[0].Issue, "bat_1") || !strings.Contains(e.Details[0].Issue, "bat_2") ||
		!strings.Contains(e.Message, "bat_1") {
		t.Errorf("delete of a polygon in two batches: %v (%+v), want 409 POLYGON_IN_USE at polygonId naming both", err, e)
	}
	if _, err := s.Evidence(ctx, tenant, used); err != nil {
		t.Errorf("the refused polygon's evidence: %v", err)
	}
	if err := del(free); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Find(ctx, tenant, free); !errors.As(err, new(apierr.NotFound)) {
		t.Errorf("deleted polygon found: %v", err)
	}
	if _, err := s.Evidence(ctx, tenant, free); !errors.As(err, new(apierr.NotFound)) {
		t.Errorf("deleted polygon's evidence: %v", err)
	}
	if err := del(free); !errors.As(err, new(apierr.NotFound)) {
		t.Errorf("delete again: %v, want apierr.NotFound", err)
	}
}

// A job queued by an earlier version may hold a ring across the
// antimeridian, which Check refuses today: that feature is FAILED, the
// others are screened.
func TestService_ScreenEarlierRequest(t *testing.T) {
	b, s := newService(t, 10)
	across := "[[[179.995000,0.000000],[-179.995000,0.000000],[-179.995000,0.010000],[179.995000,0.010000],[179.995000,0.000000]]]"
	if _, err := s.Check([]byte(collection(plot("across", across))), plotfile.GeoJSON, ""); apierr.From(err).Status != 400 {
		t.Fatalf("Check of a ring across the antimeridian: %v, want a 400", err)
	}
	job := submit(t, b, s, collection(fixtures[3], fixtures[3]))
	b.Update(t, func(tx *storage.Tx) error {
		return tx.PutJobInput(tenant, job.ID, []byte(collection(fixtures[3], plot("across", across))))
	})
	b.RunJobs(t)
	if job = b.WaitJob(t, tenant, job.ID); job.Status != storage.JobCompleted {
		t.Fatalf("job %+v", job)
	}
	res := results(t, b, job.ID)
	if len(res) != 2 || res[0].EUDRStatus != geo.StatusCompliant || res[1].EUDRStatus != geo.StatusFailed ||
		res[1].FailureReason == nil || *res[1].FailureReason != geo.ReasonCrossesAntimeridian {
		t.Errorf("results %+v", res)
	}
}

func TestCheckFilter(t *testing.T) {
	for _, tc := range []struct {
		f      storage.PolygonFilter
		fields []string
	}{
		{storage.PolygonFilter{}, nil},
		{storage.PolygonFilter{Status: geo.StatusHighRisk, Commodity: "cocoa", JobID: "job_x", SupplierID: "V-1"}, nil},
		{storage.PolygonFilter{Status: "compliant"}, []string{"query.eudrStatus"}},
		{storage.PolygonFilter{Status: "FAILED", Commodity: "tea"}, []string{"query.commodity"}},
		{storage.PolygonFilter{Status: "x", Commodity: "tea"}, []string{"query.eudrStatus", "query.commodity"}},
	} {
		err := polygon.CheckFilter(tc.f)
		var fields []string
		if err != nil {
			for _, d := range apierr.From(err).Details {
				fields = append(fields, d.Field)
			}
		}
		if !slices.Equal(fields, tc.fields) {
			t.Errorf("%+v: problems at %v, want %v", tc.f, fields, tc.fields)
		}
	}
}
