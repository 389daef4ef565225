package geo

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/eudr/eudr/geo/geotiff"
)

// pixelsRaster is a raster in memory: pixel (col, row) of the window read
// is px(col, row).
type pixelsRaster func(col, row int) uint8

func (r pixelsRaster) ReadWindow(_ context.Context, w geotiff.Window, dst []uint8) error {
	for y := range w.Height {
		for x := range w.Width {
			dst[y*w.Width+x] = r(w.Col+x, w.Row+y)
		}
	}
	return nil
}

// TestLossInForest_RunsMatchEachPixel checks that lossInForest, which
// looks the coarser grid's pixel up once for the fine pixels that share
// it, counts what looking it up for each fine pixel does: plots across
// the edge between two tiles of the coarser grid, in either order, of two
// parts, with nodata in both layers, the finer grid either layer.
func TestLossInForest_RunsMatchEachPixel(t *testing.T) {
	value := func(seed uint64, nodata uint8) pixelsRaster {
		return func(col, row int) uint8 {
			h := (uint64(col)*0x9E3779B97F4A7C15 ^ uint64(row)*0xC2B2AE3D27D4EB4F ^ seed) * 0x165667B19E3779F9
			h ^= h >> 29
			if h%17 == 0 {
				return nodata
			}
			return uint8(h % 25) // loss years 0-24; forest where not 0
		}
	}
	coarse := func(kind LayerKind, seed uint64, wests ...float64) *RasterLayer {
		l := &RasterLayer{ID: string(kind), Kind: kind}
		for i, west := range wests {
			l.Tiles = append(l.Tiles, RasterTile{Name: string(kind) + string(rune('a'+i)), NoData: 255, HasNoData: true,
				Grid:   geotiff.Georef{West: west, North: 1, DX: 0.00025, DY: 0.00025, Width: 100, Height: 100},
				Reader: value(seed+uint64(i), 255)})
		}
		return l
	}
	fine := func(kind LayerKind, seed uint64) *RasterLayer {
		return &RasterLayer{ID: string(kind), Kind: kind, Tiles: []RasterTile{{Name: string(kind), NoData: 255, HasNoData: true,
			Grid:   geotiff.Georef{West: 10, North: 1, DX: 0.0001, DY: 0.0001, Width: 500, Height: 250},
			Reader: value(seed, 255)}}}
	}
	r := rand.New(rand.NewPCG(3, 5))
	star := func(lon, lat, rad float64) Polygon {
		var ring Ring
		n := 3 + r.IntN(20)
		for i := range n {
			a, d := 2*math.Pi*float64(i)/float64(n), rad*(0.3+0.7*r.Float64())
			ring = append(ring, Position{lon + d*math.Cos(a), lat + d*math.Sin(a)})
		}
		return Polygon{append(ring, ring[0])}
	}
	for _, layers := range [][2]*RasterLayer{
		{coarse(LossYear, 1, 10, 10.025), fine(Forest2020, 2)},
		{fine(LossYear, 3), coarse(Forest2020, 4, 10, 10.025)},
		{coarse(LossYear, 5, 10.025, 10), fine(Forest2020, 6)}, // the east tile first
		// Tiles that overlap, which a layer's must not: where they do, the
		// first answers, as valueAt has it.
		{coarse(LossYear, 7, 10.02, 10), fine(Forest2020, 8)},
	} {
		loss, forest := layers[0], layers[1]
		for i := range 100 {
			ps := []Polygon{star(10.025+0.008*(r.Float64()-0.5), 0.99+0.004*(r.Float64()-0.5), 0.006*r.Float64())}
			if i%3 == 0 {
				ps = append(ps, star(10.02+0.01*r.Float64(), 0.988+0.004*r.Float64(), 0.003*r.Float64()))
			}
			g := Geometry{Type: TypeMultiPolygon, Polygons: ps}
			p, ok := newRasterPlot(g, 0, 1)
			if !ok {
				t.Fatal("no plot")
			}
			lw, _, err := p.read(context.Background(), loss)
			if err != nil {
				t.Fatal(err)
			}
			fw, _, err := p.read(context.Background(), forest)
			if err != nil {
				t.Fatal(err)
			}
			pixels, ha := p.lossInForest(lw, fw)
			wantPixels, wantHa := lossInForestEachPixel(lw, fw)
			if pixels != wantPixels || ha != wantHa {
				t.Fatalf("loss grid %v, plot %d: %d pixels, %v ha; a lookup per pixel counts %d, %v ha",
					loss.Tiles[0].Grid.DX, i, pixels, ha, wantPixels, wantHa)
			}
		}
	}
}

// lossInForestEachPixel is lossInForest for polygons as it was, the other
// grid's pixel looked up for each fine pixel.
func lossInForestEachPixel(loss, forest []rasterWindow) (pixels int, ha float64) {
	fine, other, fineIsLoss := loss, forest, true
	if cellDeg2(forest[0].tile.Grid) < cellDeg2(loss[0].tile.Grid) {
		fine, other, fineIsLoss = forest, loss, false
	}
	for _, w := range fine {
		scanRows(w.parts, w.tile.Grid, w.cells.of(w.tile.Grid), w.win, func(xs []int64, r scanRow) {
			for i := 0; i < len(r.runs); i += 2 {
				for x := r.runs[i]; x < r.runs[i+1]; x++ {
					v := w.px[r.y*w.win.Width+x]
					if w.tile.HasNoData && v == w.tile.NoData {
						continue
					}
					if ov, ok := valueAt(other, pt{xs[x], r.lat}); ok && lostPixel(v, ov, fineIsLoss) {
						pixels++
						ha += r.ha
					}
				}
			}
		})
	}
	return pixels, ha
}
