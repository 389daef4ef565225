package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/server/config"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/risk"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// countryPlot is a Polygon feature of commodity from country, supplied by
// V-1, around (lon, lat).
func countryPlot(commodity, country string, lon, lat float64) string {
	return fmt.Sprintf(`{"type":"Feature","geometry":{"type":"Polygon","coordinates":%s},`+
		`"properties":{"commodity":%q,"producerCountry":%q,"supplierId":"V-1"}}`, square(lon, lat, 0.001), commodity, country)
}

// screen posts features as one polygon job, waits for it and returns the
// polygon IDs in feature order.
func (ta *testApp) screen(key string, features ...string) []string {
	ta.tb.Helper()
	acc, w := ta.postPolygons(key, "pol-"+randomHex(6), collection(features...))
	if w.Code != http.StatusAccepted {
		ta.tb.Fatalf("POST /polygons: %d %s", w.Code, w.Body)
	}
	ta.waitJob(key, acc.JobID, storage.JobCompleted)
	ids := make([]string, len(features))
	for i := range ids {
		ids[i] = storage.PolygonID(acc.JobID, i)
	}
	return ids
}

// mapSupplier creates the supplier mapping of erpVendorID.
func (ta *testApp) mapSupplier(key, erpVendorID string) {
	ta.tb.Helper()
	w := ta.do("POST", eudrPrefix+"/suppliers", `{"erpVendorId":"`+erpVendorID+`","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b","name":"Coop","country":"GH"}`,
		"X-API-Key", key, "Idempotency-Key", "sup-"+erpVendorID)
	if w.Code != http.StatusOK {
		ta.tb.Fatalf("POST /suppliers: %d %s", w.Code, w.Body)
	}
}

// batchBody is a valid batch of cocoa beans from supplier V-1 over ids.
func batchBody(ref string, ids ...string) string {
	list, _ := json.Marshal(ids)
	return `{"batchReference":"` + ref + `","commodity":"cocoa","hsCode":"18010000","supplierId":"V-1","polygonIds":` + string(list) +
		`,"quantity":{"netMassKg":12500.5,"supplementaryUnit":0,"supplementaryUnitType":"NAR"},"harvestStart":"2026-03-01","harvestEnd":"2026-05-31"}`
}

func (ta *testApp) postBatch(key, idem, body string) (batchAcceptedResponse, *httptest.ResponseRecorder) {
	ta.tb.Helper()
	w := ta.do("POST", eudrPrefix+"/batches", body, "X-API-Key", key, "Idempotency-Key", idem)
	var acc batchAcceptedResponse
	if w.Code == http.StatusAccepted {
		mustDecode(ta.tb, w, &acc)
	}
	return acc, w
}

// assessBatch registers a batch and waits for its job; it returns the
// batch as GET /batches/{id} answers it then.
func (ta *testApp) assessBatch(key, body string) batchResponse {
	ta.tb.Helper()
	acc, w := ta.postBatch(key, "bat-"+randomHex(6), body)
	if w.Code != http.StatusAccepted || w.Header().Get("Location") != eudrPrefix+"/jobs/"+acc.JobID {
		ta.tb.Fatalf("POST /batches: %d %s (Location %q)", w.Code, w.Body, w.Header().Get("Location"))
	}
	ta.waitJob(key, acc.JobID, storage.JobCompleted)
	var b batchResponse
	mustDecode(ta.tb, ta.do("GET", eudrPrefix+"/batches/"+acc.BatchID, "", "X-API-Key", key), &b)
	return b
}

