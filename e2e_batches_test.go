package main_test

// End-to-end tests of batches (docs/batches.md) against the real binary:
// screened plots registered as batches, the batch_risk_assessment job, the
// signed batch.risk_assessed delivery, VERIFIED for plots from low- and
// standard-risk countries and HIGH_RISK for a high-risk one, every refusal
// (400, 404, 422), a polygon in use that cannot be deleted (409), lists,
// a country benchmark file, and batches that survive kill -9.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

const (
	batPath    = eudrAPI + "/batches"
	batJobType = "batch_risk_assessment"
)

var batIDPattern = regexp.MustCompile(`^bat_[0-9A-HJKMNP-TV-Z]{26}$`)

// batView is GET /batches/{id} (and an item of the list, without polygonIds).
type batView struct {
	BatchID        string   `json:"batchId"`
	JobID          string   `json:"jobId"`
	BatchReference string   `json:"batchReference"`
	Commodity      string   `json:"commodity"`
	HSCode         string   `json:"hsCode"`
	SupplierID     string   `json:"supplierId"`
	PolygonCount   int      `json:"polygonCount"`
	PolygonIDs     []string `json:"polygonIds"`
	Quantity       struct {
		NetMassKg             float64  `json:"netMassKg"`
		SupplementaryUnit     *float64 `json:"supplementaryUnit"`
		SupplementaryUnitType *string  `json:"supplementaryUnitType"`
	} `json:"quantity"`
	HarvestStart *string `json:"harvestStart"`
	HarvestEnd   *string `json:"harvestEnd"`
	Status       string  `json:"status"`
	RiskScore    *int    `json:"riskScore"`
	RiskLevel    *string `json:"riskLevel"`
	CreatedAt    string  `json:"createdAt"`
	AssessedAt   *string `json:"assessedAt"`
}

type batFactor struct {
	Name        string          `json:"name"`
	Score       int             `json:"score"`
	Inputs      json.RawMessage `json:"inputs"`
	Explanation string          `json:"explanation"`
}

// batAssessment is GET /batches/{id}/risk-assessment.
type batAssessment struct {
	BatchID      string      `json:"batchId"`
	JobID        string      `json:"jobId"`
	Status       string      `json:"status"`
	RiskScore    *int        `json:"riskScore"`
	RiskLevel    *string     `json:"riskLevel"`
	MaxScore     *int        `json:"maxScore"`
	Factors      []batFactor `json:"factors"`
	DataVersions *struct {
		CountryBenchmark struct {
			Version, Source, Date, SHA256 string
		} `json:"countryBenchmark"`
		AnnexI struct {
			Version, Source, Date, SHA256 string
		} `json:"annexI"`
	} `json:"dataVersions"`
	EngineVersion *string `json:"engineVersion"`
	AppVersion    *string `json:"appVersion"`
	AssessedAt    *string `json:"assessedAt"`
}

// batPlot is a square COMPLIANT-or-not plot of commodity from country,
// supplied by supplier, around lon, lat.
func batPlot(commodity, country, supplier string, lon, lat float64) string {
	return polFeature(polSquare(lon, lat, 0.001), map[string]any{"commodity": commodity, "producerCountry": country, "supplierId": supplier})
}

// batBody is a batch of cocoa beans from supplier over polygons.
func batBody(ref, supplier string, polygons ...string) map[string]any {
	return map[string]any{"batchReference": ref, "commodity": "cocoa", "hsCode": "180100", "supplierId": supplier,
		"polygonIds": polygons, "quantity": map[string]any{"netMassKg": 2500, "supplementaryUnit": 100, "supplementaryUnitType": "NAR"},
		"harvestStart": "2026-01-15", "harvestEnd": "2026-04-30"}
}

func batPost(t testing.TB, base, key string, body any) *apitest.Response {
	t.Helper()
	return apitest.Do(t, "POST", base+batPath, idem(key), body)
}

