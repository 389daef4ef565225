package report_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/report"
	"github.com/eudr/eudr/storage"
)

var (
	tenant = storage.Tenant{Org: "default", Env: storage.Sandbox}
	start  = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	// day is the report period of the tests: the day of start.
	day = period{"2026-11-26", "2026-11-26"}
)

type period struct{ from, to string }

// bench is a report service on an apitest.Bench, with its reports
// directory.
type bench struct {
	*apitest.Bench
	s   *report.Service
	dir string
}

// newBench builds the service with a day's retention, reports written to
// a directory of the test; edit changes the options first.
func newBench(tb testing.TB, edit func(*report.Options)) *bench {
	tb.Helper()
	b := &bench{Bench: apitest.NewBench(tb, start), dir: filepath.Join(tb.TempDir(), "reports")}
	o := report.Options{DB: b.DB, Jobs: b.Jobs, Events: b.Events, Ledger: b.Ledger, Logger: zerolog.Nop(),
		Now: b.Clock.Now, Version: "test", Dir: b.dir, Retention: 24 * time.Hour,
		DownloadPath: func(id string) string { return "/download/" + id },
		DDSView:      ddsView}
	if edit != nil {
		edit(&o)
	}
	b.s = report.New(o)
	return b
}

// ddsView stands in for the API's view of a statement.
func ddsView(_ *storage.Tx, _ storage.Tenant, d *storage.DDS) (any, error) {
	return map[string]any{"ddsId": d.ID, "status": d.Status, "statement": d.Statement}, nil
}

// request validates p and records the report in its own transaction.
func (b *bench) request(p period) (*storage.Report, error) {
	req := report.ArchiveRequest{From: &p.from, To: &p.to}
	rep, err := req.Validate()
	if err != nil {
		return nil, err
	}
	return rep, b.DB.Update(context.Background(), func(tx *storage.Tx) error { return b.s.Request(tx, tenant, rep) })
}

// archive requests a report of p, runs its job to COMPLETED and returns
// the report and its zip's bytes.
func (b *bench) archive(tb testing.TB, p period) (*report.Report, []byte) {
	tb.Helper()
	rep, err := b.request(p)
	if err != nil {
		tb.Fatal(err)
	}
	b.RunJobs(tb)
	if job := b.WaitJob(tb, tenant, rep.JobID); job.Status != storage.JobCompleted {
		tb.Fatalf("archive job %+v (error %+v), want COMPLETED", job, job.Error)
	}
	found, err := b.s.Find(context.Background(), tenant, rep.ID)
	if err != nil {
		tb.Fatal(err)
	}
	zipped, err := os.ReadFile(filepath.Join(b.dir, rep.ID+".zip"))
	if err != nil {
		tb.Fatal(err)
	}
	return found, zipped
}

// anchorEntry appends fields to the tenant's ledger and returns its index.
func anchorEntry(tx *storage.Tx, fields any) (*int64, error) {
	e, err := anchor.Append(tx, tenant, fields)
	if err != nil {
		return nil, err
	}
	return &e.Index, nil
}

// putPolygon stores p with the stored feature and an evidence document,
// anchored in the ledger (not yet under a checkpoint) when anchored is set.
func (b *bench) putPolygon(tb testing.TB, p storage.Polygon, feature string, anchored bool) {
	tb.Helper()
	b.Update(tb, func(tx *storage.Tx) error {
		if anchored {
			var err error
			if p.LedgerIndex, err = anchorEntry(tx, anchor.ScreeningEntry{Type: anchor.EntryPolygonScreened, PolygonID: p.ID,
				EUDRStatus: p.Status, EvidenceSHA256: "00"}); err != nil {
				return err
			}
		}
		return tx.PutPolygon(tenant, &p, &storage.PolygonDetail{Feature: json.RawMessage(feature), Evidence: evidenceOf(p.ID)})
	})
}

// evidenceOf is the evidence document stored with a polygon.
func evidenceOf(id string) json.RawMessage {
	return json.RawMessage(`{"inputSha256":"ab","polygonId":"` + id + `"}`)
}

// putDDS stores a statement created at at whose history holds one change
// per status, each anchored in the ledger.
func (b *bench) putDDS(tb testing.TB, at time.Time, statuses ...string) *storage.DDS {
	tb.Helper()
	d := &storage.DDS{Status: statuses[len(statuses)-1], Statement: json.RawMessage(`{"activityType":"IMPORT"}`), CreatedAt: at}
	b.Update(tb, func(tx *storage.Tx) error {
		d.ID = storage.NewID("dds", at)
		for _, st := range statuses {
			index, err := anchorEntry(tx, anchor.DDSEntry{Type: anchor.EntryDDSStatus, DDSID: d.ID, Status: st, Actor: "test"})
			if err != nil {
				return err
			}
			d.History = append(d.History, storage.DDSChange{At: at, Status: st, Actor: "test", LedgerIndex: index})
		}
		return tx.PutDDS(tenant, d)
	})
	return d
}

// sign signs a checkpoint over the tenant's log.
func (b *bench) sign(tb testing.TB) {
	tb.Helper()
	b.Update(tb, func(tx *storage.Tx) error {
		_, err := b.Ledger.Sign(tx, tenant)
		return err
	})
}

// unzip returns an archive's files by path and its manifest, failing
// the test when the archive breaks a promise of its manifest.
func unzip(tb testing.TB, body []byte) (map[string][]byte, report.Manifest) {
	tb.Helper()
	files := apitest.UnzipArchive(tb, body, report.PathManifest)
	var m report.Manifest
	if err := json.Unmarshal(files[report.PathManifest], &m); err != nil {
		tb.Fatal(err)
	}
	return files, m
}

// lines splits a JSON Lines file of an archive.
func lines(tb testing.TB, b []byte) [][]byte {
	tb.Helper()
	return apitest.JSONLines(tb, b)
}

// features returns the feature lines of polygons.geojson, which starts
// and ends with a line of its own.
func features(tb testing.TB, b []byte) []string {
	tb.Helper()
	ls := lines(tb, b)
	if len(ls) < 2 || string(ls[0]) != `{"type":"FeatureCollection","features":[` || string(ls[len(ls)-1]) != `]}` {
		tb.Fatalf("polygons.geojson: %s", b)
	}
	var out []string
	for _, l := range ls[1 : len(ls)-1] {
		out = append(out, string(bytes.TrimSuffix(l, []byte(","))))
	}
	return out
}

// dirNames lists the reports directory.
func (b *bench) dirNames(tb testing.TB) []string {
	tb.Helper()
	entries, err := os.ReadDir(b.dir)
	if err != nil && !os.IsNotExist(err) {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
