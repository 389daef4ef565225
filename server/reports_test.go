package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/server/report"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

var sandboxTenant = storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}

// requestReport posts a report request on env with key and returns the
// answer and, for a 202, its body.
func (ta *testApp) requestReport(env storage.Environment, key, idem, body string) (archiveAccepted, *httptest.ResponseRecorder) {
	ta.tb.Helper()
	w := ta.serve(env, newRequest("POST", eudrPrefix+"/reports/archive", body, "X-API-Key", key, "Idempotency-Key", idem))
	var acc archiveAccepted
	if w.Code == http.StatusAccepted {
		mustDecode(ta.tb, w, &acc)
		if loc := w.Header().Get("Location"); loc != eudrPrefix+"/jobs/"+acc.JobID {
			ta.tb.Errorf("Location: got %q, want the job's path", loc)
		}
	}
	return acc, w
}

// sweepReports runs the maintenance loop's sweep of expired reports.
func (ta *testApp) sweepReports(ctx context.Context) {
	ta.tb.Helper()
	if _, err := ta.reports.Sweep(ctx); err != nil {
		ta.tb.Fatalf("sweep reports: %v", err)
	}
}

// archiveFiles opens a downloaded zip and returns its files by name and
// its manifest, failing the test when it breaks a promise of its
// manifest (apitest.UnzipArchive).
func archiveFiles(t *testing.T, body []byte) (map[string][]byte, report.Manifest) {
	t.Helper()
	files := apitest.UnzipArchive(t, body, report.PathManifest)
	var m report.Manifest
	if err := json.Unmarshal(files[report.PathManifest], &m); err != nil {
		t.Fatal(err)
	}
	return files, m
}

// jsonLines splits a JSON Lines file.
func jsonLines(t *testing.T, b []byte) [][]byte {
	t.Helper()
	return apitest.JSONLines(t, b)
}

// archivedCollection is polygons.geojson as a client reads it.
type archivedCollection struct {
	Type     string `json:"type"`
	Features []struct {
		Type       string          `json:"type"`
		Geometry   json.RawMessage `json:"geometry"`
		Properties map[string]any  `json:"properties"`
	} `json:"features"`
}

// download gets a report's zip and checks its headers against sum.
func (ta *testApp) download(env storage.Environment, key, reportID string) *httptest.ResponseRecorder {
	ta.tb.Helper()
	w := ta.serve(env, newRequest("GET", reportDownloadPath(reportID), "", "X-API-Key", key))
	if w.Code != http.StatusOK {
		ta.tb.Fatalf("download %s: %d %s", reportID, w.Code, w.Body)
	}
	sum := sha256.Sum256(w.Body.Bytes())
	h := w.Header()
	if h.Get("Content-Type") != "application/zip" || h.Get("Content-Length") != strconv.Itoa(w.Body.Len()) ||
		h.Get("Content-Disposition") != `attachment; filename="`+reportID+`.zip"` ||
		h.Get("X-Content-SHA256") != hex.EncodeToString(sum[:]) || h.Get("Digest") != "sha-256="+base64.StdEncoding.EncodeToString(sum[:]) {
		ta.tb.Errorf("download headers %v for %d bytes with SHA-256 %x", h, w.Body.Len(), sum)
	}
	return w
}

