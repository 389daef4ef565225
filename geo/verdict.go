package geo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// EngineVersion names the validation and screening rules of this package.
// It is recorded in each plot's evidence and changes whenever a change here
// could give some plot another outcome, so that an auditor can tell which
// rules judged a plot.
const EngineVersion = "eudr-geo/2"

// Statuses Assess gives a plot (eudrStatus, docs/screening.md).
const (
	StatusCompliant = "COMPLIANT"
	StatusHighRisk  = "HIGH_RISK"
	StatusFailed    = "FAILED"
)

// Reasons Assess gives beyond those of Check. AREA_MISMATCH and
// NO_REFERENCE_COVERAGE make a plot FAILED; the others make it HIGH_RISK.
const (
	// ReasonAreaMismatch: a polygon's declared properties.area is more than
	// Rules.AreaTolerance off its computed geodesic area.
	ReasonAreaMismatch = "AREA_MISMATCH"
	// ReasonNoReferenceCoverage: no deforestation layer has data for the
	// whole plot. The appliance never calls a plot compliant without data.
	ReasonNoReferenceCoverage = "NO_REFERENCE_COVERAGE"
	// ReasonDeforestationAfterCutoff: the plot overlaps forest lost after
	// 2020-12-31 by more than Rules.OverlapThresholdPct of its area.
	ReasonDeforestationAfterCutoff = "DEFORESTATION_AFTER_CUTOFF"
	// ReasonProtectedAreaOverlap: the plot overlaps a protected area by
	// more than Rules.OverlapThresholdPct of its area.
	ReasonProtectedAreaOverlap = "PROTECTED_AREA_OVERLAP"
	// ReasonRiskScoreAboveMax: no overlap exceeds the threshold and the plot
	// overlaps no deforestation or protected area at all, but its risk
	// score (from 2020 forest cover) is above Rules.MaxRiskScore. Only
	// reachable with MaxRiskScore below its default.
	ReasonRiskScoreAboveMax = "RISK_SCORE_ABOVE_MAX"
	// ReasonScreeningError: the overlap could not be measured because the
	// clipping library failed on numerically degenerate input. The plot is
	// FAILED rather than judged without a measurement.
	ReasonScreeningError = "SCREENING_ERROR"
)

// Rules are the screening thresholds (config: risk.*). Start from
// DefaultRules: the zero value demands declared areas be exact.
type Rules struct {
	// MaxRiskScore is the highest risk score a COMPLIANT plot may have
	// (risk.max_score), 0 to 100. Default 50: a plot wholly in 2020 forest
	// with no deforestation or protected area scores 50 and passes.
	MaxRiskScore int
	// OverlapThresholdPct is the share of the plot, in percent (0 to under
	// 100), that a deforestation or protected-area overlap must exceed to
	// make the plot HIGH_RISK. Default 0: any overlap of positive area
	// (a deforestation-free product is one with no deforestation, and
	// vector layers are taken as drawn; Whisp's 10 % allows for the noise
	// of 10 m rasters, an operator importing such data may raise it).
	OverlapThresholdPct float64
	// LossThresholdPct and LossThresholdHa bound the forest lost after the
	// cutoff that raster layers may find on a plot (LossInForest): more
	// than either makes it HIGH_RISK DEFORESTATION_AFTER_CUTOFF. Defaults
	// 10 % (the FAO Whisp method, which allows for the noise of 10-30 m
	// pixels along a plot's edge) and 0.5 ha.
	LossThresholdPct float64
	LossThresholdHa  float64
	// AreaTolerance is how far, as a fraction of the computed geodesic
	// area, a polygon's declared area may be off before the plot is
	// FAILED AREA_MISMATCH (docs/screening.md: more than 10 % off). Default
	// 0.10.
	AreaTolerance float64
}

// DefaultRules returns the documented defaults (the risk.* settings of
// config.example.yaml, docs/screening.md): MaxRiskScore 50,
// OverlapThresholdPct 0 (any overlap), AreaTolerance 0.10; and for raster
// layers LossThresholdPct 10 and LossThresholdHa 0.5.
func DefaultRules() Rules {
	return Rules{MaxRiskScore: 50, OverlapThresholdPct: 0, LossThresholdPct: 10, LossThresholdHa: 0.5, AreaTolerance: 0.10}
}