// batRegister posts a batch and checks the 202: exactly batchId and jobId,
// Location naming the job.
func batRegister(t testing.TB, base, key string, body any) (batchID, jobID string) {
	t.Helper()
	r := batPost(t, base, key, body).WantStatus(t, http.StatusAccepted)
	var acc map[string]any
	r.Decode(t, &acc)
	batchID, _ = acc["batchId"].(string)
	jobID, _ = acc["jobId"].(string)
	if !batIDPattern.MatchString(batchID) || !jobIDPattern.MatchString(jobID) || len(acc) != 2 {
		t.Fatalf("%s: 202 body %s, want exactly a batchId and a jobId", r.Request, r.Body)
	}
	if loc := r.Header.Get("Location"); loc != eudrAPI+"/jobs/"+jobID {
		t.Errorf("%s: Location %q, want the job", r.Request, loc)
	}
	return batchID, jobID
}

// batWait polls the batch until it is no longer ASSESSING.
func batWait(t testing.TB, base, key, id string) batView {
	t.Helper()
	var b batView
	waitUntil(t, 30*time.Second, "batch "+id+" to be assessed", func() bool {
		b = batGet(t, base, key, id)
		return b.Status != "ASSESSING"
	})
	return b
}

func batGet(t testing.TB, base, key, id string) batView {
	t.Helper()
	r := apitest.Do(t, "GET", base+batPath+"/"+id, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	var b batView
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		t.Fatalf("%s: %v: %s", r.Request, err, r.Body)
	}
	return b
}

