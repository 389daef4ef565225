package polygon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// ChunkSize is how many features one transaction of a screening job
// records. A job resumed after a crash goes on after the last recorded
// chunk. Chunks are recorded once their window (ScreenWindow) is
// screened, which takes about a second.
const ChunkSize = 200

// ScreenWindow is how many features a job screens before it records them,
// ChunkSize at a time. A window is screened in geo.ScreeningOrder, north
// to south, so that the plots needing the same strips and tiles of the
// raster layers follow each other however the job lists them, and each
// block is decoded about once rather than once for every plot on it the
// cache has forgotten: on 2,000 plots listed at random, 2.6 blocks decoded
// a plot against 15 in the job's order (14.7 ordered 200 at a time). Its
// outcomes, a few KB a plot, are held until recorded.
const ScreenWindow = 10 * ChunkSize

// Result is one entry of a polygon job's results (docs/jobs.md), as
// the job records it and GET /jobs/{jobId} shows it, with the ledger entry
// that anchored the screening: the job lists the proofs of a page of its
// results from them. (Earlier versions listed a polygon job's entries in
// the job record instead; work.Find gives their results their entry.)
type Result struct {
	FeatureIndex  int     `json:"featureIndex"`
	ExternalID    *string `json:"externalId"`
	PolygonID     string  `json:"polygonId"`
	EUDRStatus    string  `json:"eudrStatus"`
	FailureReason *string `json:"failureReason"`
	LedgerIndex   int64   `json:"ledgerIndex"`
}

// screened is one feature's outcome, ready to be recorded.
type screened struct {
	polygon *storage.Polygon
	detail  storage.PolygonDetail
	// evidenceSHA256 is the hex SHA-256 of detail.Evidence, which the
	// ledger entry records.
	evidenceSHA256 string
	took           time.Duration // judging the plot
}

// screening is what a polygon job judges its features with: the
// environment's reference layers and the configured rules, as they stood
// when the job (re)started.
type screening struct {
	ix         *geo.Index
	layers     []*geo.Layer       // ix.Layers()
	rasters    []*geo.RasterLayer // ix.Rasters()
	rules      geo.Rules
	appVersion string
	log        func(index int, cause any)
	// repairs are the repairs of a repaired collection's features, by
	// index; nil for a collection queued as sent.
	repairs map[int]*FeatureRepair
}

// runJob screens the features of a POST /polygons request, chunk by chunk
// from the first one not yet recorded, one job at a time (s.slot). Each
// chunk's polygons, results and progress are one transaction; the last
// one also completes the job and publishes its events. Polygon IDs come
// from the job and the feature index, so screening a feature again writes
// the same polygon. The body is the request as queued, by this version or
// an earlier one.
func (s *Service) runJob(ctx context.Context, t storage.Tenant, job *storage.Job, body []byte) error {
	select {
	case s.slot <- struct{}{}:
		defer func() { <-s.slot }()
	case <-ctx.Done():
		return ctx.Err()
	}
	repairs, body, err := splitRepaired(body)
	if err != nil {
		return err
	}
	ix := s.o.Index(t.Env)
	sc := screening{repairs: repairs, ix: ix, layers: ix.Layers(), rasters: ix.Rasters(), rules: s.o.Rules, appVersion: s.o.AppVersion,
		log: func(index int, cause any) {
			s.o.Logger.Error().Str("job_id", job.ID).Int("feature_index", index).Interface("panic", cause).
				Msg("screening a feature panicked; it is FAILED SCREENING_ERROR")
		}}
	// The body is decoded as it is screened, a window at a time, so a large
	// collection is never held decoded whole; features already recorded
	// (before a crash) are skipped. A ring across the antimeridian, which
	// Check refuses, can only be in a request queued before an upgrade:
	// its feature is FAILED CROSSES_ANTIMERIDIAN rather than the whole job
	// lost.
	window := make([]geo.Feature, 0, ScreenWindow)
	flush := func(last bool) error {
		out := sc.screenAll(ctx, job.ID, window, s.o.Now())
		if err := ctx.Err(); err != nil {
			return err
		}
		window = window[:0]
		for len(out) > 0 || last {
			chunk := out[:min(len(out), ChunkSize)]
			out = out[len(chunk):]
			end := last && len(out) == 0
			if err := s.o.DB.Update(ctx, func(tx *storage.Tx) error {
				return s.record(tx, t, job, chunk, end)
			}); err != nil {
				return err
			}
			if s.o.ObserveScreening != nil {
				for _, sc := range chunk {
					s.o.ObserveScreening(t.Env, sc.polygon.Status, sc.took)
				}
			}
			if end {
				break
			}
		}
		return nil
	}
	seen := 0
	_, err = geo.ParseFeatureCollection(body, geo.ParseOptions{DeferAntimeridian: true, Each: func(f geo.Feature) error {
		seen++
		if f.Index < job.Progress.Processed {
			return nil
		}
		if window = append(window, f); len(window) == ScreenWindow {
			return flush(false)
		}
		return nil
	}})
	if err != nil {
		return fmt.Errorf("screen the job's request: %w", err)
	}
	if seen != job.Progress.Total {
		return fmt.Errorf("the job's request holds %d features, the job %d", seen, job.Progress.Total)
	}
	return flush(true)
}

