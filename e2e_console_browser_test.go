package main_test

// The operator console, in a real browser: a headless Chromium opens
// /console on the sandbox listener of a running `eudr serve`, signs in with
// an API key, and finds the appliance's plots on the map, coloured by
// verdict, with not one request leaving the appliance.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// consolePlots is how many plots the test screens and draws; set
// EUDR_CONSOLE_PLOTS to measure a bigger map (the time to draw them is
// logged, not asserted).
func consolePlots(t *testing.T) int {
	n := 50
	if s := os.Getenv("EUDR_CONSOLE_PLOTS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 10 {
			t.Fatalf("EUDR_CONSOLE_PLOTS=%q: want a number of plots, at least 10", s)
		}
	}
	return n
}

// consolePlotBody is n plots of the sandbox: one in five inside its
// deforestation box (HIGH_RISK), one in ten inside its box without
// reference data (FAILED), the others in Ghana (COMPLIANT), a few of them
// points with a declared area.
func consolePlotBody(n int) (body string, highRisk, failed int) {
	features := make([]string, n)
	for i := range n {
		props := map[string]any{"commodity": "cocoa", "producerCountry": "GH", "externalId": fmt.Sprintf("plot-%04d", i)}
		// Spread on a grid within each box, so that none overlaps another.
		dx, dy := float64(i%40)*0.02, float64(i/40%40)*0.02
		var geometry string
		switch {
		case i%5 == 0:
			geometry = polSquare(-61.9+dx, -10.9+dy, 0.002)
			props["commodity"], props["producerCountry"] = "cattle", "BR"
			highRisk++
		case i%10 == 1:
			geometry = polSquare(10.1+dx, 10.1+dy, 0.002)
			props["commodity"], props["producerCountry"] = "coffee", "NG"
			failed++
		case i%10 == 3:
			geometry = fmt.Sprintf(`{"type":"Point","coordinates":[%.6f,%.6f]}`, -2.0+dx, 6.4+dy)
			props["area"] = 2.0
		default:
			geometry = polSquare(-2.0+dx, 5.6+dy, 0.002)
		}
		features[i] = polFeature(geometry, props)
	}
	return polCollection(features...), highRisk, failed
}

