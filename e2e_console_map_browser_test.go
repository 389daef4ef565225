package main_test

// The plots map at size, in a real browser: thousands of plots pushed in
// one POST to the sandbox, the time until the map has drawn them (and
// where it went: the marks map.js and pages.js set) and the frame time
// while panning measured (logged, not asserted: speed is not a pass or
// fail on a shared machine), point plots drawn at their declared area,
// the filters by supplier, job (named by its upload) and producer country
// applied to map and table together, and vector reference layers drawn
// from their features, one of them past the API's cap.

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/eudr/eudr/geo"
)

// consoleMapPlots is how many plots the map test draws: 2,000 by default,
// which keeps the test near a minute on a loaded machine; set
// EUDR_CONSOLE_MAP_PLOTS=10000 to measure the largest single POST.
func consoleMapPlots(t *testing.T) int {
	n := 2000
	if s := os.Getenv("EUDR_CONSOLE_MAP_PLOTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 8 || n > 10000 {
			t.Fatalf("EUDR_CONSOLE_MAP_PLOTS=%q: want a number of plots from 8 to 10000", s)
		}
	}
	return n
}

// consoleMapGrid is n small squares on a grid in Ghana (COMPLIANT in the
// sandbox), their suppliers V-1 to V-4 in turn, and how many each has.
func consoleMapGrid(n int) (body string, bySupplier map[string]int) {
	features := make([]string, n)
	bySupplier = map[string]int{}
	for i := range n {
		supplier := fmt.Sprintf("V-%d", i%4+1)
		bySupplier[supplier]++
		dx, dy := float64(i%100)*0.01, float64(i/100)*0.01
		features[i] = polFeature(polSquare(-2.5+dx, 5.5+dy, 0.003),
			map[string]any{"commodity": "cocoa", "producerCountry": "GH", "supplierId": supplier, "externalId": fmt.Sprintf("grid-%05d", i)})
	}
	return polCollection(features...), bySupplier
}

// consolePanFrames pans the map back and forth, one step a frame, and
// answers the time between frames in milliseconds. It drives the map
// through window.eudrMap, which map.js exposes for this measure.
const consolePanFrames = `new Promise((resolve) => {
	const map = window.eudrMap, gaps = [];
	let last = performance.now(), frame = 0;
	const step = (now) => {
		gaps.push(now - last);
		last = now;
		if (++frame > 120) return resolve(gaps.slice(1));
		map.panBy([frame <= 60 ? 12 : -12, 0], { duration: 0 });
		requestAnimationFrame(step);
	};
	requestAnimationFrame(step);
})`