func TestBatches_Verified(t *testing.T) {
	rc := newReceiver(t)
	ta := newTestApp(t, "EUDR_WEBHOOKS_CA_FILE="+rc.caFile)
	_, key := ta.newKey(storage.Sandbox)
	rc.subscribe(ta, key, event.BatchRiskAssessed)
	ta.runQueues()
	ta.mapSupplier(key, "V-1")
	ids := ta.screen(key, countryPlot("cocoa", "GH", -1.6, 6), countryPlot("cocoa", "BR", -50.1, -6), countryPlot("cocoa", "GH", -1.4, 6))

	acc, w := ta.postBatch(key, "b-1", batchBody("LOT-1", ids[2], ids[0], ids[1]))
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST /batches: %d %s", w.Code, w.Body)
	}
	if !strings.HasPrefix(acc.BatchID, "bat_") || w.Header().Get("Location") != eudrPrefix+"/jobs/"+acc.JobID {
		t.Errorf("202: %s, Location %q", w.Body, w.Header().Get("Location"))
	}
	// A replay answers the same batch and registers nothing more.
	if acc2, w2 := ta.postBatch(key, "b-1", batchBody("LOT-1", ids[2], ids[0], ids[1])); acc2 != acc || w2.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %s", w2.Body)
	}
	job, _ := ta.waitJob(key, acc.JobID, storage.JobCompleted)
	if job.Type != work.BatchRiskAssessment || job.Progress != (progressBody{Total: 1, Processed: 1, Succeeded: 1, Percent: 100}) {
		t.Errorf("job: %s %+v", job.Type, job.Progress)
	}
	if want := fmt.Sprintf(`[{"batchId":%q,"status":"VERIFIED","riskScore":25,"riskLevel":"NEGLIGIBLE"}]`, acc.BatchID); string(job.Results) != want {
		t.Errorf("job results %s, want %s", job.Results, want)
	}

	var b batchResponse
	mustDecode(t, ta.do("GET", eudrPrefix+"/batches/"+acc.BatchID, "", "X-API-Key", key), &b)
	if b.Status != storage.BatchVerified || b.RiskScore == nil || *b.RiskScore != 25 || *b.RiskLevel != risk.LevelNegligible ||
		!reflect.DeepEqual(b.PolygonIDs, []string{ids[2], ids[0], ids[1]}) || b.PolygonCount != 3 || b.BatchReference != "LOT-1" ||
		b.HSCode != "18010000" || b.Quantity.NetMassKg != "12500.5" || *b.Quantity.SupplementaryUnit != "0" || *b.Quantity.SupplementaryUnitType != "NAR" ||
		*b.HarvestStart != "2026-03-01" || *b.HarvestEnd != "2026-05-31" || b.AssessedAt == nil || b.JobID != acc.JobID {
		t.Errorf("GET batch: %s", ta.do("GET", eudrPrefix+"/batches/"+acc.BatchID, "", "X-API-Key", key).Body)
	}

	ra := ta.do("GET", eudrPrefix+"/batches/"+acc.BatchID+"/risk-assessment", "", "X-API-Key", key)
	var doc batch.RiskAssessment
	mustDecode(t, ra, &doc)
	if ra.Code != http.StatusOK || ra.Header().Get("Retry-After") != "" || doc.Status != storage.BatchVerified || *doc.RiskScore != 25 ||
		*doc.MaxScore != 50 || len(doc.Factors) != 3 || doc.DataVersions.CountryBenchmark.Version != "2025/1093" ||
		doc.DataVersions.AnnexI.SHA256 != risk.AnnexI().SHA256 || *doc.EngineVersion != risk.EngineVersion || *doc.AssessedAt != *b.AssessedAt {
		t.Errorf("risk assessment: %d %s", ra.Code, ra.Body)
	}
	names := []string{doc.Factors[0].Name, doc.Factors[1].Name, doc.Factors[2].Name}
	if !reflect.DeepEqual(names, []string{risk.FactorCountryBenchmark, risk.FactorPlotRisk, risk.FactorSupplierHistory}) ||
		doc.Factors[0].Score != 25 || doc.Factors[1].Score != 0 || doc.Factors[2].Score != 0 {
		t.Errorf("factors: %s", ra.Body)
	}
	if !strings.Contains(ra.Body.String(), `"countries":[{"country":"BR","riskClass":"standard","polygonCount":1,`) ||
		!strings.Contains(ra.Body.String(), `"screenedPolygons":3,"highRiskPolygons":0`) {
		t.Errorf("factor inputs: %s", ra.Body)
	}

	// The event: the same score, level and factors as the assessment.
	typ, data := rc.next(t)
	var ev event.BatchRiskAssessedData
	if err := json.Unmarshal(data, &ev); err != nil || typ != event.BatchRiskAssessed {
		t.Fatalf("event %s: %s (%v)", typ, data, err)
	}
	var docFactors struct {
		Factors json.RawMessage `json:"factors"`
	}
	var evFactors struct {
		Factors json.RawMessage `json:"factors"`
	}
	json.Unmarshal(ra.Body.Bytes(), &docFactors)
	json.Unmarshal(data, &evFactors)
	if ev.BatchID != acc.BatchID || ev.RiskScore != 25 || ev.RiskLevel != risk.LevelNegligible || string(docFactors.Factors) != string(evFactors.Factors) {
		t.Errorf("batch.risk_assessed %s; want the assessment's factors %s", data, docFactors.Factors)
	}
	var keys map[string]json.RawMessage
	json.Unmarshal(data, &keys)
	if len(keys) != 4 {
		t.Errorf("batch.risk_assessed data has %d members, want batchId, riskScore, riskLevel, factors: %s", len(keys), data)
	}
}

