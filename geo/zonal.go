package geo

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/eudr/eudr/geo/geotiff"
)

// PixelStats are the zonal statistics of a plot over a single-band uint8
// raster: for each pixel value, how many pixels of the plot have it and
// their area. A pixel belongs to a polygon plot when its centre lies inside
// the plot (the pixel-centre rule: on a side or corner counts as inside,
// decided exactly as fixedGrid describes); a point plot is the one pixel
// it falls in, counted with the point's declared area. Nodata pixels are
// counted apart, not by value.
type PixelStats struct {
	Pixels [256]int
	Ha     [256]float64
	// NoDataPixels and NoDataHa are the plot's pixels of the raster's
	// nodata value.
	NoDataPixels int
	NoDataHa     float64
}

// Total returns the pixels and hectares counted, nodata included.
func (s PixelStats) Total() (pixels int, ha float64) {
	pixels, ha = s.NoDataPixels, s.NoDataHa
	for v := range s.Pixels {
		pixels += s.Pixels[v]
		ha += s.Ha[v]
	}
	return pixels, ha
}

// RasterReader reads a window of a raster's pixels, row by row, into dst
// (len Width*Height); *geotiff.File is one.
type RasterReader interface {
	ReadWindow(ctx context.Context, w geotiff.Window, dst []uint8) error
}

// ZonalStats counts the pixels of a raster, given as its tiles, that plot
// g covers, by value, as screening does for each raster layer (see
// RasterResult.Stats): only the windows of the bounding boxes of the
// plot's polygons are read from each tile (one window for polygons less
// than a pixel apart), and a plot across tiles is the sum of its parts. A
// pixel's area is that of its cell on the WGS84 ellipsoid, which depends
// on the latitude only, so it is computed once per row. pointHa is the
// area of each point of a Point or MultiPoint plot. Parts of the plot
// outside every tile are not counted.
func ZonalStats(ctx context.Context, g Geometry, pointHa float64, tiles ...RasterTile) (PixelStats, error) {
	l := &RasterLayer{Tiles: tiles}
	p, ok := newRasterPlot(g, pointHa, plotArea(g, pointHa))
	if !ok {
		return PixelStats{}, nil
	}
	ws, _, err := p.read(ctx, l)
	if err != nil {
		return PixelStats{}, fmt.Errorf("geo: %w", err)
	}
	return p.measure(l, ws, false).Stats, nil
}

// count adds a pixel of value v and area ha, apart if it is nodata.
func (s *PixelStats) count(v uint8, ha float64, nodata bool) {
	if nodata {
		s.NoDataPixels++
		s.NoDataHa += ha
		return
	}
	s.Pixels[v]++
	s.Ha[v] += ha
}

// bbox returns the bounding box of the polygons' exterior rings.
func bbox(ps []Polygon) (lo, hi [2]float64, ok bool) {
	lo = [2]float64{math.Inf(1), math.Inf(1)}
	hi = [2]float64{math.Inf(-1), math.Inf(-1)}
	for _, p := range ps {
		if len(p) == 0 {
			continue
		}
		for _, c := range p[0] {
			lo[0], lo[1] = min(lo[0], c[0]), min(lo[1], c[1])
			hi[0], hi[1] = max(hi[0], c[0]), max(hi[1], c[1])
			ok = true
		}
	}
	return lo, hi, ok
}

