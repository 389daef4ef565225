package geo

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/eudr/eudr/geo/geotiff"
)

// decimalUnits is decimal d times unit, which must be a whole number.
func decimalUnits(t *testing.T, d string, unit int64) int64 {
	t.Helper()
	v, ok := new(big.Rat).SetString(d)
	if !ok {
		t.Fatalf("bad decimal %q", d)
	}
	v.Mul(v, big.NewRat(unit, 1))
	if !v.IsInt() {
		t.Fatalf("%s x %d is not a whole number", d, unit)
	}
	return v.Num().Int64()
}

// A grid whose origin and pixel size are decimals of up to 9 places has
// its edges and centres at their exact decimal positions, over the whole
// of a 40,000 pixel tile, also when the header's pixel size is a float64
// or two off the nearest to the decimal, and for the origins a
// RasterPixelIsPoint tile gets half a pixel out.
func TestFixedGrid_DecimalPositions(t *testing.T) {
	float := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, g := range []struct {
		west, north, size string
		off               int // float64 steps off the pixel size's nearest
	}{
		{"-80", "10", "0.00025", 0},
		{"-80", "10", "0.00025", 1},
		{"-80", "10", "0.00025", -2},
		{"170", "-50", "0.00025", 0},
		{"24.5", "0.5", "0.0001", 0},
		{"-180.000125", "80.000125", "0.00025", 0}, // a PixelIsPoint tile's outer corner
		{"-179.999999999", "89.999999999", "0.000000001", 0},
		{"12.345678901", "-3.000000007", "0.000000003", 0},
	} {
		size := float(g.size)
		for i := 0; i < abs(g.off); i++ {
			size = math.Nextafter(size, math.Copysign(math.Inf(1), float64(g.off)))
		}
		fg := fixedGrid{geotiff.Georef{West: float(g.west), North: float(g.north), DX: size, DY: size, Width: 40000, Height: 40000}}
		// In half nano-degrees: origin*2e9 + k*size*1e9.
		west, north, step := decimalUnits(t, g.west, 2e9), decimalUnits(t, g.north, 2e9), decimalUnits(t, g.size, 1e9)
		for k := 0; k <= 80000; k++ {
			if got, want := fg.lon(k), west+int64(k)*step; got != want {
				t.Fatalf("west %s, pixel size %s (%d off): half-column %d at %d, want %d", g.west, g.size, g.off, k, got, want)
			}
			if got, want := fg.lat(k), north-int64(k)*step; got != want {
				t.Fatalf("north %s, pixel size %s (%d off): half-row %d at %d, want %d", g.north, g.size, g.off, k, got, want)
			}
		}
	}
}

func abs(n int) int { return max(n, -n) }

// A pixel size that is not a short decimal (10 m at the equator) places
// edges and centres at the float64 position to within half a unit, in
// order.
func TestFixedGrid_OtherPixelSize(t *testing.T) {
	const size = 8.983152841195215e-05
	fg := fixedGrid{geotiff.Georef{West: 20, North: 0, DX: size, DY: size, Width: 111320, Height: 111320}}
	prev := int64(math.MinInt64)
	for k := 0; k <= 2*111320; k++ {
		got := fg.lon(k)
		if f := 2e9 * (20 + float64(k)*size/2); math.Abs(float64(got)-f) > 0.5+1e-3 || got <= prev {
			t.Fatalf("half-column %d at %d: float64 %v, previous %d", k, got, f, prev)
		}
		prev = got
	}
}