func TestBatches_Refused(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	_, roKey := ta.newKey(storage.Sandbox, "read")
	ta.runQueues()
	ta.mapSupplier(key, "V-1")
	ids := ta.screen(key, countryPlot("cocoa", "GH", -1.6, 6))
	post := func(body string) *httptest.ResponseRecorder {
		return ta.do("POST", eudrPrefix+"/batches", body, "X-API-Key", key, "Idempotency-Key", "refused-"+randomHex(4))
	}

	// 400: the decoder's problems and the request's, at once. Which
	// requests are refused, and why, is batch's tests'.
	e := wantError(t, post(`{"batchReference":" ","commodity":"tea","hsCode":"18","supplierId":"-x","polygonIds":["a","","a"],`+
		`"quantity":{"netMassKg":0,"supplementaryUnit":-1},"harvestStart":"2026-13-01","harvestEnd":"yesterday","extra":1}`),
		http.StatusBadRequest, apierr.CodeValidationFailed, "")
	want := map[string]bool{
		"UNKNOWN_FIELD extra": true, "REQUIRED batchReference": true, "INVALID_VALUE commodity": true, "INVALID_VALUE hsCode": true,
		"INVALID_VALUE supplierId": true, "INVALID_VALUE polygonIds[1]": true, "INVALID_VALUE polygonIds[2]": true,
		"INVALID_VALUE quantity.netMassKg": true, "INVALID_VALUE quantity.supplementaryUnit": true,
		"REQUIRED quantity.supplementaryUnitType": true, "INVALID_VALUE harvestStart": true, "INVALID_VALUE harvestEnd": true,
	}
	if got := detailSet(e.Details); !reflect.DeepEqual(got, want) {
		t.Errorf("400 details: %v, want %v", got, want)
	}
	// Values of the wrong JSON type or unknown members, as the decoder
	// finds them (the values themselves are batch's tests').
	for _, c := range []struct {
		body          string
		field, detail string
	}{
		{strings.Replace(batchBody("x", ids[0]), `"netMassKg":12500.5`, `"netMassKg":"12500"`, 1), "quantity.netMassKg", apierr.DetailInvalidValue},
		{strings.Replace(batchBody("x", ids[0]), `"quantity":{`, `"quantity":{"gross":1,`, 1), "gross", apierr.DetailUnknownField},
		{`{"batchReference":"x","commodity":"cocoa","hsCode":"1801","supplierId":"V-1","polygonIds":"p","quantity":{"netMassKg":1}}`, "polygonIds", apierr.DetailInvalidValue},
	} {
		e := wantError(t, post(c.body), http.StatusBadRequest, apierr.CodeValidationFailed, c.detail)
		if len(e.Details) != 1 || e.Details[0].Field != c.field {
			t.Errorf("%s: details %+v, want one %s at %s", c.body, e.Details, c.detail, c.field)
		}
	}
	wantError(t, ta.do("POST", eudrPrefix+"/batches", batchBody("x", ids[0]), "X-API-Key", key), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailIdempotencyKeyMissing)
	wantError(t, ta.do("POST", eudrPrefix+"/batches", batchBody("x", ids[0]), "X-API-Key", roKey, "Idempotency-Key", "ro"), http.StatusForbidden, apierr.CodeForbidden, apierr.DetailScopeRequired)
	wantError(t, ta.do("POST", eudrPrefix+"/batches", batchBody("x", ids[0]), "X-API-Key", key, "Idempotency-Key", "xml", "Content-Type", "application/xml"),
		http.StatusUnsupportedMediaType, apierr.CodeUnsupportedMediaType, apierr.DetailInvalidValue)

	// Another environment's polygon does not exist here.
	_, liveKey := ta.newKey(storage.Production)
	w := ta.serve(storage.Production, newRequest("POST", eudrPrefix+"/batches", batchBody("x", ids[0]), "X-API-Key", liveKey, "Idempotency-Key", "live"))
	wantError(t, w, http.StatusNotFound, apierr.CodeNotFound, apierr.DetailSupplierNotFound)

	// Nothing was registered or queued by any of these; the refused
	// Idempotency-Keys stay unused.
	if w := ta.do("GET", eudrPrefix+"/batches", "", "X-API-Key", key); w.Body.String() != "[]\n" {
		t.Errorf("batches after refusals: %s", w.Body)
	}
	ta.view(func(tx *storage.Tx) error {
		if n := queue.Pending(tx.Tx); n != 0 {
			t.Errorf("queued jobs after refusals: %d", n)
		}
		if b, _ := tx.PolygonBatches(storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}, ids[0]); len(b) != 0 {
			t.Errorf("polygon in use after refusals: %v", b)
		}
		return nil
	})
	for _, path := range []string{"/batches/bat_nope", "/batches/bat_nope/risk-assessment"} {
		wantError(t, ta.do("GET", eudrPrefix+path, "", "X-API-Key", key), http.StatusNotFound, apierr.CodeNotFound, "")
	}
}

