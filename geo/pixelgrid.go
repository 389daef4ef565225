package geo

import (
	"math"

	"github.com/eudr/eudr/geo/geotiff"
)

// maxFixedDeg bounds the degrees converted to fixed positions, far beyond
// any longitude, so that differences of positions and their products stay
// exact in cmpMul's 128 bits whatever a caller passes.
const maxFixedDeg = 1e6

// fixedDeg converts degrees to half nano-degrees, read to 9 decimals.
func fixedDeg(v float64) int64 { return 2 * nano(max(-maxFixedDeg, min(v, maxFixedDeg))) }

// fixedPoint converts a position to half nano-degrees.
func fixedPoint(lon, lat float64) pt { return pt{fixedDeg(lon), fixedDeg(lat)} }

// fixedPolygon is a polygon's rings in half nano-degrees.
type fixedPolygon [][]pt

// fixPolygons converts polygons to half nano-degrees.
func fixPolygons(ps []Polygon) []fixedPolygon {
	out := make([]fixedPolygon, len(ps))
	for i, p := range ps {
		out[i] = make(fixedPolygon, len(p))
		for j, r := range p {
			ring := make([]pt, len(r))
			for k, c := range r {
				ring[k] = fixedPoint(c[0], c[1])
			}
			out[i][j] = ring
		}
	}
	return out
}

// fixedGrid places a raster's pixel edges and centres exactly, so that a
// plot decides which pixel centres it holds by integer arithmetic, never
// by rounding in floating point: a plot whose sides run through pixel
// centres (a plot snapped to a survey grid) would otherwise gain or lose
// a row of pixels as 0.5 - 1528.5*0.0001 happens to round.
//
// Positions are integers of half a nano-degree (0.5e-9 degree, 0.05 mm;
// half, because a pixel centre of a grid of nano-degree edges may lie
// half-way between two):
//
//   - A plot's coordinates are read to 9 decimals (fixedDeg), exact for
//     coordinates written with up to 9 decimals.
//   - Half-column k is at longitude West + k*DX/2 (column c's west edge is
//     half-column 2c, its centre 2c+1), half-row k at latitude North -
//     k*DY/2, computed in float64 and taken to the nearest half
//     nano-degree (gridPos). Where the header's origin and pixel size are
//     decimals of up to 9 places (Hansen's 0.00025 degree, 10 degree tiles
//     at whole degrees, or a pixel size stored a float64 or two off
//     0.00025), the float64 computation is off by far less than a quarter
//     of that unit, so this is the exact decimal position. Where they are
//     not (10 m as 8.983152841195215e-05 degree) it is the header's
//     position to within 0.025 mm, and from there decided exactly.
type fixedGrid struct{ g geotiff.Georef }

// gridPos is origin + k*half degrees in half nano-degrees. The product is
// rounded to float64 before the sum (no fused multiply-add), so that the
// position is the same on every platform.
func gridPos(origin, half float64, k int) int64 {
	v := 2e9 * (origin + float64(float64(k)*half))
	return int64(math.Round(max(-2e9*maxFixedDeg, min(v, 2e9*maxFixedDeg))))
}

// lon is the longitude of half-column k.
func (f fixedGrid) lon(k int) int64 { return gridPos(f.g.West, f.g.DX/2, k) }

// lat is the latitude of half-row k.
func (f fixedGrid) lat(k int) int64 { return gridPos(f.g.North, -f.g.DY/2, k) }

// col returns the column whose area holds longitude x: the last whose
// west edge is at or west of x, so that a point on the edge between two
// columns is in the eastern one. It is -1 west of the raster and Width
// on or east of its east edge.
func (f fixedGrid) col(x int64) int {
	return lastTrue(f.colGuess(x), f.g.Width, func(c int) bool { return f.lon(2*c) <= x })
}

// colGuess is col(x) in floating point, where the exact search starts.
func (f fixedGrid) colGuess(x int64) float64 { return (float64(x)/2e9 - f.g.West) / f.g.DX }

// row returns the row whose area holds latitude y: the last whose north
// edge is at or north of y, so that a point on the edge between two rows
// is in the southern one. It is -1 north of the raster and Height on or
// south of its south edge.
func (f fixedGrid) row(y int64) int {
	return lastTrue(f.rowGuess(y), f.g.Height, func(r int) bool { return f.lat(2*r) >= y })
}

