package geo

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/peterstace/simplefeatures/geom"
)

// squares is a MultiPolygon of n squares of side 0.0001° (about 11 m),
// the i-th with its south-west corner at at(i) in units of 0.0001°.
func squares(n int, at func(i int) (x, y int)) Feature {
	polys := make([]Polygon, n)
	for i := range polys {
		x, y := at(i)
		lon, lat := -5.5+float64(x)*1e-4, 6.5+float64(y)*1e-4
		polys[i] = Polygon{{{lon, lat}, {lon + 1e-4, lat}, {lon + 1e-4, lat + 1e-4}, {lon, lat + 1e-4}, {lon, lat}}}
	}
	return Feature{Geometry: Geometry{Type: TypeMultiPolygon, Polygons: polys}, MaxDecimals: 6}
}

// layouts of 2,000 squares: south-west corners by index.
var layouts = map[string]func(i int) (x, y int){
	// Rows of 50, a square apart.
	"apart": func(i int) (int, int) { return 2 * (i % 50), 2 * (i / 50) },
	// The black squares of a chessboard: neighbours touch at corners.
	"chessboard": func(i int) (int, int) { y := i / 25; return 2*(i%25) + y%2, y },
	// One column, a square apart: every part spans the same longitudes.
	"column": func(i int) (int, int) { return 0, 2 * i },
	// One diagonal, corner to corner.
	"diagonal": func(i int) (int, int) { return i, i },
}

func TestCheck_ManyParts(t *testing.T) {
	for name, at := range layouts {
		f := squares(2000, at)
		if reason, detail := Check(f); reason != "" {
			t.Errorf("%s: %s: %s", name, reason, detail)
		}
		// The work grows with the parts, not with their pairs: a budget of
		// 64 per corner (no allowance up front) is enough.
		var ps parts
		var w workspace
		ps.load(&w, f.Geometry.Polygons, asWritten)
		if d, exhausted := ps.find(64 * len(ps.pts)); exhausted || d.kind != 0 {
			t.Errorf("%s: find with a budget of 64 per corner: %+v, exhausted %v", name, d, exhausted)
		}

		// A square more, over the last one, is found and named.
		x, y := at(1999)
		f = squares(2001, func(i int) (int, int) {
			if i == 2000 {
				return x, y
			}
			return at(i)
		})
		f.Geometry.Polygons[2000][0][1][0] += 0.5e-4 // wider, so that it overlaps rather than shares sides
		f.Geometry.Polygons[2000][0][2][0] += 0.5e-4
		if reason, detail := Check(f); reason != ReasonOverlappingParts || !strings.HasPrefix(detail, "polygons 1999 and 2000 of the MultiPolygon overlap") {
			t.Errorf("%s and an overlap: %s: %s", name, reason, detail)
		}
	}

	// A large estate traced with 50,000 corners, and 1,000 small plots in
	// its bounding box but outside it: the work is the sides near each
	// plot, not the whole estate's boundary again for every plot.
	const corners = 50_000
	estate := make(Ring, 0, corners+1)
	for i := range corners {
		a := 2 * math.Pi * float64(i) / corners
		estate = append(estate, Position{math.Round((10+0.5*math.Cos(a))*1e6) / 1e6, math.Round((10+0.5*math.Sin(a))*1e6) / 1e6})
	}
	estate = append(estate, estate[0])
	f := squares(1000, func(i int) (int, int) { return 2 * (i % 40), 2 * (i / 40) }) // from -5.5, 6.5
	for _, poly := range f.Geometry.Polygons {
		for k := range poly[0] {
			poly[0][k][0] += 15 // to lon 9.5, lat 9.5: the estate's south-west corner
			poly[0][k][1] += 3
		}
	}
	f.Geometry.Polygons = append([]Polygon{{estate}}, f.Geometry.Polygons...)
	if reason, detail := Check(f); reason != "" {
		t.Errorf("estate and plots: %s: %s", reason, detail)
	}
	var ps parts
	var w workspace
	ps.load(&w, f.Geometry.Polygons, asWritten)
	if d, exhausted := ps.find(64 * len(ps.pts)); exhausted || d.kind != 0 {
		t.Errorf("estate and plots: find with a budget of 64 per corner: %+v, exhausted %v", d, exhausted)
	}
	// A plot in the estate is found, and named.
	f.Geometry.Polygons = append(f.Geometry.Polygons, Polygon{{{10, 10}, {10.001, 10}, {10.001, 10.001}, {10, 10}}})
	if reason, detail := Check(f); reason != ReasonOverlappingParts || !strings.Contains(detail, "polygons 0 and 1001 of the MultiPolygon overlap: polygon 1001 lies inside polygon 0") {
		t.Errorf("estate and a plot inside: %s: %s", reason, detail)
	}

	// Parallel strips whose bounding boxes all meet: too many pairs to
	// compare, said so rather than checked for minutes.
	const n = 3000
	polys := make([]Polygon, n)
	for i := range polys {
		x := float64(i) * 1e-4
		polys[i] = Polygon{{{x, 0}, {x + 0.5e-4, 0}, {x + 0.5e-4 + 0.3, 0.3}, {x + 0.3, 0.3}, {x, 0}}}
	}
	f = Feature{Geometry: Geometry{Type: TypeMultiPolygon, Polygons: polys}, MaxDecimals: 6}
	if reason, detail := Check(f); reason != ReasonGeometryTooComplex || !strings.Contains(detail, "the 3000 polygons of the MultiPolygon (12000 corners in all) span each other too much") {
		t.Errorf("strips: %s: %s", reason, detail)
	}
}

