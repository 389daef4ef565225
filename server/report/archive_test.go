package report_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/report"
	"github.com/eudr/eudr/storage"
)

// checkProof checks an RFC 6962 inclusion proof of entry bytes data at
// index in the tree of size treeSize and root (hex).
func checkProof(tb testing.TB, what string, data []byte, index, treeSize int64, root string, proof []string) {
	tb.Helper()
	hash := func(s string) tlog.Hash {
		var h tlog.Hash
		if b, err := hex.DecodeString(s); err != nil || len(b) != len(h) {
			tb.Fatalf("%s: hash %q", what, s)
		} else {
			copy(h[:], b)
		}
		return h
	}
	var p tlog.RecordProof
	for _, s := range proof {
		p = append(p, hash(s))
	}
	if err := tlog.CheckRecord(p, treeSize, hash(root), index, tlog.RecordHash(data)); err != nil {
		tb.Errorf("%s: proof of entry %d in tree %d: %v", what, index, treeSize, err)
	}
}

// The archive of a period holds the plots and statements of the period
// anchored within the latest checkpoint, each with its proof in it: the
// features as stored with the polygon's ID, status and reason added, the
// evidence as stored with its ledger member, the statements as the API
// shows them, the checkpoint, the key and a manifest of it all. The job
// completes with report.ready's data as its one result.
func TestService_Archive(t *testing.T) {
	b := newBench(t, nil)
	jobID := storage.NewID("job", start)
	id := func(i int) string { return storage.PolygonID(jobID, i) }
	earlier, dayBefore := start.Add(-2*time.Hour), start.Add(-22*time.Hour)
	compliant := func(i int, at time.Time) storage.Polygon {
		return storage.Polygon{ID: id(i), Status: "COMPLIANT", Commodity: "cocoa", ScreenedAt: at}
	}
	failed := compliant(1, earlier)
	failed.Status, failed.FailureReason = "FAILED", "SELF_INTERSECTION"

	// Entries 0-2: three plots of the period; 3: a plot of the day before;
	// 4, 5: a statement of the day before and one of the period.
	b.putPolygon(t, compliant(0, earlier),
		`{"type":"Feature","geometry":{"type":"Point","coordinates":[1.000000,2.500]},"properties":{"commodity":"cocoa","area":1.50}}`, true)
	b.putPolygon(t, failed, `{"properties":{"eudrStatus":"mine","x\u00e9":"<&>","polygonId":7},"type":"Feature","geometry":null}`, true)
	b.putPolygon(t, compliant(2, earlier), `{"type":"Feature","geometry":null,"properties":null}`, true)
	b.putPolygon(t, compliant(3, earlier), `{"type":"Feature","geometry":null}`, false) // never anchored
	b.putPolygon(t, compliant(9, dayBefore), `{"type":"Feature","geometry":null}`, true)
	b.putDDS(t, dayBefore, storage.DDSDraft)
	dds := b.putDDS(t, earlier, storage.DDSDraft)
	b.sign(t)
	// After the checkpoint: a plot (left out) and a change of the statement
	// (not proved).
	b.putPolygon(t, compliant(4, earlier), `{"type":"Feature","geometry":null}`, true)
	b.Update(t, func(tx *storage.Tx) error {
		index, err := anchorEntry(tx, anchor.DDSEntry{Type: anchor.EntryDDSStatus, DDSID: dds.ID, Status: storage.DDSSubmitted})
		dds.Status = storage.DDSSubmitted
		dds.History = append(dds.History, storage.DDSChange{At: tx.Now(), Status: storage.DDSSubmitted, LedgerIndex: index})
		return errors.Join(err, tx.PutDDS(tenant, dds))
	})
	var checkpoint report.Checkpoint
	b.Update(t, func(tx *storage.Tx) error {
		c, err := anchor.Latest(tx, tenant)
		checkpoint = report.Checkpoint{TreeSize: c.Size, RootHash: anchor.Hex(c.Root), Note: string(c.Note),
			SignedAt: storage.Optional(storage.FormatTime(c.SignedAt))}
		return err
	})

	found, zipped := b.archive(t, day)
	rep := found.Record
	files, m := unzip(t, zipped)

	// The record, the job's result and the event.
	data := event.ReportReadyData{ReportID: rep.ID, SHA256: sha256Hex(zipped), SizeBytes: int64(len(zipped)), DownloadPath: "/download/" + rep.ID}
	if rep.Status != storage.ReportReady || rep.SHA256 != data.SHA256 || rep.SizeBytes != data.SizeBytes || rep.CompletedAt == nil ||
		!rep.CompletedAt.Equal(start) || found.ExpiresAt == nil || !found.ExpiresAt.Equal(start.Add(24*time.Hour)) {
		t.Errorf("report %+v, expires %v; want READY with the zip's SHA-256 and size, expiring a day after", rep, found.ExpiresAt)
	}
	job := found.Job
	if job == nil || job.Status != storage.JobCompleted || job.Progress != (storage.JobProgress{Total: 1, Processed: 1, Succeeded: 1}) {
		t.Errorf("job %+v", job)
	}
	var results []json.RawMessage
	b.Update(t, func(tx *storage.Tx) error {
		var err error
		results, err = tx.FindJobResults(tenant, rep.JobID)
		return err
	})
	if want, _ := storage.MarshalJSON(data); len(results) != 1 || !bytes.Equal(results[0], want) {
		t.Errorf("job results %s, want %s", results, want)
	}
	if n := b.WaitPublished(t, 1); n != 1 {
		t.Errorf("%d commits published events, want 1 (report.ready)", n)
	}

	// The manifest.
	if m.Format != report.Format || m.ReportID != rep.ID || m.Organisation != "default" || m.Environment != "sandbox" ||
		m.Period != (report.Period{From: "2026-11-26T00:00:00.000Z", To: "2026-11-26T23:59:59.999Z"}) ||
		m.AsOf != storage.FormatTime(start) || m.CreatedAt != storage.FormatTime(start) || m.AppVersion != "test" ||
		m.Counts != (report.Counts{Polygons: 4, DDS: 1}) || m.Ledger.TreeSize != 6 || m.Ledger.RootHash == nil ||
		*m.Ledger.RootHash != checkpoint.RootHash || m.Ledger.KeyName != b.Ledger.KeyName() || m.Ledger.VerifierKey != b.Ledger.VerifierKey() {
		t.Errorf("manifest: %s", files[report.PathManifest])
	}
	wantFiles := []string{report.PathReadme, report.PathPolygons, report.PathEvidence, report.PathDDS, report.PathDDSLedger,
		report.PathCheckpoint, report.PathPublicKey}
	var gotFiles []string
	for _, f := range m.Files {
		gotFiles = append(gotFiles, f.Path)
	}
	if !slices.Equal(gotFiles, wantFiles) {
		t.Errorf("files %v, want %v", gotFiles, wantFiles)
	}

	// The checkpoint, signed by the key beside it.
	var gotCP report.Checkpoint
	var key report.PublicKey
	if err := errors.Join(json.Unmarshal(files[report.PathCheckpoint], &gotCP), json.Unmarshal(files[report.PathPublicKey], &key)); err != nil ||
		!reflect.DeepEqual(gotCP, checkpoint) || key != (report.PublicKey{KeyName: b.Ledger.KeyName(), VerifierKey: b.Ledger.VerifierKey()}) {
		t.Errorf("checkpoint.json %s, public-key.json %s (%v); want %+v", files[report.PathCheckpoint], files[report.PathPublicKey], err, checkpoint)
	}
	if v, err := note.NewVerifier(key.VerifierKey); err != nil {
		t.Error(err)
	} else if _, err := note.Open([]byte(gotCP.Note), note.VerifierList(v)); err != nil {
		t.Errorf("checkpoint note: %v", err)
	}

	// The plots of the period, as stored with their ID, status and reason
	// first in their properties (members of those names replaced,
	// everything else byte for byte).
	want := []string{
		`{"type":"Feature","geometry":{"type":"Point","coordinates":[1.000000,2.500]},"properties":{"polygonId":"` + id(0) +
			`","eudrStatus":"COMPLIANT","failureReason":null,"commodity":"cocoa","area":1.50}}`,
		`{"properties":{"polygonId":"` + id(1) + `","eudrStatus":"FAILED","failureReason":"SELF_INTERSECTION","x\u00e9":"<&>"},"type":"Feature","geometry":null}`,
		`{"type":"Feature","geometry":null,"properties":{"polygonId":"` + id(2) + `","eudrStatus":"COMPLIANT","failureReason":null}}`,
		`{"type":"Feature","geometry":null,"properties":{"polygonId":"` + id(3) + `","eudrStatus":"COMPLIANT","failureReason":null}}`,
	}
	if got := features(t, files[report.PathPolygons]); !slices.Equal(got, want) {
		t.Errorf("polygons.geojson features:\n got %q\nwant %q", got, want)
	}

	// Their evidence in the same order, as stored with its proof made in
	// the checkpoint (null for the plot never anchored).
	evidence := lines(t, files[report.PathEvidence])
	if len(evidence) != 4 {
		t.Fatalf("evidence.jsonl: %d lines", len(evidence))
	}
	for i, line := range evidence {
		stored := evidenceOf(id(i))
		var doc struct {
			Ledger *anchor.DocumentLedger `json:"ledger"`
		}
		if err := json.Unmarshal(line, &doc); err != nil || !bytes.HasPrefix(line, append(stored[:len(stored)-1:len(stored)-1], `,"ledger":`...)) {
			t.Errorf("evidence %d: %s (%v), want the stored document with its ledger member", i, line, err)
			continue
		}
		if i == 3 {
			if doc.Ledger != nil {
				t.Errorf("evidence of the plot never anchored: %s", line)
			}
			continue
		}
		l := doc.Ledger
		if l == nil || l.Index != int64(i) || l.TreeSize != 6 || l.RootHash != checkpoint.RootHash || l.Checkpoint != checkpoint.Note {
			t.Errorf("evidence %d: %s", i, line)
			continue
		}
		raw, _ := base64.StdEncoding.DecodeString(l.Data)
		checkProof(t, fmt.Sprintf("evidence %d", i), raw, l.Index, l.TreeSize, l.RootHash, l.Proof)
	}

	// The statement of the period as the API shows it now, and the proof
	// of the change the checkpoint covers.
	ddsLines, ledgerLines := lines(t, files[report.PathDDS]), lines(t, files[report.PathDDSLedger])
	if len(ddsLines) != 1 || len(ledgerLines) != 1 {
		t.Fatalf("dds.jsonl %d lines, dds-ledger.jsonl %d, want 1", len(ddsLines), len(ledgerLines))
	}
	if want := `{"ddsId":"` + dds.ID + `","statement":{"activityType":"IMPORT"},"status":"SUBMITTED"}`; string(ddsLines[0]) != want {
		t.Errorf("dds.jsonl: %s, want %s", ddsLines[0], want)
	}
	var proved report.DDSLedgerLine
	if err := json.Unmarshal(ledgerLines[0], &proved); err != nil || proved.DDSID != dds.ID || len(proved.Entries) != 1 {
		t.Fatalf("dds-ledger.jsonl: %s (%v), want the DRAFT change only", ledgerLines[0], err)
	}
	e := proved.Entries[0]
	raw, _ := base64.StdEncoding.DecodeString(e.Data)
	var entry anchor.DDSEntry
	if err := json.Unmarshal(raw, &entry); err != nil || entry.DDSID != dds.ID || e.Status != storage.DDSDraft || e.At != storage.FormatTime(earlier) ||
		e.Index != 5 || e.TreeSize != 6 || e.RootHash != checkpoint.RootHash || e.TransactionHash != anchor.Hex(tlog.RecordHash(raw)) {
		t.Errorf("dds ledger entry %+v (%s)", e, raw)
	}
	checkProof(t, "dds entry", raw, e.Index, e.TreeSize, e.RootHash, e.Proof)

	if !strings.Contains(string(files[report.PathReadme]), "EUDR compliance archive") {
		t.Errorf("README.txt: %s", files[report.PathReadme])
	}
	if got := b.dirNames(t); !slices.Equal(got, []string{rep.ID + ".zip"}) {
		t.Errorf("reports dir holds %v, want the zip only", got)
	}
}

