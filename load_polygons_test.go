//go:build load

package main_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apitest"
)

// TestLoadPolygons is the polygon part of `make bench`, against the built
// binary: a production deforestation layer of 100,000 polygons imported
// with `eudr layers import`, then POST /polygons of 10,000 realistic plots
// over the layer's region, three times one job at a time and three times
// at once. It prints the time to the 202, the screening throughput of each
// job and the server's peak memory next to the targets, and asserts
// only that every request and job succeeded.
//
//	go test -tags load -count=1 -run '^TestLoadPolygons$' -v -timeout=15m .
func TestLoadPolygons(t *testing.T) {
	requireE2E(t)
	const plots, layerPolygons = 10_000, 100_000

	body := loadPlots(plots)
	feats, err := geo.ParseFeatureCollection(body, geo.ParseOptions{})
	if err != nil {
		t.Fatalf("generated plots: %v", err)
	}
	for _, f := range feats {
		if reason, detail := geo.Check(f); reason != "" {
			t.Fatalf("generated plot %d: %s: %s", f.Index, reason, detail)
		}
	}

	dir := t.TempDir()
	layerFile, coverageFile := filepath.Join(dir, "loss.geojson"), filepath.Join(dir, "coverage.geojson")
	layer := loadLayer(layerPolygons)
	if err := os.WriteFile(layerFile, layer, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(coverageFile, []byte(loadCoverage()), 0o600); err != nil {
		t.Fatal(err)
	}
	// Not runCLI: its 20s limit is close to what parsing and checking
	// 100,000 polygons takes on a small machine.
	dataDir := tempDataDir(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, eudrBin, "layers", "import", "--name", "load loss", "--kind", "deforestation",
		"--version", "1", "--source", "load test", "--coverage", coverageFile, layerFile)
	cmd.Env = serverEnv(dataDir, nil)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("eudr layers import: %v\n%s", err, out)
	}
	importTime := time.Since(start)

	start = time.Now()
	srv := startServerIn(t, dataDir, "EUDR_RATE_LIMIT_PER_SECOND=1000000000", "EUDR_RATE_LIMIT_BURST=1000000000")
	startTime := time.Since(start)
	mem := watchMemory(t, srv.cmd.Process.Pid)
	memStart := mem.report()
	key := srv.createKey(t, production, "read", "write")

	var report strings.Builder
	fmt.Fprintf(&report, "\nlayer: %d polygons, %.1f MB, imported in %s; eudr serve ready in %s (indexing it)\n",
		layerPolygons, float64(len(layer))/1e6, importTime.Round(time.Millisecond), startTime.Round(time.Millisecond))
	fmt.Fprintf(&report, "request: %d plots of 20-200 corners, 0.5-50 ha, %.1f MB\n\n", plots, float64(len(body))/1e6)
	fmt.Fprintf(&report, "%-18s %10s %10s %11s %12s %14s  %s\n", "job", "202 in", "queued", "screening", "features/s", "POST->COMPLETED", "outcomes")

	var seq, all []loadJob
	for i := range 3 {
		j := postPlots(t, srv, key, body, plots, fmt.Sprintf("one-at-a-time %d", i+1))
		waitLoadJob(t, srv, key, &j, plots)
		seq = append(seq, j)
		report.WriteString(j.row())
	}
	memSeq := mem.report()
	for i := range 3 {
		all = append(all, postPlots(t, srv, key, body, plots, fmt.Sprintf("at once %d", i+1)))
	}
	for i := range all {
		waitLoadJob(t, srv, key, &all[i], plots)
		report.WriteString(all[i].row())
	}
	memAll := mem.report()

	first, last := all[0].started, all[0].completed
	for _, j := range all {
		first, last = minTime(first, j.started), maxTime(last, j.completed)
	}
	fmt.Fprintf(&report, "\n%-44s p50 %s, max %s (target < 1s)\n", "time to 202, one at a time:", medianPost(seq), maxPost(seq))
	fmt.Fprintf(&report, "%-44s p50 %s, max %s\n", "time to 202, at once (jobs running):", medianPost(all), maxPost(all))
	fmt.Fprintf(&report, "%-44s %.0f features/s (target >= 2,000)\n", "screening, one job at a time (median):", medianRate(seq))
	fmt.Fprintf(&report, "%-44s %.0f features/s, %d features in %s\n", "screening, three jobs at once (aggregate):",
		float64(len(all)*plots)/last.Sub(first).Seconds(), len(all)*plots, last.Sub(first).Round(time.Millisecond))
	fmt.Fprintf(&report, "%-44s %s\n", "memory when ready (layer indexed):", memStart)
	fmt.Fprintf(&report, "%-44s %s\n", "memory after one at a time:", memSeq)
	fmt.Fprintf(&report, "%-44s %s\n", "memory after three at once:", memAll)
	fmt.Fprintf(&report, "%-44s < 500 MB peak\n", "memory target:")
	fmt.Fprintf(&report, "(202 in: POST sent to answer read, client side; queued: startedAt - createdAt; screening: completedAt - startedAt,\n"+
		" features/s = features / screening; POST->COMPLETED: client wall time, polling GET /jobs/{id} every 250ms;\n"+
		" VmHWM: peak resident set of eudr serve since it started, from /proc; RssAnon: heap and stacks, its peak\n"+
		" sampled every 20ms since the line before; RssFile: store pages mapped by bbolt, which the kernel may drop)\n")
	t.Log(report.String())
	fmt.Println(report.String())
}

