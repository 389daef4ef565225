package geo

import (
	"math"

	"github.com/peterstace/simplefeatures/geom"
	"github.com/tidwall/geojson/geometry"
	"github.com/tidwall/rtree"
)

// LayerKind is what a reference layer records.
type LayerKind string

// Kinds of reference layer (DESIGN.md, Screening).
const (
	// DeforestationAfterCutoff maps forest lost after 2020-12-31.
	DeforestationAfterCutoff LayerKind = "deforestation"
	// ProtectedArea maps protected areas.
	ProtectedArea LayerKind = "protected_area"
	// ForestCover2020 maps forest as it stood at the end of 2020.
	ForestCover2020 LayerKind = "forest_cover_2020"
)

// Layer is a reference layer as a plain value: what it is, where it came
// from, the areas it has data for, and its features.
type Layer struct {
	ID      string
	Name    string
	Kind    LayerKind
	Version string
	Source  string
	SHA256  string // hex SHA-256 of the layer as imported
	// Coverage is the areas the layer has data for. Empty means the layer
	// covers no plot: the extent of its features is not coverage (no
	// deforestation found is not the same as no data).
	Coverage []Polygon
	Features []LayerFeature
}

// LayerFeature is one feature of a reference layer: a polygon or
// multipolygon, its parts exterior ring first. Parts may overlap each other
// and other features of the layer; overlap is measured on their union.
type LayerFeature struct {
	ID       string
	Polygons []Polygon
}

// Index holds reference layers for screening: R-trees over the bounding
// boxes of their features and of their coverage polygons. It is built once
// by NewIndex and never changed, so it is safe for concurrent use. The
// layers must not be modified while the Index is in use.
type Index struct {
	layers   []*Layer
	features rtree.RTree // values: *indexed, one per feature
	coverage rtree.RTree // values: *indexed, one per coverage polygon
}

// indexed is an R-tree entry: a feature or coverage polygon of the layer
// numbered layer, ready for clipping.
type indexed struct {
	layer int
	id    string // the feature's ID; empty for coverage
	g     geom.Geometry
	parts []*geometry.Poly // for the containsRect shortcut
}

// containsRect reports whether one part of e contains the rectangle lo-hi
// (boundary included). It is a shortcut: false sends the caller to exact
// clipping, so only a true answer must be right.
func (e *indexed) containsRect(lo, hi [2]float64) bool {
	r := geometry.Rect{Min: geometry.Point{X: lo[0], Y: lo[1]}, Max: geometry.Point{X: hi[0], Y: hi[1]}}
	for _, p := range e.parts {
		if p.ContainsRect(r) {
			return true
		}
	}
	return false
}

func newIndexed(layer int, id string, ps []Polygon) (e *indexed, lo, hi [2]float64, ok bool) {
	g, lo, hi, ok := toGeom(ps)
	if !ok {
		return nil, lo, hi, false
	}
	e = &indexed{layer: layer, id: id, g: g}
	for _, p := range ps {
		if len(p) > 0 && len(p[0]) >= 3 {
			e.parts = append(e.parts, toPoly(p))
		}
	}
	return e, lo, hi, true
}

// NewIndex returns an index over layers, in that order: Screen reports them
// in the same order. Nil layers, parts without an exterior ring, and
// features without parts are skipped. Layer geometry is taken as valid
// (simple rings, holes inside their exterior); it is not checked here.
// Longitudes are taken as they are: a feature crossing the antimeridian must
// be split in two.
func NewIndex(layers ...*Layer) *Index {
	ix := &Index{}
	for li, l := range layers {
		if l == nil {
			continue
		}
		ix.layers = append(ix.layers, l)
		li = len(ix.layers) - 1
		for _, f := range l.Features {
			if e, lo, hi, ok := newIndexed(li, f.ID, f.Polygons); ok {
				ix.features.Insert(lo, hi, e)
			}
		}
		for _, p := range l.Coverage {
			if e, lo, hi, ok := newIndexed(li, "", []Polygon{p}); ok {
				ix.coverage.Insert(lo, hi, e)
			}
		}
	}
	return ix
}

// Layers returns the indexed layers in the order Screen reports them.
func (ix *Index) Layers() []*Layer { return append([]*Layer(nil), ix.layers...) }

// toGeom converts polygons to a simplefeatures geometry (a Polygon for one
// part, else a MultiPolygon) and returns its bounding box. ok is false when
// no part has an exterior ring of at least 3 corners.
func toGeom(ps []Polygon) (g geom.Geometry, lo, hi [2]float64, ok bool) {
	lo = [2]float64{math.Inf(1), math.Inf(1)}
	hi = [2]float64{math.Inf(-1), math.Inf(-1)}
	polys := make([]geom.Polygon, 0, len(ps))
	for _, p := range ps {
		if len(p) == 0 || len(p[0]) < 3 {
			continue
		}
		rings := make([]geom.LineString, 0, len(p))
		for _, r := range p {
			if len(r) < 3 {
				continue
			}
			rings = append(rings, toLineString(r))
		}
		for _, c := range p[0] {
			lo[0], lo[1] = min(lo[0], c[0]), min(lo[1], c[1])
			hi[0], hi[1] = max(hi[0], c[0]), max(hi[1], c[1])
		}
		polys = append(polys, geom.NewPolygon(rings))
	}
	switch len(polys) {
	case 0:
		return geom.Geometry{}, lo, hi, false
	case 1:
		return polys[0].AsGeometry(), lo, hi, true
	}
	return geom.NewMultiPolygon(polys).AsGeometry(), lo, hi, true
}

// toLineString converts a ring, closing it if it is not closed.
func toLineString(r Ring) geom.LineString {
	n := len(r)
	closed := r[0] == r[n-1]
	if !closed {
		n++
	}
	xy := make([]float64, 0, 2*n)
	for _, c := range r {
		xy = append(xy, c[0], c[1])
	}
	if !closed {
		xy = append(xy, r[0][0], r[0][1])
	}
	return geom.NewLineString(geom.NewSequence(xy, geom.DimXY))
}

// fromGeom returns the polygons of g (parts of a MultiPolygon or
// GeometryCollection; lines and points are dropped) as GeoJSON rings.
func fromGeom(g geom.Geometry) []Polygon {
	var out []Polygon
	for _, part := range g.Dump() {
		p, ok := part.AsPolygon()
		if !ok || p.IsEmpty() {
			continue
		}
		rings := p.DumpRings()
		poly := make(Polygon, len(rings))
		for i, ls := range rings {
			seq := ls.Coordinates()
			r := make(Ring, seq.Length())
			for j := range r {
				xy := seq.GetXY(j)
				r[j] = Position{xy.X, xy.Y}
			}
			poly[i] = r
		}
		out = append(out, poly)
	}
	return out
}

// areaOf returns the geodesic area in hectares of the polygons of g.
func areaOf(g geom.Geometry) float64 {
	var ha float64
	for _, p := range fromGeom(g) {
		rings := make([][][2]float64, len(p))
		for i, r := range p {
			rings[i] = r
		}
		ha += PolygonArea(rings)
	}
	return ha
}
