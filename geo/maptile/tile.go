// Package maptile renders raster reference layers as XYZ web map tiles:
// 256 x 256 images in Web Mercator (EPSG:3857), the scheme MapLibre GL and
// Leaflet ask for, drawn from a layer's GeoTIFF tiles in EPSG:4326. Each
// output pixel takes the source pixel at its centre (nearest neighbour):
// a map tile samples at most 256 source rows and 256 source columns of
// each GeoTIFF it meets, and is a sample of the layer, not an aggregate
// of every pixel under it.
//
// The work of a tile is bounded by a minimum zoom per layer (MinZoom):
// further out, the sampled rows and columns of a GeoTIFF in 256 x 256
// blocks would each fall in another block, and one map tile would decode
// the whole 40,000 x 40,000 pixel file. From MinZoom on, an output pixel
// spans at most MaxSourcePixels source pixels across, so a tile decodes
// at most 256 strips, or (256 x MaxSourcePixels / block size)^2 blocks.
package maptile

import (
	"fmt"
	"math"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
)

// Size is the width and height of a map tile in pixels.
const Size = 256

// MaxZoom is the deepest zoom served: at 18 an output pixel is about
// 0.6 m at the equator, finer than any reference layer.
const MaxZoom = 18

// MaxSourcePixels is how many source pixels an output pixel may span
// across at the minimum zoom of a layer.
const MaxSourcePixels = 16

// MinZoom is the smallest zoom at which a map tile of a raster whose
// finest pixel is dx degrees wide spans at most MaxSourcePixels of them
// per output pixel: 9 for Hansen's 0.00025°, 10 for a 10 m raster. It is
// never above MaxZoom.
func MinZoom(dx float64) int {
	for z := 0; z < MaxZoom; z++ {
		if 360/float64(uint64(Size)<<z) <= MaxSourcePixels*dx {
			return z
		}
	}
	return MaxZoom
}

// LayerMinZoom is the MinZoom of a raster layer's finest tile.
func LayerMinZoom(l *geo.RasterLayer) int {
	z := 0
	for _, t := range l.Tiles {
		z = max(z, MinZoom(t.Grid.DX))
	}
	return z
}

// Tile is an XYZ map tile: zoom Z, column X from the antimeridian
// eastwards, row Y from the north edge of Web Mercator southwards.
type Tile struct {
	Z, X, Y int
}

func (t Tile) String() string { return fmt.Sprintf("%d/%d/%d", t.Z, t.X, t.Y) }

// Problem is what is wrong with a tile's address: the coordinate
// (z, x or y) and why.
type Problem struct {
	Coord, Issue string
}

// Check returns what is wrong with t: a zoom outside 0 to MaxZoom, or a
// column or row outside 0 to 2^Z-1.
func (t Tile) Check() []Problem {
	if t.Z < 0 || t.Z > MaxZoom {
		return []Problem{{"z", fmt.Sprintf("must be from 0 to %d", MaxZoom)}}
	}
	var probs []Problem
	n := 1 << t.Z
	if t.X < 0 || t.X >= n {
		probs = append(probs, Problem{"x", fmt.Sprintf("must be from 0 to %d at zoom %d", n-1, t.Z)})
	}
	if t.Y < 0 || t.Y >= n {
		probs = append(probs, Problem{"y", fmt.Sprintf("must be from 0 to %d at zoom %d", n-1, t.Z)})
	}
	return probs
}

// Lon returns the longitude of the point px pixels east of the tile's
// west edge (0 to Size).
func (t Tile) Lon(px float64) float64 {
	return (float64(t.X)+px/Size)/float64(uint64(1)<<t.Z)*360 - 180
}

// Lat returns the latitude of the point py pixels south of the tile's
// north edge (0 to Size): Web Mercator's y is linear in
// ln(tan(pi/4 + lat/2)), so rows are evenly spaced in that, not in
// latitude.
func (t Tile) Lat(py float64) float64 {
	y := (float64(t.Y) + py/Size) / float64(uint64(1)<<t.Z)
	return math.Atan(math.Sinh(math.Pi*(1-2*y))) * 180 / math.Pi
}

// Bounds returns the longitude/latitude box of the tile.
func (t Tile) Bounds() geotiff.Bounds {
	return geotiff.Bounds{West: t.Lon(0), South: t.Lat(Size), East: t.Lon(Size), North: t.Lat(0)}
}

// Samples says which source pixel of one raster grid each output pixel of
// a map tile takes: the pixel holding the output pixel's centre. Web
// Mercator and EPSG:4326 are both north-up with longitude linear in x, so
// the source column depends on the output column only and the source row
// on the output row only.
type Samples struct {
	Cols [Size]int // source column of each output column; -1 off the grid
	Rows [Size]int // source row of each output row; -1 off the grid
	// Window is the smallest window holding every sampled pixel; empty
	// when the map tile misses the grid.
	Window geotiff.Window
}

// Sample returns the source pixels of grid g under map tile t.
func Sample(t Tile, g geotiff.Georef) *Samples {
	s := &Samples{}
	c0, c1 := g.Width, -1
	for i := range s.Cols {
		c := cell((t.Lon(float64(i)+0.5)-g.West)/g.DX, g.Width)
		s.Cols[i] = c
		if c >= 0 {
			c0, c1 = min(c0, c), max(c1, c)
		}
	}
	r0, r1 := g.Height, -1
	for j := range s.Rows {
		r := cell((g.North-t.Lat(float64(j)+0.5))/g.DY, g.Height)
		s.Rows[j] = r
		if r >= 0 {
			r0, r1 = min(r0, r), max(r1, r)
		}
	}
	if c1 >= 0 && r1 >= 0 {
		s.Window = geotiff.Window{Col: c0, Row: r0, Width: c1 - c0 + 1, Height: r1 - r0 + 1}
	}
	return s
}

// cell is the index of the cell holding position p (in cells from the
// grid's edge), or -1 outside 0 to n.
func cell(p float64, n int) int {
	if !(p >= 0) || p >= float64(n) { // !(>=) also refuses NaN
		return -1
	}
	return int(p)
}
