// Package report owns archive reports: a request records a PENDING report
// of a period and queues its archive_report job, which writes a zip of
// everything the tenant recorded in the period (plots with their evidence
// and proofs, statements with the proofs of their history, the signed
// checkpoint, a manifest) into the reports directory and fires
// report.ready. It serves a report's record and its file, and its sweep
// deletes the files of reports past their retention.
package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// Options are what the service needs.
type Options struct {
	DB     *storage.DB
	Jobs   *work.Queue
	Events *event.Publisher
	Ledger *anchor.Ledger
	Logger zerolog.Logger
	// Now is the clock the manifest's createdAt is read from.
	Now func() time.Time
	// Version is the appliance's version, written into every manifest.
	Version string
	// Dir is the reports directory: a report's zip is <Dir>/<reportId>.zip.
	Dir string
	// Retention is how long a READY report's file is kept after it was
	// written; 0 keeps it.
	Retention time.Duration
	// DownloadPath is the API path a report's zip is served at (sent in
	// report.ready).
	DownloadPath func(reportID string) string
	// DDSView is a statement as dds.jsonl holds it: as the API answers it,
	// with its Annex II statement and history. It runs in the archive's
	// read transaction.
	DDSView func(tx *storage.Tx, t storage.Tenant, d *storage.DDS) (any, error)
	// StatementReport renders the PDF report of the tenant's statement id,
	// written to the archive as reports/<ddsId>.pdf; nil leaves the
	// reports out. It is passed in (the server wires the pdf package's
	// renderer) so that this package need not import the services the
	// reports are read from.
	StatementReport func(ctx context.Context, t storage.Tenant, id string) ([]byte, error)
	// PageItems is how many records the job reads in one read transaction
	// (0: 256); a page also ends once it holds 4 MiB.
	PageItems int
}

// Service requests, writes, serves and expires archive reports.
type Service struct {
	o Options
}

// New returns the service and registers its job with o.Jobs.
func New(o Options) *Service {
	if o.PageItems <= 0 {
		o.PageItems = 256
	}
	s := &Service{o: o}
	o.Jobs.Handle(work.ArchiveReport, s.runArchive)
	return s
}

// jobInput is the queued input of an archive_report job; the period is in
// the report's record. Jobs queued by earlier versions carry the same.
type jobInput struct {
	ReportID string `json:"reportId"`
}

// Request records rep (its period set, as ArchiveRequest.Validate makes
// it) PENDING and queues the job that writes its zip, in the caller's
// transaction; it sets rep's ID, job, status and creation time. It
// refuses nothing: an error is the store's.
func (s *Service) Request(tx *storage.Tx, t storage.Tenant, rep *storage.Report) error {
	rep.ID = storage.NewID("rpt", tx.Now())
	input, err := json.Marshal(jobInput{ReportID: rep.ID})
	if err != nil {
		return err
	}
	job, err := s.o.Jobs.Enqueue(tx, t, work.ArchiveReport, 1, input)
	if err != nil {
		return err
	}
	rep.JobID, rep.Status, rep.CreatedAt = job.ID, storage.ReportPending, tx.Now()
	return tx.PutReport(t, rep)
}

// Report is a report as it is shown: its record, the job that writes it
// and when its file expires.
type Report struct {
	Record *storage.Report
	// Job is nil once the job's record is gone.
	Job *storage.Job
	// ExpiresAt is when a READY report's file will be deleted (nil: it is
	// kept), or when an EXPIRED one's was.
	ExpiresAt *time.Time
}

// Find returns the tenant's report with its job, or apierr.NotFound. A
// PENDING report whose job failed (a failure recorded by the runner rather
// than by the job itself) is returned FAILED.
func (s *Service) Find(ctx context.Context, t storage.Tenant, id string) (*Report, error) {
	r := &Report{}
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if r.Record, err = tx.FindReport(t, id); err != nil {
			return err
		}
		if r.Job, err = tx.FindJob(t, r.Record.JobID); errors.Is(err, storage.ErrNotFound) {
			r.Job, err = nil, nil
		}
		return err
	})
	if err != nil {
		return nil, apierr.Named(err, "report", id)
	}
	rep := r.Record
	if rep.Status == storage.ReportPending && r.Job != nil && r.Job.Status == storage.JobFailed {
		rep.Status = storage.ReportFailed
	}
	switch {
	case rep.Status == storage.ReportReady && s.o.Retention > 0 && rep.CompletedAt != nil:
		expires := rep.CompletedAt.Add(s.o.Retention)
		r.ExpiresAt = &expires
	case rep.Status == storage.ReportExpired:
		r.ExpiresAt = rep.ExpiredAt
	}
	return r, nil
}

