package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// square is a closed ring around (lon, lat), half a side of d degrees,
// written with 6 decimals.
func square(lon, lat, d float64) string {
	return fmt.Sprintf("[[[%.6f,%.6f],[%.6f,%.6f],[%.6f,%.6f],[%.6f,%.6f],[%.6f,%.6f]]]",
		lon-d, lat-d, lon+d, lat-d, lon+d, lat+d, lon-d, lat+d, lon-d, lat-d)
}

// plot is a Polygon feature of a cocoa plot from the country it lies in.
func plot(externalID, coordinates string) string {
	return fmt.Sprintf(`{"type":"Feature","geometry":{"type":"Polygon","coordinates":%s},`+
		`"properties":{"commodity":"cocoa","producerCountry":%q,"externalId":%q,"supplierId":"V-1"}}`, coordinates, countryOf(coordinates), externalID)
}

func collection(features ...string) string {
	return `{"type":"FeatureCollection","features":[` + strings.Join(features, ",") + `]}`
}

// fixtureCollection holds one plot per row of the sandbox fixture table
// (docs/sandbox.md), in table order, and a self-intersecting one.
var fixtureCollection = collection(
	plot("defo", square(-61.5, -10.5, 0.001)),
	plot("protected", square(-54.5, -4.5, 0.001)),
	plot("nodata", square(10.5, 10.5, 0.001)),
	plot("clean", square(5.0, 6.0, 0.001)),
	plot("bowtie", "[[[5.000000,6.000000],[5.001000,6.001000],[5.001000,6.000000],[5.000000,6.001000],[5.000000,6.000000]]]"),
)

func (ta *testApp) postPolygons(key, idem, body string) (polygonsAcceptedResponse, *httptest.ResponseRecorder) {
	ta.tb.Helper()
	return ta.postPolygonsOn(storage.Sandbox, key, idem, body)
}

// postPolygonsOn is postPolygons on env's listener.
func (ta *testApp) postPolygonsOn(env storage.Environment, key, idem, body string) (polygonsAcceptedResponse, *httptest.ResponseRecorder) {
	ta.tb.Helper()
	w := ta.serve(env, newRequest("POST", eudrPrefix+"/polygons", body, "X-API-Key", key, "Idempotency-Key", idem,
		"Content-Type", "application/geo+json"))
	var acc polygonsAcceptedResponse
	if w.Code == http.StatusAccepted {
		mustDecode(ta.tb, w, &acc)
	}
	return acc, w
}