// loadJob is one POST /polygons and what became of its job.
type loadJob struct {
	name             string
	id               string
	posted           time.Time
	toAccepted       time.Duration // POST sent to 202 read
	toCompleted      time.Duration // POST sent to COMPLETED seen
	created, started time.Time
	completed        time.Time
	features         int
	outcomes         map[string]int // eudrStatus, or FAILED and its reason -> count
}

func (j loadJob) screening() time.Duration { return j.completed.Sub(j.started) }

func (j loadJob) rate() float64 { return float64(j.features) / j.screening().Seconds() }

func (j loadJob) row() string {
	var oc []string
	for k, n := range j.outcomes {
		oc = append(oc, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(oc)
	return fmt.Sprintf("%-18s %10s %10s %11s %12.0f %14s  %s\n", j.name, j.toAccepted.Round(time.Millisecond),
		j.started.Sub(j.created).Round(time.Millisecond), j.screening().Round(time.Millisecond), j.rate(),
		j.toCompleted.Round(time.Millisecond), strings.Join(oc, ", "))
}

// postPlots posts body, a collection of n features, to the production
// listener and checks the 202.
func postPlots(t *testing.T, srv *serverProc, key string, body []byte, n int, name string) loadJob {
	t.Helper()
	j := loadJob{name: name, posted: time.Now()}
	r := apitest.Do(t, "POST", srv.ProductionURL+eudrAPI+"/polygons",
		apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey(), "Content-Type", "application/geo+json")), body)
	j.toAccepted = time.Since(j.posted)
	r.WantStatus(t, http.StatusAccepted)
	var acc struct {
		JobID        string `json:"jobId"`
		FeatureCount int    `json:"featureCount"`
	}
	r.Decode(t, &acc)
	if acc.JobID == "" || acc.FeatureCount != n {
		t.Fatalf("%s: 202 body %s, want a jobId and featureCount %d", name, r.Body, n)
	}
	j.id = acc.JobID
	return j
}

