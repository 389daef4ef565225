package server

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

// screenChunk is how many features one transaction records. A job resumed
// after a crash goes on after the last recorded chunk; a chunk is small
// enough that progress moves every fraction of a second.
const screenChunk = 200

// featureResult is one entry of a polygon job's results (API.md section 5).
type featureResult struct {
	FeatureIndex  int     `json:"featureIndex"`
	ExternalID    *string `json:"externalId"`
	PolygonID     string  `json:"polygonId"`
	EUDRStatus    string  `json:"eudrStatus"`
	FailureReason *string `json:"failureReason"`
}

// evidenceDocument is what GET /polygons/{polygonId}/evidence answers: how
// a plot was judged, recorded when it was screened and never changed.
type evidenceDocument struct {
	PolygonID    string `json:"polygonId"`
	JobID        string `json:"jobId"`
	FeatureIndex int    `json:"featureIndex"`
	// InputSHA256 is the hex SHA-256 of the feature as sent, with the
	// whitespace between JSON tokens removed.
	InputSHA256   string            `json:"inputSha256"`
	EUDRStatus    string            `json:"eudrStatus"`
	FailureReason *string           `json:"failureReason"`
	FailureDetail *string           `json:"failureDetail"`
	AreaHa        float64           `json:"areaHa"`
	Risk          *riskBody         `json:"risk"`
	Rules         evidenceRules     `json:"rules"`
	Layers        []evidenceLayer   `json:"layers"`
	Overlaps      []evidenceOverlap `json:"overlaps"`
	// Rasters is what each raster layer measured on the plot, and
	// LossInForest the forest lost after the cutoff they found (null when
	// no loss-year layer covers the plot).
	Rasters       []evidenceRaster `json:"rasters"`
	LossInForest  *evidenceLoss    `json:"lossInForest"`
	EngineVersion string           `json:"engineVersion"`
	AppVersion    string           `json:"appVersion"`
	ScreenedAt    string           `json:"screenedAt"`
}

// evidenceRules are the thresholds the plot was judged by.
type evidenceRules struct {
	MaxRiskScore        int     `json:"maxRiskScore"`
	OverlapThresholdPct float64 `json:"overlapThresholdPct"`
	LossThresholdPct    float64 `json:"lossThresholdPct"`
	LossThresholdHa     float64 `json:"lossThresholdHa"`
	AreaTolerancePct    float64 `json:"areaTolerancePct"`
	// Cutoff is the EUDR cutoff date: loss after it counts.
	Cutoff string `json:"cutoff"`
}

// evidenceRaster is what one raster layer measured on the plot.
type evidenceRaster struct {
	LayerID string `json:"layerId"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
	Source  string `json:"source"`
	SHA256  string `json:"sha256"`
	Covered bool   `json:"covered"`
	// Tiles are the tiles the plot touches.
	Tiles []string `json:"tiles"`
	// Pixels counts the plot's pixels (nodata included), NoDataPixels the
	// nodata ones; Values the others by value.
	Pixels       int             `json:"pixels"`
	NoDataPixels int             `json:"noDataPixels"`
	Values       []evidenceValue `json:"values"`
	// Sampled: the plot holds no pixel centre and was measured as the
	// pixel under a point inside each of its parts.
	Sampled bool `json:"sampled"`
	// MeasuredHa is forest (forest-2020), loss after the cutoff wherever
	// it is (loss-year) or alerts (alerts); MeasuredPct of the plot.
	MeasuredHa  float64 `json:"measuredHa"`
	MeasuredPct float64 `json:"measuredPct"`
	// LossByYear is a loss-year layer's loss per year (empty for the
	// other kinds).
	LossByYear []evidenceYear `json:"lossByYear"`
}

// evidenceValue is the plot's pixels of one value.
type evidenceValue struct {
	Value  int     `json:"value"`
	Pixels int     `json:"pixels"`
	Ha     float64 `json:"ha"`
}

// evidenceYear is the plot's loss in one year.
type evidenceYear struct {
	Year   int     `json:"year"`
	Pixels int     `json:"pixels"`
	Ha     float64 `json:"ha"`
}

// evidenceLoss is forest standing in 2020 lost after the cutoff, from a
// loss-year layer and a forest-2020 layer (null when none covers the plot).
type evidenceLoss struct {
	LossLayerID   string  `json:"lossLayerId"`
	ForestLayerID *string `json:"forestLayerId"`
	Pixels        int     `json:"pixels"`
	Ha            float64 `json:"ha"`
	Pct           float64 `json:"pct"`
}

// evidenceLayer is a reference layer the plot was measured against, and
// whether it has data for the whole plot.
type evidenceLayer struct {
	LayerID string `json:"layerId"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
	Source  string `json:"source"`
	SHA256  string `json:"sha256"`
	Covered bool   `json:"covered"`
}