func TestBatches_ListAndAssessing(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	ta.mapSupplier(key, "V-1")
	ta.mapSupplier(key, "V-2")
	ids := ta.screen(key, countryPlot("cocoa", "GH", -1.6, 6), countryPlot("cocoa", "RU", 40, 55))
	verified := ta.assessBatch(key, batchBody("A", ids[0]))
	high := ta.assessBatch(key, batchBody("B", ids[1]))
	other := ta.assessBatch(key, strings.Replace(batchBody("C", ids[0]), `"V-1"`, `"V-2"`, 1))

	list := func(query string) ([]string, *httptest.ResponseRecorder) {
		w := ta.do("GET", eudrPrefix+"/batches"+query, "", "X-API-Key", key)
		var items []batchResponse
		mustDecode(t, w, &items)
		var out []string
		for _, b := range items {
			if b.PolygonIDs != nil {
				t.Errorf("the list shows polygonIds of %s", b.BatchID)
			}
			out = append(out, b.BatchID)
		}
		return out, w
	}
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"", []string{other.BatchID, high.BatchID, verified.BatchID}},
		{"?status=VERIFIED", []string{other.BatchID, verified.BatchID}},
		{"?status=HIGH_RISK&supplierId=V-1", []string{high.BatchID}},
		{"?supplierId=V-2", []string{other.BatchID}},
		{"?status=ASSESSING", nil},
	} {
		if got, _ := list(c.query); !reflect.DeepEqual(got, c.want) {
			t.Errorf("GET /batches%s: %v, want %v", c.query, got, c.want)
		}
	}
	got, w := list("?limit=2")
	if !reflect.DeepEqual(got, []string{other.BatchID, high.BatchID}) || w.Header().Get("X-Next-Cursor") != high.BatchID ||
		!strings.Contains(w.Header().Get("Link"), `rel="next"`) {
		t.Errorf("first page: %v, headers %v", got, w.Header())
	}
	if got, w := list("?limit=2&cursor=" + high.BatchID); !reflect.DeepEqual(got, []string{verified.BatchID}) || w.Header().Get("Link") != "" {
		t.Errorf("second page: %v", got)
	}
	e := wantError(t, ta.do("GET", eudrPrefix+"/batches?status=verified&limit=x", "", "X-API-Key", key), http.StatusBadRequest, apierr.CodeValidationFailed, "")
	if got := detailSet(e.Details); !got["INVALID_VALUE query.status"] || !got["INVALID_VALUE query.limit"] {
		t.Errorf("bad filters: %v", got)
	}

	// A batch registered while no worker runs stays ASSESSING; its risk
	// assessment answers the status, with Retry-After.
	ta2 := newTestApp(t)
	_, key2 := ta2.newKey(storage.Sandbox)
	ta2.mapSupplier(key2, "V-1")
	sandbox := storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}
	ta2.update(func(tx *storage.Tx) error {
		return tx.PutPolygon(sandbox, &storage.Polygon{ID: "pol_x_000000", Commodity: "cocoa", ProducerCountry: "GH", Status: "COMPLIANT",
			Risk: &storage.PolygonRisk{}}, &storage.PolygonDetail{Feature: []byte(`{}`), Evidence: []byte(`{}`)})
	})
	acc, w := ta2.postBatch(key2, "pending", batchBody("P", "pol_x_000000"))
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST /batches: %d %s", w.Code, w.Body)
	}
	ra := ta2.do("GET", eudrPrefix+"/batches/"+acc.BatchID+"/risk-assessment", "", "X-API-Key", key2)
	want := fmt.Sprintf(`{"batchId":%q,"jobId":%q,"status":"ASSESSING","riskScore":null,"riskLevel":null,"maxScore":null,"factors":[],`+
		`"dataVersions":null,"engineVersion":null,"appVersion":null,"assessedAt":null}`+"\n", acc.BatchID, acc.JobID)
	if ra.Code != http.StatusOK || ra.Body.String() != want || ra.Header().Get("Retry-After") == "" {
		t.Errorf("risk assessment while ASSESSING: %d %s (Retry-After %q), want %s", ra.Code, ra.Body, ra.Header().Get("Retry-After"), want)
	}
	var b batchResponse
	mustDecode(t, ta2.do("GET", eudrPrefix+"/batches/"+acc.BatchID, "", "X-API-Key", key2), &b)
	if b.Status != storage.BatchAssessing || b.RiskScore != nil || b.RiskLevel != nil || b.AssessedAt != nil {
		t.Errorf("batch while ASSESSING: %+v", b)
	}
	// The runner, started now, assesses it.
	ta2.runQueues()
	ta2.waitJob(key2, acc.JobID, storage.JobCompleted)
	mustDecode(t, ta2.do("GET", eudrPrefix+"/batches/"+acc.BatchID, "", "X-API-Key", key2), &b)
	if b.Status != storage.BatchVerified {
		t.Errorf("after the job: %+v", b)
	}
}