func TestConsole_Browser(t *testing.T) {
	p := startServer(t, noRateLimit...)
	base := p.SandboxURL
	key := p.createKey(t, sandbox)
	n := consolePlots(t)
	body, highRisk, failed := consolePlotBody(n)
	polWaitJob(t, base, key, polMustPost(t, base, key, body, n), 5*time.Minute)

	ctx, activity := consoleBrowser(t)
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(3*time.Minute))
	}
	fail := func(what string, err error) { t.Helper(); activity.fatal(t, what, err) }

	// Signed out, the page asks for a key; the SANDBOX badge is there
	// already, from the listener.
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console"),
		chromedp.WaitVisible(chromedp.CSS("#api-key")),
	)
	if err != nil {
		fail("the sign-in form did not show", err)
	}
	badge, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("console-env").innerText`))
	if err != nil || badge != "SANDBOX" {
		t.Errorf("the environment badge reads %q (%v), want SANDBOX", badge, err)
	}

	// A wrong key is refused, in words.
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#api-key"), "not-a-key"),
		chromedp.Click(chromedp.CSS(".sign-in button")),
		chromedp.WaitVisible(chromedp.CSS(".sign-in .console-error")),
	)
	if err != nil {
		fail("a wrong key was not refused", err)
	}

	// Signed in: the overview counts the plots by verdict.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("api-key").value = ""`),
		chromedp.SendKeys(chromedp.CSS("#api-key"), key),
		chromedp.Click(chromedp.CSS(".sign-in button")),
		poll(fmt.Sprintf(`document.querySelector('[data-verdict="ALL"]')?.textContent === "%d"`, n)),
	)
	if err != nil {
		fail("the overview did not count the plots", err)
	}
	for verdict, want := range map[string]int{"HIGH_RISK": highRisk, "FAILED": failed, "COMPLIANT": n - highRisk - failed} {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('[data-verdict="`+verdict+`"]').textContent`))
		if err != nil || got != strconv.Itoa(want) {
			t.Errorf("the overview counts %q %s plots (%v), want %d", got, verdict, err, want)
		}
	}
	shots := consoleScreenshot(t, ctx, "console-overview.png", "")

	// The map: every plot drawn, timed from opening the page.
	start := time.Now()
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/plots"`),
		poll(fmt.Sprintf(`document.body.dataset.plotsDrawn === "%d"`, n)),
	)
	if err != nil {
		fail("the map did not draw the plots", err)
	}
	t.Logf("%d plots drawn %v after opening #/plots", n, time.Since(start).Round(time.Millisecond))
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".plots-table tbody tr").length`))
	if err != nil || rows != min(n, 200) {
		t.Errorf("the table lists %d plots (%v), want %d", rows, err, min(n, 200))
	}
	consoleScreenshot(t, ctx, "console-plots.png", shots)

	// Filtering by verdict: only the high-risk plots are listed.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`.legend label:nth-of-type(1) input`)), // COMPLIANT off
		chromedp.Click(chromedp.CSS(`.legend label:nth-of-type(3) input`)), // FAILED off
		poll(fmt.Sprintf(`document.querySelectorAll(".plots-table tbody tr").length === %d`, min(highRisk, 200))),
	)
	if err != nil {
		fail("the verdict filter did not apply", err)
	}
	// A row opens its plot, which tells why it is high risk: from the
	// keyboard, by the link in its first cell.
	err = chromedp.Do(ctx,
		chromedp.Focus(chromedp.CSS(".plots-table tbody tr:first-child a")),
		chromedp.KeyEvent(kb.Enter),
		poll(`location.hash.startsWith("#/plots/pol_") && document.querySelector(".plot-detail") !== null`),
		poll(`document.querySelector(".plot-detail").innerText.includes("DEFORESTATION")`),
		poll(`document.body.dataset.plotShown === decodeURIComponent(location.hash.slice("#/plots/".length))`),
	)
	if err != nil {
		fail("a row did not open its plot", err)
	}
	consoleScreenshot(t, ctx, "console-plot.png", shots)

	// No request left the appliance, and the page's own policy refused
	// nothing.
	// The wrong key's 401 is logged by the browser as a failed load.
	checkStayedOnAppliance(t, activity, base, func(pr string) bool { return strings.Contains(pr, "401") })
}

// clickUntilShown is a JavaScript condition for a poll that clicks button
// until shown is on the page: the click is made in the page, again at each
// poll, since a page that re-renders as what it shows arrives may replace
// a button found by one call before the next clicks it.
func clickUntilShown(button, shown string) string {
	return `(() => {
		if (document.querySelector(` + jsString(shown) + `)) return true;
		document.querySelector(` + jsString(button) + `)?.click();
		return false;
	})()`
}

// consoleBrowser starts a headless Chromium recording what the page
// requests; it returns the context to drive it, and ends with the test.
func consoleBrowser(t *testing.T) (context.Context, *pageActivity) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		// MapLibre draws with WebGL: without a GPU, Chromium's software
		// renderer does it.
		chromedp.Flag("use-angle", "swiftshader"),
		chromedp.Flag("enable-unsafe-swiftshader", true),
		chromedp.WindowSize(1400, 900),
		chromedp.UserDataDir(t.TempDir()),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium's sandbox refuses to run as root
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	t.Cleanup(cancelBrowser)
	activity := &pageActivity{}
	if err := chromedp.Listen(browserCtx, activity.record); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(browserCtx, 5*time.Minute)
	t.Cleanup(cancel)
	return ctx, activity
}

// checkStayedOnAppliance fails t for each request of the page that went
// anywhere but the appliance at base, each request the browser blocked, and
// each problem the page logged that expected (nil: none) does not say the
// test caused.
func checkStayedOnAppliance(t *testing.T, activity *pageActivity, base string, expected func(problem string) bool) {
	t.Helper()
	requests, blocked, problems := activity.snapshot()
	for _, u := range requests {
		if !strings.HasPrefix(u, base+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
			t.Errorf("the console requested %s, which is not on the appliance (%s)", u, base)
		}
	}
	for _, b := range blocked {
		t.Errorf("the browser blocked a request of the console: %s", b)
	}
	for _, pr := range problems {
		if expected == nil || !expected(pr) {
			t.Errorf("the console reported a problem: %s", pr)
		}
	}
	if t.Failed() {
		t.Logf("requests of the console: %v", requests)
	}
}

// consoleScreenshot saves the first screen as name in dir ("" for a new
// temporary directory) and, when EUDR_SCREENSHOT_DIR is set, there too; it
// returns the directory.
func consoleScreenshot(t *testing.T, ctx context.Context, name, dir string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return saveScreenshot(t, png, name, dir)
}

// saveScreenshot saves png as name in dir ("" for a new temporary
// directory) and, when EUDR_SCREENSHOT_DIR is set, there too; it returns
// the directory. Chromium's and Firefox's screenshots both go through it.
func saveScreenshot(t *testing.T, png []byte, name, dir string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	dirs := []string{dir}
	if d := os.Getenv("EUDR_SCREENSHOT_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		if err := os.WriteFile(filepath.Join(d, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshot %s in %s", name, strings.Join(dirs, " and "))
	return dir
}