// evidenceOverlap is an overlap of positive area (for points: a point
// inside) with one layer's features.
type evidenceOverlap struct {
	LayerID    string   `json:"layerId"`
	Kind       string   `json:"kind"`
	OverlapHa  float64  `json:"overlapHa"`
	OverlapPct float64  `json:"overlapPct"`
	FeatureIDs []string `json:"featureIds"`
}

// screened is one feature's outcome, ready to be recorded.
type screened struct {
	polygon *storage.Polygon
	detail  storage.PolygonDetail
	// evidenceSHA256 is the hex SHA-256 of detail.Evidence, which the
	// ledger entry records.
	evidenceSHA256 string
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
}

// runPolygonJob screens the features of a POST /polygons request, chunk
// by chunk from the first one not yet recorded, one job at a time
// (screenSlot). Each chunk's polygons,
// results and progress are one transaction; the last one also completes
// the job and publishes its events. Polygon IDs come from the job and the
// feature index, so screening a feature again writes the same polygon.
func (a *App) runPolygonJob(ctx context.Context, t storage.Tenant, job *storage.Job, body []byte) error {
	select {
	case a.screenSlot <- struct{}{}:
		defer func() { <-a.screenSlot }()
	case <-ctx.Done():
		return ctx.Err()
	}
	ix := a.indexFor(t.Env)
	s := screening{ix: ix, layers: ix.Layers(), rasters: ix.Rasters(), rules: a.cfg.Risk.rules(), appVersion: a.version,
		log: func(index int, cause any) {
			a.log.Error().Str("job_id", job.ID).Int("feature_index", index).Interface("panic", cause).
				Msg("screening a feature panicked; it is FAILED SCREENING_ERROR")
		}}
	// The body is decoded as it is screened, a chunk at a time, so a large
	// collection is never held decoded whole; features already recorded
	// (before a crash) are skipped. A ring across the antimeridian, which
	// POST /polygons refuses, can only be in a request queued before an
	// upgrade: its feature is FAILED CROSSES_ANTIMERIDIAN rather than the
	// whole job lost.
	chunk := make([]geo.Feature, 0, screenChunk)
	flush := func(last bool) error {
		out := s.screenAll(ctx, job.ID, chunk, a.now())
		if err := ctx.Err(); err != nil {
			return err
		}
		chunk = chunk[:0]
		return a.db.Update(ctx, func(tx *storage.Tx) error {
			return a.recordScreened(tx, t, job, out, last)
		})
	}
	seen := 0
	_, err := geo.ParseFeatureCollection(body, geo.ParseOptions{DeferAntimeridian: true, Each: func(f geo.Feature) error {
		seen++
		if f.Index < job.Progress.Processed {
			return nil
		}
		if chunk = append(chunk, f); len(chunk) == screenChunk {
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

// recordScreened records one chunk of a job's outcomes and its progress,
// each anchored in the tenant's ledger under a checkpoint signed in the
// same transaction; the last chunk completes the job and publishes
// polygon.verified and polygon.failed for the whole job, from its
// recorded results.
func (a *App) recordScreened(tx *storage.Tx, t storage.Tenant, job *storage.Job, out []screened, last bool) error {
	for _, s := range out {
		p := s.polygon
		e, err := anchor.Append(tx, t, anchor.ScreeningEntry{Type: anchor.EntryPolygonScreened, PolygonID: p.ID, JobID: job.ID,
			EUDRStatus: p.Status, FailureReason: storage.Optional(p.FailureReason), EvidenceSHA256: s.evidenceSHA256})
		if err != nil {
			return err
		}
		p.LedgerIndex = &e.Index
		job.LedgerIndexes = append(job.LedgerIndexes, e.Index)
		if err := tx.PutPolygon(t, p, &s.detail); err != nil {
			return err
		}
		result, err := storage.MarshalJSON(featureResult{FeatureIndex: p.FeatureIndex, ExternalID: storage.Optional(p.ExternalID),
			PolygonID: p.ID, EUDRStatus: p.Status, FailureReason: storage.Optional(p.FailureReason)})
		if err != nil {
			return err
		}
		if err := tx.PutJobResult(t, job.ID, p.FeatureIndex, result); err != nil {
			return err
		}
		job.Progress.Processed++
		if s.polygon.Status == geo.StatusFailed {
			job.Progress.Failed++
		} else {
			job.Progress.Succeeded++
		}
	}
	if len(out) > 0 {
		if _, err := a.ledger.Sign(tx, t); err != nil {
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
		var r featureResult
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
		if _, _, err := a.events.Publish(tx, t, event.PolygonVerified, verified); err != nil {
			return err
		}
	}
	if len(failed.PolygonIDs) > 0 {
		if _, _, err := a.events.Publish(tx, t, event.PolygonFailed, failed); err != nil {
			return err
		}
	}
	return work.Complete(tx, t, job)
}

// screenAll screens feats on every CPU, keeping their order. It stops early
// (leaving the rest zero) when ctx is done; the caller checks ctx.
func (s screening) screenAll(ctx context.Context, jobID string, feats []geo.Feature, now time.Time) []screened {
	out := make([]screened, len(feats))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(feats)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(feats) {
					return
				}
				out[i] = s.screen(ctx, jobID, feats[i], now)
			}
		}()
	}
	wg.Wait()
	return out
}

// screen judges one feature and makes its polygon record, evidence and job
// result. A panic in the geometry code fails the plot, not the appliance.
func (s screening) screen(ctx context.Context, jobID string, f geo.Feature, now time.Time) screened {
	o, err := s.assess(ctx, f)
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
	evidence, err := ledger.CanonicalJSON(s.evidence(pol, o, hex.EncodeToString(sum[:])))
	if err != nil {
		panic(fmt.Sprintf("encode evidence: %v", err)) // plain values: cannot fail
	}
	evSum := sha256.Sum256(evidence)
	return screened{polygon: pol, detail: storage.PolygonDetail{Feature: feature.Bytes(), Evidence: evidence},
		evidenceSHA256: hex.EncodeToString(evSum[:])}
}

// assess runs geo.Assess, turning a panic into FAILED SCREENING_ERROR.
func (s screening) assess(ctx context.Context, f geo.Feature) (o geo.Outcome, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log(f.Index, p)
			o, err = geo.Outcome{Status: geo.StatusFailed, Reason: geo.ReasonScreeningError,
				Detail: "the plot could not be screened because of an internal error; it has been logged"}, nil
		}
	}()
	return geo.Assess(ctx, f, s.ix, s.rules)
}

func (s screening) evidence(p *storage.Polygon, o geo.Outcome, inputSHA256 string) evidenceDocument {
	ev := evidenceDocument{PolygonID: p.ID, JobID: p.JobID, FeatureIndex: p.FeatureIndex, InputSHA256: inputSHA256,
		EUDRStatus: p.Status, FailureReason: storage.Optional(p.FailureReason), FailureDetail: storage.Optional(p.FailureDetail),
		AreaHa: p.AreaHa, Risk: toRiskBody(p.Risk),
		Rules: evidenceRules{MaxRiskScore: s.rules.MaxRiskScore, OverlapThresholdPct: s.rules.OverlapThresholdPct,
			LossThresholdPct: s.rules.LossThresholdPct, LossThresholdHa: s.rules.LossThresholdHa,
			AreaTolerancePct: 100 * s.rules.AreaTolerance, Cutoff: geo.CutoffDate},
		Layers: []evidenceLayer{}, Overlaps: []evidenceOverlap{}, Rasters: []evidenceRaster{},
		EngineVersion: geo.EngineVersion, AppVersion: s.appVersion, ScreenedAt: storage.FormatTime(p.ScreenedAt)}
	// o.Layers is in index order, one entry per layer, when the plot was
	// screened at all.
	for i, lr := range o.Layers {
		l := s.layers[i]
		ev.Layers = append(ev.Layers, evidenceLayer{LayerID: l.ID, Name: l.Name, Kind: string(l.Kind),
			Version: l.Version, Source: l.Source, SHA256: l.SHA256, Covered: lr.Covered})
		if len(lr.FeatureIDs) > 0 {
			ev.Overlaps = append(ev.Overlaps, evidenceOverlap{LayerID: l.ID, Kind: string(l.Kind),
				OverlapHa: lr.OverlapHa, OverlapPct: lr.OverlapPct, FeatureIDs: lr.FeatureIDs})
		}
	}
	for i, rr := range o.Rasters {
		ev.Rasters = append(ev.Rasters, evidenceRasterOf(s.rasters[i], rr))
	}
	if l := o.Loss; l != nil {
		ev.LossInForest = &evidenceLoss{LossLayerID: l.LossLayerID, ForestLayerID: storage.Optional(l.ForestLayerID),
			Pixels: l.Pixels, Ha: l.Ha, Pct: l.Pct}
	}
	return ev
}

func evidenceRasterOf(l *geo.RasterLayer, rr geo.RasterResult) evidenceRaster {
	n, _ := rr.Stats.Total()
	er := evidenceRaster{LayerID: l.ID, Name: l.Name, Kind: string(l.Kind), Version: l.Version, Source: l.Source,
		SHA256: l.SHA256, Covered: rr.Covered, Tiles: rr.Tiles, Pixels: n, NoDataPixels: rr.Stats.NoDataPixels,
		Values: []evidenceValue{}, LossByYear: []evidenceYear{}, Sampled: rr.Sampled, MeasuredHa: rr.Ha, MeasuredPct: rr.Pct}
	if er.Tiles == nil {
		er.Tiles = []string{}
	}
	for v, px := range rr.Stats.Pixels {
		if px == 0 {
			continue
		}
		er.Values = append(er.Values, evidenceValue{Value: v, Pixels: px, Ha: rr.Stats.Ha[v]})
		if l.Kind == geo.LossYear && v > 0 {
			er.LossByYear = append(er.LossByYear, evidenceYear{Year: 2000 + v, Pixels: px, Ha: rr.Stats.Ha[v]})
		}
	}
	return er
}