// waitLoadJob polls the job until it is COMPLETED with every feature
// screened, and fills in its times and outcomes.
func waitLoadJob(t *testing.T, srv *serverProc, key string, j *loadJob, features int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		r := apitest.Do(t, "GET", srv.ProductionURL+eudrAPI+"/jobs/"+j.id, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		var job struct {
			Status   string `json:"status"`
			Progress struct {
				Total, Processed, Succeeded, Failed int
			} `json:"progress"`
			Results      []loadResult `json:"results"`
			ResultCounts struct {
				Total int `json:"total"`
			} `json:"resultCounts"`
			NextResults *string    `json:"nextResults"`
			CreatedAt   time.Time  `json:"createdAt"`
			StartedAt   *time.Time `json:"startedAt"`
			CompletedAt *time.Time `json:"completedAt"`
		}
		r.Decode(t, &job)
		switch job.Status {
		case "QUEUED", "RUNNING":
			if time.Now().After(deadline) {
				t.Fatalf("%s: job %s still %s (%d of %d processed) after 5 minutes", j.name, j.id, job.Status, job.Progress.Processed, job.Progress.Total)
			}
			time.Sleep(250 * time.Millisecond)
			continue
		case "COMPLETED":
		default:
			t.Fatalf("%s: job %s ended %s: %s", j.name, j.id, job.Status, r.Body)
		}
		j.toCompleted = time.Since(j.posted)
		p := job.Progress
		results := loadAllResults(t, srv, key, job.Results, job.NextResults)
		if p.Total != features || p.Processed != features || p.Succeeded+p.Failed != features || len(results) != features ||
			job.ResultCounts.Total != features || job.StartedAt == nil || job.CompletedAt == nil {
			t.Fatalf("%s: job %s COMPLETED with progress %+v, %d results, startedAt %v, completedAt %v; want all %d features screened",
				j.name, j.id, p, len(results), job.StartedAt, job.CompletedAt, features)
		}
		j.created, j.started, j.completed = job.CreatedAt, *job.StartedAt, *job.CompletedAt
		j.features = p.Processed
		j.outcomes = map[string]int{}
		for _, res := range results {
			k := res.EUDRStatus
			if res.FailureReason != nil && k == "FAILED" {
				k += " " + *res.FailureReason
			}
			j.outcomes[k]++
		}
		return
	}
}

// loadResult is an entry of a polygon job's results.
type loadResult struct {
	EUDRStatus    string  `json:"eudrStatus"`
	FailureReason *string `json:"failureReason"`
}