func TestReports_Archive(t *testing.T) {
	rc := newReceiver(t)
	ta := newTestApp(t, "EUDR_WEBHOOKS_CA_FILE="+rc.caFile)
	_, key := ta.newKey(storage.Sandbox)
	rc.subscribe(ta, key, event.ReportReady)
	ta.runQueues()

	// In the period: the fixture plots and a statement whose creation is
	// anchored. After it, two days later: two more plots.
	first := screenFixtures(t, ta, key)
	var results []polygon.Result
	if err := json.Unmarshal(first.Results, &results); err != nil {
		t.Fatal(err)
	}
	var dds storage.DDS
	ta.update(func(tx *storage.Tx) error {
		e, err := anchor.Append(tx, sandboxTenant, map[string]string{"type": "dds.created", "ddsId": "dds_test"})
		if err != nil {
			return err
		}
		if _, err := ta.ledger.Sign(tx, sandboxTenant); err != nil {
			return err
		}
		dds = storage.DDS{ID: storage.NewID("dds", tx.Now()), Status: storage.DDSDraft, BatchIDs: []string{"bat_1"}, ActivityType: "IMPORT",
			OperatorUUID: "3f2b6c1e-8a4d-4c2b-9e1f-0a1b2c3d4e5f", Statement: json.RawMessage(`{"activityType":"IMPORT"}`),
			History: []storage.DDSChange{{At: tx.Now(), Status: storage.DDSDraft, Actor: "test", LedgerIndex: &e.Index}}, CreatedAt: tx.Now()}
		return tx.PutDDS(sandboxTenant, &dds)
	})
	ta.clock.Advance(48 * time.Hour)
	acc, w := ta.postPolygons(key, "later", collection(plot("later-1", square(5, 6, 0.001)), plot("later-2", square(5.1, 6, 0.001))))
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST /polygons: %d %s", w.Code, w.Body)
	}
	ta.waitJob(key, acc.JobID, storage.JobCompleted)

	body := `{"from":"2026-11-20","to":"2026-11-20"}`
	rep, w := ta.requestReport(storage.Sandbox, key, "report-1", body)
	if w.Code != http.StatusAccepted || !strings.HasPrefix(rep.ReportID, "rpt_") || !strings.HasPrefix(rep.JobID, "job_") {
		t.Fatalf("POST /reports/archive: %d %s", w.Code, w.Body)
	}
	job := ta.waitJobOn(storage.Sandbox, key, rep.JobID, storage.JobCompleted)
	if again, w := ta.requestReport(storage.Sandbox, key, "report-1", body); again != rep || w.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %+v %s, want %+v", again, w.Body, rep)
	}

	// The job's one result is the report.ready event's data.
	var ready []event.ReportReadyData
	if err := json.Unmarshal(job.Results, &ready); err != nil || len(ready) != 1 {
		t.Fatalf("job results %s: %v", job.Results, err)
	}
	if job.Type != work.ArchiveReport || job.Progress != (progressBody{Total: 1, Processed: 1, Succeeded: 1, Percent: 100}) ||
		ready[0].ReportID != rep.ReportID || ready[0].DownloadPath != eudrPrefix+"/reports/"+rep.ReportID+"/download" {
		t.Errorf("job: %+v", job)
	}
	typ, data := rc.next(t)
	var ev event.ReportReadyData
	if err := json.Unmarshal(data, &ev); err != nil || typ != event.ReportReady || ev != ready[0] {
		t.Errorf("delivery: %s %s, want report.ready %+v", typ, data, ready[0])
	}

	// The record.
	var got reportResponse
	mustDecode(t, ta.do("GET", eudrPrefix+"/reports/"+rep.ReportID, "", "X-API-Key", key), &got)
	if got.Status != storage.ReportReady || got.From != "2026-11-20T00:00:00.000Z" || got.To != "2026-11-20T23:59:59.999Z" ||
		got.SHA256 == nil || *got.SHA256 != ev.SHA256 || *got.SizeBytes != ev.SizeBytes || *got.DownloadPath != ev.DownloadPath ||
		got.CompletedAt == nil || got.ExpiresAt == nil || got.JobID != rep.JobID {
		t.Errorf("GET report: %+v", got)
	}

	// The download is the file the event describes.
	dl := ta.download(storage.Sandbox, key, rep.ReportID)
	if dl.Header().Get("X-Content-SHA256") != ev.SHA256 || int64(dl.Body.Len()) != ev.SizeBytes {
		t.Errorf("download: %d bytes %s, event says %d %s", dl.Body.Len(), dl.Header().Get("X-Content-SHA256"), ev.SizeBytes, ev.SHA256)
	}
	head := ta.do("HEAD", reportDownloadPath(rep.ReportID), "", "X-API-Key", key)
	if head.Code != http.StatusOK || head.Body.Len() != 0 || head.Header().Get("Content-Length") != strconv.Itoa(dl.Body.Len()) {
		t.Errorf("HEAD: %d, %d bytes, %v", head.Code, head.Body.Len(), head.Header())
	}
	files, m := archiveFiles(t, dl.Body.Bytes())

	// The manifest: the tenant, the period, the ledger the proofs are in:
	// the tree of 8 entries the archive was made from. The statement's
	// report it holds was recorded after them (a report.generated entry,
	// the 9th), as a download would have been.
	var inc struct {
		RootHash string `json:"rootHash"`
	}
	mustDecode(t, ta.do("GET", eudrPrefix+"/ledger/proofs/inclusion?index=0&treeSize=8", "", "X-API-Key", key), &inc)
	if m.Format != report.Format || m.ReportID != rep.ReportID || m.Organisation != defaultOrg || m.Environment != "sandbox" ||
		m.Period != (report.Period{From: got.From, To: got.To}) || m.AppVersion != "test" ||
		m.Counts != (report.Counts{Polygons: 5, DDS: 1}) || m.Ledger.TreeSize != 8 || m.Ledger.RootHash == nil ||
		*m.Ledger.RootHash != inc.RootHash || m.Ledger.KeyName != "eudr-appliance" {
		t.Errorf("manifest: %s", files[report.PathManifest])
	}
	var pdfSum [sha256.Size]byte
	for name, body := range files {
		if strings.HasPrefix(name, report.PathStatementReports) {
			pdfSum = sha256.Sum256(body) // the archive's one statement
		}
	}
	var reportEntry struct {
		Data []byte `json:"data"`
	}
	mustDecode(t, ta.do("GET", eudrPrefix+"/ledger/entries/8", "", "X-API-Key", key), &reportEntry)
	if !strings.Contains(string(reportEntry.Data), `"sha256":"`+hex.EncodeToString(pdfSum[:])+`"`) ||
		!strings.Contains(string(reportEntry.Data), `"type":"report.generated"`) {
		t.Errorf("entry 8 is %s; want the report.generated entry of the archived statement report", reportEntry.Data)
	}
	var pk publicKeyResponse
	var acp checkpointResponse
	if err := json.Unmarshal(files[report.PathPublicKey], &pk); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(files[report.PathCheckpoint], &acp); err != nil || acp.TreeSize != 8 || acp.RootHash != inc.RootHash {
		t.Errorf("checkpoint.json %s: %v, want the tree of 8 entries, root %s", files[report.PathCheckpoint], err, inc.RootHash)
	}
	verifier, err := note.NewVerifier(pk.VerifierKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Open([]byte(acp.Note), note.VerifierList(verifier)); err != nil {
		t.Errorf("checkpoint note: %v", err)
	}

	// polygons.geojson: the plots of the period only, as sent, with their
	// ID, status and reason; our own parser takes it.
	var fc archivedCollection
	if err := json.Unmarshal(files[report.PathPolygons], &fc); err != nil || fc.Type != "FeatureCollection" || len(fc.Features) != 5 {
		t.Fatalf("polygons.geojson: %v: %s", err, files[report.PathPolygons])
	}
	if _, err := geo.ParseFeatureCollection(files[report.PathPolygons], geo.ParseOptions{}); err != nil {
		t.Errorf("geo.ParseFeatureCollection(polygons.geojson): %v", err)
	}
	evidence := jsonLines(t, files[report.PathEvidence])
	if len(evidence) != 5 {
		t.Fatalf("evidence.jsonl: %d lines", len(evidence))
	}
	for i, f := range fc.Features {
		r := results[i]
		reason := any(nil)
		if r.FailureReason != nil {
			reason = *r.FailureReason
		}
		p := f.Properties
		if f.Type != "Feature" || p["polygonId"] != r.PolygonID || p["eudrStatus"] != r.EUDRStatus || p["failureReason"] != reason ||
			p["externalId"] != *r.ExternalID || p["commodity"] != "cocoa" {
			t.Errorf("feature %d: %+v, want %+v", i, f, r)
		}

		// The evidence of the same plot, proved in the archive's tree,
		// verifies; its input hash is of the feature without the added
		// members.
		var doc polygon.Evidence
		var withProof struct {
			Ledger anchor.DocumentLedger `json:"ledger"`
		}
		json.Unmarshal(evidence[i], &doc)
		json.Unmarshal(evidence[i], &withProof)
		if doc.PolygonID != r.PolygonID || withProof.Ledger.TreeSize != 8 || withProof.Ledger.Checkpoint != acp.Note {
			t.Errorf("evidence %d: %s", i, evidence[i])
		}
		w := ta.do("POST", eudrPrefix+"/evidence/verify", string(evidence[i]), "X-API-Key", key)
		var v evidenceVerifyResponse
		mustDecode(t, w, &v)
		if w.Code != http.StatusOK || !v.Valid || v.TreeSize != 8 {
			t.Errorf("verify evidence %d: %d %s", i, w.Code, w.Body)
		}
		lines := bytes.Split(files[report.PathPolygons], []byte("\n"))
		raw := bytes.TrimSuffix(lines[1+i], []byte(","))
		added := fmt.Sprintf(`"polygonId":%q,"eudrStatus":%q,"failureReason":%s,`, r.PolygonID, r.EUDRStatus, mustJSON(t, reason))
		sent := bytes.Replace(raw, []byte(added), nil, 1)
		if sum := sha256.Sum256(sent); hex.EncodeToString(sum[:]) != doc.InputSHA256 {
			t.Errorf("feature %d without the added members: %s; SHA-256 %x, evidence says %s", i, sent, sum, doc.InputSHA256)
		}
	}

	// The statement and the proof of its history.
	ddsLines, proofLines := jsonLines(t, files[report.PathDDS]), jsonLines(t, files[report.PathDDSLedger])
	if len(ddsLines) != 1 || len(proofLines) != 1 {
		t.Fatalf("dds.jsonl %d lines, dds-ledger.jsonl %d", len(ddsLines), len(proofLines))
	}
	var gotDDS ddsResponse
	if err := json.Unmarshal(ddsLines[0], &gotDDS); err != nil || gotDDS.DDSID != dds.ID || string(gotDDS.Statement) != string(dds.Statement) ||
		len(gotDDS.History) != 1 {
		t.Errorf("dds.jsonl: %s (%v)", ddsLines[0], err)
	}
	var dl1 report.DDSLedgerLine
	if err := json.Unmarshal(proofLines[0], &dl1); err != nil || dl1.DDSID != dds.ID || len(dl1.Entries) != 1 {
		t.Fatalf("dds-ledger.jsonl: %s (%v)", proofLines[0], err)
	}
	e := dl1.Entries[0]
	entry, _ := base64.StdEncoding.DecodeString(e.Data)
	leaf := tlog.RecordHash(entry)
	if e.Status != storage.DDSDraft || e.Index != 5 || anchor.Hex(leaf) != e.TransactionHash || e.RootHash != acp.RootHash ||
		tlog.CheckRecord(mustHashes(t, e.Proof), e.TreeSize, mustHash(t, e.RootHash), e.Index, leaf) != nil {
		t.Errorf("dds ledger entry: %+v", e)
	}

	// The report's file and nothing else is left in the reports dir.
	left, _ := os.ReadDir(filepath.Join(ta.dir, "reports"))
	if len(left) != 1 || left[0].Name() != rep.ReportID+".zip" {
		t.Errorf("reports dir holds %v", left)
	}
}

