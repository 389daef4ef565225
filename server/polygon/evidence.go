package polygon

import (
	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/repair"
	"github.com/eudr/eudr/storage"
)

// Evidence is a plot's evidence document: how it was judged, recorded
// when it was screened and never changed. GET
// /polygons/{polygonId}/evidence answers it with its ledger proof added.
type Evidence struct {
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
	Risk          *Risk             `json:"risk"`
	Rules         EvidenceRules     `json:"rules"`
	Layers        []EvidenceLayer   `json:"layers"`
	Overlaps      []EvidenceOverlap `json:"overlaps"`
	// Rasters is what each raster layer measured on the plot, and
	// LossInForest the forest lost after the cutoff they found (null when
	// no loss-year layer covers the plot).
	Rasters      []EvidenceRaster `json:"rasters"`
	LossInForest *EvidenceLoss    `json:"lossInForest"`
	// CountryCheck is how producerCountry was checked against where the
	// plot lies; absent when the plot FAILED for its geometry first (and
	// from evidence recorded before the check).
	CountryCheck *EvidenceCountry `json:"countryCheck,omitempty"`
	// Repair is what was repaired in the plot before it was screened,
	// for a plot sent with ?repair=true (absent otherwise).
	Repair        *EvidenceRepair `json:"repair,omitempty"`
	EngineVersion string          `json:"engineVersion"`
	AppVersion    string          `json:"appVersion"`
	ScreenedAt    string          `json:"screenedAt"`
}

// Risk is a screened plot's measured overlaps and risk score.
type Risk struct {
	DeforestedHa  float64 `json:"deforestedHa"`
	DeforestedPct float64 `json:"deforestedPct"`
	ProtectedHa   float64 `json:"protectedHa"`
	ProtectedPct  float64 `json:"protectedPct"`
	RiskScore     int     `json:"riskScore"`
}

// EvidenceRules are the thresholds the plot was judged by.
type EvidenceRules struct {
	MaxRiskScore        int     `json:"maxRiskScore"`
	OverlapThresholdPct float64 `json:"overlapThresholdPct"`
	LossThresholdPct    float64 `json:"lossThresholdPct"`
	LossThresholdHa     float64 `json:"lossThresholdHa"`
	AreaTolerancePct    float64 `json:"areaTolerancePct"`
	// Cutoff is the EUDR cutoff date: loss after it counts.
	Cutoff string `json:"cutoff"`
}

// EvidenceRaster is what one raster layer measured on the plot.
type EvidenceRaster struct {
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
	Values       []EvidenceValue `json:"values"`
	// Sampled: the plot holds no pixel centre and was measured as the
	// pixel under a point inside each of its parts.
	Sampled bool `json:"sampled"`
	// MeasuredHa is forest (forest-2020), loss after the cutoff wherever
	// it is (loss-year) or alerts (alerts); MeasuredPct of the plot.
	MeasuredHa  float64 `json:"measuredHa"`
	MeasuredPct float64 `json:"measuredPct"`
	// LossByYear is a loss-year layer's loss per year (empty for the
	// other kinds).
	LossByYear []EvidenceYear `json:"lossByYear"`
}

// EvidenceValue is the plot's pixels of one value.
type EvidenceValue struct {
	Value  int     `json:"value"`
	Pixels int     `json:"pixels"`
	Ha     float64 `json:"ha"`
}

// EvidenceYear is the plot's loss in one year.
type EvidenceYear struct {
	Year   int     `json:"year"`
	Pixels int     `json:"pixels"`
	Ha     float64 `json:"ha"`
}

// EvidenceLoss is forest standing in 2020 lost after the cutoff, from a
// loss-year layer and a forest-2020 layer (null when none covers the plot).
type EvidenceLoss struct {
	LossLayerID   string  `json:"lossLayerId"`
	ForestLayerID *string `json:"forestLayerId"`
	Pixels        int     `json:"pixels"`
	Ha            float64 `json:"ha"`
	Pct           float64 `json:"pct"`
}

// EvidenceCountry is the check of the plot's producerCountry against the
// country boundaries.
type EvidenceCountry struct {
	ProducerCountry string `json:"producerCountry"`
	// Outcome is IN_COUNTRY, OUTSIDE (the plot FAILED) or NO_BOUNDARY (the
	// boundaries have none for the code: not checked).
	Outcome string `json:"outcome"`
	// FoundIn are the countries holding the part outside; [] at sea or
	// when not OUTSIDE.
	FoundIn    []string `json:"foundIn"`
	BufferM    float64  `json:"bufferM"`
	Boundaries string   `json:"boundaries"`
}