func batGetAssessment(t testing.TB, base, key, id string) (batAssessment, *apitest.Response) {
	t.Helper()
	r := apitest.Do(t, "GET", base+batPath+"/"+id+"/risk-assessment", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	var a batAssessment
	r.Decode(t, &a)
	return a, r
}

// batScreen screens features as one polygon job and returns their IDs.
func batScreen(t testing.TB, base, key string, features ...string) []string {
	t.Helper()
	job := polMustPost(t, base, key, polCollection(features...), len(features))
	polWaitJob(t, base, key, job, 20*time.Second)
	ids := make([]string, len(features))
	for i := range ids {
		ids[i] = polIDOf(job, i)
	}
	return ids
}

func TestBatch_RiskAssessment(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, noRateLimit...)
	key := p.createKey(t, sandbox)
	sub := subscribe(t, p, key, rc, "/batches", "batch.risk_assessed")
	base := p.SandboxURL
	mustCreateSupplier(t, base, key, "V-100", "Cooperative")
	mustCreateSupplier(t, base, key, "V-200", "Exporter")

	ids := batScreen(t, base, key,
		batPlot("cocoa", "GH", "V-100", -1.5, 6.5),    // 0 COMPLIANT, low risk
		batPlot("cocoa", "BR", "V-100", -48.0, -2.0),  // 1 COMPLIANT, standard risk
		batPlot("cocoa", "RU", "V-200", 40.0, 55.0),   // 2 COMPLIANT, high risk
		batPlot("coffee", "GH", "V-100", -1.6, 6.5),   // 3 COMPLIANT, another commodity
		batPlot("cocoa", "BR", "V-100", -61.5, -10.5), // 4 HIGH_RISK (deforestation fixture)
		batPlot("cocoa", "NG", "V-100", 10.5, 10.5),   // 5 FAILED (no reference coverage)
		batPlot("cocoa", "GH", "V-100", -1.7, 6.5),    // 6 COMPLIANT, in no batch
	)

	// A batch of COMPLIANT plots from a low- and a standard-risk country:
	// VERIFIED, scored by the standard-risk country (25). V-100's record:
	// 5 screened plots (4 COMPLIANT, the coffee one included, 1 HIGH_RISK;
	// the FAILED one does not count), 20 % HIGH_RISK, half is 10.
	verified, vJob := batRegister(t, base, key, batBody("LOT-GH-BR", "V-100", ids[0], ids[1]))
	b := batWait(t, base, key, verified)
	if b.Status != "VERIFIED" || b.RiskScore == nil || *b.RiskScore != 25 || *b.RiskLevel != "NEGLIGIBLE" || b.JobID != vJob ||
		!slices.Equal(b.PolygonIDs, []string{ids[0], ids[1]}) || b.PolygonCount != 2 || b.BatchReference != "LOT-GH-BR" ||
		b.HSCode != "180100" || b.Commodity != "cocoa" || b.SupplierID != "V-100" || b.Quantity.NetMassKg != 2500 ||
		*b.Quantity.SupplementaryUnit != 100 || *b.Quantity.SupplementaryUnitType != "NAR" || *b.HarvestStart != "2026-01-15" ||
		*b.HarvestEnd != "2026-04-30" || b.AssessedAt == nil {
		t.Errorf("verified batch: %+v", b)
	}
	apitest.ParseTime(t, b.CreatedAt)
	apitest.ParseTime(t, *b.AssessedAt)
	var job jobView
	apitest.Do(t, "GET", jobURL(base, vJob), apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &job)
	if job.Type != batJobType || job.Status != "COMPLETED" || job.Progress.Total != 1 || job.Progress.Succeeded != 1 {
		t.Errorf("batch job: %+v", job)
	}

	a, ar := batGetAssessment(t, base, key, verified)
	if a.Status != "VERIFIED" || *a.RiskScore != 25 || *a.MaxScore != 50 || len(a.Factors) != 3 || *a.EngineVersion != "eudr-risk/1" ||
		*a.AppVersion != testVersion || a.DataVersions.CountryBenchmark.Version != "2025/1093" || *a.AssessedAt != *b.AssessedAt ||
		ar.Header.Get("Retry-After") != "" {
		t.Errorf("assessment: %s", ar.Body)
	}
	wantScores := map[string]int{"country_benchmark": 25, "plot_risk": 0, "supplier_history": 10}
	for _, f := range a.Factors {
		if f.Score != wantScores[f.Name] || f.Explanation == "" || len(f.Inputs) < 2 || f.Inputs[0] != '{' {
			t.Errorf("factor %s: score %d (want %d), inputs %s, explanation %q", f.Name, f.Score, wantScores[f.Name], f.Inputs, f.Explanation)
		}
	}
	if !strings.Contains(string(ar.Body), `"countries":[{"country":"BR","riskClass":"standard","polygonCount":1,`) ||
		!strings.Contains(string(ar.Body), `"screenedPolygons":5,"highRiskPolygons":1,"failedPolygons":1,"highRiskPct":20`) {
		t.Errorf("factor inputs: %s", ar.Body)
	}

	// A batch with a plot from a high-risk country (Russia): HIGH_RISK.
	high, _ := batRegister(t, base, key, batBody("LOT-RU", "V-200", ids[2]))
	hb := batWait(t, base, key, high)
	if hb.Status != "HIGH_RISK" || *hb.RiskScore != 100 || *hb.RiskLevel != "NOT_NEGLIGIBLE" {
		t.Errorf("high-risk batch: %+v", hb)
	}
	ha, _ := batGetAssessment(t, base, key, high)
	if ha.Factors[0].Name != "country_benchmark" || ha.Factors[0].Score != 100 || !strings.Contains(ha.Factors[0].Explanation, "(RU)") {
		t.Errorf("high-risk assessment: %+v", ha)
	}

	t.Run("Events", func(t *testing.T) {
		waitUntil(t, 15*time.Second, "both batch.risk_assessed delivered", func() bool {
			n := 0
			for _, r := range rc.Requests("/batches", "") {
				if rc.IsDelivered("/batches", r.Env.EventID) {
					n++
				}
			}
			return n >= 2
		})
		got := map[string]apitest.Delivery{}
		for _, r := range rc.Requests("/batches", "") {
			got[dataField(&r, "batchId")] = r
		}
		for id, want := range map[string]batAssessment{verified: a, high: ha} {
			r, ok := got[id]
			if !ok {
				t.Errorf("no batch.risk_assessed for %s", id)
				continue
			}
			apitest.CheckSignatures(t, r, sub.SigningSecret)
			if r.SigErr != nil || r.Env.EventType != "batch.risk_assessed" || r.Header.Get("X-Service-Event-Type") != "batch.risk_assessed" {
				t.Errorf("delivery for %s: %v %s", id, r.SigErr, r.Body)
			}
			var data map[string]json.RawMessage
			json.Unmarshal(r.Env.Data, &data)
			if keys := slices.Sorted(maps.Keys(data)); !slices.Equal(keys, []string{"batchId", "factors", "riskLevel", "riskScore"}) {
				t.Errorf("batch.risk_assessed data members %v", keys)
			}
			wantData := mustJSON(t, map[string]any{"batchId": id, "riskScore": *want.RiskScore, "riskLevel": *want.RiskLevel, "factors": want.Factors})
			if !sameJSON(t, r.Env.Data, wantData) {
				t.Errorf("batch.risk_assessed of %s: %s, want %s", id, r.Env.Data, wantData)
			}
		}
		if n := len(rc.Requests("/batches", "")); n != 2 {
			t.Errorf("the receiver got %d deliveries, want 2", n)
		}
	})

	t.Run("Refused", func(t *testing.T) {
		before := apitest.Do(t, "GET", base+batPath, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Array(t)
		// 400: every problem at once.
		e := apitest.WantError(t, batPost(t, base, key, map[string]any{"batchReference": "", "commodity": "cocoa", "hsCode": "3401",
			"supplierId": "V-100", "polygonIds": []string{ids[0], ids[0]}, "quantity": map[string]any{"netMassKg": 0},
			"harvestStart": "2026-05-01", "harvestEnd": "2026-04-01", "extra": true}), http.StatusBadRequest, "VALIDATION_FAILED",
			"UNKNOWN_FIELD", "REQUIRED", "HS_CODE_NOT_IN_ANNEX_I", "INVALID_VALUE", "INVALID_VALUE", "INVALID_VALUE")
		for field, code := range map[string]string{"extra": "UNKNOWN_FIELD", "batchReference": "REQUIRED", "hsCode": "HS_CODE_NOT_IN_ANNEX_I",
			"polygonIds[1]": "INVALID_VALUE", "quantity.netMassKg": "INVALID_VALUE", "harvestEnd": "INVALID_VALUE"} {
			if d := e.Detail(t, field); d.Code != code {
				t.Errorf("400 at %s: %s, want %s", field, d.Code, code)
			}
		}
		if d := e.Detail(t, "hsCode"); !strings.Contains(d.Issue, "3401 is not a product of cocoa") {
			t.Errorf("hsCode issue: %q", d.Issue)
		}
		apitest.WantError(t, apitest.Do(t, "POST", base+batPath, apitest.WithKey(key), batBody("x", "V-100", ids[0])), http.StatusBadRequest, "VALIDATION_FAILED", "IDEMPOTENCY_KEY_MISSING")

		// 404: the supplier mapping and each polygon that does not exist.
		e = apitest.WantError(t, batPost(t, base, key, batBody("x", "V-999", ids[0], "pol_nope", polIDOf("job_01JD3R7F5G6H7J8K9M0N1P2Q3R", 0))),
			http.StatusNotFound, "NOT_FOUND", "SUPPLIER_NOT_FOUND", "POLYGON_NOT_FOUND", "POLYGON_NOT_FOUND")
		e.Detail(t, "supplierId")
		e.Detail(t, "polygonIds[1]")
		e.Detail(t, "polygonIds[2]")
		// A polygon of the other environment does not exist here.
		live := p.createKey(t, production)
		mustCreateSupplier(t, p.ProductionURL, live, "V-100", "Cooperative")
		e = apitest.WantError(t, batPost(t, p.ProductionURL, live, batBody("x", "V-100", ids[0])), http.StatusNotFound, "NOT_FOUND", "POLYGON_NOT_FOUND")
		if e.Message != e.Details[0].Issue {
			t.Errorf("a lone 404: message %q", e.Message)
		}

		// 422: each polygon not COMPLIANT, each of another commodity.
		e = apitest.WantError(t, batPost(t, base, key, batBody("x", "V-100", ids[0], ids[3], ids[4], ids[5])), http.StatusUnprocessableEntity,
			"BUSINESS_RULE", "COMMODITY_MISMATCH", "POLYGON_NOT_COMPLIANT", "POLYGON_NOT_COMPLIANT")
		if d := e.Detail(t, "polygonIds[2]"); d.Code != "POLYGON_NOT_COMPLIANT" || !strings.Contains(d.Issue, "HIGH_RISK (DEFORESTATION_AFTER_CUTOFF)") {
			t.Errorf("422 for the HIGH_RISK plot: %+v", d)
		}
		if d := e.Detail(t, "polygonIds[3]"); d.Code != "POLYGON_NOT_COMPLIANT" || !strings.Contains(d.Issue, "FAILED (NO_REFERENCE_COVERAGE)") {
			t.Errorf("422 for the FAILED plot: %+v", d)
		}
		if d := e.Detail(t, "polygonIds[1]"); d.Code != "COMMODITY_MISMATCH" || !strings.Contains(d.Issue, "coffee") {
			t.Errorf("422 for the coffee plot: %+v", d)
		}
		// A product of another commodity (Annex I's coffee on a cocoa batch)
		// is a rule broken too, not a malformed body.
		coffeeCode := batBody("x", "V-100", ids[0])
		coffeeCode["hsCode"] = "0901"
		e = apitest.WantError(t, batPost(t, base, key, coffeeCode), http.StatusUnprocessableEntity, "BUSINESS_RULE", "HS_CODE_NOT_IN_ANNEX_I")
		if d := e.Detail(t, "hsCode"); !strings.Contains(d.Issue, "0901 is listed for coffee") {
			t.Errorf("422 for a coffee hsCode on a cocoa batch: %+v", d)
		}

		// None of these registered a batch.
		after := apitest.Do(t, "GET", base+batPath, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Array(t)
		if len(after) != len(before) {
			t.Errorf("batches: %d before the refusals, %d after", len(before), len(after))
		}
		for _, path := range []string{"/bat_nope", "/bat_nope/risk-assessment", "/" + verified} {
			apitest.WantError(t, apitest.Do(t, "GET", p.ProductionURL+batPath+path, apitest.WithKey(live), nil), http.StatusNotFound, "NOT_FOUND")
		}
	})

	t.Run("PolygonInUse", func(t *testing.T) {
		// In two batches now; a 409 names both, and it is still there.
		again, _ := batRegister(t, base, key, batBody("LOT-GH-2", "V-100", ids[0]))
		batWait(t, base, key, again)
		e := apitest.WantError(t, apitest.Do(t, "DELETE", polItemURL(base, ids[0]), apitest.WithKey(key), nil), http.StatusConflict, "CONFLICT", "POLYGON_IN_USE")
		if d := e.Details[0]; d.Field != "polygonId" || !strings.Contains(d.Issue, verified) || !strings.Contains(d.Issue, again) {
			t.Errorf("409: %+v, want both batches named", d)
		}
		polGetStatus(t, base, key, ids[0])
		apitest.WantError(t, apitest.Do(t, "DELETE", polItemURL(base, ids[2]), apitest.WithKey(key), nil), http.StatusConflict, "CONFLICT", "POLYGON_IN_USE")
		apitest.Do(t, "DELETE", polItemURL(base, ids[6]), apitest.WithKey(key), nil).WantStatus(t, http.StatusNoContent)
		// A deleted plot cannot join a batch.
		apitest.WantError(t, batPost(t, base, key, batBody("x", "V-100", ids[6])), http.StatusNotFound, "NOT_FOUND", "POLYGON_NOT_FOUND")
	})

	t.Run("List", func(t *testing.T) {
		var all []batView
		apitest.Do(t, "GET", base+batPath, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &all)
		if len(all) != 3 || all[2].BatchID != verified || all[1].BatchID != high || all[0].PolygonIDs != nil {
			t.Fatalf("batches: %+v", all)
		}
		for _, c := range []struct {
			query string
			want  []string
		}{
			{"status=HIGH_RISK", []string{high}},
			{"status=VERIFIED&supplierId=V-100", []string{all[0].BatchID, verified}},
			{"supplierId=V-200", []string{high}},
			{"status=ASSESSING", nil},
		} {
			var got []batView
			apitest.Do(t, "GET", base+batPath+"?"+c.query, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &got)
			var gotIDs []string
			for _, b := range got {
				gotIDs = append(gotIDs, b.BatchID)
			}
			if !slices.Equal(gotIDs, c.want) {
				t.Errorf("batches?%s: %v, want %v", c.query, gotIDs, c.want)
			}
		}
		r := apitest.Do(t, "GET", base+batPath+"?limit=2", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		if r.Header.Get("X-Next-Cursor") != high || !strings.Contains(r.Header.Get("Link"), `rel="next"`) {
			t.Errorf("first page of 2: Link %q, X-Next-Cursor %q", r.Header.Get("Link"), r.Header.Get("X-Next-Cursor"))
		}
		var last []batView
		apitest.Do(t, "GET", base+batPath+"?limit=2&cursor="+high, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &last)
		if len(last) != 1 || last[0].BatchID != verified {
			t.Errorf("second page: %+v", last)
		}
		apitest.WantError(t, apitest.Do(t, "GET", base+batPath+"?status=done", apitest.WithKey(key), nil), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
		apitest.WantUnauthorized(t, apitest.Do(t, "GET", base+batPath, nil, nil), "MISSING_API_KEY")
	})
}

// TestBatch_BenchmarkFile: an operator's country benchmark replaces the
// built-in one, and a bad one stops the start.
func TestBatch_BenchmarkFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "benchmark.json")
	if err := os.WriteFile(file, []byte(`{"version":"ops-2027-1","source":"operator edition","date":"2027-01-01","high":["GH"],"standard":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServer(t, append([]string{"EUDR_RISK_COUNTRY_BENCHMARK_FILE=" + file}, noRateLimit...)...)
	key := p.createKey(t, sandbox)
	base := p.SandboxURL
	mustCreateSupplier(t, base, key, "V-1", "Coop")
	ids := batScreen(t, base, key, batPlot("cocoa", "GH", "V-1", -1.5, 6.5))
	id, _ := batRegister(t, base, key, batBody("GH", "V-1", ids[0]))
	if b := batWait(t, base, key, id); b.Status != "HIGH_RISK" {
		t.Errorf("GH listed high by the operator: %+v", b)
	}
	a, _ := batGetAssessment(t, base, key, id)
	if a.DataVersions.CountryBenchmark.Version != "ops-2027-1" || a.DataVersions.CountryBenchmark.Date != "2027-01-01" {
		t.Errorf("data versions: %+v", a.DataVersions)
	}
	p.Stop(t)

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"version":"x","source":"s","date":"2027-01-01","high":["RU","RU"],"standard":[]}`), 0o600)
	res := runCLI(t, tempDataDir(t), []string{"EUDR_RISK_COUNTRY_BENCHMARK_FILE=" + bad}, "serve")
	if res.Code == 0 || !strings.Contains(res.Stderr+res.Stdout, "risk.country_benchmark_file") || !strings.Contains(res.Stderr+res.Stdout, "RU is listed twice") {
		t.Errorf("serve with a bad benchmark: exit %d, stdout %q, stderr %q", res.Code, res.Stdout, res.Stderr)
	}
}

// TestBatch_SurvivesKill: a batch registered just before kill -9 is
// assessed after the restart, once: one event, one assessment. A job the
// killed process held is taken over when its lease (10 s here) runs out,
// a delivery when its own (15 s here).
func TestBatch_SurvivesKill(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, append([]string{jobsLeaseEnv, deliveryLeaseEnv}, noRateLimit...)...)
	key := p.createKey(t, sandbox)
	subscribe(t, p, key, rc, "/batches", "batch.risk_assessed")
	mustCreateSupplier(t, p.SandboxURL, key, "V-1", "Coop")
	ids := batScreen(t, p.SandboxURL, key, batPlot("cocoa", "CI", "V-1", -5.5, 6.8), batPlot("cocoa", "CI", "V-1", -5.6, 6.8))
	var batches []string
	for i := range 5 {
		id, _ := batRegister(t, p.SandboxURL, key, batBody(fmt.Sprint("LOT-", i), "V-1", ids...))
		batches = append(batches, id)
	}
	p.Kill(t)
	p = p.Restart(t)
	for _, id := range batches {
		if b := batWait(t, p.SandboxURL, key, id); b.Status != "VERIFIED" || *b.RiskScore != 25 {
			t.Errorf("batch %s after kill -9: %+v", id, b)
		}
	}
	// A delivery the killed process had claimed (on a busy machine the
	// first jobs finish before the kill) goes out again only when its
	// claim's lease runs out, counted from the claim (before the kill); the
	// margin is for a busy machine.
	waitUntil(t, deliveryLease+30*time.Second, "an event per batch", func() bool {
		seen := map[string]bool{}
		for _, r := range rc.Requests("/batches", "") {
			if rc.IsDelivered("/batches", r.Env.EventID) {
				seen[dataField(&r, "batchId")] = true
			}
		}
		return len(seen) == len(batches)
	})
	events := map[string]map[string]bool{} // batch -> event IDs
	for _, r := range rc.Requests("/batches", "") {
		id := dataField(&r, "batchId")
		if events[id] == nil {
			events[id] = map[string]bool{}
		}
		events[id][r.Env.EventID] = true
	}
	for _, id := range batches {
		if len(events[id]) != 1 {
			t.Errorf("batch %s: %d events, want exactly 1 (redeliveries keep their eventId)", id, len(events[id]))
		}
	}
	p.Stop(t)
}
