package maptile_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
	"github.com/eudr/eudr/geo/maptile"
)

// The benchmark's loss-year tile is placed like
// Hansen_GFC-2023-v1.11_lossyear_10N_080W.tif: 40,000 x 40,000 pixels of
// 0.00025 degree from 80 W, 10 N (to 70 W, the equator).
const (
	benchWest, benchNorth, benchDeg = -80.0, 10.0, 0.00025
	benchSize                       = 40000
)

// benchLossYear is the pattern of geo's raster benchmarks: mostly 0, one
// 64 x 64 patch in seven holding a loss year (1 to 23), repeating every
// 4,096 pixels so that the file is written quickly with shared blocks.
func benchLossYear(col, row int) uint8 {
	x, y := col&4095, row&4095
	h := uint32(x>>6)*73856093 ^ uint32(y>>6)*19349663
	if h%7 != 0 || (x*31+y*17)%5 == 0 {
		return 0
	}
	return uint8(1 + h%23)
}

// xyzOf is the map tile at zoom z holding lon, lat.
func xyzOf(z int, lon, lat float64) maptile.Tile {
	n := float64(int(1) << z)
	phi := lat * math.Pi / 180
	return maptile.Tile{Z: z,
		X: int((lon + 180) / 360 * n),
		Y: int((1 - math.Log(math.Tan(phi)+1/math.Cos(phi))/math.Pi) / 2 * n)}
}

// BenchmarkRender measures map tiles rendered per second (maptile.Render,
// without PNG encoding) over a full-size 40,000 x 40,000 LZW loss-year
// tile read from disk through a geotiff.Cache of DefaultCacheBytes
// (64 MiB), in strips of one row (as Hansen's tiles are) and in 256 x 256
// tiles. Each run renders map tiles at random places in the GeoTIFF,
// from a cache fresh at the start of the run:
//
//   - z12: a map tile spans about 350 x 350 source pixels, read as one
//     window (the zoom a plot is looked at);
//   - z9: the layer's MinZoom: about 2,800 x 2,800 source pixels, of
//     which the 256 sampled rows are read one by one.
func BenchmarkRender(b *testing.B) {
	dir := b.TempDir()
	for _, layout := range []struct {
		name string
		opts geotifftest.Options
	}{
		{"strips-1", geotifftest.Options{RowsPerStrip: 1}},
		{"tiles-256", geotifftest.Options{TileWidth: 256, TileHeight: 256}},
	} {
		b.Run(layout.name, func(b *testing.B) {
			path := filepath.Join(dir, layout.name+".tif")
			o := layout.opts
			o.Compression, o.ShareBlocks = geotiff.CompressionLZW, true
			o.West, o.North, o.DX, o.DY = benchWest, benchNorth, benchDeg, benchDeg
			if err := geotifftest.WriteFile(path, benchSize, benchSize, benchLossYear, o); err != nil {
				b.Fatal(err)
			}
			fh, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer fh.Close()
			st, err := fh.Stat()
			if err != nil {
				b.Fatal(err)
			}
			for _, z := range []int{12, 9} {
				b.Run("z"+string(rune('0'+z/10))+string(rune('0'+z%10)), func(b *testing.B) {
					f, err := geotiff.OpenOptions(fh, st.Size(), geotiff.Options{Cache: geotiff.NewCache(geotiff.DefaultCacheBytes)})
					if err != nil {
						b.Fatal(err)
					}
					l := &geo.RasterLayer{ID: "hansen", Kind: geo.LossYear,
						Tiles: []geo.RasterTile{{Name: "hansen.tif", Grid: f.Georef(), Reader: f}}}
					r := rand.New(rand.NewPCG(uint64(z), 2023))
					tiles := make([]maptile.Tile, 1024)
					for i := range tiles {
						tiles[i] = xyzOf(z, benchWest+0.05+r.Float64()*9.9, benchNorth-0.05-r.Float64()*9.9)
					}
					ctx := context.Background()
					b.ReportAllocs()
					b.ResetTimer()
					for i := range b.N {
						if _, err := maptile.Render(ctx, l, tiles[i%len(tiles)]); err != nil {
							b.Fatal(err)
						}
					}
					b.StopTimer()
					b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tiles/s")
				})
			}
		})
	}
}