// record records one chunk of a job's outcomes and its progress, each
// anchored in the tenant's ledger under a checkpoint signed in the same
// transaction; the last chunk completes the job and publishes
// polygon.verified and polygon.failed for the whole job, from its
// recorded results.
func (s *Service) record(tx *storage.Tx, t storage.Tenant, job *storage.Job, out []screened, last bool) error {
	for _, sc := range out {
		p := sc.polygon
		e, err := anchor.Append(tx, t, anchor.ScreeningEntry{Type: anchor.EntryPolygonScreened, PolygonID: p.ID, JobID: job.ID,
			EUDRStatus: p.Status, FailureReason: storage.Optional(p.FailureReason), EvidenceSHA256: sc.evidenceSHA256})
		if err != nil {
			return err
		}
		p.LedgerIndex = &e.Index
		if err := tx.PutPolygon(t, p, &sc.detail); err != nil {
			return err
		}
		result, err := storage.MarshalJSON(Result{FeatureIndex: p.FeatureIndex, ExternalID: storage.Optional(p.ExternalID),
			PolygonID: p.ID, EUDRStatus: p.Status, FailureReason: storage.Optional(p.FailureReason), LedgerIndex: e.Index})
		if err != nil {
			return err
		}
		if err := work.AddResult(tx, t, job, p.FeatureIndex, p.Status, result); err != nil {
			return err
		}
		job.Progress.Processed++
		if p.Status == geo.StatusFailed {
			job.Progress.Failed++
		} else {
			job.Progress.Succeeded++
		}
	}
	if len(out) > 0 {
		if _, err := s.o.Ledger.Sign(tx, t); err != nil {
			return err
		}
	}
	if !last {
		return tx.PutJob(t, job)
	}
	results, err := tx.FindJobResults(t, job.ID)
	if err != nil {
		return err
	}
	verified := event.PolygonVerifiedData{JobID: job.ID, PolygonIDs: []string{}}
	failed := event.PolygonFailedData{JobID: job.ID, PolygonIDs: []string{}, Reasons: map[string]string{}}
	for _, raw := range results {
		var r Result
		if err := json.Unmarshal(raw, &r); err != nil {
			return fmt.Errorf("read result of job %s: %w", job.ID, err)
		}
		if r.EUDRStatus == geo.StatusFailed {
			failed.PolygonIDs = append(failed.PolygonIDs, r.PolygonID)
			if r.FailureReason != nil {
				failed.Reasons[r.PolygonID] = *r.FailureReason
			}
		} else {
			verified.PolygonIDs = append(verified.PolygonIDs, r.PolygonID)
		}
	}
	if len(verified.PolygonIDs) > 0 {
		if _, _, err := s.o.Events.Publish(tx, t, event.PolygonVerified, verified); err != nil {
			return err
		}
	}
	if len(failed.PolygonIDs) > 0 {
		if _, _, err := s.o.Events.Publish(tx, t, event.PolygonFailed, failed); err != nil {
			return err
		}
	}
	return work.Complete(tx, t, job)
}

