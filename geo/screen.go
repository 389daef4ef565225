package geo

import (
	"fmt"
	"slices"

	"github.com/peterstace/simplefeatures/geom"
	"github.com/tidwall/rtree"
)

// Result is what screening found for one plot.
type Result struct {
	// PlotHa is the plot's geodesic area in hectares: for polygons, the area
	// of the union of its parts; for points, pointHa per point.
	PlotHa float64
	// Layers holds one entry per indexed layer, in NewIndex order.
	Layers []LayerResult
}

// LayerResult is the overlap of a plot with one reference layer.
type LayerResult struct {
	LayerID string
	Kind    LayerKind
	// Covered reports whether the layer has data for the whole plot: the
	// plot lies entirely inside the union of the layer's coverage polygons
	// (up to coverageSlackHa), or for points, every point lies inside or on
	// one. A plot partly outside is not covered.
	Covered bool
	// OverlapHa is the geodesic area in hectares of the plot's intersection
	// with the union of the layer's features: features overlapping each
	// other are not counted twice. OverlapPct is it as a percentage of
	// PlotHa, at most 100 (0 when PlotHa is 0; for points, the share of
	// points inside).
	OverlapHa  float64
	OverlapPct float64
	// FeatureIDs are the IDs of the features the plot overlaps with
	// positive area (for points: lies inside or on), sorted, without
	// duplicates. A plot touching a feature along an edge or at a corner
	// does not overlap it.
	FeatureIDs []string
}

// Covered reports whether some layer of kind k covers the whole plot by
// itself. A plot half in one deforestation layer's coverage and half in
// another's is not covered.
func (r Result) Covered(k LayerKind) bool {
	for _, l := range r.Layers {
		if l.Kind == k && l.Covered {
			return true
		}
	}
	return false
}

// coverageSlackHa is the uncovered area a covered plot may have: 0.01 m², a
// rounding sliver where a plot's edge runs along the coverage boundary.
const coverageSlackHa = 1e-6

// Screen measures the plot g against every indexed layer: ScreenArea with
// points counting 0 ha each (OverlapPct is still the share of points
// inside; use ScreenArea with the declared area for hectares).
func (ix *Index) Screen(g Geometry) (Result, error) { return ix.ScreenArea(g, 0) }

// ScreenArea measures the plot g against every indexed layer.
//
// Polygons and MultiPolygons are clipped in the lon/lat plane against each
// feature whose bounding box meets that of one of the plot's polygons
// (candidates from the R-tree, part by part: the two halves of a plot
// split at 180° do not make candidates of the band between them);
// the pieces are unioned per layer and measured with PolygonArea on the
// WGS84 ellipsoid. Edges are taken as straight in lon/lat for clipping and
// as geodesics for area. The two part by at most about L²·tan φ/(8R) across
// an edge of length L at latitude φ (1 cm for 2 km at 10°), so a cut
// across a long edge moves the overlap by a few square metres at most: it
// shows only on slivers a few metres wide.
//
// A Point or MultiPoint is pointHa hectares per point (properties.area,
// each point of a MultiPoint being a plot of that area): a point inside a
// feature or on its boundary overlaps it by pointHa, one outside by 0, and
// OverlapPct is the share of points inside.
//
// The error is non-nil, and the Result empty, when the clipping library
// fails on numerically degenerate input: the plot must then not be called
// compliant.
func (ix *Index) ScreenArea(g Geometry, pointHa float64) (Result, error) {
	return ix.screenArea(g, pointHa, -1)
}