// A period with nothing in it, in a log without a checkpoint, is a valid
// archive: an empty collection, empty files, no checkpoint.
func TestService_ArchiveEmpty(t *testing.T) {
	b := newBench(t, nil)
	_, zipped := b.archive(t, period{"2020-01-01T00:00:00Z", "2020-12-31"})
	files, m := unzip(t, zipped)
	if got := features(t, files[report.PathPolygons]); len(got) != 0 {
		t.Errorf("features %q", got)
	}
	for _, f := range []string{report.PathEvidence, report.PathDDS, report.PathDDSLedger} {
		if b, ok := files[f]; !ok || len(b) != 0 {
			t.Errorf("%s: present %v, %q; want an empty file", f, ok, b)
		}
	}
	if _, ok := files[report.PathCheckpoint]; ok || m.Ledger.TreeSize != 0 || m.Ledger.RootHash != nil || m.Counts != (report.Counts{}) ||
		m.Period != (report.Period{From: "2020-01-01T00:00:00.000Z", To: "2020-12-31T23:59:59.999Z"}) {
		t.Errorf("manifest: %s", files[report.PathManifest])
	}
}

// An archive of more records than a page holds has each once, in order,
// with its evidence or proofs on the same line; a plot anchored after the
// checkpoint is left out wherever it falls.
func TestService_ArchivePages(t *testing.T) {
	b := newBench(t, func(o *report.Options) { o.PageItems = 3 })
	jobID := storage.NewID("job", start)
	var ids []string
	for i := range 8 {
		p := storage.Polygon{ID: storage.PolygonID(jobID, i), Status: "COMPLIANT", ScreenedAt: start.Add(-time.Hour)}
		if i != 4 {
			b.putPolygon(t, p, `{"type":"Feature","geometry":null}`, true)
			ids = append(ids, p.ID)
		}
	}
	var ddsIDs []string
	for i := range 7 {
		ddsIDs = append(ddsIDs, b.putDDS(t, start.Add(time.Duration(i-60)*time.Minute), storage.DDSDraft).ID)
	}
	b.sign(t)
	b.putPolygon(t, storage.Polygon{ID: storage.PolygonID(jobID, 4), Status: "COMPLIANT", ScreenedAt: start.Add(-time.Hour)},
		`{"type":"Feature","geometry":null}`, true)

	_, zipped := b.archive(t, day)
	files, m := unzip(t, zipped)
	feats, evidence := features(t, files[report.PathPolygons]), lines(t, files[report.PathEvidence])
	if len(feats) != len(ids) || len(evidence) != len(ids) || m.Counts != (report.Counts{Polygons: len(ids), DDS: len(ddsIDs)}) {
		t.Fatalf("%d features, %d evidence lines, counts %+v; want %d plots, %d statements", len(feats), len(evidence), m.Counts, len(ids), len(ddsIDs))
	}
	for i, id := range ids {
		if !strings.Contains(feats[i], `"polygonId":"`+id+`"`) || !bytes.Contains(evidence[i], []byte(`"polygonId":"`+id+`"`)) {
			t.Errorf("line %d: %s with %s, want %s", i, feats[i], evidence[i], id)
		}
	}
	statements, proofs := lines(t, files[report.PathDDS]), lines(t, files[report.PathDDSLedger])
	if len(statements) != len(ddsIDs) || len(proofs) != len(ddsIDs) {
		t.Fatalf("%d statements, %d proof lines, want %d", len(statements), len(proofs), len(ddsIDs))
	}
	for i, id := range ddsIDs {
		var s struct{ DDSID string }
		var p report.DDSLedgerLine
		json.Unmarshal(statements[i], &s)
		json.Unmarshal(proofs[i], &p)
		if s.DDSID != id || p.DDSID != id || len(p.Entries) != 1 {
			t.Errorf("line %d: %s with %s, want %s", i, statements[i], proofs[i], id)
		}
	}
}

