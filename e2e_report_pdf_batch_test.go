package main_test

// End-to-end test of a batch's PDF report (docs/reports.md) against the
// real binary and the sample layers, read with poppler's tools.

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

// reportLink is what the test reads of a shipment to find in the report.
type reportLink struct {
	LinkID          string `json:"linkId"`
	Status          string `json:"status"`
	TransactionHash string `json:"transactionHash"`
	LedgerIndex     int64  `json:"ledgerIndex"`
	RootHash        string `json:"rootHash"`
}

// TestReportPDF_Batch registers two batches of sample plots screened
// against the sample layers, assesses them and links one to a shipment,
// and reads their reports as an auditor would: the batch of two plots
// (reports.batch_plot_pages, here 2) gives each plot its pages, the batch
// of four lists them in a table. Each holds the batch, its supplier
// mapping, its assessment's factors and data versions, its shipment link
// with its ledger transaction, and an overview map; two requests give the
// same bytes, though the ledger grows between them.
func TestReportPDF_Batch(t *testing.T) {
	pdftotext, pdfinfo := reportTool(t, "pdftotext", "poppler-utils"), reportTool(t, "pdfinfo", "poppler-utils")
	pdftoppm := reportTool(t, "pdftoppm", "poppler-utils")
	requireE2E(t)
	dataDir := tempDataDir(t)
	key := consoleSampleLayers(t, dataDir)
	p := startServerIn(t, dataDir, append([]string{"EUDR_REPORTS_BATCH_PLOT_PAGES=2"}, noRateLimit...)...)
	base := p.SandboxURL
	const producer = "Awa Traoré (Ɔkɔ)"
	plots, ids := samplesPlots(t)
	plots = strings.Replace(plots, `"Sample farm 09"`, strconv.Quote(producer), 1)
	job := polWaitJob(t, base, key, polMustPost(t, base, key, plots, len(ids)), samplesJobTimeout)
	byExternalID := map[string]string{}
	for _, r := range job.Results {
		byExternalID[polStr(r.ExternalID)] = r.PolygonID
	}
	mustCreateSupplier(t, base, key, "V-PDF", "Coopérative du Nawa")

	// CI-09: 2021 loss in 2020 forest on 4 pixels, under the thresholds.
	small := ledVerified(t, base, key, "V-PDF", byExternalID["CI-09"], byExternalID["CI-05"])
	large := ledVerified(t, base, key, "V-PDF", byExternalID["CI-04"], byExternalID["CI-05"], byExternalID["CI-07"], byExternalID["CI-09"])
	link := ledAccepted(t, ledLink(t, base, key, small, "SHP-PDF-1"), "linkId", "jobId")
	if j := ledWaitJob(t, base, key, link["jobId"], ledLinkJobType); j.Status != "COMPLETED" {
		t.Fatalf("link job: %+v", j)
	}
	var shp reportLink
	apitest.Do(t, "GET", base+eudrAPI+"/shipments/SHP-PDF-1", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &shp)
	as, _ := batGetAssessment(t, base, key, small)
	if as.RiskScore == nil || as.DataVersions == nil || len(as.Factors) != 3 || shp.Status != "LINKED" {
		t.Fatalf("assessment %+v, link %+v: want an assessed batch with 3 factors, LINKED", as, shp)
	}
	var ev reportEvidence
	apitest.Do(t, "GET", base+eudrAPI+"/polygons/"+byExternalID["CI-09"]+"/evidence", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &ev)
	if ev.LossInForest == nil || ev.LossInForest.Ha == 0 {
		t.Fatalf("sample plot CI-09 has no loss in forest: %+v", ev.LossInForest)
	}

	url := base + eudrAPI + "/batches/" + small + "/report.pdf"
	first := apitest.Do(t, "GET", url, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	if ct := first.Header.Get("Content-Type"); ct != "application/pdf" {
		t.Fatalf("Content-Type %q, want application/pdf", ct)
	}
	// The ledger grows; the report stays the same bytes.
	polWaitJob(t, base, key, polMustPost(t, base, key, polCollection(polFeature(polSquare(-6.5, 5.9, 0.001),
		map[string]any{"commodity": "cocoa", "producerCountry": "CI"})), 1), samplesJobTimeout)
	second := apitest.Do(t, "GET", url, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	if !bytes.Equal(first.Body, second.Body) {
		t.Errorf("two requests of the batch's report, the ledger grown between them, gave different bytes (%d and %d)", len(first.Body), len(second.Body))
	}
	dir := t.TempDir()
	text := reportPDFText(t, pdfinfo, pdftotext, pdftoppm, dir, "batch-pages", first.Body)
	want := []string{"Batch report", small, "cocoa, 18010000", "12500.5 kg", "2026-03-01 to 2026-05-31", "Status VERIFIED",
		"Coopérative du Nawa", "V-PDF", "3f2b6c1e-8a4d-4c2b-9e1f-0a1b2c3d4e5f",
		fmt.Sprintf("%d (maximum %d)", *as.RiskScore, *as.MaxScore), "Engine version " + *as.EngineVersion, *as.AssessedAt,
		as.DataVersions.CountryBenchmark.Version, squeeze(as.DataVersions.CountryBenchmark.Source), as.DataVersions.CountryBenchmark.SHA256,
		as.DataVersions.AnnexI.SHA256, "CI: standard risk, 2 plots", "supplier V-PDF",
		"Shipment SHP-PDF-1", shp.LinkID, "BL-SHP-PDF-1", "CSQU3054383, MSKU9070323", "NLRTM", "2026-12-01",
		"Entry index " + strconv.FormatInt(shp.LedgerIndex, 10), shp.TransactionHash, shp.RootHash, "eudr ledger verify",
		"overview map of the batch's 2 plots", "COMPLIANT: 2 plots", "plot 1 of 2", "plot 2 of 2", "Plot screening report",
		byExternalID["CI-09"], byExternalID["CI-05"], producer, fmt.Sprintf("%.4f ha", ev.LossInForest.Ha), "NW ", "SE "}
	for _, f := range as.Factors {
		want = append(want, f.Name, squeeze(f.Explanation))
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the report of batch %s lacks %q", small, w)
		}
	}
	if t.Failed() {
		t.Logf("pdftotext:\n%s", text)
	}

	// Four plots, over reports.batch_plot_pages: a table, no plot pages.
	body := apitest.Do(t, "GET", base+eudrAPI+"/batches/"+large+"/report.pdf", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Body
	text = reportPDFText(t, pdfinfo, pdftotext, pdftoppm, dir, "batch-table", body)
	want = []string{large, "No shipment is linked", "overview map of the batch's 4 plots", "Polygon / external ID", "Ledger entry",
		fmt.Sprintf("%.4f", ev.LossInForest.Ha), ev.Ledger.TransactionHash[:16] + "…", producer}
	for _, ext := range []string{"CI-04", "CI-05", "CI-07", "CI-09"} {
		want = append(want, byExternalID[ext], ext)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the report of batch %s lacks %q", large, w)
		}
	}
	if strings.Contains(text, "Plot screening report") {
		t.Errorf("the report of 4 plots, over reports.batch_plot_pages 2, has each plot's pages")
	}
	apitest.Do(t, "GET", base+eudrAPI+"/batches/bat_01JD0000000000000000000000/report.pdf", apitest.WithKey(key), nil).WantStatus(t, http.StatusNotFound)
}

// reportPDFText checks a PDF with pdfinfo, renders its pages (kept under
// EUDR_SCREENSHOT_DIR when set) and returns its text, white space
// squeezed.
func reportPDFText(t *testing.T, pdfinfo, pdftotext, pdftoppm, dir, name string, body []byte) string {
	t.Helper()
	file := filepath.Join(dir, name+".pdf")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if info := pdfRun(t, pdfinfo, file); !regexp.MustCompile(`(?m)^Pages:\s+[1-9]`).MatchString(info) {
		t.Errorf("pdfinfo %s:\n%s", name, info)
	}
	pdfPages(t, pdftoppm, file, name)
	return squeeze(pdfRun(t, pdftotext, "-enc", "UTF-8", file, "-"))
}
