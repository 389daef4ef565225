package maptile

import (
	"context"
	"fmt"
	"image"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
)

// maxWindowPixels bounds the source window read in one piece: at zooms
// where a map tile spans more source pixels than this (below 11 for
// Hansen's 0.00025° grid), only the sampled rows are read, one by one.
// Either way a map tile reads at most max(maxWindowPixels, 256 rows x the
// sampled columns' span) pixels of each GeoTIFF, and decodes only the
// strips or blocks those rows cross (see MinZoom for the bound on those).
const maxWindowPixels = 1 << 20

// Render draws raster layer l on map tile t: each output pixel is the
// colour of the source pixel at its centre, transparent where the layer
// has no tile, no value to show or nodata. Pixels are read through each
// GeoTIFF's reader (and so its block cache). It draws any zoom; callers
// bound the work by refusing zooms below LayerMinZoom(l).
func Render(ctx context.Context, l *geo.RasterLayer, t Tile) (*image.NRGBA, error) {
	img := NewImage()
	palette := PaletteOf(l.Kind)
	tb := t.Bounds()
	for i := range l.Tiles {
		rt := &l.Tiles[i]
		b := rt.Grid.Bounds()
		if b.East <= tb.West || tb.East <= b.West || b.North <= tb.South || tb.North <= b.South {
			continue
		}
		s := Sample(t, rt.Grid)
		if s.Window.Empty() {
			continue
		}
		p := palette
		if rt.HasNoData {
			p = p.WithNoData(rt.NoData)
		}
		if err := paintTile(ctx, img, s, rt, p); err != nil {
			return nil, fmt.Errorf("tile %s: %w", rt.Name, err)
		}
	}
	return img, nil
}

// paintTile reads the sampled pixels of one GeoTIFF and paints them.
func paintTile(ctx context.Context, img *image.NRGBA, s *Samples, rt *geo.RasterTile, p *Palette) error {
	w := s.Window
	if w.Width*w.Height <= maxWindowPixels {
		px := make([]uint8, w.Width*w.Height)
		if err := rt.Reader.ReadWindow(ctx, w, px); err != nil {
			return err
		}
		Paint(img, s, w, px, p)
		return nil
	}
	px := make([]uint8, w.Width)
	prev := -1
	for _, r := range s.Rows {
		// Rows are sampled north to south, so a row sampled twice (a
		// source pixel taller than an output one) comes twice in a row.
		if r < 0 || r == prev {
			continue
		}
		prev = r
		row := geotiff.Window{Col: w.Col, Row: r, Width: w.Width, Height: 1}
		if err := rt.Reader.ReadWindow(ctx, row, px); err != nil {
			return err
		}
		Paint(img, s, row, px, p)
	}
	return nil
}