// rowGuess is row(y) in floating point, where the exact search starts.
func (f fixedGrid) rowGuess(y int64) float64 { return (f.g.North - float64(y)/2e9) / f.g.DY }

// pixel returns the pixel that holds q, and false if q lies outside the
// raster. Each pixel holds its west and north edges but not its east and
// south ones, so a point on the edge between two pixels is in the one east
// or south of it, a corner is in the pixel south-east of it, and the
// raster's own west and north edges are inside it, its east and south
// edges outside. All of it is decided exactly, in half nano-degrees.
func (f fixedGrid) pixel(q pt) (col, row int, ok bool) {
	col, row = f.col(q.x), f.row(q.y)
	return col, row, col >= 0 && row >= 0 && col < f.g.Width && row < f.g.Height
}

// windowEdges is fixedGrid.pixel within one window of the grid, with the
// window's pixel edges computed once: a window in which many points are
// looked up (each pixel centre of a finer grid) finds each a few times
// faster than computing the edges it compares with, to the same answer.
type windowEdges struct {
	f   fixedGrid
	win geotiff.Window
	// lons[i] is f.lon(2*(win.Col+i)) for i in [0, win.Width], lats[i]
	// f.lat(2*(win.Row+i)) for i in [0, win.Height].
	lons, lats []int64
	// The row last found and the latitude it was found for: a finer grid
	// looks up the pixels of one of its rows after another, all at one
	// latitude. A windowEdges is therefore for one goroutine.
	lastLat int64
	lastRow int
	hasLast bool
}

func (f fixedGrid) windowEdges(win geotiff.Window) *windowEdges {
	e := &windowEdges{f: f, win: win, lons: make([]int64, win.Width+1), lats: make([]int64, win.Height+1)}
	for i := range e.lons {
		e.lons[i] = f.lon(2 * (win.Col + i))
	}
	for i := range e.lats {
		e.lats[i] = f.lat(2 * (win.Row + i))
	}
	return e
}

// pixel returns the pixel of the window that holds q, counted from the
// window's first column and row, and false if q lies outside the window:
// f.pixel(q) less the window's offset, found by the same search.
func (e *windowEdges) pixel(q pt) (col, row int, ok bool) {
	col = lastTrue(e.f.colGuess(q.x)-float64(e.win.Col), e.win.Width, func(i int) bool { return e.lons[i] <= q.x })
	if e.hasLast && e.lastLat == q.y {
		row = e.lastRow
	} else {
		row = lastTrue(e.f.rowGuess(q.y)-float64(e.win.Row), e.win.Height, func(i int) bool { return e.lats[i] >= q.y })
		e.lastLat, e.lastRow, e.hasLast = q.y, row, true
	}
	return col, row, col >= 0 && row >= 0 && col < e.win.Width && row < e.win.Height
}

// window returns the window of the pixels that hold a point of the
// rectangle from lo (west, south) to hi (east, north), edges included,
// clipped to the raster. So every point of the rectangle, such as a pixel
// centre of a finer grid on its east side, finds its pixel in the window,
// also where that is the pixel east of the side.
func (f fixedGrid) window(lo, hi pt) geotiff.Window {
	c0, c1 := max(f.col(lo.x), 0), min(f.col(hi.x), f.g.Width-1)
	r0, r1 := max(f.row(hi.y), 0), min(f.row(lo.y), f.g.Height-1)
	if c0 > c1 || r0 > r1 {
		return geotiff.Window{}
	}
	return geotiff.Window{Col: c0, Row: r0, Width: c1 - c0 + 1, Height: r1 - r0 + 1}
}

// lastTrue returns the largest i in [0, n] for which ok holds, or -1 if
// none does; ok must hold up to some i and not after. guess, an estimate
// of the answer, is where the search starts: a good one makes it a step
// or two, a bad one (NaN from a degenerate grid) only slower.
func lastTrue(guess float64, n int, ok func(int) bool) int {
	i := n / 2
	switch {
	case guess >= 0 && guess <= float64(n):
		i = int(guess)
	case guess > float64(n):
		i = n
	case guess < 0:
		i = 0
	}
	for i >= 0 && !ok(i) {
		i--
	}
	for i < n && ok(i+1) {
		i++
	}
	return i
}