func TestPolygons_SandboxFixtures(t *testing.T) {
	rc := newReceiver(t)
	ta := newTestApp(t, "EUDR_WEBHOOKS_CA_FILE="+rc.caFile)
	_, key := ta.newKey(storage.Sandbox)
	rc.subscribe(ta, key, event.PolygonVerified, event.PolygonFailed)
	ta.runQueues()

	acc, w := ta.postPolygons(key, "p-1", fixtureCollection)
	if w.Code != http.StatusAccepted || acc.FeatureCount != 5 || w.Header().Get("Location") != eudrPrefix+"/jobs/"+acc.JobID {
		t.Fatalf("POST /polygons: %d %s (Location %q)", w.Code, w.Body, w.Header().Get("Location"))
	}
	job, _ := ta.waitJob(key, acc.JobID, storage.JobCompleted)
	if job.Type != work.PolygonIngestion || job.Progress != (progressBody{Total: 5, Processed: 5, Succeeded: 3, Failed: 2, Percent: 100}) {
		t.Errorf("job: type %s progress %+v", job.Type, job.Progress)
	}
	var results []polygon.Result
	if err := json.Unmarshal(job.Results, &results); err != nil || len(results) != 5 {
		t.Fatalf("results %s: %v", job.Results, err)
	}
	want := []struct{ status, reason string }{
		{"HIGH_RISK", "DEFORESTATION_AFTER_CUTOFF"},
		{"HIGH_RISK", "PROTECTED_AREA_OVERLAP"},
		{"FAILED", "NO_REFERENCE_COVERAGE"},
		{"COMPLIANT", ""},
		{"FAILED", "SELF_INTERSECTION"},
	}
	for i, r := range results {
		reason := ""
		if r.FailureReason != nil {
			reason = *r.FailureReason
		}
		if r.FeatureIndex != i || r.PolygonID != storage.PolygonID(acc.JobID, i) || r.EUDRStatus != want[i].status || reason != want[i].reason {
			t.Errorf("result %d: %+v (reason %q), want %+v", i, r, reason, want[i])
		}
		st := ta.do("GET", eudrPrefix+"/polygons/"+r.PolygonID+"/status", "", "X-API-Key", key)
		var status polygonStatusResponse
		mustDecode(t, st, &status)
		if status.EUDRStatus != want[i].status || (status.Risk == nil) != (want[i].status == "FAILED") {
			t.Errorf("status of %d: %s", i, st.Body)
		}
	}

	// Evidence: the input hash is of the feature as sent, compacted; the
	// layers used are the sandbox fixtures; the overlap is named.
	ev := ta.do("GET", eudrPrefix+"/polygons/"+results[0].PolygonID+"/evidence", "", "X-API-Key", key)
	var doc polygon.Evidence
	mustDecode(t, ev, &doc)
	sum := sha256.Sum256([]byte(plot("defo", square(-61.5, -10.5, 0.001))))
	if doc.InputSHA256 != hex.EncodeToString(sum[:]) || len(doc.Layers) == 0 || len(doc.Overlaps) != 1 ||
		doc.Overlaps[0].Kind != string(geo.DeforestationAfterCutoff) || doc.Risk == nil || doc.Risk.DeforestedPct != 100 {
		t.Errorf("evidence: %s", ev.Body)
	}

	// The whole record carries the geometry; the list does not.
	one := ta.do("GET", eudrPrefix+"/polygons/"+results[3].PolygonID, "", "X-API-Key", key)
	var rec polygonResponse
	mustDecode(t, one, &rec)
	if rec.ExternalID == nil || *rec.ExternalID != "clean" || !strings.Contains(string(rec.Geometry), `"Polygon"`) {
		t.Errorf("GET polygon: %s", one.Body)
	}
	list := ta.do("GET", eudrPrefix+"/polygons?eudrStatus=FAILED&jobId="+acc.JobID, "", "X-API-Key", key)
	var items []polygonResponse
	mustDecode(t, list, &items)
	if len(items) != 2 || items[0].FeatureIndex != 4 || items[1].FeatureIndex != 2 || items[0].Geometry != nil {
		t.Errorf("FAILED list: %s", list.Body)
	}
	// ?include=geometry: each item carries its geometry as sent, so a map
	// of every plot takes a request per page, not one per plot.
	list = ta.do("GET", eudrPrefix+"/polygons?include=geometry&limit=2&jobId="+acc.JobID, "", "X-API-Key", key)
	items = nil
	mustDecode(t, list, &items)
	if len(items) != 2 || list.Header().Get("X-Next-Cursor") == "" {
		t.Fatalf("list with geometry, page of 2: %s", list.Body)
	}
	for _, it := range items {
		one := ta.do("GET", eudrPrefix+"/polygons/"+it.PolygonID, "", "X-API-Key", key)
		var rec polygonResponse
		mustDecode(t, one, &rec)
		if len(it.Geometry) == 0 || string(it.Geometry) != string(rec.Geometry) {
			t.Errorf("%s: listed geometry %s, its record's %s", it.PolygonID, it.Geometry, rec.Geometry)
		}
	}

	// Events of the job: one of each kind, fired when it completed.
	got := map[string]string{}
	for range 2 {
		typ, data := rc.next(t)
		got[typ] = string(data)
	}
	wantVerified := fmt.Sprintf(`{"jobId":%q,"polygonIds":[%q,%q,%q]}`, acc.JobID,
		results[0].PolygonID, results[1].PolygonID, results[3].PolygonID)
	if got[event.PolygonVerified] != wantVerified {
		t.Errorf("polygon.verified: %s, want %s", got[event.PolygonVerified], wantVerified)
	}
	wantFailed := fmt.Sprintf(`{"jobId":%q,"polygonIds":[%q,%q],"reasons":{%q:"NO_REFERENCE_COVERAGE",%q:"SELF_INTERSECTION"}}`,
		acc.JobID, results[2].PolygonID, results[4].PolygonID, results[2].PolygonID, results[4].PolygonID)
	if got[event.PolygonFailed] != wantFailed {
		t.Errorf("polygon.failed: %s, want %s", got[event.PolygonFailed], wantFailed)
	}

	// Delete: gone from status, record and evidence.
	if w := ta.do("DELETE", eudrPrefix+"/polygons/"+results[4].PolygonID, "", "X-API-Key", key); w.Code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", w.Code, w.Body)
	}
	for _, p := range []string{"", "/status", "/evidence"} {
		wantError(t, ta.do("GET", eudrPrefix+"/polygons/"+results[4].PolygonID+p, "", "X-API-Key", key), 404, apierr.CodeNotFound, "")
	}
	wantError(t, ta.do("DELETE", eudrPrefix+"/polygons/"+results[4].PolygonID, "", "X-API-Key", key), 404, apierr.CodeNotFound, "")
}

