package geo_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
)

// The benchmark's loss-year tile is placed like
// Hansen_GFC-2023-v1.11_lossyear_10N_080W.tif: 40,000 x 40,000 pixels of
// 0.00025 degree from 80 W, 10 N (to 70 W, the equator).
const (
	rasterBenchWest  = -80.0
	rasterBenchNorth = 10.0
	rasterBenchDeg   = 0.00025
	rasterBenchSize  = 40000
	rasterBenchTile  = "Hansen_GFC-2023-v1.11_lossyear_10N_080W.tif"
	rasterBenchPlots = 4096 // plots in the pool the benchmark cycles through
)

// rasterBenchLossYear looks like a Hansen lossyear tile (a copy of the
// pattern of geotiff's BenchmarkReadWindow): mostly 0, with one 64 x 64
// patch in seven holding a loss year (1 to 23) and speckled with 0. Loss
// years 21-23 are after the cutoff: 3 patches in 23 of those with loss,
// so a few percent of random plots are HIGH_RISK. It repeats every 4096
// pixels, so geotifftest's ShareBlocks writes the file quickly and small;
// the cache keys blocks by index, not by offset, so the repeats do not
// make reads hit it.
func rasterBenchLossYear(col, row int) uint8 {
	x, y := col&4095, row&4095
	h := uint32(x>>6)*73856093 ^ uint32(y>>6)*19349663
	if h%7 != 0 || (x*31+y*17)%5 == 0 {
		return 0
	}
	return uint8(1 + h%23)
}

// rasterBenchPlot is a plot of the pool, with the class the pixel pattern
// alone puts it in (see rasterBenchClassify).
type rasterBenchPlot struct {
	f      geo.Feature
	areaHa float64
	class  int
}

const (
	plotMixed = iota // anything may happen: not checked beyond not FAILED
	plotClean        // no pixel of its bounding box is lost after the cutoff: COMPLIANT
	plotLost         // its bounding box lies in one patch lost after the cutoff: HIGH_RISK
)

// rasterBenchPool is the benchmark's plots: 4,096 random irregular polygons
// of 5 to 50 ha (20 to 60 corners on a jittered circle, written with 6
// decimals) anywhere in the tile, parsed and checked once per process.
var rasterBenchPool = sync.OnceValues(func() ([]rasterBenchPlot, error) {
	r := rand.New(rand.NewPCG(2023, 1_11))
	const margin = 0.01 // degrees, about 1 km: plots stay inside the tile
	span := rasterBenchSize*rasterBenchDeg - 2*margin
	plots := make([]rasterBenchPlot, 0, rasterBenchPlots)
	for tries := 0; len(plots) < rasterBenchPlots; tries++ {
		if tries > 2*rasterBenchPlots {
			return nil, fmt.Errorf("only %d of %d plots generated", len(plots), rasterBenchPlots)
		}
		lon := rasterBenchWest + margin + r.Float64()*span
		lat := rasterBenchNorth - margin - r.Float64()*span
		target := 5.5 + 44*r.Float64() // ha, inside 5-50 after rounding
		f, ha, err := rasterBenchPolygon(r, lon, lat, target, len(plots))
		if err != nil {
			return nil, err
		}
		if ha < 5 || ha > 50 {
			continue
		}
		plots = append(plots, rasterBenchPlot{f: f, areaHa: ha, class: rasterBenchClassify(f.Geometry.Polygons[0][0])})
	}
	return plots, nil
})

// rasterBenchPolygon returns an irregular polygon plot of about target
// ha round (lon, lat), numbered index, and its area: 20 to 60 corners on a
// jittered circle, written with 6 decimals, parsed and checked.
func rasterBenchPolygon(r *rand.Rand, lon, lat, target float64, index int) (geo.Feature, float64, error) {
	n := 20 + r.IntN(41)
	// Corners in metres from the centre, on a circle of the target's
	// radius, at jittered angles (increasing, so the ring is simple) and
	// radii; then scaled to the target area.
	radius := math.Sqrt(target * 1e4 / math.Pi)
	mLon, mLat := 111_320*math.Cos(lat*math.Pi/180), 110_574.0
	ring := make([][2]float64, n+1)
	for k := range n {
		a := 2 * math.Pi * (float64(k) + 0.8*r.Float64()) / float64(n)
		rad := radius * (0.75 + 0.25*r.Float64())
		ring[k] = [2]float64{rad * math.Cos(a) / mLon, rad * math.Sin(a) / mLat}
	}
	ring[n] = ring[0]
	abs := func(s float64) [][2]float64 {
		out := make([][2]float64, len(ring))
		for i, p := range ring {
			out[i] = [2]float64{lon + s*p[0], lat + s*p[1]}
		}
		return out
	}
	s := math.Sqrt(target / geo.PolygonArea([][][2]float64{abs(1)}))

	var b strings.Builder
	b.WriteString(`{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[`)
	for i, p := range abs(s) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "[%.6f,%.6f]", p[0], p[1])
	}
	fmt.Fprintf(&b, `]]},"properties":{"commodity":"cocoa","producerCountry":"CO","externalId":"plot-%04d"}}`, index)
	f, err := geo.ParseFeature([]byte(b.String()), index)
	if err != nil {
		return geo.Feature{}, 0, fmt.Errorf("plot %d: %v", index, err)
	}
	if reason, detail := geo.Check(f); reason != "" {
		return geo.Feature{}, 0, fmt.Errorf("plot %d: %s: %s", index, reason, detail)
	}
	rings := make([][][2]float64, len(f.Geometry.Polygons[0]))
	for i, rg := range f.Geometry.Polygons[0] {
		rings[i] = rg
	}
	return f, geo.PolygonArea(rings), nil
}