// A report asked for on the production listener archives production's
// records. (What an archive of an empty period holds is report's tests'.)
func TestReports_ArchiveProduction(t *testing.T) {
	ta := newTestApp(t)
	_, live := ta.newKey(storage.Production)
	ta.runQueues()
	rep, w := ta.requestReport(storage.Production, live, "empty", `{"from":"2020-01-01T00:00:00Z","to":"2020-12-31"}`)
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST: %d %s", w.Code, w.Body)
	}
	ta.waitJobOn(storage.Production, live, rep.JobID, storage.JobCompleted)
	_, m := archiveFiles(t, ta.download(storage.Production, live, rep.ReportID).Body.Bytes())
	if m.Environment != "production" || m.Organisation != defaultOrg {
		t.Errorf("manifest: %s of %s, want production of %s", m.Environment, m.Organisation, defaultOrg)
	}
}

func TestReports_ArchiveValidation(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	// The decoder's problems with the request's, at once (which periods
	// are refused is report's tests').
	_, w := ta.requestReport(storage.Sandbox, key, "v-decoded", `{"from":1,"to":"2026-01-01","scope":"all"}`)
	e := wantError(t, w, http.StatusBadRequest, apierr.CodeValidationFailed, "")
	if got := detailSet(e.Details); len(got) != 2 || !got["INVALID_VALUE from"] || !got["UNKNOWN_FIELD scope"] {
		t.Errorf("details %v, want INVALID_VALUE from and UNKNOWN_FIELD scope", e.Details)
	}
	wantError(t, ta.do("POST", eudrPrefix+"/reports/archive", `{"from":"2026-01-01","to":"2026-01-02"}`, "X-API-Key", key),
		http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailIdempotencyKeyMissing)
	_, read := ta.newKey(storage.Sandbox, "read")
	wantError(t, ta.do("POST", eudrPrefix+"/reports/archive", `{"from":"2026-01-01","to":"2026-01-02"}`, "X-API-Key", read, "Idempotency-Key", "r"),
		http.StatusForbidden, apierr.CodeForbidden, apierr.DetailScopeRequired)
}