func TestConsole_MapBrowser(t *testing.T) {
	dir := tempDataDir(t)
	bigLayer := consoleMapBigLayer(t, dir)
	p := startServerIn(t, dir, noRateLimit...)
	base := p.SandboxURL
	key := p.createKey(t, sandbox)
	n := consoleMapPlots(t)
	body, bySupplier := consoleMapGrid(n)
	gridJob := polMustPost(t, base, key, body, n)
	// Five more plots, from another job, supplier and country: three
	// squares and two points, of 4 and 0.5 ha.
	extra := make([]string, 5)
	for i := range 3 {
		extra[i] = polFeature(polSquare(-5.2+float64(i)*0.01, 6.3, 0.003),
			map[string]any{"commodity": "cocoa", "producerCountry": "CI", "supplierId": "V-9"})
	}
	for i, point := range consoleMapPoints {
		extra[3+i] = polFeature(fmt.Sprintf(`{"type":"Point","coordinates":[%.6f,%.6f]}`, point.lon, point.lat),
			map[string]any{"commodity": "cocoa", "producerCountry": "CI", "supplierId": "V-9", "area": point.ha})
	}
	extraJob := polMustPost(t, base, key, polCollection(extra...), len(extra))
	polWaitJob(t, base, key, gridJob, 8*time.Minute)
	polWaitJob(t, base, key, extraJob, time.Minute)
	total := n + len(extra)

	ctx, activity := consoleBrowser(t)
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(3*time.Minute))
	}
	fail := func(what string, err error) { t.Helper(); activity.fatal(t, what, err) }
	if err := consoleSignIn(ctx, base, key); err != nil {
		fail("sign in", err)
	}

	start := time.Now()
	err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/plots"`),
		poll(fmt.Sprintf(`document.body.dataset.plotsDrawn === "%d"`, total)),
	)
	if err != nil {
		fail("the map did not draw the plots", err)
	}
	t.Logf("%d plots drawn %v after opening #/plots", total, time.Since(start).Round(time.Millisecond))
	consoleMapTimings(t, ctx, key)
	shots := consoleScreenshot(t, ctx, "console-map.png", "")

	gaps, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](consolePanFrames, chromedp.EvalAwaitPromise))
	if err != nil || len(gaps) == 0 {
		fail("panning the map", err)
	}
	slices.Sort(gaps)
	t.Logf("panning over %d plots: %d frames, median %.1f ms, 95th percentile %.1f ms, slowest %.1f ms",
		total, len(gaps), gaps[len(gaps)/2], gaps[len(gaps)*95/100], gaps[len(gaps)-1])

	// Each filter narrows map and table together; "" undoes it.
	choose := func(filter, value string) error {
		// As a user would: select the option whose value is value (the
		// option of all for ""), then tell the page.
		chose, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
			const sel = document.querySelector('select[data-filter="`+filter+`"]');
			const opt = Array.from(sel.options).find((o) => o.value === `+jsString(value)+`);
			if (!opt) return false;
			opt.selected = true;
			sel.dispatchEvent(new Event("change", { bubbles: true }));
			return true;
		})()`))
		if err == nil && !chose {
			err = fmt.Errorf("no option %q", value)
		}
		return err
	}
	consoleMapPointsAtArea(t, ctx, activity)
	consoleMapJobChoices(t, ctx, activity, []string{extraJob, gridJob}, []int{len(extra), n})

	for _, c := range []struct {
		filter, value string
		want          int
	}{
		{"supplier", "V-2", bySupplier["V-2"]},
		{"supplier", "", total},
		{"job", extraJob, len(extra)},
		{"job", "", total},
		{"country", "CI", len(extra)},
	} {
		err := choose(c.filter, c.value)
		if err != nil {
			fail("choose "+c.filter, err)
		}
		err = chromedp.Do(ctx,
			poll(fmt.Sprintf(`document.body.dataset.plotsDrawn === "%d"`, c.want)),
			poll(fmt.Sprintf(`document.querySelectorAll(".plots-table tbody tr").length === %d`, min(c.want, 200))),
		)
		if err != nil {
			got, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.plotsDrawn || "(drawing)"`))
			t.Fatalf("%s %q: %s plots drawn (%v), want %d", c.filter, c.value, got, err, c.want)
		}
	}
	consoleScreenshot(t, ctx, "console-map-filtered.png", shots)
	if err := choose("country", ""); err != nil {
		fail("clear the country filter", err)
	}

	// The sandbox's deforestation fixture, a vector layer, draws from its
	// features in the view: none over Ghana, its polygons over its box in
	// Brazil.
	var deforestation string
	for _, l := range geo.SandboxLayers() {
		if l.Kind == geo.DeforestationAfterCutoff {
			deforestation = l.ID
		}
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`input[data-layer="`+deforestation+`"]`)),
		poll(`(document.body.dataset.featuresDrawn || "").startsWith(`+jsString(deforestation+" ")+`)`),
		chromedp.Evaluate[chromedp.Void](`delete document.body.dataset.featuresDrawn; void window.eudrMap.jumpTo({ center: [-61.5, -10.5], zoom: 6 })`),
		poll(`/ [1-9][0-9]*$/.test(document.body.dataset.featuresDrawn || "")`),
	)
	if err != nil {
		fail("the deforestation layer's features were not drawn", err)
	}
	drawn, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.featuresDrawn`))
	t.Logf("deforestation layer over its box: %s", drawn)
	consoleScreenshot(t, ctx, "console-map-layer.png", shots)
	consoleMapTruncated(t, ctx, activity, bigLayer, shots)

	checkStayedOnAppliance(t, activity, base, nil)
}

// consoleMapPoints are the point plots of the map test, each standing
// for a plot of ha hectares.
// (Six decimals: fewer would fail the plot, INSUFFICIENT_PRECISION.)
var consoleMapPoints = []struct{ lon, lat, ha float64 }{{-5.160013, 6.300011, 4}, {-5.150013, 6.300011, 0.5}}

// consoleMapBigLayer imports into the sandbox of data directory dir,
// before the appliance starts, a protected-area layer of more features
// than GET .../features answers at once (layer.MaxFeaturesServed, 5,000):
// 5,010 small squares on a grid east of 20°E, south of the equator. It
// answers the layer's ID.
func consoleMapBigLayer(t *testing.T, dir string) string {
	t.Helper()
	const squares = 5010
	features := make([]string, squares)
	for i := range squares {
		features[i] = polFeature(polSquare(20+float64(i%100)*0.01, -0.5+float64(i/100)*0.01, 0.003), map[string]any{})
	}
	files := t.TempDir()
	featuresFile, coverageFile := filepath.Join(files, "big.geojson"), filepath.Join(files, "coverage.geojson")
	coverage := polCollection(polFeature(polBoxGeometry(19.9, -0.6, 21.1, 0.1, 6), map[string]any{}))
	if err := os.WriteFile(featuresFile, []byte(polCollection(features...)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(coverageFile, []byte(coverage), 0o600); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, dir, nil, "layers", "import", "--env", "sandbox", "--name", "Many reserves", "--kind", "protected_area",
		"--version", "1", "--source", "test", "--coverage", coverageFile, featuresFile)
	fields := strings.Fields(res.Stdout)
	if res.Code != 0 || len(fields) != 2 || fields[1] != strconv.Itoa(squares) {
		t.Fatalf("layers import: exit %d, stdout %q, stderr %q; want 0 and \"lyr_... %d\"", res.Code, res.Stdout, res.Stderr, squares)
	}
	return fields[0]
}

// consoleMapTimings logs where the time to draw the plots went: the marks
// the page set from asking for the first page of plots to the map's idle
// after drawing them, and, measured apart, the time to read one page of a
// thousand plots with geometry and to parse it.
func consoleMapTimings(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	marks, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const marks = performance.getEntriesByType("mark").filter((m) => m.name.startsWith("plots:"));
		const from = marks.length ? marks[0].startTime : 0;
		return marks.map((m) => m.name.slice(6) + " " + Math.round(m.startTime - from));
	})()`))
	if err != nil {
		t.Fatalf("read the page's marks: %v", err)
	}
	t.Logf("marks (ms from asking for the plots): %s", strings.Join(marks, ", "))
	page, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](`(async () => {
		const t0 = performance.now();
		const res = await fetch(document.body.dataset.api + "/eudr/polygons?include=geometry&limit=1000",
			{ headers: { "X-API-Key": `+jsString(key)+` }, cache: "no-store" });
		const text = await res.text();
		const t1 = performance.now();
		const n = JSON.parse(text).length;
		return [t1 - t0, performance.now() - t1, text.length, n];
	})()`, chromedp.EvalAwaitPromise))
	if err != nil || len(page) != 4 {
		t.Fatalf("read a page of plots: %v", err)
	}
	t.Logf("one page of %.0f plots with geometry (%.0f KB): read in %.0f ms, parsed in %.0f ms", page[3], page[2]/1000, page[0], page[1])
}