// Validate reports rules out of range: MaxRiskScore outside 0-100,
// OverlapThresholdPct outside [0, 100), AreaTolerance negative or NaN.
func (r Rules) Validate() error {
	var errs []error
	if r.MaxRiskScore < 0 || r.MaxRiskScore > 100 {
		errs = append(errs, fmt.Errorf("max risk score %d is not between 0 and 100", r.MaxRiskScore))
	}
	if !(r.OverlapThresholdPct >= 0 && r.OverlapThresholdPct < 100) {
		errs = append(errs, fmt.Errorf("overlap threshold %v %% is not at least 0 and below 100", r.OverlapThresholdPct))
	}
	if !(r.LossThresholdPct >= 0 && r.LossThresholdPct < 100) {
		errs = append(errs, fmt.Errorf("loss threshold %v %% is not at least 0 and below 100", r.LossThresholdPct))
	}
	if !(r.LossThresholdHa >= 0) || math.IsInf(r.LossThresholdHa, 1) {
		errs = append(errs, fmt.Errorf("loss threshold %v ha is not a finite area of at least 0", r.LossThresholdHa))
	}
	if !(r.AreaTolerance >= 0) || math.IsInf(r.AreaTolerance, 1) {
		errs = append(errs, fmt.Errorf("area tolerance %v is not a finite fraction of at least 0", r.AreaTolerance))
	}
	if len(errs) > 0 {
		return fmt.Errorf("geo: rules: %w", errors.Join(errs...))
	}
	return nil
}

// Outcome is the verdict on one plot.
type Outcome struct {
	Status string // StatusCompliant, StatusHighRisk or StatusFailed
	// Reason is the failureReason: a Reason* code, or "" when COMPLIANT.
	Reason string
	// Detail says why in a sentence for the client; "" when COMPLIANT.
	Detail string
	// AreaHa is the plot's area in hectares: for polygons the geodesic
	// area of each polygon, summed; for points the declared area times
	// the number of points. 0 when Check fails.
	AreaHa float64
	// Risk is the measured overlap and score. Set for COMPLIANT and
	// HIGH_RISK only; zero when FAILED.
	Risk Risk
	// Country is how producerCountry was checked against where the plot
	// lies; nil when the plot FAILED before (Check), or when the index does
	// not check it.
	Country *CountryCheck
	// Layers is what screening found per indexed layer, in NewIndex order:
	// the evidence. Nil when the plot FAILED before screening.
	Layers []LayerResult
	// Rasters is what each raster layer found, in WithRasters order, and
	// Loss the forest lost after the cutoff they measured (nil when no
	// loss-year layer covers the plot).
	Rasters []RasterResult
	Loss    *LossInForest
}

// Risk is a screened plot's overlaps and risk score (a polygon's risk,
// docs/screening.md). For each kind the overlap is the largest among the
// layers of that kind (layers are separate sources, not unioned with each
// other).
type Risk struct {
	DeforestedHa  float64
	DeforestedPct float64 // of the plot, 0-100
	ProtectedHa   float64
	ProtectedPct  float64 // of the plot, 0-100
	// RiskScore is 0-100, see RiskScore.
	RiskScore int
}

// RiskScore returns the risk score of a plot with deforestedPct,
// protectedPct and forestPct percent of its area overlapping deforestation
// after the cutoff, protected areas and 2020 forest cover, under an
// overlap threshold of thresholdPct:
//
//	deforestedPct > threshold   100
//	protectedPct  > threshold   75 + protectedPct/4               (75-100)
//	otherwise                   min(50, forestPct/2 + deforestedPct + protectedPct/2)
//
// rounded half away from zero and kept within 0-100. It never decreases
// when an overlap grows: the last line is at most 50, below either of the
// first two. Under the default threshold of 0 the last line is forest
// cover alone: a plot wholly in 2020 forest scores 50.
func RiskScore(deforestedPct, protectedPct, forestPct, thresholdPct float64) int {
	d, p, f := clampPct(deforestedPct), clampPct(protectedPct), clampPct(forestPct)
	var s float64
	switch {
	case d > thresholdPct:
		s = 100
	case p > thresholdPct:
		s = 75 + p/4
	default:
		s = min(50, f/2+d+p/2)
	}
	return int(min(100, max(0, math.Round(s))))
}