// screenArea is ScreenArea given polygonHa, the geodesic area of g when it
// is a single Polygon, or -1 to compute it here. Assess has computed it
// already (plotArea) from the same rings, and so to the same bit: the
// geodesic ring area was a fifth of the CPU time of screening a plot
// against raster layers when it was computed twice.
func (ix *Index) screenArea(g Geometry, pointHa, polygonHa float64) (Result, error) {
	res := Result{Layers: make([]LayerResult, len(ix.layers))}
	for i, l := range ix.layers {
		res.Layers[i] = LayerResult{LayerID: l.ID, Kind: l.Kind}
	}
	if g.IsPoint() {
		ix.screenPoints(g.Points, pointHa, &res)
		return res, nil
	}
	plot, _, _, ok := toGeom(g.Polygons)
	if !ok {
		return res, nil
	}
	boxes := partBoxes(g.Polygons)
	if len(g.Polygons) > 1 {
		// Parts of a MultiPolygon are validated one by one, not against
		// each other: merge overlapping parts so they count once.
		u, err := geom.UnaryUnion(plot)
		if err != nil {
			return Result{}, fmt.Errorf("geo: union of plot parts: %w", err)
		}
		plot = u
	}
	if len(g.Polygons) == 1 && polygonHa >= 0 {
		res.PlotHa = polygonHa
	} else {
		res.PlotHa = areaOf(plot)
	}

	cands := make([][]candidate, len(ix.layers))
	for _, c := range candidates(&ix.features, boxes) {
		cands[c.e.layer] = append(cands[c.e.layer], c)
	}
	for li, cs := range cands {
		lr := &res.Layers[li]
		var pieces []geom.Geometry
		whole := false // a feature holds the whole plot
		for _, c := range cs {
			e := c.e
			if c.holdsAll(boxes) {
				// The feature holds the bounding box of each part:
				// the overlap is the whole plot.
				pieces = append(pieces, plot)
				whole = true
				lr.FeatureIDs = append(lr.FeatureIDs, e.id)
				continue
			}
			x, err := geom.Intersection(plot, e.g)
			if err != nil {
				return Result{}, fmt.Errorf("geo: intersection with feature %q of layer %q: %w", e.id, lr.LayerID, err)
			}
			if areaOf(x) > 0 {
				pieces = append(pieces, x)
				lr.FeatureIDs = append(lr.FeatureIDs, e.id)
			}
		}
		switch len(pieces) {
		case 0:
		case 1:
			if whole {
				lr.OverlapHa = res.PlotHa // the one piece is the plot
			} else {
				lr.OverlapHa = areaOf(pieces[0])
			}
		default:
			u, err := geom.UnionMany(pieces)
			if err != nil {
				return Result{}, fmt.Errorf("geo: union of overlaps with layer %q: %w", lr.LayerID, err)
			}
			lr.OverlapHa = areaOf(u)
		}
		lr.OverlapPct = pct(lr.OverlapHa, res.PlotHa)
		lr.FeatureIDs = sortedIDs(lr.FeatureIDs)
	}

	covs := make([][]geom.Geometry, len(ix.layers))
	held := make([][]bool, len(ix.layers)) // per layer, the parts' boxes one of its polygons holds
	for _, c := range candidates(&ix.coverage, boxes) {
		li := c.e.layer
		covs[li] = append(covs[li], c.e.g)
		if held[li] == nil {
			held[li] = make([]bool, len(boxes))
		}
		for i, b := range boxes {
			held[li][i] = held[li][i] || c.holds(b)
		}
	}
	for li, h := range held {
		// Each part's box lies inside a coverage polygon: so does the plot.
		res.Layers[li].Covered = h != nil && !slices.Contains(h, false)
	}
	for li, cs := range covs {
		if len(cs) == 0 || res.Layers[li].Covered {
			continue
		}
		var cov geom.Geometry
		if len(cs) == 1 {
			cov = cs[0]
		} else {
			u, err := geom.UnionMany(cs)
			if err != nil {
				return Result{}, fmt.Errorf("geo: union of coverage of layer %q: %w", res.Layers[li].LayerID, err)
			}
			cov = u
		}
		out, err := geom.Difference(plot, cov)
		if err != nil {
			return Result{}, fmt.Errorf("geo: plot outside coverage of layer %q: %w", res.Layers[li].LayerID, err)
		}
		res.Layers[li].Covered = areaOf(out) <= coverageSlackHa
	}
	return res, nil
}