func TestPolygons_Refused(t *testing.T) {
	ta := newTestApp(t, "EUDR_LIMITS_MAX_FEATURES=3", "EUDR_LIMITS_MAX_BODY_BYTES=4096")
	_, key := ta.newKey(storage.Sandbox)
	post := func(body string, hdr ...string) *httptest.ResponseRecorder {
		return ta.do("POST", eudrPrefix+"/polygons", body, append([]string{"X-API-Key", key, "Idempotency-Key", "r"}, hdr...)...)
	}

	// Every problem at once, with the parser's codes and paths.
	e := wantError(t, post(collection(
		plot("ok", square(5, 6, 0.001)),
		`{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]},"properties":{"commodity":"cocoa","producerCountry":"GH"}}`,
		`{"type":"Feature","geometry":{"type":"Point","coordinates":[5.000000,6.000000]},"properties":{"commodity":"tea","producerCountry":"GH","area":5}}`,
	)), http.StatusBadRequest, apierr.CodeValidationFailed, "")
	want := map[string]string{
		"features[1].geometry.type":        "INVALID_GEOMETRY_TYPE",
		"features[2].properties.commodity": "INVALID_VALUE",
		"features[2].properties.area":      "POINT_AREA_TOO_LARGE",
	}
	got := map[string]string{}
	for _, d := range e.Details {
		got[d.Field] = d.Code
	}
	for f, c := range want {
		if got[f] != c {
			t.Errorf("detail at %s: got %q, want %q (all: %v)", f, got[f], c, e.Details)
		}
	}
	wantError(t, post(`{"type":"FeatureCollection","features":[`), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailMalformedJSON)
	wantError(t, post(" "), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailMalformedJSON)

	four := collection(plot("a", square(5, 6, 0.001)), plot("b", square(5, 6, 0.001)), plot("c", square(5, 6, 0.001)), plot("d", square(5, 6, 0.001)))
	e = wantError(t, post(four), http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge, apierr.DetailInvalidValue)
	if e.Details[0].Field != "features" || !strings.Contains(e.Message, "at most 3 features") {
		t.Errorf("413 for features: %+v", e)
	}
	wantError(t, post(collection(plot(strings.Repeat("x", 5000), square(5, 6, 0.001)))), http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge, "")
	wantError(t, post(fixtureCollection[:40], "Content-Type", "text/plain"), http.StatusUnsupportedMediaType, apierr.CodeUnsupportedMediaType, apierr.DetailInvalidValue)
	wantError(t, ta.do("POST", eudrPrefix+"/polygons", collection(plot("a", square(5, 6, 0.001))), "X-API-Key", key),
		http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailIdempotencyKeyMissing)

	// Nothing was queued by any of these.
	ta.view(func(tx *storage.Tx) error {
		if n := queue.Pending(tx.Tx); n != 0 {
			t.Errorf("queued jobs after refusals: %d", n)
		}
		return nil
	})

	// Filters are checked; a misspelt one is not an empty list.
	e = wantError(t, ta.do("GET", eudrPrefix+"/polygons?eudrStatus=compliant&commodity=tea&limit=0", "", "X-API-Key", key),
		http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	if fs := detailSet(e.Details); len(e.Details) != 3 || !fs["INVALID_VALUE query.eudrStatus"] || !fs["INVALID_VALUE query.commodity"] || !fs["INVALID_VALUE query.limit"] {
		t.Errorf("bad filters: %+v", e.Details)
	}
	e = wantError(t, ta.do("GET", eudrPrefix+"/polygons?include=geometries", "", "X-API-Key", key),
		http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	if fs := detailSet(e.Details); len(e.Details) != 1 || !fs["INVALID_VALUE query.include"] {
		t.Errorf("bad include: %+v", e.Details)
	}
	wantError(t, ta.do("GET", eudrPrefix+"/polygons/pol_nope/status", "", "X-API-Key", key), http.StatusNotFound, apierr.CodeNotFound, "")
}

// TestPolygons_AsSent: what a client sent comes back as sent, without HTML
// escaping, and the evidence's input hash is of those very bytes.
func TestPolygons_AsSent(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	geometry := `{"type":"Polygon","name":"A&B <north>","coordinates":` + square(5, 6, 0.001) + `}`
	feature := `{"type":"Feature","geometry":` + geometry + `,"properties":{"commodity":"cocoa","producerCountry":"GH","externalId":"F&1"}}`
	acc, w := ta.postPolygons(key, "as-sent", "{\n  \"type\": \"FeatureCollection\",\n  \"features\": [ "+feature+" ]\n}")
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST: %d %s", w.Code, w.Body)
	}
	ta.waitJob(key, acc.JobID, storage.JobCompleted)
	id := storage.PolygonID(acc.JobID, 0)
	rec := ta.do("GET", eudrPrefix+"/polygons/"+id, "", "X-API-Key", key)
	if body := rec.Body.String(); !strings.Contains(body, `"geometry":`+geometry) || !strings.Contains(body, `"externalId":"F&1"`) {
		t.Errorf("GET polygon: %s", body)
	}
	var doc polygon.Evidence
	mustDecode(t, ta.do("GET", eudrPrefix+"/polygons/"+id+"/evidence", "", "X-API-Key", key), &doc)
	if sum := sha256.Sum256([]byte(feature)); doc.InputSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("inputSha256 %s, want the SHA-256 of the compacted feature", doc.InputSHA256)
	}
}

