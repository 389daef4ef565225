package main_test

// The plots map at size, in a real browser: thousands of plots pushed in
// one POST to the sandbox, the time until the map has drawn them and the
// frame time while panning measured (logged, not asserted: speed is not a
// pass or fail on a shared machine), the filters by supplier, job and
// producer country applied to map and table together, and a vector
// reference layer drawn from its features.

import (
	"fmt"
	"os"
	"slices"
	"strconv"
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
	p := startServer(t, noRateLimit...)
	base := p.SandboxURL
	key := p.createKey(t, sandbox)
	n := consoleMapPlots(t)
	body, bySupplier := consoleMapGrid(n)
	gridJob := polMustPost(t, base, key, body, n)
	// Five more plots, from another job, supplier and country.
	extra := make([]string, 5)
	for i := range extra {
		extra[i] = polFeature(polSquare(-1.2+float64(i)*0.01, 5.3, 0.003),
			map[string]any{"commodity": "cocoa", "producerCountry": "CI", "supplierId": "V-9"})
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

	checkStayedOnAppliance(t, activity, base, nil)
}