// loadAllResults returns a job's results: first, those GET /jobs/{jobId}
// showed, then the pages of its results from next on, following Link.
func loadAllResults(t *testing.T, srv *serverProc, key string, first []loadResult, next *string) []loadResult {
	all := first
	for next != nil {
		r := apitest.Do(t, "GET", srv.ProductionURL+*next, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		var page []loadResult
		r.Decode(t, &page)
		all = append(all, page...)
		next = nil
		if link := r.Header.Get("Link"); link != "" {
			path := strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`)
			next = &path
		}
	}
	return all
}

// procStatus reads the memory lines of /proc/<pid>/status, in MB:
// VmHWM (peak resident set), VmRSS (resident now), RssAnon (the heap and
// stacks) and RssFile (mapped files: the bbolt store's pages read through
// its mmap, which the kernel can drop).
func procStatus(pid int) (map[string]float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return nil, err
	}
	mb := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		name, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch name {
		case "VmHWM", "VmRSS", "RssAnon", "RssFile":
			var kb float64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			mb[name] = kb / 1024
		}
	}
	return mb, nil
}

// memWatch samples the server's memory every 20ms and keeps the highest
// RssAnon seen: the kernel keeps a peak only of the whole resident set,
// file pages included.
type memWatch struct {
	pid      int
	mu       sync.Mutex
	peakAnon float64
}

// watchMemory samples process pid until t ends.
func watchMemory(t *testing.T, pid int) *memWatch {
	m := &memWatch{pid: pid}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if st, err := procStatus(pid); err == nil {
				m.mu.Lock()
				m.peakAnon = max(m.peakAnon, st["RssAnon"])
				m.mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return m
}

// report describes the memory now, the peak resident set since the start
// and the peak RssAnon since the last report.
func (m *memWatch) report() string {
	st, err := procStatus(m.pid)
	if err != nil {
		return "memory: " + err.Error()
	}
	m.mu.Lock()
	peak := max(m.peakAnon, st["RssAnon"])
	m.peakAnon = 0
	m.mu.Unlock()
	return fmt.Sprintf("peak: VmHWM %.0f MB, RssAnon %.0f MB; now: VmRSS %.0f MB = RssAnon %.0f + RssFile %.0f",
		st["VmHWM"], peak, st["VmRSS"], st["RssAnon"], st["RssFile"])
}

func medianPost(js []loadJob) time.Duration {
	d := make([]time.Duration, len(js))
	for i, j := range js {
		d[i] = j.toAccepted
	}
	slices.Sort(d)
	return d[(len(d)-1)/2].Round(time.Millisecond)
}

func maxPost(js []loadJob) time.Duration {
	var m time.Duration
	for _, j := range js {
		m = max(m, j.toAccepted)
	}
	return m.Round(time.Millisecond)
}

func medianRate(js []loadJob) float64 {
	r := make([]float64, len(js))
	for i, j := range js {
		r[i] = j.rate()
	}
	slices.Sort(r)
	return r[(len(r)-1)/2]
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// The plots and the layer lie over one region: 2 by 2 degrees of cocoa land
// in Cote d'Ivoire. The shapes are those of server/bench_test.go.
var loadRegion = [4]float64{-7.5, 5.5, -5.5, 7.5} // lon min, lat min, lon max, lat max

// loadRing writes a closed, simple, counter-clockwise ring of n corners
// around (lon, lat) enclosing about ha hectares, with 6 decimals: a
// star-shaped outline whose radius wanders smoothly, as a surveyed boundary
// does; corners advance in angle by at least 0.7 of a step, so no two sides
// cross.
func loadRing(b *bytes.Buffer, r *rand.Rand, lon, lat, ha float64, n int) {
	radius := math.Sqrt(ha*1e4/math.Pi) / 111_320 // degrees of latitude
	kx := 1 / math.Cos(lat*math.Pi/180)
	p1, p2 := 2*math.Pi*r.Float64(), 2*math.Pi*r.Float64()
	var first string
	b.WriteString("[[")
	for k := range n {
		a := 2 * math.Pi * (float64(k) + 0.3*r.Float64()) / float64(n)
		rad := radius * (1 + 0.12*math.Sin(3*a+p1) + 0.06*math.Sin(5*a+p2) + 0.02*r.Float64())
		pos := fmt.Sprintf("[%.6f,%.6f],", lon+kx*rad*math.Cos(a), lat+rad*math.Sin(a))
		if k == 0 {
			first = pos[:len(pos)-1]
		}
		b.WriteString(pos)
	}
	b.WriteString(first + "]]")
}

// loadPlots is a POST /polygons body of n plots of 20-200 corners and
// 0.5-50 ha (log-uniform) over loadRegion, with commodity, producer
// country and external ID: about 25 MB for 10,000.
func loadPlots(n int) []byte {
	r := rand.New(rand.NewPCG(2020, 12_31))
	commodities := geo.Commodities()
	var b bytes.Buffer
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		lon := loadRegion[0] + 0.01 + r.Float64()*(loadRegion[2]-loadRegion[0]-0.02)
		lat := loadRegion[1] + 0.01 + r.Float64()*(loadRegion[3]-loadRegion[1]-0.02)
		b.WriteString(`{"type":"Feature","geometry":{"type":"Polygon","coordinates":`)
		loadRing(&b, r, lon, lat, 0.5*math.Pow(100, r.Float64()), 20+r.IntN(181))
		fmt.Fprintf(&b, `},"properties":{"commodity":%q,"producerCountry":"CI","externalId":"plot-%06d"}}`,
			commodities[i%len(commodities)], i)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// loadLayer is a deforestation layer of n polygons of 8-40 corners and
// 1-20 ha (log-uniform) over loadRegion: about 40% of the plots overlap it.
func loadLayer(n int) []byte {
	r := rand.New(rand.NewPCG(2021, 1))
	var b bytes.Buffer
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		lon := loadRegion[0] + r.Float64()*(loadRegion[2]-loadRegion[0])
		lat := loadRegion[1] + r.Float64()*(loadRegion[3]-loadRegion[1])
		fmt.Fprintf(&b, `{"type":"Feature","id":"loss-%06d","properties":{},"geometry":{"type":"Polygon","coordinates":`, i)
		loadRing(&b, r, lon, lat, math.Pow(20, r.Float64()), 8+r.IntN(33))
		b.WriteString("}}")
	}
	b.WriteString("]}")
	return b.Bytes()
}

// loadCoverage is the layer's coverage: one rectangle around loadRegion.
func loadCoverage() string {
	b := loadRegion
	return fmt.Sprintf(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[%g,%g],[%g,%g],[%g,%g],[%g,%g],[%g,%g]]]}}]}`,
		b[0]-1, b[1]-1, b[2]+1, b[1]-1, b[2]+1, b[3]+1, b[0]-1, b[3]+1, b[0]-1, b[1]-1)
}