func clampPct(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return min(100, max(0, v))
}

// Assess judges a plot from ParseFeatureCollection or ParseFeature against
// the layers of ix under rules r. The first of these decides:
//
//  1. Check: FAILED with its reason (SELF_INTERSECTION and the rest).
//  2. Country, when ix checks it (WithBorders, as the appliance's indexes
//     all do): FAILED OUTSIDE_PRODUCER_COUNTRY when a part of the plot
//     lies more than borders.BufferM from the boundary of its
//     producerCountry (checkCountry): screening a plot in the wrong place
//     says nothing true about it, and its declared area is no better.
//  3. Area: for polygons, FAILED AREA_MISMATCH when properties.area is
//     given and differs from the computed geodesic area by more than
//     r.AreaTolerance times it.
//  4. Coverage: FAILED NO_REFERENCE_COVERAGE unless some deforestation
//     layer covers the whole plot (Result.Covered) or some loss-year
//     raster layer does (RasterResult.Covered). Protected-area, forest
//     and alert layers are not required.
//  5. HIGH_RISK DEFORESTATION_AFTER_CUTOFF when a deforestation overlap
//     exceeds r.OverlapThresholdPct of the plot, or when the forest lost
//     after the cutoff that raster layers find (LossInForest) exceeds
//     r.LossThresholdPct of the plot or r.LossThresholdHa; then HIGH_RISK
//     PROTECTED_AREA_OVERLAP for a protected-area overlap.
//  6. HIGH_RISK when the risk score exceeds r.MaxRiskScore, with reason
//     DEFORESTATION_AFTER_CUTOFF if the plot overlaps any deforestation
//     or lost forest, else PROTECTED_AREA_OVERLAP if any protected area,
//     else RISK_SCORE_ABOVE_MAX.
//  7. COMPLIANT.
//
// Overlaps count from layers of the kind whether or not they cover the
// plot: coverage only decides whether absence of evidence means anything.
// The risk score is the larger of RiskScore over the vector overlaps and
// RiskScore over the raster loss alone under its own threshold (100 past
// either loss threshold); forest cover is the larger of the vector and raster
// measurements. A nil ix has no layers. When screening fails (see
// ScreenArea) or a raster tile cannot be read, the plot is FAILED
// SCREENING_ERROR, and so when the embedded country boundaries cannot be
// read (not reached: they are tested). The error is non-nil, and the Outcome empty, only when
// r is invalid or ctx is done (checked once the plot has been screened).
func Assess(ctx context.Context, f Feature, ix *Index, r Rules) (Outcome, error) {
	if err := r.Validate(); err != nil {
		return Outcome{}, err
	}
	if reason, detail := Check(f); reason != "" {
		return failed(reason, detail), nil
	}

	g := f.Geometry
	var out Outcome
	var pointHa float64
	if a := f.Properties.Area; a != nil && g.IsPoint() {
		pointHa = *a
	}
	out.AreaHa = plotArea(g, pointHa)
	if ix != nil && ix.borders {
		cc, detail, err := checkCountry(g, f.Properties.ProducerCountry)
		if err != nil {
			o := failed(ReasonScreeningError, "the country boundaries could not be read ("+err.Error()+")")
			o.AreaHa = out.AreaHa
			return o, nil
		}
		out.Country = &cc
		if cc.Outcome == CountryOutside {
			o := failed(ReasonOutsideProducerCountry, detail)
			o.AreaHa, o.Country = out.AreaHa, out.Country
			return o, nil
		}
	}
	if !g.IsPoint() {
		if a := f.Properties.Area; a != nil {
			if off := math.Abs(*a - out.AreaHa); !(off <= r.AreaTolerance*out.AreaHa) {
				o := failed(ReasonAreaMismatch, fmt.Sprintf(
					"the declared area %s ha is %s off the computed geodesic area %s ha (WGS84 ellipsoid); at most %s is allowed: correct properties.area or the boundary",
					formatHa(*a), formatShare(off, out.AreaHa), formatHa(out.AreaHa), formatPct(100*r.AreaTolerance)))
				o.AreaHa, o.Country = out.AreaHa, out.Country
				return o, nil
			}
		}
	}

	if ix == nil {
		ix = NewIndex()
	}
	res, err := ix.screenArea(g, pointHa, out.AreaHa)
	if err != nil {
		o := failed(ReasonScreeningError, "the overlap with the reference layers could not be measured ("+err.Error()+
			"); simplify the boundary and submit the plot again")
		o.AreaHa, o.Country = out.AreaHa, out.Country
		return o, nil
	}
	plotHa := res.PlotHa
	if !g.IsPoint() && plotHa == 0 {
		plotHa = out.AreaHa
	}
	rasters, loss, err := ix.screenRasters(ctx, g, pointHa, plotHa)
	if ctxErr := ctx.Err(); ctxErr != nil {
		return Outcome{}, ctxErr
	}
	if err != nil {
		o := failed(ReasonScreeningError, "the reference rasters could not be read ("+err.Error()+
			"); the operator must repair or import the layer again before the plot is submitted again")
		o.AreaHa, o.Country = out.AreaHa, out.Country
		return o, nil
	}
	out.Layers, out.Rasters, out.Loss = res.Layers, rasters, loss
	if !res.Covered(DeforestationAfterCutoff) && loss == nil {
		out.Status, out.Reason = StatusFailed, ReasonNoReferenceCoverage
		out.Detail = "no deforestation reference layer (vector deforestation or raster loss-year) has data for the whole plot, and a plot is never called compliant without data"
		return out, nil
	}

	defo, dl := ix.largest(res, DeforestationAfterCutoff)
	prot, pl := ix.largest(res, ProtectedArea)
	forest, _ := ix.largest(res, ForestCover2020)
	forestPct := forest.OverlapPct
	for _, rr := range rasters {
		if rr.Kind == Forest2020 && rr.Covered {
			forestPct = max(forestPct, rr.Pct)
		}
	}
	out.Risk = Risk{
		DeforestedHa: defo.OverlapHa, DeforestedPct: defo.OverlapPct,
		ProtectedHa: prot.OverlapHa, ProtectedPct: prot.OverlapPct,
		RiskScore: RiskScore(defo.OverlapPct, prot.OverlapPct, forestPct, r.OverlapThresholdPct),
	}
	lossOver := false
	if loss != nil {
		lossOver = loss.Pct > r.LossThresholdPct || loss.Ha > r.LossThresholdHa
		out.Risk.RiskScore = max(out.Risk.RiskScore, RiskScore(loss.Pct, 0, forestPct, r.LossThresholdPct))
		if lossOver {
			out.Risk.RiskScore = 100
		}
		if loss.Pct > out.Risk.DeforestedPct || loss.Pct == out.Risk.DeforestedPct && loss.Ha > out.Risk.DeforestedHa {
			out.Risk.DeforestedHa, out.Risk.DeforestedPct = loss.Ha, loss.Pct
		}
	}
	t := r.OverlapThresholdPct
	switch {
	case defo.OverlapPct > t:
		out.Status, out.Reason = StatusHighRisk, ReasonDeforestationAfterCutoff
		out.Detail = overlapDetail(defo, dl, "forest lost after 2020-12-31", t)
	case lossOver:
		out.Status, out.Reason = StatusHighRisk, ReasonDeforestationAfterCutoff
		out.Detail = ix.lossDetail(*loss, r)
	case prot.OverlapPct > t:
		out.Status, out.Reason = StatusHighRisk, ReasonProtectedAreaOverlap
		out.Detail = overlapDetail(prot, pl, "a protected area", t)
	case out.Risk.RiskScore > r.MaxRiskScore:
		out.Status = StatusHighRisk
		switch {
		case defo.OverlapPct > 0 || loss != nil && loss.Ha > 0:
			out.Reason = ReasonDeforestationAfterCutoff
		case prot.OverlapPct > 0:
			out.Reason = ReasonProtectedAreaOverlap
		default:
			out.Reason = ReasonRiskScoreAboveMax
		}
		out.Detail = fmt.Sprintf(
			"risk score %d is above the maximum %d (deforestation after 2020-12-31 %s, protected area %s, forest cover 2020 %s of the plot)",
			out.Risk.RiskScore, r.MaxRiskScore, formatPct(out.Risk.DeforestedPct), formatPct(prot.OverlapPct), formatPct(forestPct))
	default:
		out.Status = StatusCompliant
	}
	return out, nil
}