// A report not yet written: the record and its download say when to ask
// again.
func TestReports_Pending(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	rep, w := ta.requestReport(storage.Sandbox, key, "s-1", `{"from":"2026-11-01","to":"2026-11-30"}`)
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST: %d %s", w.Code, w.Body)
	}

	// Queued: the record says PENDING, the download 409 with Retry-After.
	g := ta.do("GET", eudrPrefix+"/reports/"+rep.ReportID, "", "X-API-Key", key)
	var got reportResponse
	mustDecode(t, g, &got)
	if got.Status != storage.ReportPending || got.SHA256 != nil || got.DownloadPath != nil || g.Header().Get("Retry-After") != "2" {
		t.Errorf("pending report: %s (Retry-After %q)", g.Body, g.Header().Get("Retry-After"))
	}
	d := ta.do("GET", reportDownloadPath(rep.ReportID), "", "X-API-Key", key)
	wantError(t, d, http.StatusConflict, apierr.CodeConflict, apierr.DetailReportNotReady)
	if d.Header().Get("Retry-After") != "2" {
		t.Errorf("409 Retry-After: %q", d.Header().Get("Retry-After"))
	}
}

// A report that could not be written (here: reports.dir is no folder) is
// shown FAILED with its job's error. (How the job fails is report's tests'.)
func TestReports_ArchiveFails(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ta := newTestApp(t, "EUDR_REPORTS_DIR="+filepath.Join(notADir, "reports"))
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	rep, _ := ta.requestReport(storage.Sandbox, key, "f-1", `{"from":"2026-11-01","to":"2026-11-30"}`)
	job := ta.waitJobOn(storage.Sandbox, key, rep.JobID, storage.JobFailed)
	var got reportResponse
	mustDecode(t, ta.do("GET", eudrPrefix+"/reports/"+rep.ReportID, "", "X-API-Key", key), &got)
	if got.Status != storage.ReportFailed || got.Error == nil || job.Error == nil || *got.Error != *job.Error || got.DownloadPath != nil {
		t.Errorf("failed report: %+v, want FAILED with its job's error %+v", got, job.Error)
	}
}

// reports.retention is the service's: a report is expired by the sweep
// once it has passed, and then shown without a download.
func TestReports_Expiry(t *testing.T) {
	ta := newTestApp(t, "EUDR_REPORTS_RETENTION=1h")
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	rep, _ := ta.requestReport(storage.Sandbox, key, "x-1", `{"from":"2026-11-01","to":"2026-11-30"}`)
	ta.waitJobOn(storage.Sandbox, key, rep.JobID, storage.JobCompleted)
	path := filepath.Join(ta.dir, "reports", rep.ReportID+".zip")

	ta.clock.Advance(59 * time.Minute)
	ta.sweepReports(context.Background())
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("report deleted before it expired: %v", err)
	}
	ta.clock.Advance(2 * time.Minute)
	ta.sweepReports(context.Background())
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("expired report's file: %v", err)
	}
	var got reportResponse
	mustDecode(t, ta.do("GET", eudrPrefix+"/reports/"+rep.ReportID, "", "X-API-Key", key), &got)
	if got.Status != storage.ReportExpired || got.ExpiresAt == nil || got.DownloadPath != nil {
		t.Errorf("expired report: %+v", got)
	}
}