// EvidenceLayer is a reference layer the plot was measured against, and
// whether it has data for the whole plot.
type EvidenceLayer struct {
	LayerID string `json:"layerId"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
	Source  string `json:"source"`
	SHA256  string `json:"sha256"`
	Covered bool   `json:"covered"`
}

// EvidenceOverlap is an overlap of positive area (for points: a point
// inside) with one layer's features.
type EvidenceOverlap struct {
	LayerID    string   `json:"layerId"`
	Kind       string   `json:"kind"`
	OverlapHa  float64  `json:"overlapHa"`
	OverlapPct float64  `json:"overlapPct"`
	FeatureIDs []string `json:"featureIds"`
}

// evidence makes the evidence document of a plot screened with outcome o.
func (sc screening) evidence(p *storage.Polygon, o geo.Outcome, inputSHA256 string) Evidence {
	ev := Evidence{PolygonID: p.ID, JobID: p.JobID, FeatureIndex: p.FeatureIndex, InputSHA256: inputSHA256,
		EUDRStatus: p.Status, FailureReason: storage.Optional(p.FailureReason), FailureDetail: storage.Optional(p.FailureDetail),
		AreaHa: p.AreaHa, Risk: RiskOf(p.Risk),
		Rules: EvidenceRules{MaxRiskScore: sc.rules.MaxRiskScore, OverlapThresholdPct: sc.rules.OverlapThresholdPct,
			LossThresholdPct: sc.rules.LossThresholdPct, LossThresholdHa: sc.rules.LossThresholdHa,
			AreaTolerancePct: 100 * sc.rules.AreaTolerance, Cutoff: geo.CutoffDate},
		Layers: []EvidenceLayer{}, Overlaps: []EvidenceOverlap{}, Rasters: []EvidenceRaster{},
		EngineVersion: geo.EngineVersion, AppVersion: sc.appVersion, ScreenedAt: storage.FormatTime(p.ScreenedAt)}
	// o.Layers is in index order, one entry per layer, when the plot was
	// screened at all.
	for i, lr := range o.Layers {
		l := sc.layers[i]
		ev.Layers = append(ev.Layers, EvidenceLayer{LayerID: l.ID, Name: l.Name, Kind: string(l.Kind),
			Version: l.Version, Source: l.Source, SHA256: l.SHA256, Covered: lr.Covered})
		if len(lr.FeatureIDs) > 0 {
			ev.Overlaps = append(ev.Overlaps, EvidenceOverlap{LayerID: l.ID, Kind: string(l.Kind),
				OverlapHa: lr.OverlapHa, OverlapPct: lr.OverlapPct, FeatureIDs: lr.FeatureIDs})
		}
	}
	for i, rr := range o.Rasters {
		ev.Rasters = append(ev.Rasters, evidenceRasterOf(sc.rasters[i], rr))
	}
	if c := o.Country; c != nil {
		ev.CountryCheck = &EvidenceCountry{ProducerCountry: c.Country, Outcome: c.Outcome, FoundIn: c.FoundIn,
			BufferM: geo.CountryBufferM, Boundaries: geo.CountryBoundaries}
		if ev.CountryCheck.FoundIn == nil {
			ev.CountryCheck.FoundIn = []string{}
		}
	}
	if l := o.Loss; l != nil {
		ev.LossInForest = &EvidenceLoss{LossLayerID: l.LossLayerID, ForestLayerID: storage.Optional(l.ForestLayerID),
			Pixels: l.Pixels, Ha: l.Ha, Pct: l.Pct}
	}
	return ev
}

// RiskOf is a stored plot's risk as evidence and the API show it; nil
// (null) for a plot that was not screened (FAILED).
func RiskOf(r *storage.PolygonRisk) *Risk {
	if r == nil {
		return nil
	}
	return &Risk{DeforestedHa: r.DeforestedHa, DeforestedPct: r.DeforestedPct,
		ProtectedHa: r.ProtectedHa, ProtectedPct: r.ProtectedPct, RiskScore: r.RiskScore}
}

func evidenceRasterOf(l *geo.RasterLayer, rr geo.RasterResult) EvidenceRaster {
	n, _ := rr.Stats.Total()
	er := EvidenceRaster{LayerID: l.ID, Name: l.Name, Kind: string(l.Kind), Version: l.Version, Source: l.Source,
		SHA256: l.SHA256, Covered: rr.Covered, Tiles: rr.Tiles, Pixels: n, NoDataPixels: rr.Stats.NoDataPixels,
		Values: []EvidenceValue{}, LossByYear: []EvidenceYear{}, Sampled: rr.Sampled, MeasuredHa: rr.Ha, MeasuredPct: rr.Pct}
	if er.Tiles == nil {
		er.Tiles = []string{}
	}
	for v, px := range rr.Stats.Pixels {
		if px == 0 {
			continue
		}
		er.Values = append(er.Values, EvidenceValue{Value: v, Pixels: px, Ha: rr.Stats.Ha[v]})
		if l.Kind == geo.LossYear && v > 0 {
			er.LossByYear = append(er.LossByYear, EvidenceYear{Year: 2000 + v, Pixels: px, Ha: rr.Stats.Ha[v]})
		}
	}
	return er
}

// EvidenceRepair is what a repair changed in a plot before it was
// screened: the plot's inputSha256 is of the repaired feature, and
// originalSha256 of the feature as sent, so that an auditor holding either
// can match it.
type EvidenceRepair struct {
	OriginalSHA256 string             `json:"originalSha256"`
	Changes        []repair.Change    `json:"changes"`
	Unrepaired     *repair.Unrepaired `json:"unrepaired"`
}

// evidenceRepairOf is a feature's repair as its evidence records it; a
// feature the repair did not list (not reached) records none.
func evidenceRepairOf(r *FeatureRepair) *EvidenceRepair {
	if r == nil {
		return nil
	}
	changes := r.Changes
	if changes == nil {
		changes = []repair.Change{}
	}
	return &EvidenceRepair{OriginalSHA256: r.OriginalSHA256, Changes: changes, Unrepaired: r.Unrepaired}
}
