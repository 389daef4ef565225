package geo

import (
	"github.com/peterstace/simplefeatures/geom"
	"github.com/tidwall/rtree"
)

// LayerKind is what a reference layer records.
type LayerKind string

// Kinds of reference layer (docs/layers.md).
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
	rasters  []*RasterLayer
	// borders: Assess checks producerCountry against the country
	// boundaries (WithBorders).
	borders bool
}

// indexed is an R-tree entry: a feature or coverage polygon of the layer
// numbered layer, ready for clipping.
type indexed struct {
	layer int
	id    string // the feature's ID; empty for coverage
	g     geom.Geometry
}

// containsRect reports whether one part of e holds the rectangle lo-hi in
// its interior. It is a shortcut that spares clipping a plot against a
// feature or coverage polygon that holds it whole, so only a true answer
// must be right: anything touching the rectangle's boundary answers false.
// It walks the part's rings once, without building anything.
func (e *indexed) containsRect(lo, hi [2]float64) bool {
	for _, p := range polygonsOf(e.g) {
		if rectInPolygon(p, lo, hi) {
			return true
		}
	}
	return false
}

// polygonsOf returns the parts of a Polygon or MultiPolygon geometry.
func polygonsOf(g geom.Geometry) []geom.Polygon {
	if p, ok := g.AsPolygon(); ok {
		return []geom.Polygon{p}
	}
	if mp, ok := g.AsMultiPolygon(); ok {
		out := make([]geom.Polygon, mp.NumPolygons())
		for i := range out {
			out[i] = mp.PolygonN(i)
		}
		return out
	}
	return nil
}

// rectInPolygon reports whether p holds the rectangle lo-hi: no side of any
// ring meets the (closed) rectangle, so the rectangle lies wholly in one
// region of the plane, and a corner of it is inside the exterior ring and
// inside no hole.
func rectInPolygon(p geom.Polygon, lo, hi [2]float64) bool {
	if p.IsEmpty() {
		return false
	}
	rings := make([]geom.Sequence, 0, 1+p.NumInteriorRings())
	rings = append(rings, p.ExteriorRing().Coordinates())
	for i := range p.NumInteriorRings() {
		rings = append(rings, p.InteriorRingN(i).Coordinates())
	}
	for _, r := range rings {
		for i := 1; i < r.Length(); i++ {
			if segmentMeetsRect(r.GetXY(i-1), r.GetXY(i), lo, hi) {
				return false
			}
		}
	}
	corner := geom.XY{X: lo[0], Y: lo[1]}
	if !insideRing(rings[0], corner) {
		return false
	}
	for _, h := range rings[1:] {
		if insideRing(h, corner) {
			return false
		}
	}
	return true
}

// segmentMeetsRect reports whether the segment a-b meets the closed
// rectangle lo-hi: their boxes overlap and the rectangle's corners are not
// all strictly on one side of the segment's line.
func segmentMeetsRect(a, b geom.XY, lo, hi [2]float64) bool {
	if max(a.X, b.X) < lo[0] || min(a.X, b.X) > hi[0] || max(a.Y, b.Y) < lo[1] || min(a.Y, b.Y) > hi[1] {
		return false
	}
	var neg, pos bool
	for _, c := range [4][2]float64{{lo[0], lo[1]}, {hi[0], lo[1]}, {hi[0], hi[1]}, {lo[0], hi[1]}} {
		switch d := (b.X-a.X)*(c[1]-a.Y) - (b.Y-a.Y)*(c[0]-a.X); {
		case d < 0:
			neg = true
		case d > 0:
			pos = true
		default:
			return true // a corner on the line, within the boxes' overlap: treat as meeting
		}
	}
	return neg && pos
}

// insideRing reports whether q is inside the closed ring r (even-odd ray
// casting). q must not lie on r.
func insideRing(r geom.Sequence, q geom.XY) bool {
	in := false
	for i, j := 0, r.Length()-1; i < r.Length(); j, i = i, i+1 {
		a, b := r.GetXY(i), r.GetXY(j)
		if (a.Y > q.Y) != (b.Y > q.Y) && q.X < (b.X-a.X)*(q.Y-a.Y)/(b.Y-a.Y)+a.X {
			in = !in
		}
	}
	return in
}

func newIndexed(layer int, id string, ps []Polygon) (e *indexed, lo, hi [2]float64, ok bool) {
	g, lo, hi, ok := toGeom(ps)
	if !ok {
		return nil, lo, hi, false
	}
	return &indexed{layer: layer, id: id, g: g}, lo, hi, true
}

// NewIndex returns an index over layers, in that order: Screen reports them
// in the same order. Nil layers, parts without an exterior ring, and
// features without parts are skipped. The index keeps what it needs of
// the features, not the layers' Features and Coverage, which the caller
// may drop (a large layer's coordinates are held once, not twice). Layer geometry is taken as valid
// (simple rings, holes inside their exterior); it is not checked here.
// Longitudes are taken as they are: a feature crossing the antimeridian must
// be split in two.
func NewIndex(layers ...*Layer) *Index {
	ix := &Index{}
	for li, l := range layers {
		if l == nil {
			continue
		}
		meta := *l
		meta.Features, meta.Coverage = nil, nil
		ix.layers = append(ix.layers, &meta)
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

// Layers returns the indexed layers in the order Screen reports them,
// without their Features and Coverage.
func (ix *Index) Layers() []*Layer { return append([]*Layer(nil), ix.layers...) }

// toGeom converts polygons to a simplefeatures geometry (a Polygon for one
// part, else a MultiPolygon) and returns its bounding box. ok is false when
// no part has an exterior ring of at least 3 corners.
func toGeom(ps []Polygon) (g geom.Geometry, lo, hi [2]float64, ok bool) {
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
		polys = append(polys, geom.NewPolygon(rings))
	}
	lo, hi, _ = bbox(ps)
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