// Each statement of the period gets its PDF report in the archive, in the
// order of dds.jsonl, listed in the manifest with its SHA-256 and size;
// each is rendered after the page of statements is read, one at a time.
func TestService_ArchiveStatementReports(t *testing.T) {
	var rendered []string
	b := newBench(t, func(o *report.Options) {
		o.PageItems = 2
		o.StatementReport = func(_ context.Context, tn storage.Tenant, id string) ([]byte, error) {
			if tn != tenant {
				return nil, fmt.Errorf("tenant %v", tn)
			}
			rendered = append(rendered, id)
			return []byte("%PDF-1.3 report of " + id), nil
		}
	})
	var ids []string
	for i := range 3 {
		ids = append(ids, b.putDDS(t, start.Add(time.Duration(i-60)*time.Minute), storage.DDSDraft, storage.DDSSubmitted).ID)
	}
	b.putDDS(t, start.Add(-48*time.Hour), storage.DDSDraft) // before the period
	b.sign(t)

	_, zipped := b.archive(t, day)
	files, m := unzip(t, zipped)
	if !slices.Equal(rendered, ids) {
		t.Errorf("rendered %v, want each statement of the period once, in order: %v", rendered, ids)
	}
	wantFiles := []string{report.PathReadme, report.PathPolygons, report.PathEvidence, report.PathDDS, report.PathDDSLedger}
	for _, id := range ids {
		wantFiles = append(wantFiles, report.PathStatementReports+id+".pdf")
	}
	wantFiles = append(wantFiles, report.PathCheckpoint, report.PathPublicKey)
	var gotFiles []string
	for _, f := range m.Files {
		gotFiles = append(gotFiles, f.Path)
		if body, ok := files[f.Path]; strings.HasSuffix(f.Path, ".pdf") && (!ok || sha256Hex(body) != f.SHA256 || int64(len(body)) != f.SizeBytes) {
			t.Errorf("%s: %d bytes, SHA-256 %s; the manifest says %+v", f.Path, len(body), sha256Hex(body), f)
		}
	}
	if !slices.Equal(gotFiles, wantFiles) {
		t.Errorf("files %v, want %v", gotFiles, wantFiles)
	}
	for _, id := range ids {
		if got := string(files[report.PathStatementReports+id+".pdf"]); got != "%PDF-1.3 report of "+id {
			t.Errorf("the report of %s is %q", id, got)
		}
	}
	if !strings.Contains(string(files[report.PathReadme]), "reports/<ddsId>.pdf") {
		t.Errorf("README.txt does not explain the reports:\n%s", files[report.PathReadme])
	}
}

