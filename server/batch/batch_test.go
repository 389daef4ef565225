package batch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/risk"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

var (
	tenant = storage.Tenant{Org: "default", Env: storage.Sandbox}
	start  = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
)

const appVersion = "9.8.7-test"

func ptr[T any](v T) *T { return &v }

func dec(s string) *euis.Decimal { return ptr(euis.Decimal(s)) }

// newService builds the service over a fresh bench with the embedded
// country benchmark (bm nil) or bm, and maxScore.
func newService(tb testing.TB, bm *risk.Benchmark, maxScore int) (*apitest.Bench, *batch.Service) {
	b := apitest.NewBench(tb, start)
	if bm == nil {
		bm = risk.DefaultBenchmark()
	}
	return b, batch.New(batch.Options{DB: b.DB, Jobs: b.Jobs, Events: b.Events, Benchmark: bm, MaxScore: maxScore,
		AppVersion: appVersion})
}

// putSupplier maps erpVendorID as POST /suppliers would.
func putSupplier(tb testing.TB, b *apitest.Bench, s *batch.Service, erpVendorID string) {
	tb.Helper()
	req := batch.SupplierRequest{ERPVendorID: erpVendorID, EUOperatorUUID: "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b", Name: "Coop", Country: "GH"}
	sup, err := req.Validate()
	if err != nil {
		tb.Fatal(err)
	}
	b.Update(tb, func(tx *storage.Tx) error { return s.PutSupplier(tx, tenant, sup) })
}

// putPolygon records a screened plot of supplier V-1.
func putPolygon(tb testing.TB, b *apitest.Bench, id, commodity, country, status string, riskScore int) {
	tb.Helper()
	p := &storage.Polygon{ID: id, SupplierID: "V-1", Commodity: commodity, ProducerCountry: country, AreaHa: 2,
		Status: status, Risk: &storage.PolygonRisk{RiskScore: riskScore}, ScreenedAt: start}
	switch status {
	case geo.StatusHighRisk:
		p.FailureReason = "DEFORESTATION_AFTER_CUTOFF"
	case geo.StatusFailed:
		p.FailureReason = "NO_REFERENCE_COVERAGE"
	}
	b.Update(tb, func(tx *storage.Tx) error {
		return tx.PutPolygon(tenant, p, &storage.PolygonDetail{Feature: []byte(`{}`), Evidence: []byte(`{}`)})
	})
}

// request is a valid batch of cocoa beans from supplier V-1 over ids.
func request(ids ...string) batch.Request {
	return batch.Request{BatchReference: "LOT-1", Commodity: "cocoa", HSCode: "18010000", SupplierID: "V-1", PolygonIDs: ids,
		Quantity: &batch.QuantityRequest{NetMassKg: dec("12500.5")}}
}

// register validates req and registers the batch in its own transaction.
func register(b *apitest.Bench, s *batch.Service, req batch.Request) (*storage.Batch, error) {
	bt, ids, err := req.Validate()
	if err != nil {
		return nil, err
	}
	err = b.DB.Update(context.Background(), func(tx *storage.Tx) error { return s.Register(tx, tenant, bt, ids) })
	return bt, err
}

// details lists an error's details as "CODE field".
func details(err error) []string {
	var out []string
	for _, d := range apierr.From(err).Details {
		out = append(out, d.Code+" "+d.Field)
	}
	return out
}