// A point on the edge between two pixels is in the one east or south of
// it; the raster's west and north edges are in it, its east and south
// edges not. A window holds every pixel a point of its rectangle is in.
func TestFixedGrid_Edges(t *testing.T) {
	fg := fixedGrid{geotiff.Georef{West: 24, North: 1, DX: 0.00025, DY: 0.00025, Width: 100, Height: 100}}
	deg := func(d float64) int64 { return fixedDeg(d) }
	for _, tt := range []struct {
		lon, lat float64
		col, row int
		ok       bool
	}{
		{24, 1, 0, 0, true},
		{24.00025, 0.99975, 1, 1, true},
		{24.000249999, 0.999750001, 0, 0, true},
		{24.024749999, 0.975250001, 98, 98, true},
		{24.02475, 0.97525, 99, 99, true},
		{24.025, 0.99, 100, 40, false},
		{24.01, 0.975, 40, 100, false},
		{23.999999999, 0.99, -1, 40, false},
		{24.01, 1.000000001, 40, -1, false},
	} {
		col, row, ok := fg.pixel(pt{deg(tt.lon), deg(tt.lat)})
		if col != tt.col || row != tt.row || ok != tt.ok {
			t.Errorf("pixel(%v, %v) = %d, %d, %v; want %d, %d, %v", tt.lon, tt.lat, col, row, ok, tt.col, tt.row, tt.ok)
		}
	}
	for _, tt := range []struct {
		west, south, east, north float64
		want                     geotiff.Window
	}{
		// Sides on pixel edges: the pixels east and south of the box too.
		{24.0025, 0.9950, 24.0050, 0.9975, geotiff.Window{Col: 10, Row: 10, Width: 11, Height: 11}},
		// Sides off the edges.
		{24.00251, 0.99501, 24.00499, 0.99749, geotiff.Window{Col: 10, Row: 10, Width: 10, Height: 10}},
		// Touching the raster's west edge from outside: its first column.
		{23.99, 0.99, 24, 0.995, geotiff.Window{Col: 0, Row: 20, Width: 1, Height: 21}},
		// Touching its north edge from outside: its first row.
		{24.001, 1, 24.002, 1.01, geotiff.Window{Col: 4, Row: 0, Width: 5, Height: 1}},
		// Touching its east or south edge from outside: nothing.
		{24.025, 0.99, 24.03, 0.995, geotiff.Window{}},
		{24.001, 0.97, 24.002, 0.975, geotiff.Window{}},
		// Around it: all of it.
		{23, 0, 25, 2, geotiff.Window{Col: 0, Row: 0, Width: 100, Height: 100}},
	} {
		if got := fg.window(pt{deg(tt.west), deg(tt.south)}, pt{deg(tt.east), deg(tt.north)}); got != tt.want {
			t.Errorf("window(%v, %v, %v, %v) = %+v, want %+v", tt.west, tt.south, tt.east, tt.north, got, tt.want)
		}
	}
}