// A statement whose report cannot be made does not cost the archive its
// records: a note takes the report's place, naming the statement and not
// the appliance's files, and the archive is READY.
func TestService_ArchiveStatementReportFails(t *testing.T) {
	const notADir = "/var/lib/eudr/rasters/tile.tif: not a directory"
	b := newBench(t, func(o *report.Options) {
		o.StatementReport = func(context.Context, storage.Tenant, string) ([]byte, error) {
			return nil, errors.New("render: " + notADir)
		}
	})
	d := b.putDDS(t, start.Add(-time.Hour), storage.DDSDraft)
	b.sign(t)
	_, zipped := b.archive(t, day)
	files, _ := unzip(t, zipped)
	note, ok := files[report.PathStatementReports+d.ID+".txt"]
	if _, pdf := files[report.PathStatementReports+d.ID+".pdf"]; !ok || pdf || !strings.Contains(string(note), d.ID) ||
		strings.Contains(string(note), notADir) || len(files[report.PathDDS]) == 0 {
		t.Errorf("files %v, note %q; want the note in place of the report, and the statement's records", slices.Collect(maps.Keys(files)), note)
	}
	if !strings.Contains(string(files[report.PathReadme]), "reports/<ddsId>.pdf") {
		t.Errorf("README.txt does not explain the reports:\n%s", files[report.PathReadme])
	}
}

