//go:build load

package main_test

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// TestLoadBatchReport is the batch report part of `make bench`, against
// the built binary and the sample layers of examples/data: 500 cocoa
// plots screened, registered as one batch, assessed and linked to a
// shipment, then GET /batches/{batchId}/report.pdf timed from the client,
// cold (the first request, which also records the report in the ledger)
// and warm, in both of its forms: the plots in a table (the default
// reports.batch_plot_pages), and a page per plot for a batch of the first
// 100 of them at reports.batch_plot_pages 100, its largest setting. Each form is served by a server started afresh on the same data,
// so that its peak resident set is the report's and not the screening's.
// It prints the figures next to the targets (10 s, 200 MB) and asserts
// only that every request succeeded and that both requests of a form gave
// the same PDF.
//
//	go test -tags load -count=1 -run '^TestLoadBatchReport$' -v -timeout=15m .
func TestLoadBatchReport(t *testing.T) {
	requireE2E(t)
	const plots = 500
	dataDir := tempDataDir(t)
	key := consoleSampleLayers(t, dataDir)

	srv := startServerIn(t, dataDir, noRateLimit...)
	base := srv.SandboxURL
	body := reportLoadPlots(plots)
	job := polWaitJob(t, base, key, polMustPost(t, base, key, body, plots), 5*time.Minute)
	results := polAllResults(t, base, key, job)
	ids := make([]string, len(results))
	for i, r := range results {
		if r.EUDRStatus != "COMPLIANT" {
			t.Fatalf("plot %d (%s) is %s (%s), want every generated plot COMPLIANT", i, r.PolygonID, r.EUDRStatus, polStr(r.FailureReason))
		}
		ids[i] = r.PolygonID
	}
	mustCreateSupplier(t, base, key, "V-LOAD", "Coopérative de Soubré")
	batchID := ledVerified(t, base, key, "V-LOAD", ids...)
	link := ledAccepted(t, ledLink(t, base, key, batchID, "SHP-LOAD-1"), "linkId", "jobId")
	if j := ledWaitJob(t, base, key, link["jobId"], ledLinkJobType); j.Status != "COMPLETED" {
		t.Fatalf("link job: %+v", j)
	}
	// The largest batch reports.batch_plot_pages can give a page a plot.
	pageBatchID := ledVerified(t, base, key, "V-LOAD", ids[:100]...)
	srv.Stop(t)

	var report strings.Builder
	fmt.Fprintf(&report, "\nbatch of %d plots (0.3-1.3 ha, 20-80 corners, in villages' clusters) over the sample layers, assessed and linked;\n", plots)
	fmt.Fprintf(&report, "GET /batches/{batchId}/report.pdf, each form from a server started afresh\n\n")
	fmt.Fprintf(&report, "%-28s %9s %9s %6s %9s %13s %12s %10s %13s\n", "form", "cold", "warm", "pages", "size", "VmHWM before", "VmHWM after", "increase", "RssAnon peak")
	for _, form := range []struct {
		name  string
		batch string
		pages int
	}{{fmt.Sprintf("%d plots, table", plots), batchID, 25}, {"100 plots, a page each", pageBatchID, 100}} {
		srv := startServerIn(t, dataDir, append([]string{fmt.Sprintf("EUDR_REPORTS_BATCH_PLOT_PAGES=%d", form.pages)}, noRateLimit...)...)
		pid := srv.cmd.Process.Pid
		url := srv.SandboxURL + eudrAPI + "/batches/" + form.batch + "/report.pdf"
		apitest.Do(t, "GET", srv.SandboxURL+eudrAPI+"/health", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		before, err := procStatus(pid)
		if err != nil {
			t.Fatal(err)
		}
		mem := watchMemory(t, pid)
		cold, coldTime := reportLoadGet(t, url, key)
		warm, warmTime := reportLoadGet(t, url, key)
		after, err := procStatus(pid)
		if err != nil {
			t.Fatal(err)
		}
		peakAnon := mem.peak()
		if !bytes.HasPrefix(cold, []byte("%PDF-")) || !bytes.Equal(cold, warm) {
			t.Errorf("%s: the report is not a PDF, or two requests gave different bytes (%d and %d)", form.name, len(cold), len(warm))
		}
		pages := bytes.Count(cold, []byte("/Type /Page\n"))
		fmt.Fprintf(&report, "%-28s %9s %9s %6d %6.1f MB %10.0f MB %9.0f MB %7.0f MB %10.0f MB\n", form.name,
			coldTime.Round(time.Millisecond), warmTime.Round(time.Millisecond), pages, float64(len(cold))/1e6,
			before["VmHWM"], after["VmHWM"], after["VmHWM"]-before["VmHWM"], peakAnon)
		if dir := os.Getenv("EUDR_SCREENSHOT_DIR"); dir != "" {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("load-batch-%d.pdf", form.pages)), cold, 0o644)
		}
		srv.Stop(t)
	}
	fmt.Fprintf(&report, "target: under 10 s and 200 MB\n")
	fmt.Fprintf(&report, "(cold: the first request, which renders the report and records it in the ledger; warm: the same again, rendered\n"+
		" again and found recorded; client wall time. VmHWM: peak resident set of eudr serve since it started, from /proc,\n"+
		" before the first request and after the second; RssAnon peak: heap and stacks, sampled every 20ms during both)\n")
	t.Log(report.String())
	fmt.Println(report.String())
}

