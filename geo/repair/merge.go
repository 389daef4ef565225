package repair

import (
	"fmt"

	"github.com/eudr/eudr/geo"
	"github.com/peterstace/simplefeatures/geom"
)

// union merges parts that overlap into the outline of their union, with
// github.com/peterstace/simplefeatures (a pure Go overlay that nodes and
// snaps near-coincident vertices; the appliance measures overlaps with it
// too). Each result polygon is its exterior followed by its holes (spaces
// the parts enclose without covering), on the micro-degree grid.
func union(parts []ring) ([][]ring, error) {
	polys := make([]geom.Polygon, len(parts))
	for i, r := range parts {
		xy := make([]float64, 0, 2*len(r)+2)
		for _, p := range r.positions() {
			xy = append(xy, p[0], p[1])
		}
		polys[i] = geom.NewPolygon([]geom.LineString{geom.NewLineString(geom.NewSequence(xy, geom.DimXY))})
	}
	u, err := geom.UnaryUnion(geom.NewMultiPolygon(polys).AsGeometry())
	if err != nil {
		return nil, fmt.Errorf("union of the parts: %w", err)
	}
	var out [][]ring
	add := func(p geom.Polygon) {
		if p.IsEmpty() {
			return
		}
		rings := []ring{ringOf(p.ExteriorRing())}
		for i := range p.NumInteriorRings() {
			rings = append(rings, ringOf(p.InteriorRingN(i)))
		}
		out = append(out, rings)
	}
	switch {
	case u.IsPolygon():
		p, _ := u.AsPolygon()
		add(p)
	case u.IsMultiPolygon():
		m, _ := u.AsMultiPolygon()
		for i := range m.NumPolygons() {
			add(m.PolygonN(i))
		}
	default:
		return nil, fmt.Errorf("union of the parts is a %s", u.Type())
	}
	return out, nil
}

// ringOf puts a simplefeatures ring on the grid, without its closing repeat.
func ringOf(l geom.LineString) ring {
	seq := l.Coordinates()
	r := make(ring, 0, seq.Length())
	for i := range seq.Length() {
		xy := seq.GetXY(i)
		r = append(r, pt{geo.MicroDegrees(xy.X), geo.MicroDegrees(xy.Y)})
	}
	r, _ = dropRepeats(r)
	return r
}
