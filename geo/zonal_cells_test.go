package geo

import (
	"bytes"
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
)

// TestCellAreas checks that the rows' cell areas a layer keeps per grid are
// those computed for each plot before, to the bit, whether computed here,
// found kept, computed by goroutines at once or past the budget.
func TestCellAreas(t *testing.T) {
	var tables cellAreaTables
	grids := []geotiff.Georef{
		{West: -80, North: 10, DX: 0.00025, DY: 0.00025, Width: 40000, Height: 40000},                               // Hansen
		{West: -80, North: 10, DX: 8.983152841195215e-05, DY: 8.983152841195215e-05, Width: 111320, Height: 111320}, // JRC
		{West: 100, North: -60, DX: 1, DY: 0.5, Width: 10, Height: 60},                                              // coarse, to the pole
		{West: 0, North: 1 << 20, DX: 1e-9, DY: 1e-9, Width: 1, Height: 1 << 40},                                    // past the budget
	}
	for _, g := range grids {
		rows := []int{0, 1, 2, g.Height / 3, g.Height - 1, -1, g.Height}
		want := make([]float64, len(rows))
		for i, row := range rows {
			_, lat := g.Center(0, row)
			want[i] = cellHa(lat, g.DX, g.DY)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 2 { // computed, then kept
					c := tables.of(g)
					for i, row := range rows {
						if got := c.at(row); math.Float64bits(got) != math.Float64bits(want[i]) {
							t.Errorf("grid %+v row %d: %v ha, want %v", g, row, got, want[i])
						}
					}
				}
			})
		}
		wg.Wait()
	}
	if c := tables.of(grids[3]); c.rows != nil {
		t.Errorf("a grid of %d rows got a table: want none past the budget", grids[3].Height)
	}

	// A header's NaN finds its table again rather than adding one each time.
	nan := geotiff.Georef{North: math.NaN(), DX: 1, DY: 1, Width: 1, Height: 1000}
	tables.of(nan)
	tables.mu.Lock()
	before := tables.bytes
	tables.mu.Unlock()
	if got := tables.of(nan).at(3); !math.IsNaN(got) {
		t.Errorf("NaN grid: %v ha, want NaN", got)
	}
	tables.mu.Lock()
	defer tables.mu.Unlock()
	if tables.bytes != before {
		t.Errorf("a grid with a NaN took %d more bytes the second time", tables.bytes-before)
	}
}

// TestCellAreas_KeptByTheLayer checks that the rows' cell areas are kept
// with the layer whose plots needed them, for its later plots, and not
// for the process: a layer of the same grid, such as the one that replaces
// it when its tiles are imported again, starts without them, and the
// tables go with the layer.
func TestCellAreas_KeptByTheLayer(t *testing.T) {
	grid := geotiff.Georef{West: 10, North: 1, DX: 0.00025, DY: 0.00025, Width: 100, Height: 100}
	b := geotifftest.MustEncode(t, grid.Width, grid.Height, func(col, row int) uint8 { return 1 },
		geotifftest.Options{West: grid.West, North: grid.North, DX: grid.DX, DY: grid.DY})
	f, err := geotiff.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	layer := func() *RasterLayer {
		return &RasterLayer{ID: "l", Kind: Forest2020, Tiles: []RasterTile{{Name: "t", Grid: grid, Reader: f}}}
	}
	// Rows 10-19 of the grid.
	g := Geometry{Type: TypePolygon, Polygons: []Polygon{{Ring{{10.001, 0.995}, {10.02, 0.995}, {10.02, 0.9975}, {10.001, 0.9975}, {10.001, 0.995}}}}}
	screen := func(l *RasterLayer) PixelStats {
		p, ok := newRasterPlot(g, 0, 1)
		if !ok {
			t.Fatal("no plot")
		}
		ws, _, err := p.read(context.Background(), l)
		if err != nil {
			t.Fatal(err)
		}
		return p.measure(l, ws, true).Stats
	}
	kept := func(l *RasterLayer) (rows int) {
		l.cells.tables.Range(func(_, v any) bool {
			for i := range v.([]atomic.Uint64) {
				if v.([]atomic.Uint64)[i].Load() != 0 {
					rows++
				}
			}
			return true
		})
		return rows
	}
	first := layer()
	want := screen(first)
	if n, _ := want.Total(); n == 0 {
		t.Fatal("the plot holds no pixel")
	}
	if got := kept(first); got != 10 {
		t.Errorf("the layer keeps %d rows' cell areas, want the plot's 10", got)
	}
	again := layer()
	if got := kept(again); got != 0 {
		t.Errorf("a new layer of the same grid starts with %d rows' cell areas, want none", got)
	}
	if got := screen(again); got != want {
		t.Errorf("the new layer counts %+v, want %+v", got, want)
	}
	if got := screen(first); got != want {
		t.Errorf("the first layer, its rows kept, counts %+v, want %+v", got, want)
	}
}

// TestCellHa checks the cells' closed form: a cell is bounded by parallels
// (a geodesic ring through its corners bulges past them: by 2.5e-5 of the
// area for a degree at the equator), its area the integral of the
// ellipsoid's area element M(φ) N(φ) cos φ over it, here by Simpson's
// rule; cells of a degree tile the ellipsoid, whose surface WGS84 gives
// (510,065,621.7 km²); and a fine cell agrees with the geodesic ring
// through its corners, whose sides part from the parallels by far less.
func TestCellHa(t *testing.T) {
	const a, f = 6378137.0, 1 / 298.257223563
	e2 := f * (2 - f)
	element := func(lat float64) float64 { // m² per radian² at lat
		s := math.Sin(lat * math.Pi / 180)
		w := 1 - e2*s*s
		return a * (1 - e2) / math.Pow(w, 1.5) * a / math.Sqrt(w) * math.Cos(lat*math.Pi/180)
	}
	for _, c := range []struct{ lat, dx, dy float64 }{{0.5, 1, 1}, {-45.25, 2, 0.5}, {70.1, 0.00025, 0.00025}} {
		const steps = 1000
		h := c.dy / steps
		sum := element(c.lat-c.dy/2) + element(c.lat+c.dy/2)
		for i := 1; i < steps; i++ {
			sum += float64(2+2*(i%2)) * element(c.lat-c.dy/2+float64(i)*h)
		}
		want := sum * h / 3 * (math.Pi / 180) * c.dx * (math.Pi / 180) / 1e4
		if got := cellHa(c.lat, c.dx, c.dy); math.Abs(got-want) > 1e-9*want {
			t.Errorf("cell %+v: %.9f ha, want %.9f", c, got, want)
		}
	}
	var total float64
	for lat := -89.5; lat < 90; lat++ {
		total += 360 * cellHa(lat, 1, 1)
	}
	if want := 5.10065621724e10; math.Abs(total-want) > 1e-9*want {
		t.Errorf("the ellipsoid's cells add up to %.6f ha, want %.6f", total, want)
	}
	for _, lat := range []float64{0.000125, -5.123, 45.000125, 70.1} {
		for _, d := range []float64{0.00025, 8.983152841195215e-05} {
			s, n := lat-d/2, lat+d/2
			ring := RingArea([][2]float64{{0, s}, {d, s}, {d, n}, {0, n}, {0, s}})
			if got := cellHa(lat, d, d); math.Abs(got-ring) > 1e-9*ring {
				t.Errorf("cell of %v degree at %v: %v ha, geodesic ring %v", d, lat, got, ring)
			}
		}
	}
}