// On a Hansen tile, 40,000 pixels of 0.00025 degree from 80 W, 10 N: the
// edge rule holds at the far corner, and an arbitrary point is in the pixel
// its offsets divided by the pixel size say.
func TestFixedGrid_HansenTile(t *testing.T) {
	fg := fixedGrid{geotiff.Georef{West: -80, North: 10, DX: 0.00025, DY: 0.00025, Width: 40000, Height: 40000}}
	for _, tt := range []struct {
		lon, lat float64
		col, row int
		ok       bool
	}{
		{-80, 10, 0, 0, true}, // the corner belongs to pixel (0, 0)
		{-79.9999, 9.9999, 0, 0, true},
		{-79.99975, 10, 1, 0, true}, // on the edge between columns 0 and 1: the east one
		{-79.99975, 9.99975, 1, 1, true},
		{-70.0000001, 0.0000001, 39999, 39999, true},
		{-70, 5, 40000, 20000, false}, // the east edge is outside
		{-75, 0, 20000, 40000, false}, // the south edge too
		{-80.0000001, 5, -1, 20000, false},
		{-75, 10.0000001, 20000, -1, false},
		{-74.123456, 3.654321, 23506, 25382, true}, // (5.876544/0.00025, 6.345679/0.00025)
	} {
		col, row, ok := fg.pixel(fixedPoint(tt.lon, tt.lat))
		if col != tt.col || row != tt.row || ok != tt.ok {
			t.Errorf("pixel(%v, %v) = %d, %d, %v; want %d, %d, %v", tt.lon, tt.lat, col, row, ok, tt.col, tt.row, tt.ok)
		}
	}
	for _, tt := range []struct {
		name                     string
		west, south, east, north float64
		want                     geotiff.Window
	}{
		{"inside one pixel", -79.9999, 9.9998, -79.9998, 9.9999, geotiff.Window{Col: 0, Row: 0, Width: 1, Height: 1}},
		{"straddling", -79.99001, 9.98999, -79.98999, 9.99001, geotiff.Window{Col: 39, Row: 39, Width: 2, Height: 2}},
		{"clipped, east and south on edges", -81, 9.999, -79.999, 11, geotiff.Window{Col: 0, Row: 0, Width: 5, Height: 5}},
		{"whole", -90, -10, -60, 20, geotiff.Window{Col: 0, Row: 0, Width: 40000, Height: 40000}},
		{"disjoint", -60, 0, -59, 1, geotiff.Window{}},
	} {
		if got := fg.window(fixedPoint(tt.west, tt.south), fixedPoint(tt.east, tt.north)); got != tt.want {
			t.Errorf("%s: window = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// windowEdges finds the pixel fixedGrid.pixel finds, less the window's
// offset, for points on the edges and corners of the window's pixels and
// those around it, pixel centres, and points anywhere near it, on a
// decimal grid and on one that is not.
func TestWindowEdges_AsFixedGrid(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, g := range []geotiff.Georef{
		{West: -80, North: 10, DX: 0.00025, DY: 0.00025, Width: 40000, Height: 40000},
		{West: 20, North: 0, DX: 8.983152841195215e-05, DY: 8.983152841195215e-05, Width: 111320, Height: 111320},
	} {
		fg := fixedGrid{g}
		for _, win := range []geotiff.Window{{Col: 0, Row: 0, Width: 7, Height: 5}, {Col: 23506, Row: 25382, Width: 40, Height: 31}, {Col: 39990, Row: 39995, Width: 10, Height: 5}} {
			e := fg.windowEdges(win)
			check := func(q pt) {
				t.Helper()
				col, row, ok := e.pixel(q)
				wc, wr, _ := fg.pixel(q)
				wc, wr = wc-win.Col, wr-win.Row
				wok := wc >= 0 && wr >= 0 && wc < win.Width && wr < win.Height
				if ok != wok || ok && (col != wc || row != wr) {
					t.Fatalf("grid %+v, window %+v: pixel(%v) = %d, %d, %v; fixedGrid says %d, %d, %v", g, win, q, col, row, ok, wc, wr, wok)
				}
			}
			// Half-columns and half-rows (edges and centres) from one
			// outside the window to one outside it, and a unit either side.
			for k := 2*win.Col - 2; k <= 2*(win.Col+win.Width)+2; k++ {
				for j := 2*win.Row - 2; j <= 2*(win.Row+win.Height)+2; j++ {
					for _, d := range []int64{-1, 0, 1} {
						check(pt{fg.lon(k) + d, fg.lat(j) - d})
					}
				}
			}
			// Rows of points at one latitude, one row after another, as a
			// finer grid's pixel centres are looked up (the row found
			// for a latitude is kept for the next point).
			for j := 2*win.Row - 2; j <= 2*(win.Row+win.Height)+2; j++ {
				for _, dy := range []int64{1, 0, -1} {
					for k := 2*win.Col - 2; k <= 2*(win.Col+win.Width)+2; k++ {
						for _, dx := range []int64{-1, 0, 1} {
							check(pt{fg.lon(k) + dx, fg.lat(j) + dy})
						}
					}
				}
			}
			for range 2000 {
				x := fg.lon(2*win.Col-4) + r.Int64N(fg.lon(2*(win.Col+win.Width)+4)-fg.lon(2*win.Col-4))
				y := fg.lat(2*(win.Row+win.Height)+4) + r.Int64N(fg.lat(2*win.Row-4)-fg.lat(2*(win.Row+win.Height)+4))
				check(pt{x, y})
			}
		}
	}
}

// BenchmarkPixelLookup looks up random points of a 400 x 400 pixel window
// of a Hansen tile: by windowEdges, as a coarser layer's window is for each
// pixel of a finer one, and by fixedGrid.pixel, which computes the edges it
// compares with. The first is why windowEdges exists.
func BenchmarkPixelLookup(b *testing.B) {
	fg := fixedGrid{geotiff.Georef{West: -80, North: 10, DX: 0.00025, DY: 0.00025, Width: 40000, Height: 40000}}
	win := geotiff.Window{Col: 12000, Row: 8000, Width: 400, Height: 400}
	r := rand.New(rand.NewPCG(1, 2))
	qs := make([]pt, 4096)
	for i := range qs {
		qs[i] = fixedPoint(-80+(12000+r.Float64()*400)*0.00025, 10-(8000+r.Float64()*400)*0.00025)
	}
	for _, m := range []struct {
		name  string
		pixel func(pt) (int, int, bool)
	}{
		{"windowEdges", fg.windowEdges(win).pixel},
		{"fixedGrid", fg.pixel},
	} {
		b.Run(m.name, func(b *testing.B) {
			for i := range b.N {
				if _, _, ok := m.pixel(qs[i%len(qs)]); !ok {
					b.Fatalf("%v not in the window", qs[i%len(qs)])
				}
			}
		})
	}
}