func TestRequest_Validate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(r *batch.Request)
		want   []string // "CODE field"; nil: valid
	}{
		{"Valid", func(*batch.Request) {}, nil},
		{"AllMissing", func(r *batch.Request) { *r = batch.Request{} }, []string{"REQUIRED batchReference", "REQUIRED commodity",
			"REQUIRED hsCode", "REQUIRED supplierId", "REQUIRED polygonIds", "REQUIRED quantity"}},
		{"ReferenceBlank", func(r *batch.Request) { r.BatchReference = " \t" }, []string{"REQUIRED batchReference"}},
		{"Reference100", func(r *batch.Request) { r.BatchReference = strings.Repeat("é", batch.MaxReferenceLen) }, nil},
		{"Reference101", func(r *batch.Request) { r.BatchReference = strings.Repeat("r", batch.MaxReferenceLen+1) }, []string{"INVALID_VALUE batchReference"}},
		{"ReferenceControl", func(r *batch.Request) { r.BatchReference = "LOT\n1" }, []string{"INVALID_VALUE batchReference"}},
		{"CommodityUnknown", func(r *batch.Request) { r.Commodity = "tea" }, []string{"INVALID_VALUE commodity"}},
		{"HSCodeMalformed", func(r *batch.Request) { r.HSCode = "18O1" }, []string{"INVALID_VALUE hsCode"}},
		{"HSCodeOfNoCommodity", func(r *batch.Request) { r.HSCode = "3401" }, []string{"HS_CODE_NOT_IN_ANNEX_I hsCode"}},
		// Listed for coffee: a business rule, judged by Register.
		{"HSCodeOfAnotherCommodity", func(r *batch.Request) { r.HSCode = "0901" }, nil},
		// Malformed input is judged alone: a heading listed for another
		// commodity is no problem of Validate's.
		{"HSCodeOfAnotherCommodityMassZero", func(r *batch.Request) {
			r.Commodity, r.HSCode, r.Quantity.NetMassKg = "coffee", "1801", dec("0")
		}, []string{"INVALID_VALUE quantity.netMassKg"}},
		{"CoffeeHSCodeOfNoCommodity", func(r *batch.Request) { r.Commodity, r.HSCode = "coffee", "3401" }, []string{"HS_CODE_NOT_IN_ANNEX_I hsCode"}},
		{"CoffeeHSCodeOfCattle", func(r *batch.Request) { r.Commodity, r.HSCode = "coffee", "0102" }, []string{"HS_CODE_NOT_IN_ANNEX_I hsCode"}},
		{"CoffeeHSCodeMalformed", func(r *batch.Request) { r.Commodity, r.HSCode = "coffee", "09O1" }, []string{"INVALID_VALUE hsCode"}},
		{"CoffeeHSCodeTooShort", func(r *batch.Request) { r.Commodity, r.HSCode = "coffee", "090" }, []string{"INVALID_VALUE hsCode"}},
		{"CoffeeHSCode", func(r *batch.Request) { r.Commodity, r.HSCode = "coffee", "0901" }, nil},
		{"SupplierNotAnERPVendorID", func(r *batch.Request) { r.SupplierID = "-x" }, []string{"INVALID_VALUE supplierId"}},
		{"PolygonsEmpty", func(r *batch.Request) { r.PolygonIDs = []string{} }, []string{"REQUIRED polygonIds"}},
		{"PolygonEmptyAndRepeated", func(r *batch.Request) { r.PolygonIDs = []string{"a", "", "a"} },
			[]string{"INVALID_VALUE polygonIds[1]", "INVALID_VALUE polygonIds[2]"}},
		{"PolygonsTooMany", func(r *batch.Request) {
			r.PolygonIDs = make([]string, batch.MaxPolygons+1)
			for i := range r.PolygonIDs {
				r.PolygonIDs[i] = fmt.Sprint("pol_", i)
			}
		}, []string{"INVALID_VALUE polygonIds"}},
		{"MassMissing", func(r *batch.Request) { r.Quantity.NetMassKg = nil }, []string{"REQUIRED quantity.netMassKg"}},
		{"MassZero", func(r *batch.Request) { r.Quantity.NetMassKg = dec("0.0") }, []string{"INVALID_VALUE quantity.netMassKg"}},
		{"MassTooLarge", func(r *batch.Request) { r.Quantity.NetMassKg = dec("10000000000") }, []string{"INVALID_VALUE quantity.netMassKg"}},
		{"UnitWithoutType", func(r *batch.Request) { r.Quantity.SupplementaryUnit = dec("0.0") }, []string{"REQUIRED quantity.supplementaryUnitType"}},
		{"TypeWithoutUnit", func(r *batch.Request) { r.Quantity.SupplementaryUnitType = ptr("NAR") }, []string{"REQUIRED quantity.supplementaryUnit"}},
		{"UnitNegativeTypeUnknown", func(r *batch.Request) {
			r.Quantity.SupplementaryUnit, r.Quantity.SupplementaryUnitType = dec("-1.0"), ptr("KGM")
		}, []string{"INVALID_VALUE quantity.supplementaryUnit", "INVALID_VALUE quantity.supplementaryUnitType"}},
		{"TypeUnknown", func(r *batch.Request) {
			r.Quantity.SupplementaryUnit, r.Quantity.SupplementaryUnitType = dec("0.0"), ptr("KGM")
		}, []string{"INVALID_VALUE quantity.supplementaryUnitType"}},
		{"UnitAndType", func(r *batch.Request) {
			r.Quantity.SupplementaryUnit, r.Quantity.SupplementaryUnitType = dec("3.0"), ptr("MTQ")
		}, nil},
		{"HarvestNotDates", func(r *batch.Request) { r.HarvestStart, r.HarvestEnd = ptr("2026-13-01"), ptr("2026-5-1") },
			[]string{"INVALID_VALUE harvestStart", "INVALID_VALUE harvestEnd"}},
		{"HarvestEndsBeforeStart", func(r *batch.Request) { r.HarvestStart, r.HarvestEnd = ptr("2026-03-01"), ptr("2026-02-28") },
			[]string{"INVALID_VALUE harvestEnd"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := request("pol_a", "pol_b")
			tc.mutate(&req)
			b, ids, err := req.Validate()
			if tc.want == nil {
				if err != nil || b == nil || !slices.Equal(ids, req.PolygonIDs) || b.PolygonCount != len(ids) {
					t.Fatalf("Validate: %+v %v %v, want the batch and its polygons", b, ids, err)
				}
				return
			}
			if e := apierr.From(err); e.Status != apierr.StatusBadRequest || e.Code != apierr.CodeValidationFailed || b != nil {
				t.Fatalf("Validate: %+v %v, want 400 VALIDATION_FAILED and no batch", b, err)
			}
			if got := details(err); !slices.Equal(got, tc.want) {
				t.Errorf("details %q, want %q", got, tc.want)
			}
		})
	}

	req := request("pol_a")
	req.BatchReference, req.HarvestStart, req.HarvestEnd = "  LOT 7 ", ptr("2026-03-01"), ptr("2026-05-31")
	req.Quantity.SupplementaryUnit, req.Quantity.SupplementaryUnitType = dec("0"), ptr("NAR")
	b, _, err := req.Validate()
	if err != nil || b.Reference != "LOT 7" || b.NetMassKg != "12500.5" || *b.SupplementaryUnit != "0" || b.SupplementaryUnitType != "NAR" ||
		b.HarvestStart != "2026-03-01" || b.HarvestEnd != "2026-05-31" || b.HSCode != "18010000" || b.SupplierID != "V-1" {
		t.Errorf("Validate: %+v %v, want the reference trimmed and every value kept", b, err)
	}
}

