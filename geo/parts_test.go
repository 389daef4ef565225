package geo

import (
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

	// Parallel strips whose bounding boxes all meet: too many pairs to
	// compare, said so rather than checked for minutes.
	const n = 3000
	polys := make([]Polygon, n)
	for i := range polys {
		x := float64(i) * 1e-4
		polys[i] = Polygon{{{x, 0}, {x + 0.5e-4, 0}, {x + 0.5e-4 + 0.3, 0.3}, {x + 0.3, 0.3}, {x, 0}}}
	}
	f := Feature{Geometry: Geometry{Type: TypeMultiPolygon, Polygons: polys}, MaxDecimals: 6}
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
