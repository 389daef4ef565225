package report

import (
	"bufio"
	"context"
	"fmt"
	"io"
)

// PathStatementReports is the folder of the statements' PDF reports: one
// <ddsId>.pdf per statement of dds.jsonl, in its order.
const PathStatementReports = "reports/"

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
		body, err := s.o.StatementReport(ctx, snap.t, id)
		if err != nil {
			return fmt.Errorf("report of dds %s: %w", id, err)
		}
		if err := z.add(PathStatementReports+id+".pdf", func(w io.Writer) error {
			_, err := w.Write(body)
			return err
		}); err != nil {
			return err
		}
	}
	return sc.Err()
}