// reportLoadGet GETs a report with key, wants a 200 with an
// X-Ledger-Index, and returns its body and the time from sending the
// request to reading the body's end. Its own client: a report of many
// plots may take longer than apitest's limit.
func reportLoadGet(t *testing.T, url, key string) ([]byte, time.Duration) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	c := &http.Client{Timeout: 5 * time.Minute}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("X-Ledger-Index") == "" {
		t.Fatalf("GET %s: %d, X-Ledger-Index %q, %v: %.300s", url, resp.StatusCode, resp.Header.Get("X-Ledger-Index"), err, body)
	}
	return body, took
}

// peak is the highest RssAnon seen since the last report or peak, in MB.
func (m *memWatch) peak() float64 {
	st, _ := procStatus(m.pid)
	m.mu.Lock()
	defer m.mu.Unlock()
	p := max(m.peakAnon, st["RssAnon"])
	m.peakAnon = 0
	return p
}

// reportLoadSquare is the sample layers' square (examples/data/README.md):
// lon min, lat min, lon max, lat max.
var reportLoadSquare = [4]float64{-6.62, 5.76, -6.58, 5.80}

// reportLoadAvoid are the boxes of the sample layers' loss after 2020 in
// forest and of their deforestation polygons, a margin around each: a
// plot there would be HIGH_RISK, and a batch for a shipment is of
// COMPLIANT plots.
var reportLoadAvoid = [][4]float64{
	{-6.592, 5.792, -6.586, 5.797},  // loss in 2022
	{-6.6125, 5.77, -6.612, 5.7705}, // loss in 2021
	{-6.615, 5.788, -6.607, 5.795},  // def-2021-001
	{-6.6, 5.784, -6.595, 5.788},    // def-2022-002
	{-6.587, 5.783, -6.583, 5.786},  // def-2023-003
}

// reportLoadCell is the side in degrees of the grid a plot is placed in,
// one plot a cell: neighbours, as smallholdings are, but never crossing.
const reportLoadCell = 0.0015

// reportLoadPlots is a POST /polygons body of n cocoa plots over the
// sample square, clustered around a few villages as smallholdings are:
// the n free cells of a grid nearest to one of the villages (by a
// distance with some noise), each holding a plot of 0.3-1.3 ha
// (log-uniform) and 20-80 corners (loadRing), away from reportLoadAvoid.
func reportLoadPlots(n int) string {
	r := rand.New(rand.NewPCG(2020, 500))
	villages := [][2]float64{{-6.612, 5.766}, {-6.596, 5.776}, {-6.585, 5.764}, {-6.603, 5.795}, {-6.588, 5.789}}
	type cell struct {
		lon, lat, dist float64
	}
	var cells []cell
	cols := int(math.Round((reportLoadSquare[2] - reportLoadSquare[0]) / reportLoadCell))
	rows := int(math.Round((reportLoadSquare[3] - reportLoadSquare[1]) / reportLoadCell))
	for i := range cols {
		for j := range rows {
			c := cell{lon: reportLoadSquare[0] + (float64(i)+0.5)*reportLoadCell, lat: reportLoadSquare[1] + (float64(j)+0.5)*reportLoadCell}
			if reportLoadNear(c.lon, c.lat) {
				continue
			}
			c.dist = math.Inf(1)
			for _, v := range villages {
				c.dist = min(c.dist, math.Hypot(c.lon-v[0], c.lat-v[1]))
			}
			c.dist *= 1 + 0.6*r.Float64()
			cells = append(cells, c)
		}
	}
	if len(cells) < n {
		panic(fmt.Sprintf("the sample square has %d free cells, not %d", len(cells), n))
	}
	slices.SortStableFunc(cells, func(a, b cell) int { return cmpFloat(a.dist, b.dist) })
	var b bytes.Buffer
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	for i, c := range cells[:n] {
		if i > 0 {
			b.WriteString(",\n")
		}
		b.WriteString(`{"type":"Feature","geometry":{"type":"Polygon","coordinates":`)
		loadRing(&b, r, c.lon, c.lat, 0.3*math.Pow(1.3/0.3, r.Float64()), 20+r.IntN(61))
		fmt.Fprintf(&b, `},"properties":{"commodity":"cocoa","producerCountry":"CI","externalId":"SOU-%04d","producerName":"Producer %d"}}`, i+1, i+1)
	}
	b.WriteString("]}")
	return b.String()
}

// reportLoadNear reports whether a cell centred at lon, lat comes within
// a cell of a box of reportLoadAvoid.
func reportLoadNear(lon, lat float64) bool {
	for _, a := range reportLoadAvoid {
		if lon > a[0]-reportLoadCell && lon < a[2]+reportLoadCell && lat > a[1]-reportLoadCell && lat < a[3]+reportLoadCell {
			return true
		}
	}
	return false
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