func TestBatches_BenchmarkFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "benchmark.json")
	os.WriteFile(file, []byte(`{"version":"ops-2026-1","source":"operator","date":"2026-01-15","high":["GH"],"standard":["RU"]}`), 0o600)
	ta := newTestApp(t, "EUDR_RISK_COUNTRY_BENCHMARK_FILE="+file)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	ta.mapSupplier(key, "V-1")
	ids := ta.screen(key, countryPlot("cocoa", "GH", -1.6, 6), countryPlot("cocoa", "RU", 40, 55))
	if b := ta.assessBatch(key, batchBody("GH", ids[0])); b.Status != storage.BatchHighRisk {
		t.Errorf("GH under a benchmark that lists it high: %+v", b)
	}
	b := ta.assessBatch(key, batchBody("RU", ids[1]))
	if b.Status != storage.BatchVerified || *b.RiskScore != 25 {
		t.Errorf("RU under a benchmark that lists it standard: %+v", b)
	}
	var doc batch.RiskAssessment
	mustDecode(t, ta.do("GET", eudrPrefix+"/batches/"+b.BatchID+"/risk-assessment", "", "X-API-Key", key), &doc)
	if doc.DataVersions.CountryBenchmark.Version != "ops-2026-1" || doc.DataVersions.CountryBenchmark.Source != "operator" {
		t.Errorf("data versions: %+v", doc.DataVersions)
	}

	// A bad file stops the start, saying why.
	os.WriteFile(file, []byte(`{"version":"x","source":"s","date":"2026-01-15","high":["XX"],"standard":[]}`), 0o600)
	_, err := config.Load("", []string{"EUDR_DATA_DIR=" + dir, "EUDR_RISK_COUNTRY_BENCHMARK_FILE=" + file})
	if err == nil || !strings.Contains(err.Error(), "risk.country_benchmark_file") || !strings.Contains(err.Error(), `"XX"`) {
		t.Errorf("LoadConfig with a bad benchmark: %v", err)
	}
	_, err = config.Load("", []string{"EUDR_DATA_DIR=" + dir, "EUDR_RISK_COUNTRY_BENCHMARK_FILE=" + filepath.Join(dir, "missing.json")})
	if err == nil || !strings.Contains(err.Error(), "risk.country_benchmark_file") {
		t.Errorf("LoadConfig with a missing benchmark: %v", err)
	}
}
