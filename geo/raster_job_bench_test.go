//go:build linux

package geo_test

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
	"golang.org/x/sys/unix"
)

// The job benchmark's forest-2020 layer is a tile like those of JRC's
// Global Forest Cover 2020 (about 10 m, 10 x 10 degree tiles of 256 x 256
// pixel LZW blocks), at 0.0001 degree, over the Hansen tile's 10 degrees:
// 100,000 x 100,000 pixels. Its pattern repeats every jobBenchPeriod
// pixels, as the loss-year tile's does, so that the generator makes one
// period of each (geotifftest.Options.Period) and not 1e10 pixels.
const (
	jobBenchForestWest  = -80.0
	jobBenchForestNorth = 10.0
	jobBenchForestDeg   = 0.0001
	jobBenchForestSize  = 100000
	jobBenchPeriod      = 4096
	jobBenchClusters    = 40
	jobBenchPerCluster  = 50
)

// jobBenchForest is a forest mask of 128 x 128 pixel patches, two in three
// forest, repeating every jobBenchPeriod pixels.
func jobBenchForest(col, row int) uint8 {
	x, y := col&4095, row&4095
	return boolPixel((uint32(x>>7)*2654435761^uint32(y>>7)*40503)%3 != 0)
}

// jobBenchPlots is a job of 2,000 plots as cooperatives file them: 40
// clusters of 50 irregular polygons of 1 to 50 ha, each cluster's plots
// within 2.5 km of its centre (and so next to each other in the job),
// the centres anywhere in the forest layer's area.
var jobBenchPlots = sync.OnceValues(func() ([]geo.Feature, error) {
	r := rand.New(rand.NewPCG(2020, 12_31))
	const margin = 0.05 // degrees: clusters stay inside the forest tile
	span := jobBenchForestSize*jobBenchForestDeg - 2*margin
	plots := make([]geo.Feature, 0, jobBenchClusters*jobBenchPerCluster)
	for range jobBenchClusters {
		cLon := jobBenchForestWest + margin + r.Float64()*span
		cLat := jobBenchForestNorth - margin - r.Float64()*span
		for range jobBenchPerCluster {
			// Uniform in a disc of 2.5 km (0.0225 degree) round the centre.
			d, a := 0.0225*math.Sqrt(r.Float64()), 2*math.Pi*r.Float64()
			lon, lat := cLon+d*math.Cos(a)/math.Cos(cLat*math.Pi/180), cLat+d*math.Sin(a)
			f, _, err := rasterBenchPolygon(r, lon, lat, 1+49*r.Float64(), len(plots))
			if err != nil {
				return nil, err
			}
			plots = append(plots, f)
		}
	}
	return plots, nil
})

// BenchmarkScreenJob is a screening job side by side with what a user
// would script with GDAL: the 2,000 clustered plots of jobBenchPlots
// assessed (geo.Assess, DefaultRules) against a Hansen-like loss-year tile
// (40,000 x 40,000, LZW with the horizontal predictor, strips of one row,
// placed like 10N_080W) and a JRC-like forest-2020 tile over the same 10
// degrees (see jobBenchForestDeg), each plot's loss measured in forest on
// the finer grid. Each run is one job from a cold start: fresh Files and
// a fresh geotiff.Cache of DefaultCacheBytes shared by both layers, new
// layers without their grid rows' cell areas, and the files' pages
// dropped from the OS page cache (posix_fadvise DONTNEED, which needs no
// root: clean pages of the file are evicted, so reads go to the disk or,
// on a virtual machine, the host's cache). serial screens the plots as a
// job does, in geo.ScreeningOrder a window of plots at a time
// (polygon.ScreenWindow), on one goroutine; parallel on GOMAXPROCS
// goroutines taking the next plot in turn, as the appliance's job runner
// does; parallel-job-order so in the job's order, for comparison. The
// targets are stated for two cores: -cpu 2 (make bench-screen).
//
// It reports plots/s, process CPU time (user + system, getrusage) per plot
// in ms, the blocks decoded per plot and the block cache's hit rate, the
// MB a run read from below the page cache (read_bytes of /proc/self/io:
// the files store each block of their repeating patterns once, so a block
// read for one place may serve another from the page cache), and the peak
// resident memory of the process (VmHWM, Linux) over the runs, reset
// after the tiles are written. The targets: 0.4 ms of CPU a plot, 3,000
// plots/s on two cores, under 300 MB.
func BenchmarkScreenJob(b *testing.B) {
	plots, err := jobBenchPlots()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	lossPath := filepath.Join(dir, rasterBenchTile)
	rasterBenchWrite(b, lossPath, rasterBenchSize, rasterBenchSize, rasterBenchLossYear, geotifftest.Options{
		RowsPerStrip: 1, Predictor: true, Period: jobBenchPeriod,
		West: rasterBenchWest, North: rasterBenchNorth, DX: rasterBenchDeg, DY: rasterBenchDeg})
	forestPath := filepath.Join(dir, "JRC_GFC2020_V2_N10_W80.tif")
	rasterBenchWrite(b, forestPath, jobBenchForestSize, jobBenchForestSize, jobBenchForest, geotifftest.Options{
		TileWidth: 256, TileHeight: 256, Period: jobBenchPeriod,
		West: jobBenchForestWest, North: jobBenchForestNorth, DX: jobBenchForestDeg, DY: jobBenchForestDeg})
	resetPeakRSS()

	for _, mode := range []struct {
		name    string
		workers int
		window  int
	}{
		{"serial", 1, jobBenchWindow}, {"parallel", runtime.GOMAXPROCS(0), jobBenchWindow},
		{"parallel-job-order", runtime.GOMAXPROCS(0), 0},
	} {
		b.Run(mode.name, func(b *testing.B) {
			var cpu time.Duration
			var high, read int64
			var blocks geotiff.CacheStats
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				ix, c, closeAll := jobBenchIndex(b, lossPath, forestPath)
				cpu0, read0 := processCPU(), procIOBytes("read_bytes:")
				b.StartTimer()
				high += jobBenchRun(b, ix, plots, mode.workers, mode.window)
				b.StopTimer()
				cpu += processCPU() - cpu0
				read += procIOBytes("read_bytes:") - read0
				s := c.Stats()
				blocks.Hits += s.Hits
				blocks.Misses += s.Misses
				closeAll()
				b.StartTimer()
			}
			b.StopTimer()
			n := float64(b.N * len(plots))
			if high == 0 || high == int64(n) {
				b.Fatalf("%d of %.0f plots HIGH_RISK: the patterns should make some, not all", high, n)
			}
			b.ReportMetric(n/b.Elapsed().Seconds(), "plots/s")
			b.ReportMetric(cpu.Seconds()*1e3/n, "ms-cpu/plot")
			b.ReportMetric(100*float64(high)/n, "%high-risk")
			b.ReportMetric(float64(blocks.Misses)/n, "decodes/plot")
			b.ReportMetric(100*float64(blocks.Hits)/float64(blocks.Hits+blocks.Misses), "%hits")
			b.ReportMetric(float64(read)/1e6/float64(b.N), "MB-read/run")
			if kb := procStatusKB("VmHWM:"); kb > 0 {
				b.ReportMetric(float64(kb)/1024, "MiB-peak")
			}
		})
	}
}

