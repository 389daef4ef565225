package pdf

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/server/risk"
	"github.com/eudr/eudr/storage"
)

// assessedBatch is realisticBatch assessed, with its supplier mapping and
// a shipment link anchored in the ledger.
func assessedBatch(t *testing.T, n, plotPages int) Batch {
	t.Helper()
	b := realisticBatch(t, n, plotPages)
	assessed := b.Batch.CreatedAt.Add(90 * time.Second)
	score, level, maxScore, engine, app, at := 25, risk.LevelNegligible, 50, risk.EngineVersion, "1.2.3", storage.FormatTime(assessed)
	b.Batch.RiskScore, b.Batch.RiskLevel, b.Batch.AssessedAt = &score, level, &assessed
	unit := json.Number("1200")
	b.Batch.SupplementaryUnit, b.Batch.SupplementaryUnitType = &unit, "NAR"
	doc, err := storage.MarshalJSON(batch.RiskAssessment{BatchID: b.Batch.ID, JobID: b.Batch.JobID, Status: storage.BatchVerified,
		RiskScore: &score, RiskLevel: &level, MaxScore: &maxScore, EngineVersion: &engine, AppVersion: &app, AssessedAt: &at,
		Factors: []risk.Factor{
			{Name: risk.FactorCountryBenchmark, Score: 25, Explanation: "CI is a standard-risk country.",
				Inputs: risk.CountryFactorInputs{BenchmarkVersion: "2025/1093", Countries: []risk.CountryPlotsInputs{{Country: "CI", RiskClass: "standard", PolygonCount: n, AreaHa: 123.4567}}}},
			{Name: risk.FactorPlotRisk, Score: 10, Explanation: "The highest plot risk score is 10.",
				Inputs: risk.PlotFactorInputs{PolygonCount: n, TotalAreaHa: 123.4567, MaxRiskScore: 10, MaxRiskPolygonID: b.Plots[0].Polygon.ID, AreaWeightedMeanRiskScore: 3.25}},
			{Name: risk.FactorSupplierHistory, Score: 5, Explanation: "1 of 10 screened plots of the supplier was HIGH_RISK.",
				Inputs: risk.SupplierFactorInputs{SupplierID: "V-100", ScreenedPolygons: 10, HighRiskPolygons: 1, FailedPolygons: 2, HighRiskPct: 10}},
		},
		DataVersions: &batch.DataVersions{
			CountryBenchmark: batch.DataSet{Version: "2025/1093", Source: "Commission Implementing Regulation (EU) 2025/1093", Date: "2025-05-22", SHA256: strings.Repeat("ab", 32)},
			AnnexI:           batch.DataSet{Version: "2023/1115", Source: "Regulation (EU) 2023/1115, Annex I", Date: "2023-05-31", SHA256: strings.Repeat("cd", 32)}}})
	if err != nil {
		t.Fatal(err)
	}
	b.Assessment = doc
	b.Supplier = &storage.Supplier{ID: "sup_01JSUP", ERPVendorID: "V-100", EUOperatorUUID: "2f1c0c1e-0000-4000-8000-000000000001", Name: "Société Coopérative Ɔkɔ",
		Country: "CI", Role: "OPERATOR", Identifiers: []storage.OperatorIdentifier{{Type: "vat", Value: "CI1234567"}},
		Street: "Rue 12", PostalCode: "01 BP 1", City: "Abidjan", CreatedAt: b.Batch.CreatedAt, UpdatedAt: b.Batch.CreatedAt}
	idx, linked := int64(n), assessed.Add(time.Hour)
	b.Links = []Link{{Link: &storage.ShipmentLink{ID: "lnk_01JLINK", JobID: "job_01JLINK", BatchID: b.Batch.ID, ShipmentID: "SHP-2026-7",
		BillOfLading: "BOL-99", ContainerNumbers: []string{"CSQU3054383"}, PortOfEntry: "NLRTM", ETA: "2026-04-01", Status: storage.LinkLinked,
		LedgerIndex: &idx, TransactionHash: strings.Repeat("5a", 32), TreeSize: idx + 1, RootHash: strings.Repeat("6b", 32), CreatedAt: linked, LinkedAt: &linked},
		Ledger: &anchor.DocumentLedger{Index: idx, TransactionHash: strings.Repeat("5a", 32), TreeSize: idx + 1, RootHash: strings.Repeat("6b", 32),
			Data:  base64.StdEncoding.EncodeToString([]byte(`{"batchId":"` + b.Batch.ID + `","shipmentId":"SHP-2026-7","type":"shipment.linked"}`)),
			Proof: []string{strings.Repeat("7c", 32)}, Checkpoint: "eudr/default/sandbox\n501\nbase64root=\n\n— eudr SIGNATURE=\n"}}}
	return b
}