// screenAll screens feats on every CPU, in geo.ScreeningOrder, and returns
// their outcomes in feats' order. It stops early (leaving the rest zero)
// when ctx is done; the caller checks ctx.
func (sc screening) screenAll(ctx context.Context, jobID string, feats []geo.Feature, now time.Time) []screened {
	out := make([]screened, len(feats))
	order := sc.ix.ScreeningOrder(feats)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(feats)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				k := int(next.Add(1)) - 1
				if k >= len(order) {
					return
				}
				i := order[k]
				out[i] = sc.screen(ctx, jobID, feats[i], now)
			}
		}()
	}
	wg.Wait()
	return out
}

// screen judges one feature and makes its polygon record, evidence and job
// result. A panic in the geometry code fails the plot, not the appliance.
func (sc screening) screen(ctx context.Context, jobID string, f geo.Feature, now time.Time) screened {
	start := time.Now()
	o, err := sc.assess(ctx, f)
	took := time.Since(start)
	if err != nil {
		// Invalid rules (the config is checked at start: judge nothing
		// rather than judge wrongly), or ctx done, in which case screenAll's
		// caller drops the chunk and the job resumes later.
		o = geo.Outcome{Status: geo.StatusFailed, Reason: geo.ReasonScreeningError, Detail: err.Error()}
	}
	var feature bytes.Buffer
	if err := json.Compact(&feature, f.Raw); err != nil {
		feature.Reset()
		feature.Write(f.Raw) // not reached: the parser accepted it as JSON
	}
	sum := sha256.Sum256(feature.Bytes())
	p := f.Properties
	pol := &storage.Polygon{ID: storage.PolygonID(jobID, f.Index), JobID: jobID, FeatureIndex: f.Index,
		ExternalID: p.ExternalID, SupplierID: p.SupplierID, Commodity: p.Commodity,
		ProducerCountry: p.ProducerCountry, ProducerName: p.ProducerName, ProductionPlace: p.ProductionPlace,
		DeclaredAreaHa: p.Area, GeometryType: f.Geometry.Type, AreaHa: o.AreaHa, Status: o.Status,
		FailureReason: o.Reason, FailureDetail: o.Detail, ScreenedAt: now}
	if o.Status != geo.StatusFailed {
		pol.Risk = &storage.PolygonRisk{DeforestedHa: o.Risk.DeforestedHa, DeforestedPct: o.Risk.DeforestedPct,
			ProtectedHa: o.Risk.ProtectedHa, ProtectedPct: o.Risk.ProtectedPct, RiskScore: o.Risk.RiskScore}
	}
	// The evidence is kept in canonical form (ledger.CanonicalJSON), so
	// that its hash in the ledger entry can be recomputed from its JSON.
	ev := sc.evidence(pol, o, hex.EncodeToString(sum[:]))
	if sc.repairs != nil {
		ev.Repair = evidenceRepairOf(sc.repairs[f.Index])
	}
	evidence, err := ledger.CanonicalJSON(ev)
	if err != nil {
		panic(fmt.Sprintf("encode evidence: %v", err)) // plain values: cannot fail
	}
	evSum := sha256.Sum256(evidence)
	return screened{polygon: pol, detail: storage.PolygonDetail{Feature: feature.Bytes(), Evidence: evidence},
		evidenceSHA256: hex.EncodeToString(evSum[:]), took: took}
}

// assess runs geo.Assess, turning a panic into FAILED SCREENING_ERROR.
func (sc screening) assess(ctx context.Context, f geo.Feature) (o geo.Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			sc.log(f.Index, p)
			o, err = geo.Outcome{Status: geo.StatusFailed, Reason: geo.ReasonScreeningError,
				Detail: "the plot could not be screened because of an internal error; it has been logged"}, nil
		}
	}()
	return geo.Assess(ctx, f, sc.ix, sc.rules)
}