// jobBenchIndex opens the two tiles cold: their pages dropped from the OS
// page cache, a new block cache, and new layers (which keep no cell areas
// yet).
func jobBenchIndex(b *testing.B, lossPath, forestPath string) (*geo.Index, *geotiff.Cache, func()) {
	b.Helper()
	c := geotiff.NewCache(geotiff.DefaultCacheBytes)
	var files []*os.File
	open := func(path string) geo.RasterTile {
		fh, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, fh)
		// Drop the file's clean pages from the page cache, so that the
		// run reads it from below.
		if err := unix.Fadvise(int(fh.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
			b.Fatal(err)
		}
		st, err := fh.Stat()
		if err != nil {
			b.Fatal(err)
		}
		f, err := geotiff.OpenOptions(fh, st.Size(), geotiff.Options{Cache: c})
		if err != nil {
			b.Fatal(err)
		}
		return geo.RasterTile{Name: filepath.Base(path), Grid: f.Georef(), Reader: f}
	}
	ix := geo.NewIndex().WithRasters(
		rasterLayer("hansen-lossyear", geo.LossYear, open(lossPath)),
		rasterLayer("jrc-gfc2020", geo.Forest2020, open(forestPath)))
	return ix, c, func() {
		for _, fh := range files {
			fh.Close()
		}
	}
}

// jobBenchWindow is how many plots the appliance screens at a time
// (polygon.ScreenWindow), each window in geo.ScreeningOrder.
const jobBenchWindow = 2000

// jobBenchRun assesses the plots on workers goroutines, window plots at
// a time each in geo.ScreeningOrder (0: all in the job's order), and
// returns how many are HIGH_RISK; a plot FAILED, or without loss measured
// in forest, fails b.
func jobBenchRun(b *testing.B, ix *geo.Index, plots []geo.Feature, workers, window int) int64 {
	ctx := context.Background()
	rules := geo.DefaultRules()
	order := make([]int, 0, len(plots))
	if window == 0 {
		for i := range plots {
			order = append(order, i)
		}
	}
	for c := 0; window > 0 && c < len(plots); c += window {
		for _, i := range ix.ScreeningOrder(plots[c:min(c+window, len(plots))]) {
			order = append(order, c+i)
		}
	}
	var next, high atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(order) {
					return
				}
				i := order[k]
				o, err := geo.Assess(ctx, plots[i], ix, rules)
				if err != nil {
					b.Error(err)
					return
				}
				switch {
				case o.Status == geo.StatusFailed:
					b.Errorf("plot %d: %s %s: %s", i, o.Status, o.Reason, o.Detail)
					return
				case o.Loss == nil || o.Loss.ForestLayerID != "jrc-gfc2020":
					b.Errorf("plot %d: %s, loss %+v: want loss in forest measured", i, o.Status, o.Loss)
					return
				case o.Status == geo.StatusHighRisk:
					high.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	return high.Load()
}

// processCPU is the user and system CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procIOBytes returns a field of /proc/self/io in bytes, or 0.
func procIOBytes(field string) int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// resetPeakRSS resets the process's VmHWM to its resident set now (Linux
// 4.0 and later), so that the peak measured is the benchmark's, not the
// tile writer's.
func resetPeakRSS() {
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}