// multiPlot is a MultiPolygon feature of a cocoa plot from Ghana.
func multiPlot(externalID string, polygons ...string) string {
	return fmt.Sprintf(`{"type":"Feature","geometry":{"type":"MultiPolygon","coordinates":[%s]},`+
		`"properties":{"commodity":"cocoa","producerCountry":%q,"externalId":%q}}`, strings.Join(polygons, ","), countryOf(polygons[0]), externalID)
}

// box is a Polygon's coordinates: one ring round lon0..lon1, lat0..lat1,
// written with 6 decimals.
func box(lon0, lat0, lon1, lat1 float64) string {
	return fmt.Sprintf("[[[%.6f,%.6f],[%.6f,%.6f],[%.6f,%.6f],[%.6f,%.6f],[%.6f,%.6f]]]",
		lon0, lat0, lon1, lat0, lon1, lat1, lon0, lat1, lon0, lat0)
}

// TestPolygons_PartsAndAntimeridian: MultiPolygon parts that overlap or
// share a side are FAILED OVERLAPPING_PARTS, parts touching at a corner
// are not; a ring across the antimeridian is refused, a plot split there
// is screened with the area of its parts.
func TestPolygons_PartsAndAntimeridian(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	across := "[[[179.995000,0.000000],[-179.995000,0.000000],[-179.995000,0.010000],[179.995000,0.010000],[179.995000,0.000000]]]"

	// Refused, at the ring's path, with everything else in the request.
	e := wantError(t, ta.do("POST", eudrPrefix+"/polygons", collection(
		plot("ok", square(5, 6, 0.001)),
		plot("across", across),
		multiPlot("across-multi", box(178.4, -17.8, 178.41, -17.79), across),
	), "X-API-Key", key, "Idempotency-Key", "across"), http.StatusBadRequest, apierr.CodeValidationFailed, geo.CodeCrossesAntimeridian)
	if fs := detailSet(e.Details); len(e.Details) != 2 || !fs["CROSSES_ANTIMERIDIAN features[1].geometry.coordinates[0]"] ||
		!fs["CROSSES_ANTIMERIDIAN features[2].geometry.coordinates[1][0]"] || !strings.Contains(e.Details[0].Issue, "split the plot into two polygons") {
		t.Errorf("details: %+v", e.Details)
	}
	// (A job queued before such rings were refused is polygon's tests'.)

	// MultiPolygons.
	ta.runQueues()
	acc, w := ta.postPolygons(key, "parts", collection(
		multiPlot("overlap", box(30, 7, 30.01, 7.01), box(30.005, 7, 30.015, 7.01)),
		multiPlot("side", box(30.02, 7, 30.03, 7.01), box(30.03, 7, 30.04, 7.01)),
		multiPlot("inside", box(30.05, 7, 30.06, 7.01), box(30.052, 7.002, 30.054, 7.004)),
		multiPlot("corner", box(30.07, 7, 30.08, 7.01), box(30.08, 7.01, 30.09, 7.02)),
		multiPlot("split", box(179.995, 67, 180, 67.01), box(-180, 67, -179.995, 67.01)), // Chukotka
	))
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST: %d %s", w.Code, w.Body)
	}
	ta.waitJob(key, acc.JobID, storage.JobCompleted)
	want := []struct{ status, reason, detail string }{
		{geo.StatusFailed, geo.ReasonOverlappingParts, "polygons 0 and 1 of the MultiPolygon overlap"},
		{geo.StatusFailed, geo.ReasonOverlappingParts, "polygons 0 and 1 of the MultiPolygon share a side from [30.03, 7] to [30.03, 7.01]"},
		{geo.StatusFailed, geo.ReasonOverlappingParts, "polygon 1 lies inside polygon 0"},
		{geo.StatusCompliant, "", ""},
		{geo.StatusCompliant, "", ""},
	}
	for i, wt := range want {
		var st polygonStatusResponse
		mustDecode(t, ta.do("GET", eudrPrefix+"/polygons/"+storage.PolygonID(acc.JobID, i)+"/status", "", "X-API-Key", key), &st)
		if st.EUDRStatus != wt.status || derefOr(st.FailureReason) != wt.reason || !strings.Contains(derefOr(st.FailureDetail), wt.detail) {
			t.Errorf("feature %d: %s %s %q, want %s %s ...%s...", i, st.EUDRStatus, derefOr(st.FailureReason), derefOr(st.FailureDetail), wt.status, wt.reason, wt.detail)
		}
		if i == 4 {
			// The split plot measures as the same plot at the meridian's other end.
			whole := geo.PolygonArea([][][2]float64{{{0, 67}, {0.01, 67}, {0.01, 67.01}, {0, 67.01}, {0, 67}}})
			if math.Abs(st.AreaHa-whole) > 1e-6*whole {
				t.Errorf("split plot: areaHa %v, want %v", st.AreaHa, whole)
			}
		}
	}
}