func TestService_RegisterRefused(t *testing.T) {
	b, s := newService(t, nil, 50)
	putSupplier(t, b, s, "V-1")
	putPolygon(t, b, "pol_gh", "cocoa", "GH", geo.StatusCompliant, 0)
	putPolygon(t, b, "pol_coffee", "coffee", "GH", geo.StatusCompliant, 0)
	putPolygon(t, b, "pol_defo", "cocoa", "BR", geo.StatusHighRisk, 100)
	putPolygon(t, b, "pol_nodata", "cocoa", "GH", geo.StatusFailed, 0)
	with := func(mutate func(r *batch.Request), ids ...string) batch.Request {
		req := request(ids...)
		mutate(&req)
		return req
	}
	same := func(*batch.Request) {}
	many := make([]string, 1002)
	for i := range many {
		many[i] = fmt.Sprint("pol_nope_", i)
	}

	for _, tc := range []struct {
		name    string
		req     batch.Request
		status  int
		want    []string
		message string // "": not checked
	}{
		{"UnknownSupplierAndPolygons", with(func(r *batch.Request) { r.SupplierID = "V-9" }, "pol_gh", "pol_nope", "pol_gone"), 404,
			[]string{"SUPPLIER_NOT_FOUND supplierId", "POLYGON_NOT_FOUND polygonIds[1]", "POLYGON_NOT_FOUND polygonIds[2]"},
			"3 of the batch's references were not found"},
		{"UnknownPolygon", with(same, "pol_nope"), 404, []string{"POLYGON_NOT_FOUND polygonIds[0]"},
			"no polygon pol_nope in this organisation and environment"},
		{"ManyUnknownPolygons", with(same, many...), 404, append(func() []string {
			var out []string
			for i := range 1000 {
				out = append(out, fmt.Sprintf("POLYGON_NOT_FOUND polygonIds[%d]", i))
			}
			return out
		}(), geo.CodeTooManyProblems+" polygonIds"), ""},
		// A missing reference is answered before any rule.
		{"UnknownBeforeRefused", with(same, "pol_defo", "pol_nope"), 404, []string{"POLYGON_NOT_FOUND polygonIds[1]"}, ""},
		{"NotCompliantOrOfAnotherCommodity", with(same, "pol_gh", "pol_coffee", "pol_defo"), 422,
			[]string{"COMMODITY_MISMATCH polygonIds[1]", "POLYGON_NOT_COMPLIANT polygonIds[2]"},
			"a batch must be a product of its commodity from COMPLIANT plots of it: 1 not COMPLIANT, 1 of another commodity"},
		{"HSCodeOfAnotherCommodity", with(func(r *batch.Request) { r.HSCode = "0901" }, "pol_gh"), 422,
			[]string{"HS_CODE_NOT_IN_ANNEX_I hsCode"}, risk.AnnexI().CheckHSCode("cocoa", "0901")},
		{"HSCodeAndPolygons", with(func(r *batch.Request) { r.HSCode = "0901" }, "pol_coffee", "pol_defo"), 422,
			[]string{"HS_CODE_NOT_IN_ANNEX_I hsCode", "COMMODITY_MISMATCH polygonIds[0]", "POLYGON_NOT_COMPLIANT polygonIds[1]"},
			"a batch must be a product of its commodity from COMPLIANT plots of it: hsCode 0901 is not a product of cocoa, 1 not COMPLIANT, 1 of another commodity"},
		{"CocoaHSCodeOnCoffee", with(func(r *batch.Request) { r.Commodity, r.HSCode = "coffee", "1801" }, "pol_coffee"), 422,
			[]string{"HS_CODE_NOT_IN_ANNEX_I hsCode"}, risk.AnnexI().CheckHSCode("coffee", "1801")},
		// A plot both of another commodity and not COMPLIANT has both named.
		{"CocoaHSCodeOnCoffeeAndPolygons", with(func(r *batch.Request) { r.Commodity = "coffee" }, "pol_coffee", "pol_defo"), 422,
			[]string{"HS_CODE_NOT_IN_ANNEX_I hsCode", "POLYGON_NOT_COMPLIANT polygonIds[1]", "COMMODITY_MISMATCH polygonIds[1]"}, ""},
		{"EveryPolygonListed", with(same, "pol_gh", "pol_coffee", "pol_defo", "pol_nodata"), 422,
			[]string{"COMMODITY_MISMATCH polygonIds[1]", "POLYGON_NOT_COMPLIANT polygonIds[2]", "POLYGON_NOT_COMPLIANT polygonIds[3]"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := register(b, s, tc.req)
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != tc.status {
				t.Fatalf("Register: %v, want %d", err, tc.status)
			}
			if got := details(err); !slices.Equal(got, tc.want) {
				t.Errorf("details %q, want %q", got, tc.want)
			}
			if tc.message != "" && e.Message != tc.message {
				t.Errorf("message %q, want %q", e.Message, tc.message)
			}
		})
	}
	// The issues name what is wrong with each plot; a lone problem is the
	// message too.
	_, err := register(b, s, request("pol_defo"))
	if ds := apierr.From(err).Details; len(ds) != 1 || !strings.Contains(ds[0].Issue, "polygon pol_defo is HIGH_RISK (DEFORESTATION_AFTER_CUTOFF)") {
		t.Errorf("a HIGH_RISK polygon: %v, want its status and reason", err)
	}
	_, err = register(b, s, request("pol_nodata", "pol_coffee"))
	if ds := apierr.From(err).Details; len(ds) != 2 || !strings.Contains(ds[0].Issue, "FAILED (NO_REFERENCE_COVERAGE)") ||
		!strings.Contains(ds[1].Issue, "plot of coffee, the batch is of cocoa") {
		t.Errorf("a FAILED polygon and one of coffee: %+v, want their status and reason, and the commodities", ds)
	}
	for _, tc := range []struct {
		req   batch.Request
		issue []string
	}{
		{request("pol_nope"), []string{"pol_nope"}},
		{with(func(r *batch.Request) { r.Commodity, r.HSCode = "coffee", "1801" }, "pol_coffee"),
			[]string{"1801 is not a product of coffee", "(1801 is listed for cocoa)"}},
	} {
		_, err := register(b, s, tc.req)
		e := apierr.From(err)
		if len(e.Details) != 1 || e.Message != e.Details[0].Issue {
			t.Errorf("%v: %+v, want one detail, its issue the message", tc.req.PolygonIDs, e)
			continue
		}
		for _, want := range tc.issue {
			if !strings.Contains(e.Message, want) {
				t.Errorf("%v: %q, want it to say %q", tc.req.PolygonIDs, e.Message, want)
			}
		}
	}

	// Nothing was written by any of these.
	if list, _, err := s.List(context.Background(), tenant, storage.BatchFilter{}, storage.Page{Limit: 10}); err != nil || len(list) != 0 {
		t.Errorf("batches after refusals: %v %v", list, err)
	}
	b.Update(t, func(tx *storage.Tx) error {
		if n := queue.Pending(tx.Tx); n != 0 {
			t.Errorf("%d jobs queued after refusals", n)
		}
		if in, _ := tx.PolygonBatches(tenant, "pol_gh"); len(in) != 0 {
			t.Errorf("pol_gh is in batches %v after refusals", in)
		}
		return nil
	})
}

