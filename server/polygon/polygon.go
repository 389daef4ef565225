// Package polygon owns a tenant's plots of land: it checks a GeoJSON
// FeatureCollection and queues the job that screens it; the job screens
// the features against the environment's reference layers a chunk at a
// time (resuming after a crash where it stopped, one screening at a time),
// records each plot with its evidence document anchored in the tenant's
// ledger, and fires polygon.verified and polygon.failed. It serves the
// recorded plots and their evidence with its ledger proof, verifies an
// evidence document against the ledger, and deletes a plot no batch uses.
package polygon

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/plotfile"
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
	// Index returns an environment's reference layers as they stand now;
	// a job screens with the index it finds when it (re)starts.
	Index func(storage.Environment) *geo.Index
	// Rules are the thresholds plots are judged by.
	Rules geo.Rules
	// AppVersion is the appliance's version, recorded in each evidence
	// document.
	AppVersion string
	// MaxFeatures is how many features one collection may hold.
	MaxFeatures int
	// Now is the clock plots are screened by; time.Now when nil.
	Now func() time.Time
	// ObserveScreening, when set, is told of each plot screened once its
	// result is recorded: the environment, the plot's status (COMPLIANT,
	// HIGH_RISK or FAILED) and how long judging it took.
	ObserveScreening func(env storage.Environment, status string, took time.Duration)
}

// Service screens plots and serves them.
type Service struct {
	o Options
	// slot lets one job screen at a time: each uses every CPU already,
	// and jobs side by side would only add up their memory.
	slot chan struct{}
}

// New returns the service and registers its screening job with o.Jobs.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	s := &Service{o: o, slot: make(chan struct{}, 1)}
	o.Jobs.Handle(work.PolygonIngestion, s.runJob)
	return s
}

// Submission is a collection Check accepted, ready to be queued.
type Submission struct {
	body     []byte
	features int
}

// FeatureCount is how many features the collection holds.
func (sub *Submission) FeatureCount() int { return sub.features }

// Check validates the body of a POST /polygons request, a plot file of
// format f (a GeoJSON FeatureCollection, or a file plotfile converts to
// one; sheet is the workbook sheet to read, "" for the first), as a
// whole, and counts its features. Nothing decoded is kept: the job
// decodes the GeoJSON again, a chunk at a time. It returns every problem
// of the file at once (geo.Problems, a 400 through apierr.From), in the
// file's own terms for a converted file (rows[12].latitude), a 400
// MALFORMED_JSON for an empty body, and a 413 PAYLOAD_TOO_LARGE for more
// than MaxFeatures features.
func (s *Service) Check(body []byte, f plotfile.Format, sheet string) (*Submission, error) {
	count := 0
	c, err := s.read(body, f, sheet, geo.ParseOptions{Each: func(geo.Feature) error { count++; return nil }})
	if err != nil {
		return nil, err
	}
	return &Submission{body: c.GeoJSON, features: count}, nil
}

// read converts a plot file to GeoJSON and parses it with opts, with
// Check's errors.
func (s *Service) read(body []byte, f plotfile.Format, sheet string, opts geo.ParseOptions) (*plotfile.Converted, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		what := "a GeoJSON FeatureCollection"
		if f != plotfile.GeoJSON {
			what = "a plot file (" + string(f) + ")"
		}
		return nil, apierr.Validation(apierr.Detail{Code: apierr.DetailMalformedJSON, Field: "body",
			Issue: "request body is empty; " + what + " is required"})
	}
	max := s.o.MaxFeatures
	opts.MaxFeatures = max
	c, err := plotfile.Convert(f, body, plotfile.Options{MaxFeatures: max, Sheet: sheet})
	if err == nil {
		_, err = geo.ParseFeatureCollection(c.GeoJSON, opts)
		// The converted file's problems in its own terms.
		var ps geo.Problems
		if errors.As(err, &ps) {
			err = c.Problems(ps)
		}
	} else if ps := (geo.Problems)(nil); errors.As(err, &ps) {
		for i := range ps {
			if ps[i].Path == "sheet" { // the workbook has no such sheet
				ps[i].Path = "query.sheet"
			}
		}
	}
	if errors.Is(err, geo.ErrTooManyFeatures) {
		return nil, &apierr.Error{Status: apierr.StatusPayloadTooLarge, Code: apierr.CodePayloadTooLarge,
			Message: fmt.Sprintf("a request may hold at most %d features; split the collection", max),
			Details: []apierr.Detail{{Code: apierr.DetailInvalidValue, Field: "features",
				Issue: fmt.Sprintf("more than %d features (limits.max_features)", max)}}}
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Submit queues one polygon_ingestion job for all the features of sub, in
// the caller's transaction; the body is kept with the job until the job
// ends. It fails only when the store does.
func (s *Service) Submit(tx *storage.Tx, t storage.Tenant, sub *Submission) (*storage.Job, error) {
	return s.o.Jobs.Enqueue(tx, t, work.PolygonIngestion, sub.features, sub.body)
}