// rasterBenchClassify tells from the pixel pattern alone, without the
// file, whether a plot must be COMPLIANT (plotClean) or HIGH_RISK
// (plotLost), looking at the pixels of its bounding box and one more
// around it.
func rasterBenchClassify(ring geo.Ring) int {
	lo, hi := ring[0], ring[0]
	for _, p := range ring {
		lo = [2]float64{min(lo[0], p[0]), min(lo[1], p[1])}
		hi = [2]float64{max(hi[0], p[0]), max(hi[1], p[1])}
	}
	c0 := int(math.Floor((lo[0]-rasterBenchWest)/rasterBenchDeg)) - 1
	c1 := int(math.Floor((hi[0]-rasterBenchWest)/rasterBenchDeg)) + 1
	r0 := int(math.Floor((rasterBenchNorth-hi[1])/rasterBenchDeg)) - 1
	r1 := int(math.Floor((rasterBenchNorth-lo[1])/rasterBenchDeg)) + 1
	anyLost, patch := false, -1
	for row := r0; row <= r1; row++ {
		for col := c0; col <= c1; col++ {
			v := rasterBenchLossYear(col, row)
			if v > geo.LossCutoffValue {
				anyLost = true
			}
			// The patch holding the pixel, and whether it is lost after
			// the cutoff (speckles of 0 included).
			p := (row>>6)<<16 | col>>6
			if patch == -1 {
				patch = p
			} else if patch != p {
				patch = -2
			}
		}
	}
	switch {
	case !anyLost:
		return plotClean
	case patch >= 0: // one patch, and it is lost after the cutoff
		return plotLost
	}
	return plotMixed
}

// rasterBenchFile writes the tile in the layout into dir, once.
func rasterBenchFile(b *testing.B, dir, name string, o geotifftest.Options) string {
	b.Helper()
	path := filepath.Join(dir, name+"-"+rasterBenchTile)
	o.West, o.North, o.DX, o.DY = rasterBenchWest, rasterBenchNorth, rasterBenchDeg, rasterBenchDeg
	rasterBenchWrite(b, path, rasterBenchSize, rasterBenchSize, rasterBenchLossYear, o)
	return path
}

