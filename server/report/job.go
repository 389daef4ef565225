package report

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// runArchive is the archive_report job: it writes a report's zip
// (writeFile) and then, in one transaction, marks the report READY with
// the zip's SHA-256 and size, records the job's result, publishes
// report.ready and completes the job. The file is in place before that
// transaction commits; a crash before it commits runs the job again, which
// writes the archive again from the start. A failure to write fails the
// job and the report (the cause is logged, not sent: it names files of the
// appliance).
func (s *Service) runArchive(ctx context.Context, t storage.Tenant, job *storage.Job, input []byte) error {
	var in jobInput
	if err := json.Unmarshal(input, &in); err != nil || in.ReportID == "" {
		return fmt.Errorf("archive job %s: bad input %s", job.ID, input)
	}
	work.Note(ctx, func(c zerolog.Context) zerolog.Context { return c.Str("report_id", in.ReportID) })
	var rep *storage.Report
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		rep, err = tx.FindReport(t, in.ReportID)
		return err
	})
	if err != nil {
		return fmt.Errorf("report %s of job %s: %w", in.ReportID, job.ID, err)
	}
	sum, err := s.writeFile(ctx, t, rep)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // cut off by shutdown: the job runs again on the next start
		}
		return s.fail(ctx, t, job, rep, err)
	}
	err = s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		now := tx.Now()
		rep.Status, rep.SHA256, rep.SizeBytes, rep.CompletedAt = storage.ReportReady, sum.sha256, sum.size, &now
		if err := tx.PutReport(t, rep); err != nil {
			return err
		}
		data := event.ReportReadyData{ReportID: rep.ID, SHA256: sum.sha256, SizeBytes: sum.size, DownloadPath: s.o.DownloadPath(rep.ID)}
		result, err := storage.MarshalJSON(data)
		if err != nil {
			return err
		}
		if err := work.AddResult(tx, t, job, 0, storage.ReportReady, result); err != nil {
			return err
		}
		job.Progress.Processed, job.Progress.Succeeded = 1, 1
		if _, _, err := s.o.Events.Publish(tx, t, event.ReportReady, data); err != nil {
			return err
		}
		return work.Complete(tx, t, job)
	})
	if err != nil && ctx.Err() == nil {
		// The job fails: its file must not outlive it.
		os.Remove(s.path(rep.ID))
	}
	return err
}

// fail records a report's failure and fails its job (JOB_FAILED,
// job.failed), taking it off the queue; if that cannot be recorded, the
// runner fails the job with cause.
func (s *Service) fail(ctx context.Context, t storage.Tenant, job *storage.Job, rep *storage.Report, cause error) error {
	s.o.Logger.Error().Err(cause).Str("job_id", job.ID).Str("report_id", rep.ID).Msg("archive report failed")
	err := s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		rep.Status = storage.ReportFailed
		if err := tx.PutReport(t, rep); err != nil {
			return err
		}
		return s.o.Jobs.Fail(tx, t, job, storage.JobError{Code: apierr.JobFailed, Message: fmt.Sprintf(
			"the archive of report %s could not be written; the appliance's log has the cause (job %s)", rep.ID, job.ID)})
	})
	if err != nil {
		return cause
	}
	return nil
}

// fileSum is the SHA-256 (hex) and size of a written zip.
type fileSum struct {
	sha256 string
	size   int64
}

// writeFile writes a report's zip to its file in the reports directory,
// through a temporary file renamed into place once complete and synced: a
// crash never leaves half an archive under the final name. Temporary files
// of an earlier, interrupted run are removed first.
func (s *Service) writeFile(ctx context.Context, t storage.Tenant, rep *storage.Report) (fileSum, error) {
	if err := os.MkdirAll(s.o.Dir, 0o700); err != nil {
		return fileSum{}, fmt.Errorf("create reports dir: %w", err)
	}
	path := s.path(rep.ID)
	leftovers, _ := filepath.Glob(path + ".*") // <id>.zip.tmp-*, <id>.zip.spool-*
	for _, f := range leftovers {
		os.Remove(f)
	}
	var sum fileSum
	_, err := storage.WriteFileAtomic(path, func(w io.Writer) (int64, error) {
		h := sha256.New()
		var n countingWriter
		if err := s.writeArchive(ctx, t, rep, io.MultiWriter(w, h, &n)); err != nil {
			return 0, err
		}
		sum = fileSum{sha256: hex.EncodeToString(h.Sum(nil)), size: n.n}
		return n.n, nil
	})
	return sum, err
}
