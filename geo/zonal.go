package geo

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"

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

// eachPixelIn calls fn with the value, centre and area of each pixel of
// the window w of grid (pixels px, row by row) whose centre lies inside or
// on the polygons, a row at a time, in exact arithmetic on fixed
// positions (fixedGrid). The polygons' sides are crossed with the row's
// centre line once: the cost is rows x sides + pixels, not pixels x sides.
func eachPixelIn(ps []fixedPolygon, grid geotiff.Georef, w geotiff.Window, px []uint8, fn func(v uint8, at pt, ha float64)) {
	fg := fixedGrid{grid}
	xs := make([]int64, w.Width) // the columns' centre longitudes
	for x := range xs {
		xs[x] = fg.lon(2*(w.Col+x) + 1)
	}
	in := make([]bool, w.Width)
	var starts []int
	for y := range w.Height {
		row := w.Row + y
		lat := fg.lat(2*row + 1)
		clear(in)
		for _, p := range ps {
			starts = markRow(p, xs, lat, in, starts[:0])
		}
		ha := 0.0
		for x, ok := range in {
			if !ok {
				continue
			}
			if ha == 0 {
				_, latDeg := grid.Center(0, row)
				ha = cellHa(latDeg, grid.DX, grid.DY)
			}
			fn(px[y*w.Width+x], pt{xs[x], lat}, ha)
		}
	}
}

// markRow sets in[x] for the centres (xs[x], y) of a row that lie inside
// or on polygon p: inside its rings by the even-odd rule (the exterior
// ring minus its holes), or on one of them. xs must be ascending; starts is scratch
// space, returned for reuse.
//
// A centre on a side is found where the side crosses the row. Any other
// centre is inside when an odd number of sides cross the row west of it,
// counting a side that crosses from its south end up to, but not
// including, its north end (half-open, so a row through a vertex counts
// the two sides meeting there once or not at all, as it should). Each
// such crossing turns the parity for the centres east of it: sorted, the
// crossings' first centres east of them pair up into runs of centres
// inside.
func markRow(p fixedPolygon, xs []int64, y int64, in []bool, starts []int) []int {
	n := len(xs)
	for _, r := range p {
		for i, j := 0, len(r)-1; i < len(r); j, i = i, i+1 {
			a, b := r[j], r[i]
			if a.y > b.y {
				a, b = b, a
			}
			if y < a.y || y > b.y {
				continue
			}
			if a.y == b.y { // a side along the row: its centres are on it
				lo, hi := min(a.x, b.x), max(a.x, b.x)
				for x := firstCentre(xs, lo); x < n && xs[x] <= hi; x++ {
					in[x] = true
				}
				continue
			}
			// The first centre at or east of the crossing.
			x := sort.Search(n, func(x int) bool { return crossing(a, b, xs[x], y) >= 0 })
			if x < n && crossing(a, b, xs[x], y) == 0 {
				in[x] = true // on the side
				x++
			}
			if y < b.y {
				starts = append(starts, x)
			}
		}
	}
	slices.Sort(starts)
	for i := 0; i+1 < len(starts); i += 2 {
		for x := starts[i]; x < starts[i+1]; x++ {
			in[x] = true
		}
	}
	return starts
}

// crossing is the sign of x minus the longitude where side a-b (a south
// of b) crosses latitude y: 0 when (x, y) lies on the side's line.
func crossing(a, b pt, x, y int64) int {
	return cmpMul(x-a.x, b.y-a.y, y-a.y, b.x-a.x)
}

// firstCentre returns the first x with xs[x] >= lon, len(xs) if none.
func firstCentre(xs []int64, lon int64) int {
	return sort.Search(len(xs), func(x int) bool { return xs[x] >= lon })
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
// latitude lat, on the WGS84 ellipsoid.
func cellHa(lat, dx, dy float64) float64 {
	n, s := lat+dy/2, lat-dy/2
	return RingArea([][2]float64{{0, s}, {dx, s}, {dx, n}, {0, n}, {0, s}})
}