// plotArea is a plot's area in hectares: for polygons the geodesic area of
// each polygon, summed; for points pointHa per point.
func plotArea(g Geometry, pointHa float64) float64 {
	if g.IsPoint() {
		return pointHa * float64(len(g.Points))
	}
	var ha float64
	for _, p := range g.Polygons {
		rings := make([][][2]float64, len(p))
		for i, ring := range p {
			rings[i] = ring
		}
		ha += PolygonArea(rings)
	}
	return ha
}

// lossDetail says how much forest the raster layers found lost, and where.
func (ix *Index) lossDetail(loss LossInForest, r Rules) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s ha (%s of the plot) ", formatHa(loss.Ha), formatPct(loss.Pct))
	if f := ix.raster(loss.ForestLayerID); f != nil {
		fmt.Fprintf(&b, "of forest in 2020 (raster layer %s) ", layerName(f.Name, f.Version))
	} else {
		b.WriteString("of tree cover (no forest-2020 layer covers the plot) ")
	}
	l := ix.raster(loss.LossLayerID)
	fmt.Fprintf(&b, "was lost after 2020-12-31 according to raster layer %s", layerName(l.Name, l.Version))
	fmt.Fprintf(&b, "; more than the %s or %s ha allowed", formatPct(r.LossThresholdPct), formatHa(r.LossThresholdHa))
	return b.String()
}