// BenchmarkAssessRaster measures plots screened per second by geo.Assess
// (DefaultRules) against one raster layer: a full-size 40,000 x 40,000 LZW
// loss-year tile placed like Hansen's 10N_080W, read from disk through an
// *os.File and a geotiff.Cache of DefaultCacheBytes (64 MiB). The plots
// are 4,096 random irregular polygons of 5 to 50 ha (20 to 60 corners)
// anywhere in the tile, generated once per process; each run cycles
// through them. The layouts are strips-1 (one row per strip, as Hansen's
// tiles are: a plot decodes 10-35 rows of 40,000 pixels) and tiles-256
// (256 x 256 tiles: 1-4 tiles a plot):
//
//   - cold: a fresh cache per run and plots anywhere, so that nearly every
//     block a plot needs is decoded (the cache holds 4 % of the tile);
//   - parallel: cold, with GOMAXPROCS goroutines sharing file and cache.
//
// It reports plots/s, the share of HIGH_RISK plots, the cache's hit rate,
// and the process's resident memory (VmRSS, Linux) and heap after the
// run. The target is at least 500 plots/s from a cold cache, single
// threaded, in under 300 MB resident. A plot that comes out FAILED, or a
// plot whose status the pixel pattern decides (see rasterBenchClassify)
// coming out otherwise, fails the benchmark: the setup would be wrong.
//
// The tiles are written (in a few seconds, with blocks shared) once per
// run of BenchmarkAssessRaster in a temporary directory removed after it;
// with -count=n they are written n times.
func BenchmarkAssessRaster(b *testing.B) {
	plots, err := rasterBenchPool()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	for _, layout := range []struct {
		name string
		opts geotifftest.Options
	}{
		{"strips-1", geotifftest.Options{RowsPerStrip: 1}},
		{"tiles-256", geotifftest.Options{TileWidth: 256, TileHeight: 256}},
	} {
		b.Run(layout.name, func(b *testing.B) {
			path := rasterBenchFile(b, dir, layout.name, layout.opts)
			fh, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			defer fh.Close()
			st, err := fh.Stat()
			if err != nil {
				b.Fatal(err)
			}
			open := func(b *testing.B) (*geo.Index, *geotiff.Cache) {
				c := geotiff.NewCache(geotiff.DefaultCacheBytes)
				f, err := geotiff.OpenOptions(fh, st.Size(), geotiff.Options{Cache: c})
				if err != nil {
					b.Fatal(err)
				}
				layer := &geo.RasterLayer{
					ID: "hansen-lossyear", Name: "Hansen GFC lossyear", Kind: geo.LossYear, Version: "1.11",
					Tiles: []geo.RasterTile{{Name: rasterBenchTile, Grid: f.Georef(), Reader: f}},
				}
				return geo.NewIndex().WithRasters(layer), c
			}
			ix, _ := open(b)
			rasterBenchCheck(b, ix, plots)

			b.Run("cold", func(b *testing.B) {
				ix, c := open(b)
				ctx := context.Background()
				rules := geo.DefaultRules()
				var high int
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					p := &plots[i%len(plots)]
					o, err := geo.Assess(ctx, p.f, ix, rules)
					if err != nil {
						b.Fatal(err)
					}
					switch o.Status {
					case geo.StatusHighRisk:
						high++
					case geo.StatusCompliant:
					default:
						b.Fatalf("plot %d (%.2f ha): %s %s: %s", p.f.Index, p.areaHa, o.Status, o.Reason, o.Detail)
					}
				}
				b.StopTimer()
				if b.N >= len(plots) && (high == 0 || high == b.N) {
					b.Fatalf("%d of %d plots HIGH_RISK: the pattern should make some, not all", high, b.N)
				}
				rasterBenchReport(b, c, high)
			})
			b.Run("parallel", func(b *testing.B) {
				ix, c := open(b)
				ctx := context.Background()
				rules := geo.DefaultRules()
				var next, high atomic.Int64
				b.ReportAllocs()
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						p := &plots[int(next.Add(1)-1)%len(plots)]
						o, err := geo.Assess(ctx, p.f, ix, rules)
						if err != nil {
							b.Error(err)
							return
						}
						switch o.Status {
						case geo.StatusHighRisk:
							high.Add(1)
						case geo.StatusCompliant:
						default:
							b.Errorf("plot %d (%.2f ha): %s %s: %s", p.f.Index, p.areaHa, o.Status, o.Reason, o.Detail)
							return
						}
					}
				})
				b.StopTimer()
				rasterBenchReport(b, c, int(high.Load()))
			})
		})
	}
}

// rasterBenchCheck assesses up to 16 plots the pixel pattern decides, 8
// of each, and fails b unless each comes out as the pattern says (through
// its own cache: the runs start cold all the same).
func rasterBenchCheck(b *testing.B, ix *geo.Index, plots []rasterBenchPlot) {
	b.Helper()
	var seen [3]int
	for _, p := range plots {
		if p.class == plotMixed || seen[p.class] >= 8 {
			continue
		}
		seen[p.class]++
		o, err := geo.Assess(context.Background(), p.f, ix, geo.DefaultRules())
		if err != nil {
			b.Fatal(err)
		}
		want := geo.StatusCompliant
		if p.class == plotLost {
			want = geo.StatusHighRisk
		}
		if o.Status != want || len(o.Rasters) != 1 || !o.Rasters[0].Covered || o.Loss == nil ||
			(p.class == plotClean) != (o.Loss.Pixels == 0) || math.Abs(o.AreaHa-p.areaHa) > 1e-9 {
			b.Fatalf("plot %d (%.2f ha, class %d): %s %s: %s; rasters %+v, loss %+v",
				p.f.Index, p.areaHa, p.class, o.Status, o.Reason, o.Detail, o.Rasters, o.Loss)
		}
		if p.class == plotLost && o.Reason != geo.ReasonDeforestationAfterCutoff {
			b.Fatalf("plot %d: HIGH_RISK %s, want %s", p.f.Index, o.Reason, geo.ReasonDeforestationAfterCutoff)
		}
	}
	if seen[plotClean] == 0 || seen[plotLost] == 0 {
		b.Fatalf("the pool has %d clean and %d lost plots to check: want some of each", seen[plotClean], seen[plotLost])
	}
}

