package server

// Conformance of the polygon routes and their jobs' results.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// oaPolygonOutcome is what a feature of a polygon request is screened to.
type oaPolygonOutcome struct {
	feature       string // the feature as sent
	status        string
	failureReason string // "" for none
}

// polygons drives POST /polygons and the polygon routes. With the job
// runner stopped: refusals (every problem of a collection at once, 413 for
// the body and for the feature count, 415, idempotency) and two accepted
// collections, whose jobs wait QUEUED with Retry-After. Then the runner
// screens them: the sandbox fixture rows and the geometry types and
// failure reasons of a second collection, whose polygons are listed (with
// filters and pages), read with their geometry, status and evidence, and
// deleted; and the polygon.verified and polygon.failed events of each job
// reach a subscription of the receiver at base. It leaves no job queued.
func (c *oaConformance) polygons(recv *apitest.Receiver, base string, rw, ro, live []string) {
	t := c.t
	t.Helper()
	const (
		polygons = eudrPrefix + "/polygons"
		polygon  = polygons + "/{polygonId}"
		status   = polygon + "/status"
		evidence = polygon + "/evidence"
		job      = eudrPrefix + "/jobs/{jobId}"
	)
	with, idem := oaWith, oaIdem
	geoJSON := func(h []string, key string) []string {
		return with(idem(h, key), "Content-Type", "application/geo+json")
	}
	problems := oaProblems
	ids := func(list []any) []string {
		var out []string
		for _, it := range list {
			out = append(out, fmt.Sprint(it.(map[string]any)["polygonId"]))
		}
		return out
	}
	feature := func(geometry, properties string) string {
		return `{"type":"Feature","geometry":` + geometry + `,"properties":` + properties + `}`
	}

	// The sandbox fixture rows (docs/sandbox.md), and a bow tie.
	fixtures := []oaPolygonOutcome{
		{plot("defo", square(-61.5, -10.5, 0.001)), geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff},
		{plot("protected", square(-54.5, -4.5, 0.001)), geo.StatusHighRisk, geo.ReasonProtectedAreaOverlap},
		{plot("nodata", square(10.5, 10.5, 0.001)), geo.StatusFailed, geo.ReasonNoReferenceCoverage},
		{plot("clean", square(5.0, 6.0, 0.001)), geo.StatusCompliant, ""},
		{plot("bowtie", "[[[5.000000,6.000000],[5.001000,6.001000],[5.001000,6.000000],[5.000000,6.001000],[5.000000,6.000000]]]"),
			geo.StatusFailed, geo.ReasonSelfIntersection},
	}
	// The other geometry types and properties, sent as application/json.
	mixed := []oaPolygonOutcome{
		{feature(`{"type":"Point","coordinates":[5.100000,6.100000,12.5]}`,
			`{"commodity":"coffee","producerCountry":"NG","area":2,"producerName":"Kofi Mensah","productionPlace":"Ashanti","externalId":"point","note":"ignored"}`),
			geo.StatusCompliant, ""},
		{feature(`{"type":"MultiPoint","coordinates":[[5.200000,6.200000],[5.210000,6.210000]]}`,
			`{"commodity":"cattle","producerCountry":"NG","area":12,"supplierId":""}`),
			geo.StatusCompliant, ""},
		{feature(`{"type":"MultiPolygon","coordinates":[`+square(-50.3, -6.3, 0.001)+`,`+square(-54.5, -4.5, 0.001)+`]}`,
			`{"commodity":"wood","producerCountry":"BR","externalId":"multi"}`),
			geo.StatusHighRisk, geo.ReasonProtectedAreaOverlap},
		{feature(`{"type":"Polygon","coordinates":`+square(5.4, 6.4, 0.001)+`}`,
			`{"commodity":"soya","producerCountry":"NG","area":100,"externalId":"area"}`),
			geo.StatusFailed, geo.ReasonAreaMismatch},
		{feature(`{"type":"Polygon","coordinates":[[[5.5,6.5],[5.51,6.5],[5.51,6.51],[5.5,6.51],[5.5,6.5]]]}`,
			`{"commodity":"rubber","producerCountry":"CI","externalId":"coarse"}`),
			geo.StatusFailed, geo.ReasonInsufficientPrecision},
	}
	body := func(fs []oaPolygonOutcome) string {
		var feats []string
		for _, f := range fs {
			feats = append(feats, f.feature)
		}
		return collection(feats...)
	}
	fixtureBody, mixedBody := body(fixtures), body(mixed)
	for _, b := range []string{fixtureBody, mixedBody} {
		var v any
		if err := json.Unmarshal([]byte(b), &v); err != nil {
			t.Fatal(err)
		}
		for _, e := range c.sc.check(map[string]any{"$ref": "#/components/schemas/PolygonFeatureCollection"}, v, "request") {
			t.Errorf("a collection the server accepts: %s", e)
		}
	}

	// Refusals: the Idempotency-Key first, then every problem at once.
	an := c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, hdr: with(rw, "Content-Type", "application/geo+json"), want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("polygons without Idempotency-Key: detail %q, want %s", an.detail(), apierr.DetailIdempotencyKeyMissing)
	}
	bad := collection(
		plot("ok", square(5, 6, 0.001)),
		feature(`{"type":"LineString","coordinates":[[0,0],[1,1]]}`, `{"commodity":"cocoa","producerCountry":"GH"}`),
		feature(`{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5.001000,6.000000],[5.000000,6.000000]],`+
			`[[200.000000,6.000000],[5.001000,6.000000],[5.001000,6.001000],[5.000000,6.001000]]]}`,
			`{"commodity":"tea","producerCountry":"gh"}`),
		feature(`{"type":"Point","coordinates":[5.000000,6.000000]}`, `{"commodity":"cocoa","producerCountry":"NG","area":5}`),
		feature(`{"type":"MultiPoint","coordinates":[[5.000000,6.000000]]}`, `{"commodity":"cocoa"}`),
	)
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: bad, hdr: geoJSON(rw, "pol-bad"), want: 400})
	want := map[string]bool{
		geo.CodeInvalidGeometryType + " at features[1].geometry.type":                 true,
		geo.CodeInvalidRing + " at features[2].geometry.coordinates[0]":               true,
		geo.CodeInvalidCoordinateRange + " at features[2].geometry.coordinates[1][0]": true,
		geo.CodeInvalidCoordinateClosure + " at features[2].geometry.coordinates[1]":  true,
		geo.CodeInvalidValue + " at features[2].properties.commodity":                 true,
		geo.CodeInvalidValue + " at features[2].properties.producerCountry":           true,
		geo.CodePointAreaTooLarge + " at features[3].properties.area":                 true,
		geo.CodeRequired + " at features[4].properties.producerCountry":               true,
		geo.CodeRequired + " at features[4].properties.area":                          true,
	}
	if got := problems(an); !maps.Equal(got, want) {
		t.Errorf("a collection with nine problems: details %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, hdr: geoJSON(rw, "pol-bad"), want: 400,
		body: feature(`{"type":"Point","coordinates":[5.000000,6.000000]}`, `{"commodity":"cocoa","producerCountry":"NG","area":1}`)})
	if got := problems(an); !got[geo.CodeInvalidValue+" at type"] || !got[geo.CodeRequired+" at features"] {
		t.Errorf("a lone Feature: details %v, want INVALID_VALUE at type and REQUIRED at features", slices.Sorted(maps.Keys(got)))
	}
	for _, b := range []string{`{"type":"FeatureCollection","features":[`, ""} {
		an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: b, hdr: geoJSON(rw, "pol-bad"), want: 400})
		if ds := oaList(an.body["details"]); len(ds) != 1 || an.detail() != apierr.DetailMalformedJSON {
			t.Errorf("polygons with the body %q: details %v, want one %s", b, oaShort(ds), apierr.DetailMalformedJSON)
		}
	}
	var six []string
	for i := range 6 {
		six = append(six, plot(fmt.Sprint(i), square(5+0.01*float64(i), 6, 0.001)))
	}
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: collection(six...), hdr: geoJSON(rw, "pol-six"), want: 413})
	if ds := oaList(an.body["details"]); len(ds) != 1 || an.detail() != apierr.DetailInvalidValue || ds[0].(map[string]any)["field"] != "features" {
		t.Errorf("six features over a limit of five: details %v, want INVALID_VALUE at features", oaShort(ds))
	}
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: collection(plot(strings.Repeat("x", 5000), square(5, 6, 0.001))),
		hdr: geoJSON(rw, "pol-big"), want: 413})
	if ds := oaList(an.body["details"]); len(ds) != 0 {
		t.Errorf("a body over limits.max_body_bytes: details %v, want none", oaShort(ds))
	}
	c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, hdr: with(idem(rw, "pol-txt"), "Content-Type", "text/plain"), want: 415})
	c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, hdr: geoJSON(ro, "pol-ro"), want: 403})
	c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, want: 401})
	inflight := httptest.NewRequest("POST", polygons, strings.NewReader(fixtureBody))
	err := c.a.db.Update(context.Background(), func(tx *storage.Tx) error {
		return tx.PutIdempotency(storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}, &storage.IdempotencyRecord{Key: "pol-busy",
			Fingerprint: fingerprint(inflight, []byte(fixtureBody)), State: storage.IdemInFlight, Owner: c.a.runID,
			CreatedAt: tx.Now(), ExpiresAt: tx.Now().Add(time.Hour)})
	})
	if err != nil {
		t.Fatal(err)
	}
	c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, hdr: geoJSON(rw, "pol-busy"), want: 423})
	an = c.do(oaCall{method: "GET", target: polygons, op: polygons, hdr: ro, want: 200})
	if len(an.list) != 0 {
		t.Errorf("polygons after refusals only: %v, want []", oaShort(an.list))
	}

	// Accepted: 202 with the job in Location; the job waits QUEUED (the
	// runner is stopped) with Retry-After and no results yet.
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, hdr: geoJSON(rw, "pol-1"), want: 202})
	fixJob, loc := fmt.Sprint(an.body["jobId"]), an.rec.Header().Get("Location")
	if loc != eudrPrefix+"/jobs/"+fixJob || an.body["featureCount"] != 5.0 {
		t.Errorf("polygons: Location %q, body %v; want %s and featureCount 5", loc, an.body, eudrPrefix+"/jobs/"+fixJob)
	}
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, hdr: geoJSON(rw, "pol-1"), want: 202})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["jobId"] != fixJob || an.rec.Header().Get("Location") != loc {
		t.Errorf("replayed polygons: Idempotent-Replayed %q, jobId %v, Location %q; want true, %s, %s",
			an.rec.Header().Get("Idempotent-Replayed"), an.body["jobId"], an.rec.Header().Get("Location"), fixJob, loc)
	}
	c.do(oaCall{method: "POST", target: polygons, op: polygons, body: mixedBody, hdr: geoJSON(rw, "pol-1"), want: 409})
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: mixedBody, hdr: with(idem(rw, "pol-2"), "Content-Type", "application/json"), want: 202})
	mixJob := fmt.Sprint(an.body["jobId"])
	an = c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + fixJob, op: job, hdr: ro, want: 200})
	if an.body["status"] != storage.JobQueued || an.body["type"] != work.PolygonIngestion || an.rec.Header().Get("Retry-After") == "" ||
		len(oaList(an.body["results"])) != 0 || an.body["startedAt"] != nil {
		t.Errorf("queued polygon job: %v, Retry-After %q; want QUEUED %s with Retry-After and no results",
			oaShort(an.body), an.rec.Header().Get("Retry-After"), work.PolygonIngestion)
	}
	c.do(oaCall{env: storage.Production, method: "GET", target: eudrPrefix + "/jobs/" + fixJob, op: job, hdr: live, want: 404})
	c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + fixJob, op: job, want: 401})

	// A subscription for both events, then the runner screens the jobs.
	an = c.do(oaCall{method: "POST", target: eudrPrefix + "/webhooks", op: eudrPrefix + "/webhooks", hdr: idem(rw, "pol-wh"), want: 200,
		body: `{"targetUrl":"` + base + `/polygons","eventTypes":["polygon.verified","polygon.failed"]}`})
	secret := fmt.Sprint(an.body["signingSecret"])
	recv.SetSecret("/polygons", secret)
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := c.a.jobs.Run(ctx); err != nil {
			t.Errorf("job runner: %v", err)
		}
	}()
	oaEventually(t, "the polygon jobs to finish", func() bool { return c.jobFinished(fixJob) && c.jobFinished(mixJob) })
	stop()
	<-stopped

	// The jobs: COMPLETED, one result per feature in feature order.
	for _, j := range []struct {
		id   string
		want []oaPolygonOutcome
	}{{fixJob, fixtures}, {mixJob, mixed}} {
		an = c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + j.id, op: job, hdr: ro, want: 200})
		p, _ := an.body["progress"].(map[string]any)
		if an.body["status"] != storage.JobCompleted || an.rec.Header().Get("Retry-After") != "" ||
			!reflect.DeepEqual(p, map[string]any{"total": 5.0, "processed": 5.0, "succeeded": 3.0, "failed": 2.0, "percent": 100.0}) {
			t.Errorf("completed polygon job %s: %v, Retry-After %q", j.id, oaShort(an.body), an.rec.Header().Get("Retry-After"))
		}
		results := oaList(an.body["results"])
		if len(results) != len(j.want) {
			t.Fatalf("job %s: %d results, want %d", j.id, len(results), len(j.want))
		}
		for i, w := range j.want {
			r := results[i].(map[string]any)
			var reason any
			if w.failureReason != "" {
				reason = w.failureReason
			}
			if r["featureIndex"] != float64(i) || r["polygonId"] != storage.PolygonID(j.id, i) || r["eudrStatus"] != w.status || r["failureReason"] != reason {
				t.Errorf("job %s result %d: %v, want %s %v", j.id, i, r, w.status, reason)
			}
		}
	}

	// Status and evidence of every polygon; the evidence's input hash is
	// of the feature as sent (these are sent without whitespace).
	for _, j := range []struct {
		id   string
		want []oaPolygonOutcome
	}{{fixJob, fixtures}, {mixJob, mixed}} {
		for i, w := range j.want {
			id := storage.PolygonID(j.id, i)
			an = c.do(oaCall{method: "GET", target: polygons + "/" + id + "/status", op: status, hdr: ro, want: 200})
			if an.body["polygonId"] != id || an.body["jobId"] != j.id || an.body["eudrStatus"] != w.status || (an.body["risk"] == nil) != (w.status == geo.StatusFailed) {
				t.Errorf("status of %s: %v, want %s", id, oaShort(an.body), w.status)
			}
			an = c.do(oaCall{method: "GET", target: polygons + "/" + id + "/evidence", op: evidence, hdr: ro, want: 200})
			sum := sha256.Sum256([]byte(w.feature))
			if an.body["inputSha256"] != hex.EncodeToString(sum[:]) || an.body["eudrStatus"] != w.status ||
				an.body["engineVersion"] != geo.EngineVersion || an.body["appVersion"] != "openapi-test" {
				t.Errorf("evidence of %s: %s", id, an.rec.Body)
			}
		}
	}
	an = c.do(oaCall{method: "GET", target: polygons + "/" + storage.PolygonID(fixJob, 0) + "/evidence", op: evidence, hdr: ro, want: 200})
	overlaps, layers := oaList(an.body["overlaps"]), oaList(an.body["layers"])
	if len(overlaps) != 1 || overlaps[0].(map[string]any)["kind"] != string(geo.DeforestationAfterCutoff) || len(layers) < 2 ||
		!reflect.DeepEqual(an.body["rules"], map[string]any{"maxRiskScore": 50.0, "overlapThresholdPct": 0.0, "areaTolerancePct": 10.0,
			"lossThresholdPct": 10.0, "lossThresholdHa": 0.5, "cutoff": "2020-12-31"}) {
		t.Errorf("evidence of the deforestation fixture: %s", an.rec.Body)
	}
	an = c.do(oaCall{method: "GET", target: polygons + "/" + storage.PolygonID(fixJob, 4) + "/evidence", op: evidence, hdr: ro, want: 200})
	if len(oaList(an.body["layers"])) != 0 || len(oaList(an.body["overlaps"])) != 0 || an.body["areaHa"] != 0.0 {
		t.Errorf("evidence of a self-intersecting plot: %s; want no layers, no overlaps, areaHa 0", an.rec.Body)
	}

	// The whole record: the geometry exactly as sent.
	for _, g := range []struct {
		id, geometry string
	}{
		{storage.PolygonID(fixJob, 0), `{"type":"Polygon","coordinates":` + square(-61.5, -10.5, 0.001) + `}`},
		{storage.PolygonID(mixJob, 0), `{"type":"Point","coordinates":[5.100000,6.100000,12.5]}`},
	} {
		an = c.do(oaCall{method: "GET", target: polygons + "/" + g.id, op: polygon, hdr: ro, want: 200})
		if !strings.Contains(an.rec.Body.String(), `"geometry":`+g.geometry) {
			t.Errorf("polygon %s: %s; want the geometry %s", g.id, an.rec.Body, g.geometry)
		}
	}
	an = c.do(oaCall{method: "GET", target: polygons + "/" + storage.PolygonID(mixJob, 1), op: polygon, hdr: ro, want: 200})
	if an.body["geometryType"] != geo.TypeMultiPoint || an.body["areaHa"] != 24.0 || an.body["declaredAreaHa"] != 12.0 || an.body["supplierId"] != nil {
		t.Errorf("a MultiPoint of two 12 ha cattle plots: %s", an.rec.Body)
	}

	// Lists: newest job first, the last feature first; filters and pages.
	an = c.do(oaCall{method: "GET", target: polygons, op: polygons, hdr: ro, want: 200})
	if len(an.list) != 10 || ids(an.list)[0] != storage.PolygonID(mixJob, 4) || ids(an.list)[9] != storage.PolygonID(fixJob, 0) {
		t.Errorf("polygon list: %v", ids(an.list))
	}
	for _, it := range an.list {
		if _, ok := it.(map[string]any)["geometry"]; ok {
			t.Errorf("the list shows the geometry of %v", it.(map[string]any)["polygonId"])
		}
	}
	an = c.do(oaCall{method: "GET", target: polygons + "?limit=1", op: polygons, hdr: ro, want: 200})
	next := an.rec.Header().Get("X-Next-Cursor")
	if len(an.list) != 1 || next != storage.PolygonID(mixJob, 4) || !strings.Contains(an.rec.Header().Get("Link"), `rel="next"`) {
		t.Errorf("polygon list with limit=1: %v, X-Next-Cursor %q, Link %q", ids(an.list), next, an.rec.Header().Get("Link"))
	}
	an = c.do(oaCall{method: "GET", target: polygons + "?limit=1&cursor=" + next, op: polygons, hdr: ro, want: 200})
	if got := ids(an.list); !slices.Equal(got, []string{storage.PolygonID(mixJob, 3)}) {
		t.Errorf("second page of one: %v", got)
	}
	for _, f := range []struct {
		query string
		want  []string
	}{
		{"eudrStatus=FAILED&jobId=" + fixJob, []string{storage.PolygonID(fixJob, 4), storage.PolygonID(fixJob, 2)}},
		{"eudrStatus=HIGH_RISK", []string{storage.PolygonID(mixJob, 2), storage.PolygonID(fixJob, 1), storage.PolygonID(fixJob, 0)}},
		{"commodity=cattle", []string{storage.PolygonID(mixJob, 1)}},
		{"supplierId=V-1&eudrStatus=COMPLIANT", []string{storage.PolygonID(fixJob, 3)}},
		{"jobId=" + storage.NewID("job", time.Now()), nil},
	} {
		an = c.do(oaCall{method: "GET", target: polygons + "?" + f.query, op: polygons, hdr: ro, want: 200})
		if got := ids(an.list); !slices.Equal(got, f.want) {
			t.Errorf("polygons?%s: %v, want %v", f.query, got, f.want)
		}
	}
	an = c.do(oaCall{method: "GET", target: polygons + "?include=geometry&limit=2", op: polygons, hdr: ro, want: 200})
	for _, it := range an.list {
		if g, _ := it.(map[string]any)["geometry"].(map[string]any); g == nil || g["type"] == nil {
			t.Errorf("include=geometry: no geometry for %v", it.(map[string]any)["polygonId"])
		}
	}
	c.do(oaCall{method: "GET", target: polygons + "?include=all", op: polygons, hdr: ro, want: 400})
	an = c.do(oaCall{method: "GET", target: polygons + "?eudrStatus=compliant&commodity=tea&limit=0", op: polygons, hdr: ro, want: 400})
	if got := problems(an); len(got) != 3 || !got[apierr.DetailInvalidValue+" at query.eudrStatus"] || !got[apierr.DetailInvalidValue+" at query.commodity"] {
		t.Errorf("polygons with three bad parameters: details %v", slices.Sorted(maps.Keys(got)))
	}
	an = c.do(oaCall{env: storage.Production, method: "GET", target: polygons, op: polygons, hdr: live, want: 200})
	if len(an.list) != 0 {
		t.Errorf("production lists the sandbox's polygons: %v", ids(an.list))
	}
	c.do(oaCall{method: "GET", target: polygons, op: polygons, want: 401})

	// Another environment, unknown IDs, deletion.
	one := storage.PolygonID(fixJob, 4)
	for _, path := range []string{polygon, status, evidence} {
		target := strings.Replace(path, "{polygonId}", one, 1)
		c.do(oaCall{env: storage.Production, method: "GET", target: target, op: path, hdr: live, want: 404})
		c.do(oaCall{method: "GET", target: strings.Replace(path, "{polygonId}", "pol_nope", 1), op: path, hdr: ro, want: 404})
		c.do(oaCall{method: "GET", target: target, op: path, want: 401})
	}
	c.do(oaCall{env: storage.Production, method: "DELETE", target: polygons + "/" + one, op: polygon, hdr: live, want: 404})
	c.do(oaCall{method: "DELETE", target: polygons + "/" + one, op: polygon, hdr: ro, want: 403})
	c.do(oaCall{method: "DELETE", target: polygons + "/" + one, op: polygon, hdr: rw, want: 204})
	c.do(oaCall{method: "DELETE", target: polygons + "/" + one, op: polygon, hdr: rw, want: 404})
	for _, path := range []string{polygon, status, evidence} {
		c.do(oaCall{method: "GET", target: strings.Replace(path, "{polygonId}", one, 1), op: path, hdr: ro, want: 404})
	}
	an = c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + fixJob, op: job, hdr: ro, want: 200})
	if rs := oaList(an.body["results"]); len(rs) != 5 || rs[4].(map[string]any)["polygonId"] != one {
		t.Errorf("the job's results after deleting %s: %v; want it still listed", one, oaShort(rs))
	}

	// The events: per job, the screened polygons and the failed ones with
	// their reasons, to the subscription's path.
	oaEventually(t, "the four polygon events", func() bool { return len(recv.Requests("/polygons", "")) >= 4 })
	got := map[string]map[string]any{}
	for _, d := range recv.Requests("/polygons", "") {
		typ := d.Header.Get(webhooksig.HeaderEventType)
		if env := c.checkDelivery(typ, d, secret); env != nil {
			data, _ := env["data"].(map[string]any)
			got[typ+" "+fmt.Sprint(data["jobId"])] = data
		}
	}
	for _, j := range []struct {
		id   string
		want []oaPolygonOutcome
	}{{fixJob, fixtures}, {mixJob, mixed}} {
		verified := map[string]any{"jobId": j.id, "polygonIds": []any{}}
		failed := map[string]any{"jobId": j.id, "polygonIds": []any{}, "reasons": map[string]any{}}
		for i, w := range j.want {
			id := storage.PolygonID(j.id, i)
			if w.status == geo.StatusFailed {
				failed["polygonIds"] = append(failed["polygonIds"].([]any), id)
				failed["reasons"].(map[string]any)[id] = w.failureReason
			} else {
				verified["polygonIds"] = append(verified["polygonIds"].([]any), id)
			}
		}
		if d := got[event.PolygonVerified+" "+j.id]; !reflect.DeepEqual(d, verified) {
			t.Errorf("polygon.verified of job %s: %v, want %v", j.id, d, verified)
		}
		if d := got[event.PolygonFailed+" "+j.id]; !reflect.DeepEqual(d, failed) {
			t.Errorf("polygon.failed of job %s: %v, want %v", j.id, d, failed)
		}
	}
}
