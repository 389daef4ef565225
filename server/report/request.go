package report

import (
	"fmt"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// MaxYears bounds the period of one report: it spans less than MaxYears
// years (the OpenAPI document states it too).
const MaxYears = 10

// ArchiveRequest is the body of POST /reports/archive.
type ArchiveRequest struct {
	From *string `json:"from"`
	To   *string `json:"to"`
}

// Validate reads the period and makes the report it asks for, From and To
// set. from and to are RFC 3339 date-times or dates (whole UTC days), both
// included, read as storage.ParseTimeBound reads them: to covers the whole day
// of a date, the whole millisecond of a date-time; in UTC, both must fall
// within the years 0000 to 9999. It returns every problem found as one
// apierr 400.
func (req *ArchiveRequest) Validate() (*storage.Report, error) {
	var probs apierr.Problems
	read := func(field string, v *string, end bool) (time.Time, bool) {
		if v == nil || *v == "" {
			probs.Add(apierr.DetailRequired, field, "is required")
			return time.Time{}, false
		}
		t, err := storage.ParseTimeBound(*v, end)
		if err != nil {
			probs.Add(apierr.DetailInvalidValue, field, fmt.Sprintf(
				"must be an RFC 3339 date-time (2026-01-31T00:00:00Z) or a date (2026-01-31), not %q", *v))
			return time.Time{}, false
		}
		// An offset can carry a bound out of the years a stored time may
		// have (JSON times are years 0000 to 9999).
		if t = t.UTC(); t.Year() < 0 || t.Year() > 9999 {
			probs.Add(apierr.DetailInvalidValue, field, fmt.Sprintf("must fall within the years 0000 to 9999 in UTC, not %q", *v))
			return time.Time{}, false
		}
		return t, true
	}
	from, okFrom := read("from", req.From, false)
	to, okTo := read("to", req.To, true)
	if okFrom && okTo {
		switch {
		case to.Before(from):
			probs.Add(apierr.DetailInvalidValue, "to", "must not be before from")
		case !to.Before(from.AddDate(MaxYears, 0, 0)):
			probs.Add(apierr.DetailInvalidValue, "to", fmt.Sprintf("the period may span at most %d years; request several reports", MaxYears))
		}
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	return &storage.Report{From: from, To: to}, nil
}
