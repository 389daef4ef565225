package geo

import (
	"cmp"
	"slices"
)

// ScreeningOrder returns the indexes of fs in the order to screen them
// against the raster layers: by the tile of the first raster layer that
// holds the north-west corner of the plot's bounding box (plots outside
// every tile, or without coordinates, last), then from north to south.
// Plots in the same place keep their order.
//
// A raster tile is decoded a block (a strip of rows, or a square tile)
// at a time, and the blocks are kept in a cache of bounded size. Plots
// taken from north to south need the same blocks one after another, so
// each block is decoded about once while the plots over it are screened;
// in the order a job lists them, plots of cooperatives at the same
// latitude but apart, or a job revisiting a place after others, find
// their blocks evicted and decode them again. Sizing the cache by what a
// job touches would not bound the memory of a large job; this order does
// not depend on its size. A caller screens fs[order[0]] first and keeps
// each outcome at its feature's index, so that its results stay in the
// job's order.
//
// Without raster layers it is the order of fs.
func (ix *Index) ScreeningOrder(fs []Feature) []int {
	order := make([]int, len(fs))
	for i := range order {
		order[i] = i
	}
	if ix == nil || len(ix.rasters) == 0 {
		return order
	}
	tiles := ix.rasters[0].Tiles
	type key struct {
		tile  int // in tiles; len(tiles) outside all of them
		north float64
	}
	keys := make([]key, len(fs))
	for i, f := range fs {
		west, north, ok := northWest(f.Geometry)
		keys[i] = key{tile: len(tiles)}
		if !ok {
			continue
		}
		keys[i].north = north
		for t := range tiles {
			b := tiles[t].Grid.Bounds()
			if b.West <= west && west < b.East && b.South < north && north <= b.North {
				keys[i].tile = t
				break
			}
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ka, kb := keys[a], keys[b]
		if c := cmp.Compare(ka.tile, kb.tile); c != 0 {
			return c
		}
		return cmp.Compare(kb.north, ka.north) // north first
	})
	return order
}

// northWest returns the west and north of g's bounding box (of its
// polygons' outer rings, or of its points); false when g has no
// coordinates.
func northWest(g Geometry) (west, north float64, ok bool) {
	if g.IsPoint() {
		for i, q := range g.Points {
			if i == 0 {
				west, north = q[0], q[1]
			}
			west, north = min(west, q[0]), max(north, q[1])
		}
		return west, north, len(g.Points) > 0
	}
	lo, hi, ok := bbox(g.Polygons)
	return lo[0], hi[1], ok
}
