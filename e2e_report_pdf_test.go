package main_test

// End-to-end test of a plot's PDF report (docs/reports.md) against the
// real binary and the sample layers, read with poppler's tools.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

// reportTool is the path of a command the report test reads PDFs with:
// poppler-utils' pdftotext, pdfinfo and pdftoppm, zbar-tools' zbarimg. It
// skips the test when one is not installed, or fails it when CI is set:
// .ci/run installs them.
func reportTool(t *testing.T, name, pkg string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if os.Getenv("CI") == "" {
		t.Skipf("%s is not installed (apt-get install %s): the PDF report test is skipped; with CI set it fails instead", name, pkg)
	}
	t.Fatalf("%s is not installed, and CI is set: .ci/run installs it (apt-get install %s)", name, pkg)
	return ""
}

// reportEvidence is what the test reads from a plot's evidence document
// to find in its report.
type reportEvidence struct {
	PolygonID     string  `json:"polygonId"`
	InputSHA256   string  `json:"inputSha256"`
	EUDRStatus    string  `json:"eudrStatus"`
	FailureReason *string `json:"failureReason"`
	AreaHa        float64 `json:"areaHa"`
	EngineVersion string  `json:"engineVersion"`
	ScreenedAt    string  `json:"screenedAt"`
	Risk          *struct {
		ProtectedHa float64 `json:"protectedHa"`
	} `json:"risk"`
	Layers []struct {
		Name, Version, Source, SHA256 string
	} `json:"layers"`
	Rasters []struct {
		Name, Kind, Version, Source, SHA256 string
		MeasuredHa                          float64 `json:"measuredHa"`
		LossByYear                          []struct {
			Year   int     `json:"year"`
			Pixels int     `json:"pixels"`
			Ha     float64 `json:"ha"`
		} `json:"lossByYear"`
	} `json:"rasters"`
	LossInForest *struct {
		Ha float64 `json:"ha"`
	} `json:"lossInForest"`
	Rules struct {
		Cutoff           string  `json:"cutoff"`
		LossThresholdPct float64 `json:"lossThresholdPct"`
		LossThresholdHa  float64 `json:"lossThresholdHa"`
	} `json:"rules"`
	Ledger struct {
		Index           int64    `json:"index"`
		TransactionHash string   `json:"transactionHash"`
		RootHash        string   `json:"rootHash"`
		TreeSize        int64    `json:"treeSize"`
		Proof           []string `json:"proof"`
		Checkpoint      string   `json:"checkpoint"`
	} `json:"ledger"`
}

