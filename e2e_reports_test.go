package main_test

// End-to-end tests of archive reports (docs/reports.md) against the real
// binary: plots screened, a statement-free period archived, report.ready
// delivered and signed, the zip downloaded and checked the way an auditor
// would (every file against the manifest's SHA-256, the GeoJSON, each
// evidence line through POST /evidence/verify, the checkpoint's signature
// with the published key), and the report still served after a restart.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
	"golang.org/x/mod/sumdb/note"
)

var rptIDPattern = regexp.MustCompile(`^rpt_[0-9A-HJKMNP-TV-Z]{26}$`)

// rptWait bounds every wait of these tests: a safety net against a hang
// (an archive renders a PDF report per statement), not a measure of speed.
const rptWait = 3 * time.Minute

// rptReady is the report.ready data and the archive job's one result.
type rptReady struct {
	ReportID     string `json:"reportId"`
	SHA256       string `json:"sha256"`
	SizeBytes    int64  `json:"sizeBytes"`
	DownloadPath string `json:"downloadPath"`
}

// rptRecord is GET /reports/{reportId}.
type rptRecord struct {
	ReportID     string  `json:"reportId"`
	JobID        string  `json:"jobId"`
	Status       string  `json:"status"`
	From         string  `json:"from"`
	To           string  `json:"to"`
	SHA256       *string `json:"sha256"`
	SizeBytes    *int64  `json:"sizeBytes"`
	DownloadPath *string `json:"downloadPath"`
	CreatedAt    string  `json:"createdAt"`
	CompletedAt  *string `json:"completedAt"`
	ExpiresAt    *string `json:"expiresAt"`
	Error        *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rptManifest is manifest.json.
type rptManifest struct {
	Format       string `json:"format"`
	ReportID     string `json:"reportId"`
	Organisation string `json:"organisation"`
	Environment  string `json:"environment"`
	Period       struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"period"`
	AsOf       string `json:"asOf"`
	CreatedAt  string `json:"createdAt"`
	AppVersion string `json:"appVersion"`
	Ledger     struct {
		KeyName     string  `json:"keyName"`
		VerifierKey string  `json:"verifierKey"`
		TreeSize    int64   `json:"treeSize"`
		RootHash    *string `json:"rootHash"`
	} `json:"ledger"`
	Counts struct {
		Polygons int `json:"polygons"`
		DDS      int `json:"dds"`
	} `json:"counts"`
	Files []struct {
		Path      string `json:"path"`
		SHA256    string `json:"sha256"`
		SizeBytes int64  `json:"sizeBytes"`
	} `json:"files"`
}

// rptRequest asks for an archive of [from, to] and returns reportId and jobId.
func rptRequest(t testing.TB, base, key, from, to string) (string, string) {
	t.Helper()
	r := apitest.Do(t, "POST", base+eudrAPI+"/reports/archive", apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())),
		map[string]string{"from": from, "to": to})
	r.WantStatus(t, http.StatusAccepted)
	var acc map[string]string
	r.Decode(t, &acc)
	if !rptIDPattern.MatchString(acc["reportId"]) || !jobIDPattern.MatchString(acc["jobId"]) || len(acc) != 2 {
		t.Fatalf("%s: 202 body %s, want exactly a reportId and a jobId", r.Request, r.Body)
	}
	if loc := r.Header.Get("Location"); loc != eudrAPI+"/jobs/"+acc["jobId"] {
		t.Errorf("%s: Location %q, want the job's", r.Request, loc)
	}
	return acc["reportId"], acc["jobId"]
}

// rptWaitJob waits for an archive job to finish and returns its answer.
func rptWaitJob(t testing.TB, base, key, id string) jobView {
	t.Helper()
	var j jobView
	waitUntil(t, rptWait, "archive job "+id, func() bool {
		apitest.Do(t, "GET", jobURL(base, id), apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &j)
		return j.finished()
	})
	if j.Type != "archive_report" {
		t.Errorf("job %s: type %q, want archive_report", id, j.Type)
	}
	return j
}

// rptDownload downloads a report's zip and checks the download's headers.
func rptDownload(t testing.TB, base, key, id string) []byte {
	t.Helper()
	r := apitest.Do(t, "GET", base+eudrAPI+"/reports/"+id+"/download", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	sum := sha256.Sum256(r.Body)
	h := r.Header
	if h.Get("Content-Type") != "application/zip" || h.Get("Content-Length") != strconv.Itoa(len(r.Body)) ||
		!strings.HasPrefix(h.Get("Content-Disposition"), "attachment;") || h.Get("X-Content-SHA256") != hex.EncodeToString(sum[:]) ||
		h.Get("Digest") != "sha-256="+base64.StdEncoding.EncodeToString(sum[:]) {
		t.Errorf("%s: headers %v for %d bytes with SHA-256 %x", r.Request, h, len(r.Body), sum)
	}
	return r.Body
}

// rptOpen reads every file of a zip and checks each against the manifest.
func rptOpen(t testing.TB, body []byte) (map[string][]byte, rptManifest) {
	t.Helper()
	files := apitest.UnzipArchive(t, body, "manifest.json")
	var m rptManifest
	if err := json.Unmarshal(files["manifest.json"], &m); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	return files, m
}

func TestReport_Archive(t *testing.T) {
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, noRateLimit...)
	key := p.createKey(t, sandbox)
	subscribe(t, p, key, rc, "/reports", "report.ready")
	base := p.SandboxURL

	// The sandbox fixtures: every outcome, each anchored in the ledger.
	features := []string{
		ledPlot(-61.5, -10.5, "BR", "V-1"), // HIGH_RISK: deforestation
		ledPlot(10.5, 10.5, "NG", "V-1"),   // FAILED: no reference coverage
		ledPlot(-1.6, 6.0, "GH", "V-1"),    // COMPLIANT
	}
	_, ids := ledScreen(t, base, key, []string{"HIGH_RISK", "FAILED", "COMPLIANT"}, features...)

	today := time.Now().UTC()
	from, to := today.AddDate(0, 0, -1).Format(time.DateOnly), today.AddDate(0, 0, 1).Format(time.DateOnly)
	reportID, jobID := rptRequest(t, base, key, from, to)
	j := rptWaitJob(t, base, key, jobID)
	if j.Status != "COMPLETED" || len(j.Results) != 1 {
		t.Fatalf("archive job: %+v", j)
	}
	var result rptReady
	if err := json.Unmarshal(j.Results[0], &result); err != nil || result.ReportID != reportID ||
		result.DownloadPath != eudrAPI+"/reports/"+reportID+"/download" {
		t.Errorf("job result %s: %v", j.Results[0], err)
	}

	// report.ready, signed, with the job's result as its data.
	var delivered []apitest.Delivery
	waitUntil(t, rptWait, "report.ready delivery", func() bool {
		delivered = rc.Requests("/reports", "")
		return len(delivered) > 0 && delivered[0].Status == http.StatusOK
	})
	var event rptReady
	if err := json.Unmarshal(delivered[0].Env.Data, &event); err != nil || delivered[0].Env.EventType != "report.ready" ||
		delivered[0].SigErr != nil || event != result {
		t.Errorf("delivery: %s (%v), want %+v", delivered[0].Body, delivered[0].SigErr, result)
	}

	// The record, and the zip it describes.
	var rec rptRecord
	apitest.Do(t, "GET", base+eudrAPI+"/reports/"+reportID, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &rec)
	if rec.Status != "READY" || rec.JobID != jobID || rec.From != from+"T00:00:00.000Z" || rec.To != to+"T23:59:59.999Z" ||
		rec.SHA256 == nil || *rec.SHA256 != event.SHA256 || rec.SizeBytes == nil || *rec.SizeBytes != event.SizeBytes {
		t.Errorf("GET report: %+v", rec)
	}
	body := rptDownload(t, base, key, reportID)
	if sum := sha256.Sum256(body); hex.EncodeToString(sum[:]) != event.SHA256 || int64(len(body)) != event.SizeBytes {
		t.Fatalf("download: %d bytes, SHA-256 %x; report.ready says %d, %s", len(body), sum, event.SizeBytes, event.SHA256)
	}
	files, m := rptOpen(t, body)
	t.Logf("archive %s: %d bytes, %d files", reportID, len(body), len(files))
	var cp struct {
		TreeSize int64  `json:"treeSize"`
		RootHash string `json:"rootHash"`
		Note     string `json:"note"`
		SignedAt string `json:"signedAt"`
	}
	ledGet(t, base, key, "/ledger/checkpoint", &cp)
	if m.ReportID != reportID || m.Organisation != "default" || m.Environment != sandbox || m.AppVersion != testVersion ||
		m.Counts.Polygons != 3 || m.Counts.DDS != 0 || m.Ledger.TreeSize != cp.TreeSize || m.Ledger.RootHash == nil ||
		*m.Ledger.RootHash != cp.RootHash {
		t.Errorf("manifest: %s (checkpoint %+v)", files["manifest.json"], cp)
	}

	// The checkpoint the proofs are in is signed by the published key.
	var pk struct {
		VerifierKey string `json:"verifierKey"`
	}
	json.Unmarshal(files["ledger/public-key.json"], &pk)
	v, err := note.NewVerifier(pk.VerifierKey)
	if err != nil {
		t.Fatalf("public-key.json: %v", err)
	}
	var acp struct {
		Note string `json:"note"`
	}
	json.Unmarshal(files["ledger/checkpoint.json"], &acp)
	if _, err := note.Open([]byte(acp.Note), note.VerifierList(v)); err != nil || acp.Note != cp.Note {
		t.Errorf("checkpoint.json: %v", err)
	}

	// polygons.geojson: a FeatureCollection of the three plots with their
	// IDs and verdicts; evidence.jsonl: their evidence, which verifies.
	var fc struct {
		Type     string `json:"type"`
		Features []struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
		} `json:"features"`
	}
	if err := json.Unmarshal(files["polygons.geojson"], &fc); err != nil || fc.Type != "FeatureCollection" || len(fc.Features) != 3 {
		t.Fatalf("polygons.geojson: %v: %s", err, files["polygons.geojson"])
	}
	sc := bufio.NewScanner(bytes.NewReader(files["evidence.jsonl"]))
	sc.Buffer(nil, 1<<20)
	n := 0
	for ; sc.Scan(); n++ {
		if n >= len(ids) {
			break
		}
		if got := fc.Features[n].Properties["polygonId"]; got != ids[n] {
			t.Errorf("feature %d: polygonId %v, want %s", n, got, ids[n])
		}
		r := apitest.Do(t, "POST", base+eudrAPI+"/evidence/verify", apitest.WithKey(key), sc.Text()).WantStatus(t, http.StatusOK)
		if obj := r.Object(t); obj["valid"] != true || obj["treeSize"] != float64(cp.TreeSize) {
			t.Errorf("verify evidence line %d: %s", n, r.Body)
		}
	}
	if n != 3 {
		t.Errorf("evidence.jsonl: %d lines, want 3", n)
	}

	// Another environment does not see it.
	live := p.createKey(t, production)
	apitest.WantError(t, apitest.Do(t, "GET", p.ProductionURL+eudrAPI+"/reports/"+reportID+"/download", apitest.WithKey(live), nil), http.StatusNotFound, "NOT_FOUND")

	// After a restart the report is still there, byte for byte.
	p.Stop(t)
	p = p.Restart(t)
	if again := rptDownload(t, p.SandboxURL, key, reportID); !bytes.Equal(again, body) {
		t.Errorf("after restart: %d bytes, not the archive of %d", len(again), len(body))
	}
}

func TestReport_Refusals(t *testing.T) {
	p := startServer(t, noRateLimit...)
	key := p.createKey(t, sandbox)
	base := p.SandboxURL
	post := func(body any) *apitest.Response {
		return apitest.Do(t, "POST", base+eudrAPI+"/reports/archive", apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())), body)
	}
	apitest.WantError(t, post(map[string]any{}), http.StatusBadRequest, "VALIDATION_FAILED", "REQUIRED", "REQUIRED")
	apitest.WantError(t, post(map[string]any{"from": "2026-02-01", "to": "2026-01-01"}), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
	apitest.WantError(t, post(map[string]any{"from": "2010-01-01", "to": "2026-01-01"}), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
	apitest.WantError(t, post(map[string]any{"from": "01/01/2026", "to": "2026-13-01"}), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE", "INVALID_VALUE")
	apitest.WantError(t, apitest.Do(t, "POST", base+eudrAPI+"/reports/archive", apitest.WithKey(key), map[string]any{"from": "2026-01-01", "to": "2026-01-02"}),
		http.StatusBadRequest, "VALIDATION_FAILED", "IDEMPOTENCY_KEY_MISSING")
	apitest.WantError(t, apitest.Do(t, "GET", base+eudrAPI+"/reports/rpt_01JD0000000000000000000000/download", apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
	apitest.WantError(t, apitest.Do(t, "GET", base+eudrAPI+"/reports/rpt_01JD0000000000000000000000", apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")

	// A period with nothing: a valid zip, an empty collection.
	id, jobID := rptRequest(t, base, key, "2020-01-01", "2020-12-31")
	if j := rptWaitJob(t, base, key, jobID); j.Status != "COMPLETED" {
		t.Fatalf("empty archive job: %+v", j)
	}
	files, m := rptOpen(t, rptDownload(t, base, key, id))
	var fc struct {
		Type     string            `json:"type"`
		Features []json.RawMessage `json:"features"`
	}
	if err := json.Unmarshal(files["polygons.geojson"], &fc); err != nil || fc.Type != "FeatureCollection" || fc.Features == nil ||
		len(fc.Features) != 0 || m.Counts.Polygons != 0 || len(files["evidence.jsonl"]) != 0 {
		t.Errorf("empty archive: %v: %s", err, files["polygons.geojson"])
	}
}
