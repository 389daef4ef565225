package report

import (
	"bufio"
	"context"
	"fmt"
	"io"
)

// PathStatementReports is the folder of the statements' PDF reports: one
// <ddsId>.pdf per statement of dds.jsonl, in its order (or <ddsId>.txt
// saying it could not be made).
const PathStatementReports = "reports/"

// reportMissing is the note in place of a report that could not be made.
const reportMissing = `The PDF report of due-diligence statement %s could not be made when this
archive was written; the appliance's log says why. The statement's records
are in dds.jsonl and dds-ledger.jsonl; GET /declarations/dds/%s/report.pdf
makes its report again.
`

// archiveStatementReports writes the PDF report of each statement whose ID
// is a line of ids, one at a time: a report is rendered, written and let
// go before the next is rendered, so the job holds one in memory however
// many statements the period has. It does nothing without
// Options.StatementReport.
func (s *Service) archiveStatementReports(ctx context.Context, snap *snapshot, z *archive, ids *spool) error {
	if s.o.StatementReport == nil {
		return nil
	}
	if err := ids.rewind(); err != nil {
		return err
	}
	sc := bufio.NewScanner(ids.f)
	for sc.Scan() {
		if err := ctx.Err(); err != nil {
			return err
		}
		id := sc.Text()
		name := PathStatementReports + id + ".pdf"
		body, err := s.o.StatementReport(ctx, snap.t, id)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// One report that cannot be made does not cost the archive its
			// records: a note takes its place, the log says why (its
			// cause may name the appliance's files, which the archive
			// does not).
			s.o.Logger.Warn().Err(err).Str("dds_id", id).Msg("archive: a statement's PDF report could not be made; a note takes its place")
			name, body = PathStatementReports+id+".txt", []byte(fmt.Sprintf(reportMissing, id, id))
		}
		if err := z.add(name, func(w io.Writer) error {
			_, err := w.Write(body)
			return err
		}); err != nil {
			return err
		}
	}
	return sc.Err()
}