// consolePointRadius centres the map on a point at zoom and answers the
// radius in pixels the map draws the point plot there with, and whether
// a click inside it (at 0.85 of want from its centre) and one outside it
// (1.15 of want, past its outline) find it.
const consolePointRadius = `(async (lon, lat, zoom, want) => {
	const map = window.eudrMap;
	map.jumpTo({ center: [lon, lat], zoom });
	await new Promise((resolve) => map.once("idle", resolve));
	const c = map.project([lon, lat]);
	const at = (dx) => map.queryRenderedFeatures([c.x + dx, c.y], { layers: ["plot-points"] });
	const f = at(0)[0];
	return [f ? f.layer.paint["circle-radius"] : -1, at(0.85 * want).length, at(1.15 * want + 2).length];
})`

// consoleMapPointsAtArea checks that a point plot is drawn as a circle of
// its declared area (its radius in metres over the metres a pixel spans
// at its latitude and the zoom), and zoomed out at the least size that
// keeps it visible.
func consoleMapPointsAtArea(t *testing.T, ctx context.Context, activity *pageActivity) {
	t.Helper()
	const minRadius = 4 // pointMinRadius of map.js
	for _, point := range consoleMapPoints {
		for _, zoom := range []float64{16, 5} {
			metres := math.Sqrt(point.ha * 1e4 / math.Pi)
			metresPerPixel := 40075016.686 * math.Cos(point.lat*math.Pi/180) / (512 * math.Exp2(zoom))
			want := max(minRadius, metres/metresPerPixel)
			got, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](fmt.Sprintf("%s(%g, %g, %g, %g)",
				consolePointRadius, point.lon, point.lat, zoom, want), chromedp.EvalAwaitPromise))
			if err != nil || len(got) != 3 {
				activity.fatal(t, "measure a point plot", err)
			}
			if math.Abs(got[0]-want) > want*0.02 {
				t.Errorf("point of %g ha at zoom %g: drawn with a radius of %.2f px, want %.2f", point.ha, zoom, got[0], want)
			}
			if zoom > 10 && (got[1] == 0 || got[2] != 0) {
				t.Errorf("point of %g ha at zoom %g: found %v inside and %v outside its radius of %.1f px; want inside only",
					point.ha, zoom, got[1] != 0, got[2] != 0, want)
			}
		}
	}
	err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`delete document.body.dataset.plotShown;
		window.eudrMap.jumpTo({ center: [-5.191, 6.3], zoom: 12.8 }); void window.eudrMap.once("idle", () => (document.body.dataset.plotShown = "points"))`),
		chromedp.Poll[chromedp.Void](`document.body.dataset.plotShown === "points"`, chromedp.WithPollingTimeout(time.Minute)))
	if err != nil {
		activity.fatal(t, "show the point plots", err)
	}
	consoleScreenshot(t, ctx, "console-map-points.png", "")
}