// TestCheck_PartsAgreeWithSimplefeatures compares OVERLAPPING_PARTS with
// simplefeatures' MultiPolygon validation (the OGC rule, as GEOS has it)
// on random parts with corners on a small grid, where touching corners,
// shared sides and sides through corners are common.
func TestCheck_PartsAgreeWithSimplefeatures(t *testing.T) {
	r := rand.New(rand.NewPCG(2024, 7))
	part := func() [][2]int {
		if r.IntN(2) == 0 {
			x0, y0 := r.IntN(8), r.IntN(8)
			x1, y1 := x0+1+r.IntN(8-x0), y0+1+r.IntN(8-y0)
			return [][2]int{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}, {x0, y0}}
		}
		pts := make([][2]int, 3+r.IntN(4))
		for i := range pts {
			pts[i] = [2]int{r.IntN(9), r.IntN(9)}
		}
		return append(pts, pts[0])
	}
	var valid, invalid int
	for valid+invalid < 20_000 {
		var polys []Polygon
		var sf []geom.Polygon
		for range 2 + r.IntN(3) {
			corners := part()
			ring := make(Ring, len(corners))
			seq := make([]float64, 0, 2*len(corners))
			for i, c := range corners {
				ring[i] = Position{1 + float64(c[0])*1e-4, 2 + float64(c[1])*1e-4}
				seq = append(seq, float64(c[0]), float64(c[1]))
			}
			polys = append(polys, Polygon{ring})
			sf = append(sf, geom.NewPolygon([]geom.LineString{geom.NewLineString(geom.NewSequence(seq, geom.DimXY))}))
		}
		f := Feature{Geometry: Geometry{Type: TypeMultiPolygon, Polygons: polys}, MaxDecimals: 6}
		reason, detail := Check(f)
		if reason != "" && reason != ReasonOverlappingParts {
			continue // a part that is not a valid polygon of its own
		}
		mp := geom.NewMultiPolygon(sf)
		err := mp.Validate()
		if (reason != "") != (err != nil) {
			t.Fatalf("%s\nCheck: %s %s\nsimplefeatures: %v", mp.AsText(), reason, detail, err)
		}
		if err != nil {
			invalid++
		} else {
			valid++
		}
	}
	if valid < 2000 || invalid < 2000 {
		t.Errorf("%d valid and %d invalid MultiPolygons: too few of one kind to compare", valid, invalid)
	}
}

// BenchmarkCheck_ManyParts checks MultiPolygons of 2,000 squares, laid out
// as in TestCheck_ManyParts.
func BenchmarkCheck_ManyParts(b *testing.B) {
	for _, name := range []string{"apart", "chessboard", "column"} {
		f := squares(2000, layouts[name])
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if reason, detail := Check(f); reason != "" {
					b.Fatalf("%s: %s", reason, detail)
				}
			}
		})
	}
}