// An archive that cannot be written fails its job (JOB_FAILED, job.failed)
// and its report, without naming the appliance's files, and leaves no file
// behind.
func TestService_ArchiveFails(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(*report.Options)
		put  func(*bench)
	}{
		{"ReportsDirUnusable", func(o *report.Options) { o.Dir = filepath.Join(notADir, "reports") }, func(*bench) {}},
		{"StoredFeatureNotAnObject", nil, func(b *bench) {
			b.putPolygon(t, storage.Polygon{ID: storage.PolygonID(storage.NewID("job", start), 0), ScreenedAt: start.Add(-time.Hour)}, `[1]`, false)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBench(t, c.edit)
			c.put(b)
			rep, err := b.request(day)
			if err != nil {
				t.Fatal(err)
			}
			b.RunJobs(t)
			job := b.WaitJob(t, tenant, rep.JobID)
			if job.Status != storage.JobFailed || job.Error == nil || job.Error.Code != apierr.JobFailed ||
				strings.Contains(job.Error.Message, notADir) || !strings.Contains(job.Error.Message, rep.ID) {
				t.Errorf("job %+v, error %+v; want FAILED JOB_FAILED naming the report, not the appliance's files", job, job.Error)
			}
			if n := b.WaitPublished(t, 1); n != 1 {
				t.Errorf("%d commits published events, want 1 (job.failed)", n)
			}
			found, err := b.s.Find(context.Background(), tenant, rep.ID)
			if err != nil || found.Record.Status != storage.ReportFailed || found.Record.SHA256 != "" {
				t.Errorf("report %+v (%v), want FAILED", found, err)
			}
			var e *apierr.Error
			if _, err := b.s.Open(context.Background(), tenant, rep.ID); !errors.As(err, &e) || e.Status != apierr.StatusConflict ||
				len(e.Details) != 1 || e.Details[0].Code != apierr.DetailReportFailed || !strings.Contains(e.Message, job.Error.Message) {
				t.Errorf("Open: %v, want 409 REPORT_FAILED with the job's error", err)
			}
			if got := b.dirNames(t); len(got) != 0 {
				t.Errorf("reports dir holds %v, want nothing", got)
			}
		})
	}
}