// reportText is the report's text as pdftotext extracts it, white space
// squeezed, or "" when pdftotext is not installed. With
// EUDR_SCREENSHOT_DIR set, the PDF and its pages (pdftoppm) are kept there
// to look at.
func reportText(t *testing.T, name string, pdf []byte) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, name+".pdf")
	if err := os.WriteFile(file, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := os.Getenv("EUDR_SCREENSHOT_DIR"); out != "" {
		os.WriteFile(filepath.Join(out, name+".pdf"), pdf, 0o644)
		if exec.Command("pdftoppm", "-r", "100", "-png", file, filepath.Join(out, name)).Run() != nil {
			t.Logf("pdftoppm could not render %s", name)
		}
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Logf("pdftotext is not installed: the report's text is not checked")
		return ""
	}
	out, err := exec.Command("pdftotext", "-enc", "UTF-8", file, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// A small batch's report gives each plot its pages after the batch, its
// supplier, assessment, shipment and overview map; the same records give
// the same bytes, dated at the assessment.
func TestBatchReport_PlotPages(t *testing.T) {
	b := assessedBatch(t, 4, 25)
	first, err := BatchReport(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	second, err := BatchReport(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("two renders of one batch differ (%d and %d bytes)", len(first), len(second))
	}
	if !bytes.Contains(first, []byte("/CreationDate (D:20260304050737")) {
		t.Errorf("the creation date is not the assessment's")
	}
	text := reportText(t, "batch-pages", first)
	if text == "" {
		return
	}
	want := []string{"Batch report", b.Batch.ID, "LOT-2026-0042", "cocoa, 180100", "24000.5 kg", "1200 NAR", "2025-10-01 to 2026-01-31",
		"VERIFIED (risk score 25, level NEGLIGIBLE)", "Société Coopérative Ɔkɔ", "V-100", "CI1234567", "Rue 12, 01 BP 1 Abidjan",
		"country_benchmark", "plot_risk", "supplier_history", "Benchmark 2025/1093", "CI: standard risk, 4 plots, 123.4567 ha",
		"area-weighted mean 3.25", "10 plots screened, 1 HIGH_RISK, 2 FAILED", "Commission Implementing Regulation (EU) 2025/1093",
		strings.Repeat("ab", 32), "Engine version " + risk.EngineVersion, "Appliance version 1.2.3", "2026-03-04T05:07:37",
		"Shipment SHP-2026-7", "lnk_01JLINK", "BOL-99", "CSQU3054383", "NLRTM", strings.Repeat("5a", 32), strings.Repeat("7c", 32),
		"eudr ledger verify", `"shipmentId":"SHP-2026-7"`, "overview map of the batch's 4 plots", "COMPLIANT: 3 plots", "HIGH_RISK: 1 plot", "FAILED: 0 plots",
		"plot 1 of 4", "plot 4 of 4", "Plot screening report", b.Plots[3].Polygon.ID, "NW ", "SE "}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the report's text lacks %q", w)
		}
	}
	if strings.Contains(text, "Polygon / external ID") {
		t.Errorf("a batch of 4 plots, at most 25 a page each, has the table of plots")
	}
}

// A batch of more plots than PlotPages lists them in a table whose header
// is repeated on each page it runs onto; without a mapping, assessment
// or link, the report says so.
func TestBatchReport_PlotTable(t *testing.T) {
	b := realisticBatch(t, 60, 25)
	doc, err := storage.MarshalJSON(batch.RiskAssessment{BatchID: b.Batch.ID, JobID: b.Batch.JobID, Status: storage.BatchAssessing, Factors: []risk.Factor{}})
	if err != nil {
		t.Fatal(err)
	}
	b.Assessment = doc
	out, err := BatchReport(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte("/CreationDate (D:20260304050607")) {
		t.Errorf("the creation date of a batch not assessed is not its creation's")
	}
	text := reportText(t, "batch-table", out)
	if text == "" {
		return
	}
	if n := strings.Count(text, "Polygon / external ID"); n < 2 {
		t.Errorf("the table's header is on %d pages, want every page the table runs onto", n)
	}
	// Each figure's head names its unit.
	if n := strings.Count(text, "(ha)"); n < 3*strings.Count(text, "Polygon / external ID") {
		t.Errorf("the table's heads name hectares %d times on %d pages, want 3 a page", n, strings.Count(text, "Polygon / external ID"))
	}
	for _, w := range []string{"No mapping", "Not assessed yet", "No shipment is linked", "the batch's 60 plots",
		b.Plots[0].Polygon.ID, b.Plots[59].Polygon.ID, "plot-000059", "Coopérative 16", "FAILED", "HIGH_RISK", leafOf(b.Plots[0].Polygon.ID)[:leafPrefix] + "…"} {
		if !strings.Contains(text, w) {
			t.Errorf("the report's text lacks %q", w)
		}
	}
	if strings.Contains(text, "Plot screening report") {
		t.Errorf("a batch of 60 plots, over 25, has each plot's pages")
	}
}

// A document's bytes do not depend on the documents rendered before it in
// the process: fpdf writes into the font bytes it is given, so each
// document gets its own copy.
func TestReports_IndependentOfEarlierReports(t *testing.T) {
	p := samplePlot(t)
	before, err := PlotReport(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []Batch{assessedBatch(t, 4, 25), realisticBatch(t, 60, 25)} {
		if _, err := BatchReport(context.Background(), b); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		after, err := PlotReport(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Fatalf("a plot's report rendered after batches' differs from the one rendered before (%d and %d bytes)", len(before), len(after))
		}
	}
}

// A field that does not fit at the foot of a page starts the next one,
// its value beside its label, not on a page after it.
func TestField_AtPageFoot(t *testing.T) {
	d := newDocument("t", "t", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	d.AddPage()
	d.SetY(pageH - margin - 6)
	d.field("Regulation, source", strings.Repeat("a long value that wraps ", 6), false)
	if n := d.PageNo(); n != 2 {
		t.Errorf("the field ends on page %d, want 2", n)
	}
}

// The overview map draws the vector features the plots overlap, each
// once, with its layer in the legend, and leaves out a plot's number that
// would cover another's, saying how many it left out.
func TestBatchReport_OverviewOverlapsAndLabels(t *testing.T) {
	b := assessedBatch(t, 6, 25)
	square := func(lon, lat, side float64) (json.RawMessage, geo.Polygon) {
		ring := []geo.Position{{lon, lat}, {lon + side, lat}, {lon + side, lat + side}, {lon, lat + side}, {lon, lat}}
		g, err := json.Marshal(map[string]any{"type": "Polygon", "coordinates": [][]geo.Position{ring}})
		if err != nil {
			t.Fatal(err)
		}
		return g, geo.Polygon{ring}
	}
	// Five plots a few metres apart, one 5 km away: at the zoom that shows
	// them all, the five numbers would cover each other.
	for i := range b.Plots {
		b.Plots[i].Geometry, _ = square(-6.6+float64(i)*0.00005, 5.77, 0.00004)
	}
	b.Plots[5].Geometry, _ = square(-6.55, 5.80, 0.00004)
	_, feature := square(-6.6001, 5.7699, 0.0003)
	overlap := VectorOverlap{LayerID: "lyr_def", Name: "National deforestation map", Kind: string(geo.DeforestationAfterCutoff),
		Features: []geo.LayerFeature{{ID: "def-7", Polygons: []geo.Polygon{feature}}}}
	b.Plots[0].Overlaps = []VectorOverlap{overlap}
	b.Plots[1].Overlaps = []VectorOverlap{overlap}
	out, err := BatchReport(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	text := reportText(t, "batch-overview", out)
	if text == "" {
		return
	}
	for _, w := range []string{"National deforestation map (deforestation): 1 feature the plots overlap",
		"Numbers are the plots' places in the batch", "of them are left out, each where it would cover a number drawn before it"} {
		if !strings.Contains(text, w) {
			t.Errorf("the report's text lacks %q", w)
		}
	}
}

// Reports rendered at the same time, as concurrent requests make them,
// give the same bytes as one alone: nothing mutable is shared between
// documents (fpdf writes into the font bytes it subsets; the QR encoder
// once chose its mask by which goroutine finished first).
func TestBatchReport_ConcurrentRendersAgree(t *testing.T) {
	b := assessedBatch(t, 3, 25)
	alone, err := BatchReport(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]byte, 4)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			body, err := BatchReport(context.Background(), b)
			if err != nil {
				t.Error(err)
			}
			got[i] = body
		})
	}
	wg.Wait()
	for i, body := range got {
		if !bytes.Equal(body, alone) {
			t.Errorf("render %d of 4 at once: %d bytes, differing from the one alone (%d bytes)", i+1, len(body), len(alone))
		}
	}
}