// consoleMapJobChoices checks the options of the job filter: after "all
// jobs", each job (value its ID) named by its upload's time and number
// of plots, newest first: jobs, with plots.
func consoleMapJobChoices(t *testing.T, ctx context.Context, activity *pageActivity, jobs []string, plots []int) {
	t.Helper()
	options, err := chromedp.Run(ctx, chromedp.Evaluate[[][]string](`Array.from(document.querySelectorAll('select[data-filter="job"] option'),
		(o) => [o.value, o.textContent.trim()])`))
	if err != nil {
		activity.fatal(t, "read the job filter's options", err)
	}
	if len(options) != len(jobs)+1 || options[0][0] != "" {
		t.Fatalf("job filter options %q, want all jobs and then %d jobs", options, len(jobs))
	}
	for i, job := range jobs {
		want := regexp.MustCompile(`^Upload [0-9]{1,2} [A-Z][a-z]{2} [0-9]{2}:[0-9]{2} · ` + regexp.QuoteMeta(consoleThousands(plots[i])) + ` plots$`)
		if got := options[i+1]; got[0] != job || !want.MatchString(got[1]) {
			t.Errorf("job filter option %d: %q, want value %s and a text matching %s", i+1, got, job, want)
		}
	}
	t.Logf("job filter options: %q", options[1:])
}

// consoleThousands writes n with a comma between thousands, as the page
// does.
func consoleThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// consoleMapTruncated shows the layer of more features than the API
// answers at once: over all of it, the legend says that only the first
// 5,000 of the view are drawn; zoomed in on a corner, where fewer meet
// the view, it no longer does.
func consoleMapTruncated(t *testing.T, ctx context.Context, activity *pageActivity, layerID, shots string) {
	t.Helper()
	notice := `document.querySelector('[data-truncated="` + layerID + `"]')`
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(time.Minute))
	}
	err := chromedp.Do(ctx,
		// The other layers hidden, the features drawn are this one's.
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("input[data-layer]:checked").forEach((box) => box.click());
			delete document.body.dataset.featuresDrawn; void window.eudrMap.jumpTo({ center: [20.5, -0.25], zoom: 7 })`),
		chromedp.Click(chromedp.CSS(`input[data-layer="`+layerID+`"]`)),
		poll(`document.body.dataset.featuresDrawn === `+jsString(layerID+" 5000")),
		poll(notice+` && `+notice+`.textContent.replace(/\s+/g, " ").trim() === "first 5,000 features in view: zoom in"`),
	)
	if err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(`+notice+` || { textContent: "(none)" }).textContent`))
		activity.fatal(t, fmt.Sprintf("the legend did not say the layer is cut short (notice %q)", text), err)
	}
	consoleScreenshot(t, ctx, "console-map-truncated.png", shots)
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`void window.eudrMap.jumpTo({ center: [20.05, -0.45], zoom: 12 })`),
		poll(`!`+notice+` && /^`+layerID+` [1-9][0-9]*$/.test(document.body.dataset.featuresDrawn || "") && document.body.dataset.featuresDrawn !== `+jsString(layerID+" 5000")),
	)
	if err != nil {
		activity.fatal(t, "the legend still says the layer is cut short, zoomed in", err)
	}
}
