package geotiff_test

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
)

// benchDir holds the benchmarks' generated files; TestMain removes it.
var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// lossyear looks like a Hansen lossyear tile: mostly 0, with one 64 x 64
// patch in seven holding a loss year (1 to 23) and speckled with 0. It
// repeats every 4096 pixels, so a tiled file has 256 distinct tiles and a
// striped one 4096 distinct strips, which geotifftest's ShareBlocks writes
// once each.
func lossyear(col, row int) uint8 {
	x, y := col&4095, row&4095
	h := uint32(x>>6)*73856093 ^ uint32(y>>6)*19349663
	if h%7 != 0 || (x*31+y*17)%5 == 0 {
		return 0
	}
	return uint8(1 + h%23)
}

// hansenFile writes (once per process) a 40,000 x 40,000 LZW GeoTIFF placed
// like Hansen_GFC-2023-v1.11_lossyear_10N_080W.tif.
func hansenFile(b *testing.B, name string, o geotifftest.Options) string {
	b.Helper()
	hansenOnce.Lock()
	defer hansenOnce.Unlock()
	if benchDir == "" {
		dir, err := os.MkdirTemp("", "geotiff-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = dir
	}
	path := filepath.Join(benchDir, name)
	if _, err := os.Stat(path); err == nil {
		return path
	}
	start := time.Now()
	o.Compression, o.ShareBlocks = geotiff.CompressionLZW, true
	if err := geotifftest.WriteFile(path, 40000, 40000, lossyear, o); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(path)
	b.Logf("wrote %s: %d bytes in %v", name, st.Size(), time.Since(start).Round(time.Millisecond))
	debug.FreeOSMemory()
	return path
}

var hansenOnce sync.Mutex

// BenchmarkReadWindow reads random 100 x 100 windows (a plot of 5 to 50 ha
// at 0.00025 degree is 10 to 30 pixels across) from a 40,000 x 40,000 LZW
// file, tiled 256 x 256 and in strips of one row (as Hansen's tiles are):
//
//   - cold: windows anywhere in the file through a 64 MiB cache, which
//     holds 4 % of the decoded tiles, so nearly every block is decoded;
//   - warm: windows in a region whose blocks the cache holds;
//   - parallel: cold, from GOMAXPROCS goroutines sharing the file.
//
// It reports windows/s, the cache's hit rate, and the process's resident
// memory (VmRSS) and heap after the run. The file is written once per
// process in a temporary directory; its blocks repeat (see lossyear).
func BenchmarkReadWindow(b *testing.B) {
	for _, layout := range []struct {
		name   string
		opts   geotifftest.Options
		region int // the warm region's side, in pixels
	}{
		{"tiles-256", geotifftest.Options{TileWidth: 256, TileHeight: 256}, 2048},
		{"strips-1", geotifftest.Options{RowsPerStrip: 1}, 1000},
	} {
		b.Run(layout.name, func(b *testing.B) {
			path := hansenFile(b, layout.name+".tif", layout.opts)
			fh, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer fh.Close()
			st, _ := fh.Stat()
			open := func(b *testing.B) (*geotiff.File, *geotiff.Cache) {
				c := geotiff.NewCache(geotiff.DefaultCacheBytes)
				f, err := geotiff.OpenOptions(fh, st.Size(), geotiff.Options{Cache: c})
				if err != nil {
					b.Fatal(err)
				}
				return f, c
			}
			const side = 100
			b.Run("cold", func(b *testing.B) {
				f, c := open(b)
				checkWindow(b, f, win(39900, 39900, side, side), lossyear)
				r := rand.New(rand.NewPCG(1, 2))
				dst := make([]uint8, side*side)
				b.ResetTimer()
				for range b.N {
					w := win(r.IntN(40000-side), r.IntN(40000-side), side, side)
					if err := f.ReadWindow(context.Background(), w, dst); err != nil {
						b.Fatal(err)
					}
				}
				report(b, c)
			})
			b.Run("warm", func(b *testing.B) {
				f, c := open(b)
				r := rand.New(rand.NewPCG(3, 4))
				dst := make([]uint8, side*side)
				const x0, y0 = 12000, 20000
				checkWindow(b, f, win(x0, y0, layout.region, layout.region), lossyear) // fills the cache
				b.ResetTimer()
				for range b.N {
					w := win(x0+r.IntN(layout.region-side), y0+r.IntN(layout.region-side), side, side)
					if err := f.ReadWindow(context.Background(), w, dst); err != nil {
						b.Fatal(err)
					}
				}
				report(b, c)
			})
			b.Run("parallel-cold", func(b *testing.B) {
				f, c := open(b)
				var seed sync.Mutex
				n := uint64(0)
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					seed.Lock()
					n++
					r := rand.New(rand.NewPCG(n, 5))
					seed.Unlock()
					dst := make([]uint8, side*side)
					for pb.Next() {
						w := win(r.IntN(40000-side), r.IntN(40000-side), side, side)
						if err := f.ReadWindow(context.Background(), w, dst); err != nil {
							b.Error(err)
							return
						}
					}
				})
				report(b, c)
			})
		})
	}
}

func report(b *testing.B, c *geotiff.Cache) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "windows/s")
	s := c.Stats()
	if s.Hits+s.Misses > 0 {
		b.ReportMetric(100*float64(s.Hits)/float64(s.Hits+s.Misses), "%hits")
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapInuse)/(1<<20), "MiB-heap")
	b.ReportMetric(rssMiB(), "MiB-rss")
}

// rssMiB returns the process's resident set (Linux), or 0.
func rssMiB() float64 {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}
