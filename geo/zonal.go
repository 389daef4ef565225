package geo

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/eudr/eudr/geo/geotiff"
)

// PixelStats are the zonal statistics of a plot over a single-band uint8
// raster: for each pixel value, how many pixels of the plot have it and
// their area. A pixel belongs to a polygon plot when its centre lies inside
// the plot (the pixel-centre rule: on the boundary counts as inside); a
// point plot is the one pixel it falls in, counted with the point's
// declared area. Nodata pixels are counted apart, not by value.
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
// RasterResult.Stats): only the window of the plot's bounding box is read
// from each tile, and a plot across tiles is the sum of its parts. A
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
// on the polygons: coversPoint's answer, found a row at a time. The
// polygons' edges are crossed with the row's centre line once; pixels
// between two crossings are inside, the two pixels nearest each crossing
// are decided by coversPoint itself, and a row through a vertex is
// decided pixel by pixel. So the cost is rows x edges + pixels, not
// pixels x edges, and the answer is coversPoint's exactly.
func eachPixelIn(ps []Polygon, grid geotiff.Georef, w geotiff.Window, px []uint8, fn func(v uint8, lon, lat, ha float64)) {
	in := make([]bool, w.Width)
	var xs []float64
	for y := range w.Height {
		row := w.Row + y
		_, lat := grid.Center(0, row)
		clear(in)
		for i := range ps {
			xs = markRow(ps[i:i+1], grid, w, lat, in, xs[:0])
		}
		ha := 0.0
		for x, ok := range in {
			if !ok {
				continue
			}
			if ha == 0 {
				ha = cellHa(lat, grid.DX, grid.DY)
			}
			lon, _ := grid.Center(w.Col+x, row)
			fn(px[y*w.Width+x], lon, lat, ha)
		}
	}
}

// markRow sets in[x] for the pixels of the row at latitude lat whose
// centre is inside or on polygon p (a one-element slice), using xs as
// scratch space for the crossings, which it returns.
func markRow(p []Polygon, grid geotiff.Georef, w geotiff.Window, lat float64, in []bool, xs []float64) []float64 {
	col := func(x int) (lon float64) { lon, _ = grid.Center(w.Col+x, 0); return lon }
	check := func(x int) {
		if x >= 0 && x < len(in) && !in[x] && coversPoint(p, Position{col(x), lat}) {
			in[x] = true
		}
	}
	for _, r := range p[0] {
		for i := 1; i < len(r); i++ {
			a, b := r[i-1], r[i]
			if a[1] == lat || b[1] == lat {
				// The line runs through a vertex: decide each pixel.
				for x := range in {
					check(x)
				}
				return xs
			}
			if (a[1] > lat) != (b[1] > lat) {
				xs = append(xs, a[0]+(lat-a[1])*(b[0]-a[0])/(b[1]-a[1]))
			}
		}
	}
	slices.Sort(xs)
	for i := 0; i+1 < len(xs); i += 2 {
		// Pixels whose centre lies between the crossings, by position.
		first := int(math.Ceil((xs[i]-grid.West)/grid.DX - 0.5 - float64(w.Col)))
		last := int(math.Floor((xs[i+1]-grid.West)/grid.DX - 0.5 - float64(w.Col)))
		for x := max(first+1, 0); x <= min(last-1, len(in)-1); x++ {
			in[x] = true
		}
		for _, x := range [...]int{first - 1, first, last, last + 1} {
			check(x)
		}
	}
	return xs
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

// coversPoint reports whether q is inside or on the boundary of one of the
// polygons (exterior ring minus holes).
func coversPoint(ps []Polygon, q Position) bool {
	for _, p := range ps {
		if len(p) == 0 {
			continue
		}
		switch ringSide(p[0], q) {
		case sideOn:
			return true
		case sideOut:
			continue
		}
		inHole := false
		for _, h := range p[1:] {
			if ringSide(h, q) == sideIn {
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

// ringSide tells whether q is inside, outside or on the closed ring r
// (even-odd rule in the lon/lat plane).
func ringSide(r Ring, q Position) int {
	in := false
	for i, j := 0, len(r)-1; i < len(r); j, i = i, i+1 {
		a, b := r[i], r[j]
		// On the side a-b?
		if cross := (b[0]-a[0])*(q[1]-a[1]) - (b[1]-a[1])*(q[0]-a[0]); cross == 0 &&
			min(a[0], b[0]) <= q[0] && q[0] <= max(a[0], b[0]) && min(a[1], b[1]) <= q[1] && q[1] <= max(a[1], b[1]) {
			return sideOn
		}
		if (a[1] > q[1]) != (b[1] > q[1]) && q[0] < (b[0]-a[0])*(q[1]-a[1])/(b[1]-a[1])+a[0] {
			in = !in
		}
	}
	if in {
		return sideIn
	}
	return sideOut
}