// box is a bounding box: lo its west and south, hi its east and north.
type box struct{ lo, hi [2]float64 }

// partBoxes returns the bounding boxes of the polygons' exterior rings,
// one a part that has one. A plot is screened part by part, not in the box
// round all its parts, which may be far larger than they are: the box of
// the two halves of a plot split at 180° spans the globe.
func partBoxes(ps []Polygon) []box {
	var out []box
	for _, p := range ps {
		if lo, hi, ok := bbox([]Polygon{p}); ok {
			out = append(out, box{lo, hi})
		}
	}
	return out
}

// candidate is an entry of an R-tree found for a plot, with its box.
type candidate struct {
	e   *indexed
	box box
}

// candidates returns the entries of tr whose boxes meet one of boxes, each
// once, in the order first found.
func candidates(tr *rtree.RTree, boxes []box) []candidate {
	var out []candidate
	var seen map[*indexed]bool // for more than one box
	if len(boxes) > 1 {
		seen = make(map[*indexed]bool)
	}
	for _, b := range boxes {
		tr.Search(b.lo, b.hi, func(lo, hi [2]float64, v interface{}) bool {
			e := v.(*indexed)
			if seen != nil {
				if seen[e] {
					return true
				}
				seen[e] = true
			}
			out = append(out, candidate{e, box{lo, hi}})
			return true
		})
	}
	return out
}

// holds reports whether one part of c holds box b in its interior (see
// indexed.containsRect); a box outside c's own is not held, and not walked.
func (c candidate) holds(b box) bool {
	return c.box.lo[0] <= b.lo[0] && c.box.lo[1] <= b.lo[1] && b.hi[0] <= c.box.hi[0] && b.hi[1] <= c.box.hi[1] &&
		c.e.containsRect(b.lo, b.hi)
}

// holdsAll reports whether c holds each of boxes.
func (c candidate) holdsAll(boxes []box) bool {
	for _, b := range boxes {
		if !c.holds(b) {
			return false
		}
	}
	return len(boxes) > 0
}

// screenPoints fills res for a Point or MultiPoint plot.
func (ix *Index) screenPoints(pts []Position, pointHa float64, res *Result) {
	if len(pts) == 0 {
		return
	}
	res.PlotHa = pointHa * float64(len(pts))
	inside := make([]int, len(ix.layers))  // points inside some feature, per layer
	covered := make([]int, len(ix.layers)) // points inside some coverage polygon
	for _, p := range pts {
		pg := geom.XY{X: p[0], Y: p[1]}.AsPoint().AsGeometry()
		seen := make([]bool, len(ix.layers))
		ix.features.Search(p, p, func(_, _ [2]float64, v interface{}) bool {
			e := v.(*indexed)
			if geom.Intersects(pg, e.g) {
				res.Layers[e.layer].FeatureIDs = append(res.Layers[e.layer].FeatureIDs, e.id)
				if !seen[e.layer] {
					seen[e.layer] = true
					inside[e.layer]++
				}
			}
			return true
		})
		clear(seen)
		ix.coverage.Search(p, p, func(_, _ [2]float64, v interface{}) bool {
			e := v.(*indexed)
			if !seen[e.layer] && geom.Intersects(pg, e.g) {
				seen[e.layer] = true
				covered[e.layer]++
			}
			return true
		})
	}
	for i := range res.Layers {
		lr := &res.Layers[i]
		lr.OverlapHa = pointHa * float64(inside[i])
		lr.OverlapPct = pct(float64(inside[i]), float64(len(pts)))
		lr.Covered = covered[i] == len(pts)
		lr.FeatureIDs = sortedIDs(lr.FeatureIDs)
	}
}

// pct returns part as a percentage of whole, in [0, 100]; 0 if whole is 0.
func pct(part, whole float64) float64 {
	if whole <= 0 {
		return 0
	}
	return min(100, max(0, 100*part/whole))
}

func sortedIDs(ids []string) []string {
	slices.Sort(ids)
	return slices.Compact(ids)
}