// File is a READY report's zip, open for reading; the caller closes Zip.
type File struct {
	Report *storage.Report
	Zip    *os.File
	// Size is the zip's size, as written and recorded.
	Size int64
}

// Open opens the zip of the tenant's READY report. It fails with
// apierr.NotFound for an unknown report, 409 REPORT_NOT_READY (with
// Retry-After) while it is being written, 409 REPORT_FAILED when its job
// failed, 404 when its file was deleted (EXPIRED) or is missing, and with
// an internal error (a 500 through apierr.From) when the file cannot be
// opened or is not the size recorded.
func (s *Service) Open(ctx context.Context, t storage.Tenant, id string) (*File, error) {
	r, err := s.Find(ctx, t, id)
	if err != nil {
		return nil, err
	}
	if err := unavailable(r); err != nil {
		return nil, err
	}
	rep := r.Record
	path := s.path(rep.ID)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		s.o.Logger.Warn().Str("report_id", rep.ID).Str("file", path).Msg("report file is missing")
		return nil, &apierr.Error{Status: apierr.StatusNotFound, Code: apierr.CodeNotFound, Message: fmt.Sprintf(
			"the archive of report %s is missing from the appliance's reports directory; request a new one", rep.ID)}
	}
	if err != nil {
		return nil, fmt.Errorf("open report %s: %w", rep.ID, err)
	}
	st, err := f.Stat()
	if err == nil && st.Size() != rep.SizeBytes {
		err = fmt.Errorf("report file %s has %d bytes; %d were written", path, st.Size(), rep.SizeBytes)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return &File{Report: rep, Zip: f, Size: st.Size()}, nil
}

// unavailable is the error of a download of a report that has no file to
// serve, or nil for a READY one.
func unavailable(r *Report) error {
	rep := r.Record
	switch rep.Status {
	case storage.ReportReady:
		return nil
	case storage.ReportPending:
		issue := fmt.Sprintf("report %s is being written (job %s); download it once report.ready is sent or GET /reports/%s says READY",
			rep.ID, rep.JobID, rep.ID)
		e := apierr.Conflict(apierr.DetailReportNotReady, "reportId", issue)
		e.RetryAfter = 2
		return e
	case storage.ReportFailed:
		issue := fmt.Sprintf("report %s failed (job %s) and has no archive; request a new one", rep.ID, rep.JobID)
		if r.Job != nil && r.Job.Error != nil {
			issue += ": " + r.Job.Error.Message
		}
		return apierr.Conflict(apierr.DetailReportFailed, "reportId", issue)
	default: // EXPIRED
		return &apierr.Error{Status: apierr.StatusNotFound, Code: apierr.CodeNotFound, Message: fmt.Sprintf(
			"the archive of report %s was deleted when it expired (reports.retention); request a new one", rep.ID)}
	}
}

// path is the path of a report's zip.
func (s *Service) path(id string) string { return filepath.Join(s.o.Dir, id+".zip") }

// errNothingToExpire rolls back a sweep that found nothing, so that an idle
// appliance writes nothing.
var errNothingToExpire = errors.New("no report to expire")

// Sweep marks EXPIRED, in every tenant, the READY reports written longer
// than the retention ago and deletes their files; it does nothing when
// files are kept for good. The records are changed first: a crash in
// between leaves a file that nothing serves, never a READY report without
// its file. It returns how many reports expired, and the store's error;
// a file it cannot delete is logged (and left to the operator).
func (s *Service) Sweep(ctx context.Context) (int, error) {
	if s.o.Retention <= 0 {
		return 0, nil
	}
	var expired []storage.TenantReport
	err := s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		var err error
		if expired, err = tx.ExpireReports(tx.Now().Add(-s.o.Retention)); err == nil && len(expired) == 0 {
			err = errNothingToExpire
		}
		return err
	})
	if errors.Is(err, errNothingToExpire) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("expire reports: %w", err)
	}
	for _, e := range expired {
		path := s.path(e.Report.ID)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.o.Logger.Warn().Err(err).Str("report_id", e.Report.ID).Str("file", path).Msg("delete expired report")
			continue
		}
		s.o.Logger.Info().Str("report_id", e.Report.ID).Str("tenant", e.Tenant.String()).Msg("report expired; its file is deleted")
	}
	return len(expired), nil
}