// TestReportPDF_Plot screens the sample plots against the sample layers
// and reads a HIGH_RISK plot's report as an auditor would: poppler checks
// the file, finds each figure and identifier of the evidence in its text,
// and renders its pages (kept under EUDR_SCREENSHOT_DIR when set, to look
// at); two requests give the same bytes, though the ledger grows between
// them.
func TestReportPDF_Plot(t *testing.T) {
	pdftotext, pdfinfo := reportTool(t, "pdftotext", "poppler-utils"), reportTool(t, "pdfinfo", "poppler-utils")
	pdftoppm, zbarimg := reportTool(t, "pdftoppm", "poppler-utils"), reportTool(t, "zbarimg", "zbar-tools")
	requireE2E(t)
	dataDir := tempDataDir(t)
	key := consoleSampleLayers(t, dataDir)
	p := startServerIn(t, dataDir, noRateLimit...)
	base := p.SandboxURL
	plots, ids := samplesPlots(t)
	// A producer's name beyond Latin-1 needs the embedded UTF-8 font.
	const producer = "Awa Traoré (Ɔkɔ)"
	plots = strings.Replace(plots, `"Sample farm 03"`, strconv.Quote(producer), 1)
	job := polWaitJob(t, base, key, polMustPost(t, base, key, plots, len(ids)), samplesJobTimeout)
	byExternalID := map[string]string{}
	for _, r := range job.Results {
		byExternalID[polStr(r.ExternalID)] = r.PolygonID
	}
	id := byExternalID["CI-03"] // 2022 raster loss in 2020 forest
	// The evidence as the API answers it now, before any report is made
	// (each is a ledger entry of its own), proved in the latest
	// checkpoint: the one the sample job signed with the plot's entry.
	var ev reportEvidence
	apitest.Do(t, "GET", base+eudrAPI+"/polygons/"+id+"/evidence", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &ev)
	if ev.EUDRStatus != "HIGH_RISK" || ev.LossInForest == nil || ev.Ledger.TransactionHash == "" {
		t.Fatalf("the sample plot CI-03 is %s with loss %v and ledger %+v: want HIGH_RISK with loss and an entry", ev.EUDRStatus, ev.LossInForest, ev.Ledger)
	}
	url := base + eudrAPI + "/polygons/" + id + "/report.pdf"
	first := apitest.Do(t, "GET", url, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	if ct := first.Header.Get("Content-Type"); ct != "application/pdf" {
		t.Fatalf("Content-Type %q, want application/pdf", ct)
	}
	sum := sha256.Sum256(first.Body)
	if got := first.Header.Get("X-Content-SHA256"); got != hex.EncodeToString(sum[:]) {
		t.Errorf("X-Content-SHA256 %s, body's %x", got, sum)
	}

	// The same bytes again after the ledger has grown: the proof is made in
	// the checkpoint signed with the plot's entry, not the latest one.
	polWaitJob(t, base, key, polMustPost(t, base, key, polCollection(polFeature(polSquare(-6.5, 5.9, 0.001),
		map[string]any{"commodity": "cocoa", "producerCountry": "CI"})), 1), samplesJobTimeout)
	second := apitest.Do(t, "GET", url, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	if !bytes.Equal(first.Body, second.Body) {
		t.Errorf("two requests of the report, the ledger grown between them, gave different bytes (%d and %d)", len(first.Body), len(second.Body))
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "plot.pdf")
	if err := os.WriteFile(file, first.Body, 0o644); err != nil {
		t.Fatal(err)
	}
	info := pdfRun(t, pdfinfo, file)
	if !regexp.MustCompile(`(?m)^Pages:\s+[2-9]`).MatchString(info) {
		t.Errorf("pdfinfo: want 2 or more pages:\n%s", info)
	}
	text := squeeze(pdfRun(t, pdftotext, "-enc", "UTF-8", file, "-"))
	want := []string{"Plot screening report", id, producer, "CI-03", "Verdict: HIGH_RISK", "DEFORESTATION_AFTER_CUTOFF",
		fmt.Sprintf("%.4f ha", ev.AreaHa), fmt.Sprintf("%.4f ha", ev.LossInForest.Ha), "Loss inside forest", "Forest in 2020",
		"Protected-area overlap", fmt.Sprintf("%.4f ha", ev.Risk.ProtectedHa),
		"N", "NW ", "SE ", "° N", "° W",
		ev.Rules.Cutoff, fmt.Sprintf("%g %% of the plot or %g ha", ev.Rules.LossThresholdPct, ev.Rules.LossThresholdHa),
		"Engine version " + ev.EngineVersion, ev.InputSHA256, ev.ScreenedAt,
		"Entry index " + strconv.FormatInt(ev.Ledger.Index, 10), ev.Ledger.TransactionHash, ev.Ledger.RootHash,
		"Tree size " + strconv.FormatInt(ev.Ledger.TreeSize, 10), "eudr ledger verify", "POST /evidence/verify", "POST /reports/verify"}
	for _, l := range ev.Layers {
		want = append(want, l.Name, l.Version, l.Source, l.SHA256)
	}
	for _, r := range ev.Rasters {
		want = append(want, r.Name, r.Version, r.Source, r.SHA256)
		if r.Kind == "forest-2020" {
			want = append(want, fmt.Sprintf("%.4f ha", r.MeasuredHa))
		}
		for _, y := range r.LossByYear {
			want = append(want, fmt.Sprintf("%d %d %.4f ha", y.Year, y.Pixels, y.Ha))
		}
	}
	want = append(want, ev.Ledger.Proof...)
	for line := range strings.SplitSeq(strings.TrimSpace(ev.Ledger.Checkpoint), "\n") {
		want = append(want, squeeze(line))
	}
	if !regexp.MustCompile(`\b0 [0-9]+ k?m\b`).MatchString(text) {
		t.Errorf("the report's text lacks the scale bar's 0 and length")
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the report's text lacks %q", w)
		}
	}
	if t.Failed() {
		t.Logf("pdftotext:\n%s", text)
	}
	for _, ext := range []string{"CI-02", "CI-10"} { // a vector overlap; a ring crossing itself (FAILED)
		other := apitest.Do(t, "GET", base+eudrAPI+"/polygons/"+byExternalID[ext]+"/report.pdf", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		f := filepath.Join(dir, ext+".pdf")
		if err := os.WriteFile(f, other.Body, 0o644); err != nil {
			t.Fatal(err)
		}
		pdfRun(t, pdfinfo, f)
		pdfPages(t, pdftoppm, f, ext)
		// The map draws the vector feature CI-02 overlaps, and names it in its legend.
		if text := squeeze(pdfRun(t, pdftotext, "-enc", "UTF-8", f, "-")); ext == "CI-02" && !strings.Contains(text, "Sample deforestation (synthetic) (deforestation), overlapped") {
			t.Errorf("CI-02's map does not show the deforestation feature it overlaps:\n%s", text)
		}
	}
	// The QR code, read from the last page at 100 dpi (zbarimg, without the
	// D-Bus it would otherwise complain of on stderr), carries the entry's
	// index and leaf hash and the signed checkpoint.
	pages := pdfPages(t, pdftoppm, file, "CI-03")
	qr := strings.TrimSpace(strings.TrimPrefix(pdfRun(t, zbarimg, "--nodbus", "-q", pages[len(pages)-1]), "QR-Code:"))
	wantQR := fmt.Sprintf("eudr ledger entry %d\nleaf %s\n\n%s", ev.Ledger.Index, ev.Ledger.TransactionHash, strings.TrimSpace(ev.Ledger.Checkpoint))
	if qr != wantQR {
		t.Errorf("the QR code reads\n%s\nwant\n%s", qr, wantQR)
	}
	apitest.Do(t, "GET", base+eudrAPI+"/polygons/"+id+"x/report.pdf", apitest.WithKey(key), nil).WantStatus(t, http.StatusNotFound)
}

// pdfRun runs a poppler command and fails t when it exits other than 0
// or writes to stderr (pdfinfo reports a damaged file there).
func pdfRun(t *testing.T, tool string, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(tool, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(tool), args, err, stderr.String())
	}
	return stdout.String()
}

// pdfPages renders file's pages at 100 dpi as name-N.png, saves them as
// screenshots are and returns their paths in page order.
func pdfPages(t *testing.T, pdftoppm, file, name string) []string {
	t.Helper()
	dir := t.TempDir()
	pdfRun(t, pdftoppm, "-r", "100", "-png", file, filepath.Join(dir, name))
	pages, _ := filepath.Glob(filepath.Join(dir, name+"*.png"))
	if len(pages) == 0 {
		t.Fatalf("pdftoppm rendered no page of %s", name)
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		saveScreenshot(t, b, "report-"+filepath.Base(p), "")
	}
	return pages
}

// squeeze is s with each run of white space one space.
func squeeze(s string) string { return strings.Join(strings.Fields(s), " ") }
