package report_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/report"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

func TestArchiveRequest_Validate(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		name     string
		req      report.ArchiveRequest
		want     []string // "code field"
		from, to time.Time
	}{
		{name: "Nothing", want: []string{"REQUIRED from", "REQUIRED to"}},
		{name: "Empty", req: report.ArchiveRequest{From: str(""), To: str("")}, want: []string{"REQUIRED from", "REQUIRED to"}},
		{name: "NotDates", req: report.ArchiveRequest{From: str("yesterday"), To: str("2026-13-01")},
			want: []string{"INVALID_VALUE from", "INVALID_VALUE to"}},
		{name: "Reversed", req: report.ArchiveRequest{From: str("2026-02-01"), To: str("2026-01-31T23:59:59Z")}, want: []string{"INVALID_VALUE to"}},
		{name: "TenYears", req: report.ArchiveRequest{From: str("2016-01-01"), To: str("2026-01-01")}, want: []string{"INVALID_VALUE to"}},
		{name: "ExactlyTenYears", req: report.ArchiveRequest{From: str("2016-01-01T00:00:00.000000001Z"), To: str("2026-01-01T00:00:00.000000001Z")},
			want: []string{"INVALID_VALUE to"}},
		{name: "JustUnderTenYears", req: report.ArchiveRequest{From: str("2016-01-01"), To: str("2025-12-31")},
			from: time.Date(2016, 1, 1, 0, 0, 0, 0, time.UTC), to: time.Date(2026, 1, 1, 0, 0, 0, -1, time.UTC)},
		{name: "OneMillisecond", req: report.ArchiveRequest{From: str("2026-01-01T10:00:00Z"), To: str("2026-01-01T10:00:00Z")},
			from: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC), to: time.Date(2026, 1, 1, 10, 0, 0, int(time.Millisecond)-1, time.UTC)},
		{name: "InUTC", req: report.ArchiveRequest{From: str("2026-01-01T10:00:00+02:00"), To: str("2026-01-02")},
			from: time.Date(2026, 1, 1, 8, 0, 0, 0, time.UTC), to: time.Date(2026, 1, 3, 0, 0, 0, -1, time.UTC)},
		// The store keeps times of the years 0000 to 9999 (UTC) only.
		{name: "FromBeforeYear0", req: report.ArchiveRequest{From: str("0000-01-01T00:00:00+01:00"), To: str("0000-01-02")},
			want: []string{"INVALID_VALUE from"}},
		{name: "ToAfterYear9999", req: report.ArchiveRequest{From: str("9999-12-31"), To: str("9999-12-31T23:59:59-01:00")},
			want: []string{"INVALID_VALUE to"}},
		{name: "FirstAndLastYears", req: report.ArchiveRequest{From: str("9999-01-01T00:00:00Z"), To: str("9999-12-31")},
			from: time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), to: time.Date(10000, 1, 1, 0, 0, 0, -1, time.UTC)},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, err := c.req.Validate()
			if c.want == nil {
				if err != nil || !rep.From.Equal(c.from) || !rep.To.Equal(c.to) || rep.From.Location() != time.UTC || rep.To.Location() != time.UTC {
					t.Errorf("got %+v (%v), want [%v, %v] in UTC", rep, err, c.from, c.to)
				}
				return
			}
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != apierr.StatusBadRequest || e.Code != apierr.CodeValidationFailed {
				t.Fatalf("got %v, want a 400", err)
			}
			var got []string
			for _, d := range e.Details {
				got = append(got, d.Code+" "+d.Field)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("details %v, want %v", got, c.want)
			}
		})
	}
}

