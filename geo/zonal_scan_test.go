package geo

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/eudr/eudr/geo/geotiff"
)

// scanRows finds pixels a row at a time; its answer must be the rule's
// for each pixel on its own (coversFixed), whatever the shape: random
// star-shaped rings, holes, overlapping parts, and corners placed exactly
// on pixel centres and pixel-centre lines; on a grid of decimals and on
// one whose pixel size is not a short decimal (JRC's 10 m as degrees).
func TestScanRows_MatchesCoversFixed(t *testing.T) {
	for _, grid := range []geotiff.Georef{
		{West: 10, North: 1, DX: 0.00025, DY: 0.00025, Width: 400, Height: 400},
		{West: 10, North: 1, DX: 8.983152841195215e-05, DY: 8.983152841195215e-05, Width: 400, Height: 400},
	} {
		r := rand.New(rand.NewPCG(7, 11))
		centre := func(c, row float64) Position {
			return Position{grid.West + (c+0.5)*grid.DX, grid.North - (row+0.5)*grid.DY}
		}
		ring := func(cx, cy, rad float64, n int, onCentres bool) Ring {
			var out Ring
			for i := range n {
				a := 2 * math.Pi * float64(i) / float64(n)
				d := rad * (0.4 + 0.6*r.Float64())
				c, row := cx+d*math.Cos(a), cy-d*math.Sin(a)
				if onCentres {
					c, row = math.Round(c), math.Round(row)
				}
				out = append(out, centre(c, row))
			}
			return append(out, out[0])
		}
		for i := range 150 { // 150 per grid: every mix of the patterns below, 2.5 times
			onCentres := i%3 == 0
			ps := []Polygon{{ring(100, 100, 60, 3+r.IntN(40), onCentres)}}
			if i%4 == 1 {
				ps[0] = append(ps[0], ring(100, 100, 15, 3+r.IntN(8), onCentres)) // a hole
			}
			if i%5 == 2 {
				ps = append(ps, Polygon{ring(140, 120, 50, 3+r.IntN(20), onCentres)}) // overlapping part
			}
			fixed := fixPolygons(ps)
			w := geotiff.Window{Col: 20, Row: 20, Width: 250, Height: 250}
			px := make([]uint8, w.Width*w.Height)
			fg := fixedGrid{grid}
			got := make([]bool, len(px))
			scanRows(fixed, grid, (*cellAreaTables)(nil).of(grid), w, func(xs []int64, sr scanRow) {
				for i := 0; i < len(sr.runs); i += 2 {
					for x := sr.runs[i]; x < sr.runs[i+1]; x++ {
						c, row, _ := fg.pixel(pt{xs[x], sr.lat})
						got[(row-w.Row)*w.Width+c-w.Col] = true
					}
				}
			})
			for row := w.Row; row < w.Row+w.Height; row++ {
				for c := w.Col; c < w.Col+w.Width; c++ {
					q := pt{fg.lon(2*c + 1), fg.lat(2*row + 1)}
					if want, got := coversFixed(fixed, q), got[(row-w.Row)*w.Width+c-w.Col]; want != got {
						t.Fatalf("DX %v, shape %d: pixel (%d, %d): scanRows %v, coversFixed %v", grid.DX, i, c, row, got, want)
					}
				}
			}
		}
	}
}

// coversFixed is the rule for one point, exactly: q is inside or on the
// exterior ring of a polygon and not strictly inside one of its holes.
func coversFixed(ps []fixedPolygon, q pt) bool {
	for _, p := range ps {
		if len(p) == 0 {
			continue
		}
		switch ringSideFixed(p[0], q) {
		case sideOn:
			return true
		case sideOut:
			continue
		}
		inHole := false
		for _, h := range p[1:] {
			if ringSideFixed(h, q) == sideIn {
				inHole = true
				break
			}
		}
		if !inHole {
			return true
		}
	}
	return false
}

const (
	sideOut = iota
	sideIn
	sideOn
)

// ringSideFixed tells whether q is inside, outside or on the closed ring
// r (even-odd rule, the ray cast eastward).
func ringSideFixed(r []pt, q pt) int {
	in := false
	for i, j := 0, len(r)-1; i < len(r); j, i = i, i+1 {
		a, b := r[i], r[j]
		if within(a, b, q) && orient(a, b, q) == 0 {
			return sideOn
		}
		if (a.y > q.y) != (b.y > q.y) {
			if a.y > b.y {
				a, b = b, a
			}
			if orient(a, b, q) > 0 { // q west of the side going north
				in = !in
			}
		}
	}
	if in {
		return sideIn
	}
	return sideOut
}