func rasterBenchReport(b *testing.B, c *geotiff.Cache, high int) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "plots/s")
	b.ReportMetric(100*float64(high)/float64(b.N), "%high-risk")
	s := c.Stats()
	if s.Hits+s.Misses > 0 {
		b.ReportMetric(100*float64(s.Hits)/float64(s.Hits+s.Misses), "%hits")
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	b.ReportMetric(float64(m.HeapInuse)/(1<<20), "MiB-heap")
	if rss := rasterBenchRSSMiB(); rss > 0 {
		b.ReportMetric(rss, "MiB-rss")
	}
}

// rasterBenchRSSMiB returns the process's resident set (Linux), or 0.
func rasterBenchRSSMiB() float64 { return float64(procStatusKB("VmRSS:")) / 1024 }

// BenchmarkAssessLossInForest measures plots screened per second against a
// loss-year layer and a finer forest-2020 layer, where each forest pixel
// of the plot looks up the loss-year pixel at its centre: the plots of
// BenchmarkAssessRaster on its Hansen tile, and a forest tile of about
// 10 m (8.983e-05 degree, JRC's grid) over the same area. Both are read
// from their pixel patterns (funcReader), without files, so that the
// lookups, not the decoding, are what is measured.
func BenchmarkAssessLossInForest(b *testing.B) {
	plots, err := rasterBenchPool()
	if err != nil {
		b.Fatal(err)
	}
	const fineDeg = 8.983152841195215e-05
	fine := int(math.Ceil(rasterBenchSize * rasterBenchDeg / fineDeg))
	loss := geo.RasterTile{Name: rasterBenchTile, Reader: funcReader(rasterBenchLossYear), Grid: geotiff.Georef{
		West: rasterBenchWest, North: rasterBenchNorth, DX: rasterBenchDeg, DY: rasterBenchDeg, Width: rasterBenchSize, Height: rasterBenchSize}}
	forest := geo.RasterTile{Name: "forest.tif", Reader: funcReader(func(col, row int) uint8 { return boolPixel((col/97+row/89)%3 != 0) }),
		Grid: geotiff.Georef{West: rasterBenchWest, North: rasterBenchNorth, DX: fineDeg, DY: fineDeg, Width: fine, Height: fine}}
	ix := geo.NewIndex().WithRasters(rasterLayer("loss", geo.LossYear, loss), rasterLayer("forest", geo.Forest2020, forest))
	ctx := context.Background()
	rules := geo.DefaultRules()
	var lookups int
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p := &plots[i%len(plots)]
		o, err := geo.Assess(ctx, p.f, ix, rules)
		if err != nil {
			b.Fatal(err)
		}
		if o.Loss == nil || o.Loss.ForestLayerID != "forest" {
			b.Fatalf("plot %d: %s %s, loss %+v: want loss in forest measured", p.f.Index, o.Status, o.Reason, o.Loss)
		}
		n, _ := o.Rasters[1].Stats.Total()
		lookups += n
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "plots/s")
	b.ReportMetric(float64(lookups)/float64(b.N), "lookups/plot")
}

// rasterBenchWrite writes a GeoTIFF of the pixels px, LZW with blocks
// shared, unless path exists.
func rasterBenchWrite(b *testing.B, path string, width, height int, px geotifftest.Pixels, o geotifftest.Options) {
	b.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	start := time.Now()
	// Blocks of the same pixels stored once make the file quick to write
	// and small; with a Period each is generated once but stored in its
	// place, so that the file is as large as its blocks make it and a
	// cold run reads what it would.
	o.Compression, o.ShareBlocks = geotiff.CompressionLZW, o.Period == 0
	tmp := path + ".tmp"
	if err := geotifftest.WriteFile(tmp, width, height, px, o); err != nil {
		b.Fatal(err)
	}
	// On the disk, so that its pages are clean: the kernel drops only
	// those when a benchmark asks it to (posix_fadvise DONTNEED).
	if fh, err := os.Open(tmp); err != nil {
		b.Fatal(err)
	} else if err := errors.Join(fh.Sync(), fh.Close()); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(path)
	b.Logf("wrote %s: %d bytes in %v", filepath.Base(path), st.Size(), time.Since(start).Round(time.Millisecond))
	debug.FreeOSMemory() // the writer's garbage is not the benchmark's
}

// procStatusKB returns a field in kB of /proc/self/status (Linux), or 0.
func procStatusKB(field string) int {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb
		}
	}
	return 0
}