// A report is PENDING with its job queued until the job has run; it is
// the tenant's alone.
func TestService_Request(t *testing.T) {
	b := newBench(t, nil)
	rep, err := b.request(day)
	if err != nil {
		t.Fatal(err)
	}
	found, err := b.s.Find(context.Background(), tenant, rep.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r := found.Record; !strings.HasPrefix(r.ID, "rpt_") || r.Status != storage.ReportPending || !r.CreatedAt.Equal(start) ||
		r.From != rep.From || r.To != rep.To || found.Job == nil || found.Job.ID != r.JobID || found.Job.Type != work.ArchiveReport ||
		found.Job.Status != storage.JobQueued || found.ExpiresAt != nil {
		t.Errorf("found %+v, job %+v; want PENDING with its archive_report job QUEUED", r, found.Job)
	}
	var e *apierr.Error
	if _, err := b.s.Open(context.Background(), tenant, rep.ID); !errors.As(err, &e) || e.Status != apierr.StatusConflict ||
		e.RetryAfter != 2 || len(e.Details) != 1 || e.Details[0].Code != apierr.DetailReportNotReady || e.Details[0].Field != "reportId" {
		t.Errorf("Open of a PENDING report: %v, want 409 REPORT_NOT_READY with Retry-After", err)
	}
	production := storage.Tenant{Org: tenant.Org, Env: storage.Production}
	for _, c := range []struct {
		t  storage.Tenant
		id string
	}{{tenant, "rpt_01JD0000000000000000000000"}, {production, rep.ID}} {
		if _, err := b.s.Find(context.Background(), c.t, c.id); !errors.As(err, new(apierr.NotFound)) {
			t.Errorf("Find %s of %s: %v, want apierr.NotFound", c.id, c.t, err)
		}
		if _, err := b.s.Open(context.Background(), c.t, c.id); !errors.As(err, new(apierr.NotFound)) {
			t.Errorf("Open %s of %s: %v, want apierr.NotFound", c.id, c.t, err)
		}
	}
}

// Jobs queued by earlier versions carry {"reportId": ...} as their input
// in the queue entry's payload: they still write their report.
func TestService_JobInput(t *testing.T) {
	b := newBench(t, nil)
	var rep *storage.Report
	b.Update(t, func(tx *storage.Tx) error {
		rep = &storage.Report{ID: storage.NewID("rpt", tx.Now()), JobID: "job_old", From: start.Add(-time.Hour), To: start,
			Status: storage.ReportPending, CreatedAt: tx.Now()}
		if err := tx.PutJob(tenant, &storage.Job{ID: "job_old", Type: work.ArchiveReport, Status: storage.JobQueued,
			Progress: storage.JobProgress{Total: 1}, CreatedAt: tx.Now()}); err != nil {
			return err
		}
		if err := tx.PutReport(tenant, rep); err != nil {
			return err
		}
		return queue.Enqueue(tx.Tx, queue.Job{ID: "job_old", Kind: work.ArchiveReport, RunAt: tx.Now(),
			Payload: []byte(`{"org":"default","env":"sandbox","input":{"reportId":"` + rep.ID + `"}}`)})
	})
	b.RunJobs(t)
	if job := b.WaitJob(t, tenant, rep.JobID); job.Status != storage.JobCompleted {
		t.Fatalf("job %+v (error %+v), want COMPLETED", job, job.Error)
	}
	if found, err := b.s.Find(context.Background(), tenant, rep.ID); err != nil || found.Record.Status != storage.ReportReady {
		t.Errorf("report %+v (%v), want READY", found, err)
	}
}

// A PENDING report whose job the runner failed (its handler returned an
// error rather than failing the report) is shown FAILED, with the job's
// error.
func TestService_FindFailedByRunner(t *testing.T) {
	b := newBench(t, nil)
	var rep *storage.Report
	b.Update(t, func(tx *storage.Tx) error {
		rep = &storage.Report{ID: storage.NewID("rpt", tx.Now()), From: start.Add(-time.Hour), To: start, Status: storage.ReportPending, CreatedAt: tx.Now()}
		job, err := b.Jobs.Enqueue(tx, tenant, work.ArchiveReport, 1, []byte(`{"reportId":"rpt_gone"}`))
		if err != nil {
			return err
		}
		rep.JobID = job.ID
		return tx.PutReport(tenant, rep)
	})
	b.RunJobs(t)
	if job := b.WaitJob(t, tenant, rep.JobID); job.Status != storage.JobFailed {
		t.Fatalf("job %+v, want FAILED", job)
	}
	found, err := b.s.Find(context.Background(), tenant, rep.ID)
	if err != nil || found.Record.Status != storage.ReportFailed || found.Job == nil || found.Job.Error == nil ||
		found.Job.Error.Code != apierr.JobFailed {
		t.Errorf("report %+v (%v), want FAILED with its job's error", found, err)
	}
	var e *apierr.Error
	if _, err := b.s.Open(context.Background(), tenant, rep.ID); !errors.As(err, &e) || len(e.Details) != 1 ||
		e.Details[0].Code != apierr.DetailReportFailed || !strings.Contains(e.Message, "rpt_gone") {
		t.Errorf("Open: %v, want 409 REPORT_FAILED with the job's error", err)
	}
}

// Open serves the zip as written; files of an interrupted run are removed
// when the job runs again; a file that went missing or changed size is
// not served.
func TestService_Open(t *testing.T) {
	b := newBench(t, nil)
	rep, err := b.request(day)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(b.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{rep.ID + ".zip.tmp-123", rep.ID + ".zip.spool-456", rep.ID + ".zip", "rpt_other.zip"} {
		if err := os.WriteFile(filepath.Join(b.dir, f), []byte("half"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b.RunJobs(t)
	b.WaitJob(t, tenant, rep.JobID)
	if got := b.dirNames(t); !slices.Equal(got, []string{rep.ID + ".zip", "rpt_other.zip"}) {
		t.Errorf("reports dir after the run: %v", got)
	}

	f, err := b.s.Open(context.Background(), tenant, rep.ID)
	if err != nil {
		t.Fatal(err)
	}
	zipped, err := io.ReadAll(f.Zip)
	f.Zip.Close()
	if err != nil || f.Report.ID != rep.ID || f.Size != int64(len(zipped)) || f.Report.SizeBytes != f.Size || f.Report.SHA256 != sha256Hex(zipped) {
		t.Fatalf("opened %+v, %d bytes (%v), SHA-256 %s", f.Report, len(zipped), err, sha256Hex(zipped))
	}
	unzip(t, zipped)

	path := filepath.Join(b.dir, rep.ID+".zip")
	if err := os.WriteFile(path, zipped[:len(zipped)-1], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := b.s.Open(context.Background(), tenant, rep.ID); err == nil || apierr.From(err).Status != apierr.StatusInternal {
		t.Errorf("Open of a file of another size: %v, want an internal error", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	var e *apierr.Error
	if _, err := b.s.Open(context.Background(), tenant, rep.ID); !errors.As(err, &e) || e.Status != apierr.StatusNotFound ||
		!strings.Contains(e.Message, "missing") {
		t.Errorf("Open of a missing file: %v, want a 404 that says so", err)
	}
}

// The sweep expires READY reports past the retention: their files are
// deleted and they are shown EXPIRED; with no retention files are kept.
func TestService_Sweep(t *testing.T) {
	b := newBench(t, func(o *report.Options) { o.Retention = time.Hour })
	found, _ := b.archive(t, day)
	id := found.Record.ID
	path := filepath.Join(b.dir, id+".zip")

	b.Clock.Advance(59 * time.Minute)
	if n, err := b.s.Sweep(context.Background()); n != 0 || err != nil {
		t.Errorf("sweep before the retention: %d, %v", n, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("report deleted before it expired: %v", err)
	}
	b.Clock.Advance(2 * time.Minute)
	if n, err := b.s.Sweep(context.Background()); n != 1 || err != nil {
		t.Errorf("sweep after the retention: %d, %v; want 1 expired", n, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("expired report's file: %v", err)
	}
	expired, err := b.s.Find(context.Background(), tenant, id)
	if err != nil || expired.Record.Status != storage.ReportExpired || expired.Record.SHA256 != found.Record.SHA256 ||
		expired.ExpiresAt == nil || !expired.ExpiresAt.Equal(b.Clock.Now()) {
		t.Errorf("expired report %+v, expires %v (%v)", expired.Record, expired.ExpiresAt, err)
	}
	var e *apierr.Error
	if _, err := b.s.Open(context.Background(), tenant, id); !errors.As(err, &e) || e.Status != apierr.StatusNotFound ||
		!strings.Contains(e.Message, "expired") {
		t.Errorf("Open of an expired report: %v, want a 404 that says so", err)
	}
	if n, err := b.s.Sweep(context.Background()); n != 0 || err != nil {
		t.Errorf("sweep again: %d, %v", n, err)
	}

	kept := newBench(t, func(o *report.Options) { o.Retention = 0 })
	found, _ = kept.archive(t, day)
	kept.Clock.Advance(24 * 365 * time.Hour)
	if n, err := kept.s.Sweep(context.Background()); n != 0 || err != nil {
		t.Errorf("sweep with no retention: %d, %v", n, err)
	}
	if again, err := kept.s.Find(context.Background(), tenant, found.Record.ID); err != nil || again.Record.Status != storage.ReportReady ||
		again.ExpiresAt != nil {
		t.Errorf("report kept for good: %+v, expires %v (%v)", again.Record, again.ExpiresAt, err)
	}
}
