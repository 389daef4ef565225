package geo

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/eudr/eudr/geo/geotiff"
)

// eachPixelIn finds pixels a row at a time; its answer must be
// coversPoint's for every pixel, whatever the shape: random star-shaped
// rings, holes, overlapping parts, and corners placed exactly on pixel
// centres and pixel-centre lines.
func TestEachPixelIn_MatchesCoversPoint(t *testing.T) {
	grid := geotiff.Georef{West: 10, North: 1, DX: 0.00025, DY: 0.00025, Width: 400, Height: 400}
	r := rand.New(rand.NewPCG(7, 11))
	centre := func(c, row float64) Position { return Position{10 + (c+0.5)*0.00025, 1 - (row+0.5)*0.00025} }
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
	for i := range 300 {
		onCentres := i%3 == 0
		ps := []Polygon{{ring(100, 100, 60, 3+r.IntN(40), onCentres)}}
		if i%4 == 1 {
			ps[0] = append(ps[0], ring(100, 100, 15, 3+r.IntN(8), onCentres)) // a hole
		}
		if i%5 == 2 {
			ps = append(ps, Polygon{ring(140, 120, 50, 3+r.IntN(20), onCentres)}) // overlapping part
		}
		w := geotiff.Window{Col: 20, Row: 20, Width: 250, Height: 250}
		px := make([]uint8, w.Width*w.Height)
		got := map[[2]int]bool{}
		eachPixelIn(ps, grid, w, px, func(_ uint8, lon, lat, _ float64) {
			x, y := grid.Pos(lon, lat)
			got[[2]int{int(x), int(y)}] = true
		})
		for row := w.Row; row < w.Row+w.Height; row++ {
			for c := w.Col; c < w.Col+w.Width; c++ {
				lon, lat := grid.Center(c, row)
				if want := coversPoint(ps, Position{lon, lat}); want != got[[2]int{c, row}] {
					t.Fatalf("shape %d: pixel (%d, %d): eachPixelIn %v, coversPoint %v", i, c, row, got[[2]int{c, row}], want)
				}
			}
		}
	}
}