func layerName(name, version string) string {
	if version == "" {
		return strconv.Quote(name)
	}
	return strconv.Quote(name) + " version " + version
}

// raster returns the raster layer with the ID, or nil.
func (ix *Index) raster(id string) *RasterLayer {
	for _, l := range ix.rasters {
		if l.ID == id {
			return l
		}
	}
	return nil
}

func failed(reason, detail string) Outcome {
	return Outcome{Status: StatusFailed, Reason: reason, Detail: detail}
}

// largest returns the result with the largest overlap among the layers of
// kind k, and its layer (nil and a zero result if none overlaps).
func (ix *Index) largest(res Result, k LayerKind) (LayerResult, *Layer) {
	var best LayerResult
	var layer *Layer
	for i, lr := range res.Layers {
		if lr.Kind == k && (layer == nil || lr.OverlapPct > best.OverlapPct ||
			lr.OverlapPct == best.OverlapPct && lr.OverlapHa > best.OverlapHa) {
			best, layer = lr, ix.layers[i]
		}
	}
	return best, layer
}

func overlapDetail(lr LayerResult, l *Layer, what string, thresholdPct float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s ha (%s of the plot) overlaps %s in reference layer %q", formatHa(lr.OverlapHa), formatPct(lr.OverlapPct), what, l.Name)
	if l.Version != "" {
		fmt.Fprintf(&b, " version %s", l.Version)
	}
	if len(lr.FeatureIDs) > 0 {
		fmt.Fprintf(&b, " (features %s)", strings.Join(lr.FeatureIDs, ", "))
	}
	if thresholdPct > 0 {
		fmt.Fprintf(&b, "; more than the %s allowed", formatPct(thresholdPct))
	}
	return b.String()
}

func formatHa(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

func formatPct(v float64) string {
	if v > 0 && v < 0.01 {
		return "under 0.01 %"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + " %"
}

func formatShare(part, whole float64) string {
	if whole <= 0 {
		return "infinitely"
	}
	return formatPct(100 * part / whole)
}