// A registered batch is ASSESSING with its polygons; its job assesses it
// and publishes batch.risk_assessed in the transaction that completes it.
func TestService_RegisterAndAssess(t *testing.T) {
	b, s := newService(t, nil, 50)
	putSupplier(t, b, s, "V-1")
	putPolygon(t, b, "pol_gh", "cocoa", "GH", geo.StatusCompliant, 0)
	putPolygon(t, b, "pol_br", "cocoa", "BR", geo.StatusCompliant, 10)
	putPolygon(t, b, "pol_gh2", "cocoa", "GH", geo.StatusCompliant, 0)
	ctx := context.Background()

	bt, err := register(b, s, request("pol_gh2", "pol_gh", "pol_br"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(bt.ID, "bat_") || bt.JobID == "" || bt.Status != storage.BatchAssessing || !bt.CreatedAt.Equal(start) {
		t.Errorf("registered: %+v, want an ID, a job, ASSESSING, created now", bt)
	}
	if job := b.Job(t, tenant, bt.JobID); job.Type != work.BatchRiskAssessment || job.Status != storage.JobQueued || job.Progress.Total != 1 {
		t.Errorf("job: %+v, want a QUEUED batch_risk_assessment of 1 item", job)
	}
	doc, done, err := s.Assessment(ctx, tenant, bt.ID)
	want := fmt.Sprintf(`{"batchId":%q,"jobId":%q,"status":"ASSESSING","riskScore":null,"riskLevel":null,"maxScore":null,"factors":[],`+
		`"dataVersions":null,"engineVersion":null,"appVersion":null,"assessedAt":null}`, bt.ID, bt.JobID)
	if err != nil || done || string(doc) != want {
		t.Errorf("assessment while ASSESSING: %s %v %v, want %s and not done", doc, done, err, want)
	}
	b.Update(t, func(tx *storage.Tx) error {
		if in, err := tx.PolygonBatches(tenant, "pol_gh"); err != nil || !slices.Equal(in, []string{bt.ID}) {
			t.Errorf("pol_gh in batches %v %v, want %s", in, err, bt.ID)
		}
		return nil
	})

	b.Clock.Advance(time.Minute)
	b.RunJobs(t)
	job := b.WaitJob(t, tenant, bt.JobID)
	if job.Status != storage.JobCompleted || job.Progress != (storage.JobProgress{Total: 1, Processed: 1, Succeeded: 1}) {
		t.Errorf("job: %+v, want COMPLETED 1 of 1", job)
	}
	b.Update(t, func(tx *storage.Tx) error {
		res, err := tx.FindJobResults(tenant, bt.JobID)
		want := fmt.Sprintf(`{"batchId":%q,"status":"VERIFIED","riskScore":25,"riskLevel":"NEGLIGIBLE"}`, bt.ID)
		if err != nil || len(res) != 1 || string(res[0]) != want {
			t.Errorf("job results %s %v, want %s", res, err, want)
		}
		return nil
	})
	if n := b.WaitPublished(t, 1); n != 1 {
		t.Errorf("%d publishing commits, want batch.risk_assessed once", n)
	}
	// One line tells the operator how the batch came out, and how long it took.
	line := b.WaitFinished(t, bt.JobID)
	for k, v := range map[string]any{"type": work.BatchRiskAssessment, "status": storage.JobCompleted, "org": tenant.Org,
		"environment": string(tenant.Env), "batch_id": bt.ID, "batch_status": storage.BatchVerified, "risk_score": 25.0,
		"risk_level": risk.LevelNegligible, "duration_ms": 60000.0} {
		if line[k] != v {
			t.Errorf("job finished line: %s is %v, want %v; line %v", k, line[k], v, line)
		}
	}

	got, ids, err := s.Find(ctx, tenant, bt.ID)
	assessedAt := start.Add(time.Minute)
	if err != nil || got.Status != storage.BatchVerified || *got.RiskScore != 25 || got.RiskLevel != risk.LevelNegligible ||
		!got.AssessedAt.Equal(assessedAt) || !slices.Equal(ids, []string{"pol_gh2", "pol_gh", "pol_br"}) {
		t.Errorf("Find: %+v %v %v, want VERIFIED 25 NEGLIGIBLE with its polygons in order", got, ids, err)
	}
	doc, done, err = s.Assessment(ctx, tenant, bt.ID)
	var ra batch.RiskAssessment
	if err != nil || !done || json.Unmarshal(doc, &ra) != nil {
		t.Fatalf("assessment: %s %v %v", doc, done, err)
	}
	bm, scope := risk.DefaultBenchmark(), risk.AnnexI()
	if ra.BatchID != bt.ID || ra.JobID != bt.JobID || ra.Status != storage.BatchVerified || *ra.RiskScore != 25 ||
		*ra.RiskLevel != risk.LevelNegligible || *ra.MaxScore != 50 || *ra.EngineVersion != risk.EngineVersion || *ra.AppVersion != appVersion ||
		*ra.AssessedAt != storage.FormatTime(assessedAt) ||
		*ra.DataVersions != (batch.DataVersions{CountryBenchmark: batch.DataSet{Version: bm.Version, Source: bm.Source, Date: bm.Date, SHA256: bm.SHA256},
			AnnexI: batch.DataSet{Version: scope.Version, Source: scope.Source, Date: scope.Date, SHA256: scope.SHA256}}) {
		t.Errorf("assessment: %s", doc)
	}
	var names []string
	var scores []int
	for _, f := range ra.Factors {
		names, scores = append(names, f.Name), append(scores, f.Score)
	}
	if !slices.Equal(names, []string{risk.FactorCountryBenchmark, risk.FactorPlotRisk, risk.FactorSupplierHistory}) ||
		!slices.Equal(scores, []int{25, 10, 0}) {
		t.Errorf("factors %v %v, want country 25 (BR), plots 10, supplier 0", names, scores)
	}
}

// The options decide the outcome: the benchmark the countries are
// classed by, the threshold, and the supplier's record as the store
// counts it.
func TestService_AssessOptions(t *testing.T) {
	ghHigh, err := risk.ParseBenchmark([]byte(`{"version":"ops-1","source":"operator","date":"2026-01-15","high":["GH"],"standard":["RU"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		bm       *risk.Benchmark
		maxScore int
		country  string            // of every plot
		plots    map[string]string // polygon ID: its status
		batch    []string
		status   string
		score    int
	}{
		{"DefaultBenchmark", nil, 50, "GH", map[string]string{"pol_gh": geo.StatusCompliant}, []string{"pol_gh"}, storage.BatchVerified, 0},
		{"HighRiskCountry", nil, 50, "RU", map[string]string{"pol_ru": geo.StatusCompliant}, []string{"pol_ru"}, storage.BatchHighRisk, 100},
		{"BenchmarkOption", ghHigh, 50, "GH", map[string]string{"pol_gh": geo.StatusCompliant}, []string{"pol_gh"}, storage.BatchHighRisk, 100},
		{"MaxScoreOption", ghHigh, 100, "GH", map[string]string{"pol_gh": geo.StatusCompliant}, []string{"pol_gh"}, storage.BatchVerified, 100},
		// One HIGH_RISK plot of three screened: a third, half of it is 17.
		{"SupplierHistory", nil, 16, "GH", map[string]string{"pol_gh": geo.StatusCompliant, "pol_gh2": geo.StatusCompliant,
			"pol_defo": geo.StatusHighRisk}, []string{"pol_gh"}, storage.BatchHighRisk, 17},
		{"SupplierHistoryUnderMaxScore", nil, 50, "GH", map[string]string{"pol_gh": geo.StatusCompliant, "pol_gh2": geo.StatusCompliant,
			"pol_defo": geo.StatusHighRisk}, []string{"pol_gh"}, storage.BatchVerified, 17},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, s := newService(t, tc.bm, tc.maxScore)
			putSupplier(t, b, s, "V-1")
			for _, id := range slices.Sorted(maps.Keys(tc.plots)) {
				putPolygon(t, b, id, "cocoa", tc.country, tc.plots[id], 0)
			}
			bt, err := register(b, s, request(tc.batch...))
			if err != nil {
				t.Fatal(err)
			}
			b.RunJobs(t)
			b.WaitJob(t, tenant, bt.JobID)
			got, _, err := s.Find(context.Background(), tenant, bt.ID)
			if err != nil || got.Status != tc.status || got.RiskScore == nil || *got.RiskScore != tc.score {
				t.Errorf("assessed: %+v %v, want %s %d", got, err, tc.status, tc.score)
			}
		})
	}
}

// A job queued by an earlier version carries its input in the queue entry;
// it still assesses its batch.
func TestService_AssessJobOfEarlierVersion(t *testing.T) {
	b, s := newService(t, nil, 50)
	putPolygon(t, b, "pol_gh", "cocoa", "GH", geo.StatusCompliant, 0)
	b.Update(t, func(tx *storage.Tx) error {
		if err := tx.PutBatch(tenant, &storage.Batch{ID: "bat_old", JobID: "job_old", Commodity: "cocoa", HSCode: "1801", SupplierID: "V-1",
			PolygonCount: 1, NetMassKg: "1", Status: storage.BatchAssessing, CreatedAt: tx.Now()}); err != nil {
			return err
		}
		if err := tx.PutBatchPolygons(tenant, "bat_old", []string{"pol_gh"}); err != nil {
			return err
		}
		if err := tx.PutJob(tenant, &storage.Job{ID: "job_old", Type: work.BatchRiskAssessment, Status: storage.JobQueued,
			Progress: storage.JobProgress{Total: 1}, CreatedAt: tx.Now()}); err != nil {
			return err
		}
		return queue.Enqueue(tx.Tx, queue.Job{ID: "job_old", Kind: work.BatchRiskAssessment, RunAt: tx.Now(),
			Payload: []byte(`{"org":"default","env":"sandbox","input":{"batchId":"bat_old"}}`)})
	})
	b.RunJobs(t)
	if job := b.WaitJob(t, tenant, "job_old"); job.Status != storage.JobCompleted {
		t.Fatalf("job: %+v, want COMPLETED", job)
	}
	if got, _, err := s.Find(context.Background(), tenant, "bat_old"); err != nil || got.Status != storage.BatchVerified {
		t.Errorf("batch: %+v %v, want VERIFIED", got, err)
	}
}

// A job that finds its batch assessed already (it ran before and was run
// again) only completes: the assessment stays as it was, and nothing is
// published again.
func TestService_AssessAgain(t *testing.T) {
	b, s := newService(t, nil, 50)
	putPolygon(t, b, "pol_br", "cocoa", "BR", geo.StatusCompliant, 0)
	score := 30
	var jobID string
	b.Update(t, func(tx *storage.Tx) error {
		if err := tx.PutBatch(tenant, &storage.Batch{ID: "bat_done", Commodity: "cocoa", SupplierID: "V-1", PolygonCount: 1,
			Status: storage.BatchVerified, RiskScore: &score, RiskLevel: risk.LevelNegligible, CreatedAt: tx.Now()}); err != nil {
			return err
		}
		if err := tx.PutBatchPolygons(tenant, "bat_done", []string{"pol_br"}); err != nil {
			return err
		}
		if err := tx.PutBatchAssessment(tenant, "bat_done", []byte(`{"batchId":"bat_done","riskScore":30}`)); err != nil {
			return err
		}
		input, _ := json.Marshal(batch.JobInput{BatchID: "bat_done"})
		job, err := b.Jobs.Enqueue(tx, tenant, work.BatchRiskAssessment, 1, input)
		jobID = job.ID
		return err
	})
	b.RunJobs(t)
	if job := b.WaitJob(t, tenant, jobID); job.Status != storage.JobCompleted || job.Progress.Processed != 0 {
		t.Errorf("job: %+v, want COMPLETED with nothing processed", job)
	}
	got, _, err := s.Find(context.Background(), tenant, "bat_done")
	doc, _, _ := s.Assessment(context.Background(), tenant, "bat_done")
	if err != nil || *got.RiskScore != 30 || string(doc) != `{"batchId":"bat_done","riskScore":30}` || b.Published.Load() != 0 {
		t.Errorf("after the job again: %+v %s, %d publishing commits; want it unchanged and nothing published", got, doc, b.Published.Load())
	}
}

// A batch whose polygon has no risk score cannot be judged: its job fails
// and the batch stays ASSESSING.
func TestService_AssessFails(t *testing.T) {
	b, s := newService(t, nil, 50)
	putSupplier(t, b, s, "V-1")
	putPolygon(t, b, "pol_gh", "cocoa", "GH", geo.StatusCompliant, 0)
	bt, err := register(b, s, request("pol_gh"))
	if err != nil {
		t.Fatal(err)
	}
	b.Update(t, func(tx *storage.Tx) error {
		return tx.PutPolygon(tenant, &storage.Polygon{ID: "pol_gh", SupplierID: "V-1", Commodity: "cocoa", ProducerCountry: "GH",
			Status: geo.StatusCompliant}, &storage.PolygonDetail{Feature: []byte(`{}`), Evidence: []byte(`{}`)})
	})
	b.RunJobs(t)
	if job := b.WaitJob(t, tenant, bt.JobID); job.Status != storage.JobFailed || job.Error == nil {
		t.Errorf("job: %+v, want FAILED", job)
	}
	if got, _, err := s.Find(context.Background(), tenant, bt.ID); err != nil || got.Status != storage.BatchAssessing {
		t.Errorf("batch: %+v %v, want ASSESSING", got, err)
	}
}

func TestService_Reads(t *testing.T) {
	b, s := newService(t, nil, 50)
	ctx := context.Background()
	putSupplier(t, b, s, "V-1")
	putSupplier(t, b, s, "V-2")
	putPolygon(t, b, "pol_gh", "cocoa", "GH", geo.StatusCompliant, 0)
	var ids []string
	for _, supplier := range []string{"V-1", "V-2", "V-1"} {
		req := request("pol_gh")
		req.SupplierID = supplier
		bt, err := register(b, s, req)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, bt.ID)
		b.Clock.Advance(time.Millisecond)
	}
	list := func(f storage.BatchFilter, p storage.Page) ([]string, bool) {
		got, more, err := s.List(ctx, tenant, f, p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, bt := range got {
			out = append(out, bt.ID)
		}
		return out, more
	}
	for _, tc := range []struct {
		name string
		f    storage.BatchFilter
		p    storage.Page
		want []string
		more bool
	}{
		{"All", storage.BatchFilter{}, storage.Page{Limit: 10}, []string{ids[2], ids[1], ids[0]}, false},
		{"FirstPage", storage.BatchFilter{}, storage.Page{Limit: 2}, []string{ids[2], ids[1]}, true},
		{"NextPage", storage.BatchFilter{}, storage.Page{Limit: 2, After: ids[1]}, []string{ids[0]}, false},
		{"Supplier", storage.BatchFilter{SupplierID: "V-1"}, storage.Page{Limit: 10}, []string{ids[2], ids[0]}, false},
		{"Status", storage.BatchFilter{Status: storage.BatchVerified}, storage.Page{Limit: 10}, nil, false},
	} {
		if got, more := list(tc.f, tc.p); !slices.Equal(got, tc.want) || more != tc.more {
			t.Errorf("%s: %v more %v, want %v more %v", tc.name, got, more, tc.want, tc.more)
		}
	}

	if _, _, err := s.Find(ctx, tenant, "bat_nope"); !errors.As(err, new(apierr.NotFound)) || err.Error() != "batch bat_nope not found" {
		t.Errorf("Find of an unknown batch: %v, want apierr.NotFound naming it", err)
	}
	if _, _, err := s.Assessment(ctx, tenant, "bat_nope"); !errors.As(err, new(apierr.NotFound)) {
		t.Errorf("Assessment of an unknown batch: %v, want apierr.NotFound", err)
	}
	other := storage.Tenant{Org: "default", Env: storage.Production}
	if _, _, err := s.Find(ctx, other, ids[0]); !errors.As(err, new(apierr.NotFound)) {
		t.Errorf("Find in another environment: %v, want apierr.NotFound", err)
	}
}

// TestRequest_QuantityText: a quantity is kept as the decimal text it came
// in (a float64 would turn 9999999999.999999 into 9999999999.999998), and
// one with more digits after the point than the EU system takes is
// refused rather than rounded.
func TestRequest_QuantityText(t *testing.T) {
	var req batch.Request
	body := `{"batchReference":"LOT-1","commodity":"cocoa","hsCode":"18010000","supplierId":"V-1","polygonIds":["pol_1"],` +
		`"quantity":{"netMassKg":9999999999.999999,"supplementaryUnit":1e3,"supplementaryUnitType":"NAR"}}`
	if probs, err := apierr.DecodeJSON([]byte(body), &req); err != nil || len(probs) != 0 {
		t.Fatalf("decode: %v %v", probs, err)
	}
	b, _, err := req.Validate()
	if err != nil || b.NetMassKg != "9999999999.999999" || *b.SupplementaryUnit != "1e3" {
		t.Fatalf("Validate: %+v %v, want the quantities as given", b, err)
	}
	for _, tc := range []struct{ mass, unit, want string }{
		{"1.0000001", "0", "INVALID_VALUE quantity.netMassKg"},
		{"12.5", "0.1234567", "INVALID_VALUE quantity.supplementaryUnit"},
		{"1e-7", "0", "INVALID_VALUE quantity.netMassKg"},
		{"9999999999.9999999", "0", "INVALID_VALUE quantity.netMassKg"},
	} {
		req := request("pol_1")
		req.Quantity.NetMassKg, req.Quantity.SupplementaryUnit, req.Quantity.SupplementaryUnitType = dec(tc.mass), dec(tc.unit), ptr("NAR")
		_, _, err := req.Validate()
		if got := details(err); !slices.Contains(got, tc.want) {
			t.Errorf("mass %s, unit %s: %v, want %s", tc.mass, tc.unit, got, tc.want)
		}
	}
	// A number in a string is the wrong type, as for any number member; the
	// members after it are read all the same (no spurious REQUIRED).
	var strReq batch.Request
	probs, err := apierr.DecodeJSON([]byte(`{"quantity":{"netMassKg":"12.5","supplementaryUnit":true},"batchReference":"LOT-1"}`), &strReq)
	if err != nil || len(probs) != 0 || strReq.BatchReference != "LOT-1" {
		t.Fatalf("decode: %v %v, batchReference %q; want it read", probs, err, strReq.BatchReference)
	}
	_, _, err = strReq.Validate()
	got := details(err)
	for _, want := range []string{"INVALID_VALUE quantity.netMassKg", "INVALID_VALUE quantity.supplementaryUnit"} {
		if !slices.Contains(got, want) {
			t.Errorf("Validate: %v, want %s", got, want)
		}
	}
	if slices.Contains(got, "REQUIRED batchReference") {
		t.Errorf("Validate: %v, batchReference was given", got)
	}
	if e := apierr.From(err); !strings.Contains(fmt.Sprint(e.Details), "must be a number, not string") {
		t.Errorf("Validate: %+v, want the issue to say a string is no number", e.Details)
	}
}