// cellHa is the area in hectares of a dx by dy degree cell centred at
// latitude lat on the WGS84 ellipsoid: between its two meridians and its
// two parallels, in closed form. The area from the equator to latitude φ
// per radian of longitude is b²/2 (x/(1-e²x²) + atanh(ex)/e), x = sin φ;
// the difference for the cell's two parallels is taken as (xn - xs)
// times the difference quotient, with xn - xs = 2 cos(lat) sin(dy/2), so
// that a cell of 0.0001 degree keeps the digits the difference of two
// zones would cancel. (The geodesic ring area through the cell's corners,
// which this replaced, differs from it by under 1e-9 of the area for
// cells of up to 0.00025 degree away from the poles: its north and south
// sides are geodesics, not parallels. It costs tens of times as much.)
func cellHa(lat, dx, dy float64) float64 {
	const (
		a  = 6378137.0         // WGS84 semi-major axis, m
		f  = 1 / 298.257223563 // flattening
		b  = a * (1 - f)       // semi-minor axis
		e2 = f * (2 - f)       // eccentricity squared
	)
	e := math.Sqrt(e2)
	rad := math.Pi / 180
	xn, xs := math.Sin((lat+dy/2)*rad), math.Sin((lat-dy/2)*rad)
	d := 2 * math.Cos(lat*rad) * math.Sin(dy/2*rad) // xn - xs
	if d == 0 {
		return 0
	}
	q := (1 + e2*xn*xs) / ((1 - e2*xn*xn) * (1 - e2*xs*xs))
	q += math.Atanh(e*d/(1-e2*xn*xs)) / (e * d)
	return math.Abs(dx*rad*b*b/2*d*q) / 1e4
}

// cellAreas gives the cell area of each row of a grid, computed the first
// time a plot needs it and kept for the plots after: a row's cells all
// have the area of cellHa at its centre latitude.
type cellAreas struct {
	grid geotiff.Georef
	// rows[row] holds the row's area as float64 bits, 0 until computed
	// (a row of area +0 is computed each time); nil for a grid past the
	// budget, whose rows are computed each time.
	rows []atomic.Uint64
}

// cellAreasKey is what a row's cell area depends on, in bits, so that a
// NaN in a header finds its table again.
type cellAreasKey struct {
	north, dx, dy uint64
	height        int
}

// cellAreaTables are the tables of the grids of a raster layer's tiles,
// kept with the layer and dropped with it. Tiles side by side (a row of a
// dataset's 10 degree grid) share one. They stay within maxCellAreaBytes
// (a Hansen tile's is 320 kB, a 10 degree JRC tile's 890 kB, and pages
// no plot touched are not resident).
type cellAreaTables struct {
	tables sync.Map // cellAreasKey -> []atomic.Uint64
	mu     sync.Mutex
	bytes  int64
}

const maxCellAreaBytes = 32 << 20

// of returns grid's cell areas, with the table of its rows if it has one
// or there is room for one. A nil *cellAreaTables keeps none.
func (ts *cellAreaTables) of(grid geotiff.Georef) cellAreas {
	if ts == nil {
		return cellAreas{grid: grid}
	}
	key := cellAreasKey{math.Float64bits(grid.North), math.Float64bits(grid.DX), math.Float64bits(grid.DY), grid.Height}
	if t, ok := ts.tables.Load(key); ok {
		return cellAreas{grid, t.([]atomic.Uint64)}
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t, ok := ts.tables.Load(key); ok {
		return cellAreas{grid, t.([]atomic.Uint64)}
	}
	n := max(grid.Height, 0)
	if int64(n) > (maxCellAreaBytes-ts.bytes)/8 {
		return cellAreas{grid: grid}
	}
	ts.bytes += 8 * int64(n)
	t := make([]atomic.Uint64, n)
	ts.tables.Store(key, t)
	return cellAreas{grid, t}
}

// at returns the area in hectares of a cell of the grid's row. Goroutines
// that need a new row at once may both compute it, to the same bits.
func (c cellAreas) at(row int) float64 {
	if row < 0 || row >= len(c.rows) {
		return c.compute(row)
	}
	if bits := c.rows[row].Load(); bits != 0 {
		return math.Float64frombits(bits)
	}
	ha := c.compute(row)
	c.rows[row].Store(math.Float64bits(ha))
	return ha
}

func (c cellAreas) compute(row int) float64 {
	_, lat := c.grid.Center(0, row)
	return cellHa(lat, c.grid.DX, c.grid.DY)
}
