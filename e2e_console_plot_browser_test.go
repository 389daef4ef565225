package main_test

// One plot in the operator console, in a real browser: the sample layers
// of examples/data imported into the sandbox, the sample plots screened,
// and a high-risk plot opened. Its proof is checked by the page itself
// (WebCrypto), a changed byte makes a step fail, its loss by year and
// datasets show, the loss-year layer draws as tiles from the appliance,
// and a plot is deleted, all without a request leaving the appliance.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/apitest"
)

// consoleTiles records the answers to map tile requests and tells when one
// arrives.
type consoleTiles struct {
	mu      sync.Mutex
	answers []string // "status mime URL"
	arrived chan struct{}
}

func (c *consoleTiles) record(ev any) {
	e, ok := ev.(*network.EventResponseReceived)
	if !ok || !strings.Contains(e.Response.URL, "/tiles/") {
		return
	}
	c.mu.Lock()
	c.answers = append(c.answers, fmt.Sprintf("%d %s %s", e.Response.Status, e.Response.MimeType, e.Response.URL))
	c.mu.Unlock()
	select {
	case c.arrived <- struct{}{}:
	default:
	}
}

func (c *consoleTiles) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.answers...)
}

// consoleSampleLayers imports the layers of examples/data into the sandbox
// of the stopped dataDir, as docs/layers.md does, and returns a sandbox
// key with write scope.
func consoleSampleLayers(t *testing.T, dataDir string) string {
	t.Helper()
	abs := func(p string) string {
		a, err := filepath.Abs(filepath.Join(samplesDir, p))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	common := []string{"--env", "sandbox", "--version", "sample-1", "--source", "eudr examples/data"}
	samplesImport(t, dataDir, append(common, "--name", "Sample deforestation (synthetic)", "--kind", "deforestation",
		"--coverage", abs("deforestation-coverage.geojson"), abs("deforestation.geojson"))...)
	samplesImport(t, dataDir, append(common, "--name", "Sample loss year (synthetic)", "--kind", "loss-year",
		"--raster", abs("rasters/loss-year"))...)
	samplesImport(t, dataDir, append(common, "--name", "Sample forest 2020 (synthetic)", "--kind", "forest-2020",
		"--raster", abs("rasters/forest-2020"))...)
	res := runCLI(t, dataDir, nil, "admin", "create-key", "--env", "sandbox", "--name", "console")
	key := strings.TrimSpace(res.Stdout)
	if res.Code != 0 || !sandboxKeyPattern.MatchString(key) {
		t.Fatalf("admin create-key --env sandbox: exit %d, stdout %q, stderr %q", res.Code, res.Stdout, res.Stderr)
	}
	return key
}

// consoleCanonicalSample is JSON whose canonical form is easy to get
// wrong: numbers as written, keys in code point order (not UTF-16's),
// HTML characters and U+2028 in strings.
const consoleCanonicalSample = `{"z":1.50,"a":[1e3,-0.0,{"b":true,"B":null,"s":"<&> \u2028 \"q\"\t"}],` +
	`"\uff01":1,"\ud835\udd38":2,"é":false,"e\u0301":[]}`

func TestConsole_PlotBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	requireE2E(t)
	dataDir := tempDataDir(t)
	key := consoleSampleLayers(t, dataDir)
	p := startServerIn(t, dataDir, noRateLimit...)
	base := p.SandboxURL
	plots, ids := samplesPlots(t)
	job := polWaitJob(t, base, key, polMustPost(t, base, key, plots, len(ids)), samplesJobTimeout)
	byExternalID := map[string]string{}
	for _, r := range job.Results {
		byExternalID[polStr(r.ExternalID)] = r.PolygonID
	}
	highRisk, failed := byExternalID["CI-03"], byExternalID["CI-10"] // raster loss of 2022; a ring crossing itself
	// A batch uses the compliant CI-04, which cannot be deleted then.
	inBatch := byExternalID["CI-04"]
	mustCreateSupplier(t, base, key, "V-100", "Cooperative")
	batch, _ := batRegister(t, base, key, batBody("LOT-CI-1", "V-100", inBatch))
	batWait(t, base, key, batch)
	var lossLayer struct {
		LayerID string `json:"layerId"`
		SHA256  string `json:"sha256"`
		Raster  struct {
			MinZoom int `json:"minZoom"`
		} `json:"raster"`
	}
	for _, l := range apitest.Do(t, "GET", base+eudrAPI+"/layers", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Array(t) {
		if l["kind"] == "loss-year" {
			b, _ := json.Marshal(l)
			if err := json.Unmarshal(b, &lossLayer); err != nil {
				t.Fatal(err)
			}
		}
	}
	if highRisk == "" || failed == "" || lossLayer.LayerID == "" {
		t.Fatalf("plots CI-03 %q and CI-10 %q, loss-year layer %q: want all three", highRisk, failed, lossLayer.LayerID)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Flag("use-angle", "swiftshader"),
		chromedp.Flag("enable-unsafe-swiftshader", true),
		chromedp.WindowSize(1400, 1000),
		chromedp.UserDataDir(t.TempDir()),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	defer cancelBrowser()
	activity := &pageActivity{}
	tiles := &consoleTiles{arrived: make(chan struct{}, 1)}
	if err := chromedp.Listen(browserCtx, func(ev any) { activity.record(ev); tiles.record(ev) }); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(browserCtx, 4*time.Minute)
	defer cancel()
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(3*time.Minute))
	}
	fail := func(what string, err error) { t.Helper(); activity.fatal(t, what, err) }

	// Signed in with the key, the high-risk plot's page checks its proof.
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console#/plots/"+highRisk),
		chromedp.WaitVisible(chromedp.CSS("#api-key")),
		chromedp.SendKeys(chromedp.CSS("#api-key"), key),
		chromedp.Click(chromedp.CSS(".sign-in button")),
		poll(`document.querySelectorAll('.proof-step').length === 4`),
		poll(`document.body.dataset.plotShown === `+jsString(highRisk)),
	)
	if err != nil {
		fail("the plot's proof was not checked", err)
	}
	steps, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`Array.from(document.querySelectorAll(".proof-step"), (s) => s.dataset.step + ":" + s.dataset.ok).join(",")`))
	if want := "document:true,entry:true,inclusion:true,checkpoint:true"; err != nil || steps != want {
		detail, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".proof").innerText`))
		t.Errorf("proof steps %q (%v), want %q\n%s", steps, err, want, detail)
	}
	// The plot's PDF report is offered on its panel (saving one is tested
	// on the batch's page).
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".plot-detail .report-button").length`)); err != nil || n != 1 {
		t.Errorf("the plot's panel has %d PDF report buttons (%v), want 1", n, err)
	}
	// The 2022 loss, after the cutoff, is a bar of the chart; the loss-year
	// layer's SHA-256 is listed.
	bar, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`(() => { const b = document.querySelector('.loss-bar[data-year="2022"]'); return b ? b.className + " " + b.dataset.ha : ""; })()`))
	if err != nil || !strings.HasPrefix(bar, "loss-bar after-cutoff ") || strings.HasSuffix(bar, " 0") {
		t.Errorf("the loss chart's 2022 bar is %q (%v), want a bar after the cutoff with hectares", bar, err)
	}
	// The producer country check: the sample plot lies in Côte d'Ivoire.
	country, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".plot-country")?.innerText ?? ""`))
	if err != nil || !strings.HasPrefix(country, "in CI (or within 5 km") {
		t.Errorf("the plot's country reads %q (%v), want in CI within the check's buffer", country, err)
	}
	shas, err := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll(".datasets .sha256"), (e) => e.textContent).join(" ")`))
	if err != nil || !strings.Contains(shas, lossLayer.SHA256) {
		t.Errorf("the datasets list SHA-256s %q (%v), want the loss-year layer's %s", shas, err, lossLayer.SHA256)
	}
	shots := consoleScreenshot(t, ctx, "console-plot-evidence.png", "")

	// The check itself: a byte changed in the document fails its hash, one
	// changed in the checkpoint's signature fails the signature, one of the
	// inclusion proof fails the proof, and the rest still checks. eudrProof is published by proof.js for this.
	tamper := fmt.Sprintf(`(async () => {
		const headers = { "X-API-Key": %s };
		const api = document.body.dataset.api + "/eudr";
		const text = await (await fetch(api + "/polygons/%s/evidence", { headers })).text();
		const vkey = (await (await fetch(api + "/ledger/public-key", { headers })).json()).verifierKey;
		const flip = (s, i) => s.slice(0, i) + (s[i] === "9" ? "8" : "9") + s.slice(i + 1);
		const doc = flip(text, text.indexOf('"areaHa":') + 9);
		const dash = text.lastIndexOf("\u2014 ");
		const sig = flip(text, text.indexOf(" ", dash + 2) + 20);
		const proof = flip(text, text.indexOf('"proof":["') + 20);
		const run = async (t) => (await window.eudrProof.verifyEvidence(t, vkey)).map((s) => s.name + ":" + s.ok).join(",");
		return [await run(text), await run(doc), await run(sig), await run(proof)].join(" | ");
	})()`, jsString(key), highRisk)
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](tamper, chromedp.EvalAwaitPromise))
	want := "document:true,entry:true,inclusion:true,checkpoint:true | " +
		"document:false,entry:true,inclusion:true,checkpoint:true | " +
		"document:true,entry:true,inclusion:true,checkpoint:false | " +
		"document:true,entry:true,inclusion:false,checkpoint:true"
	if err != nil || got != want {
		t.Errorf("verifying the evidence as sent | with a byte of areaHa changed | of the signature | of the inclusion proof:\ngot  %q (%v)\nwant %q", got, err, want)
	}
	// The canonical form is the appliance's, byte for byte.
	wantCanon, err := ledger.CanonicalJSON(json.RawMessage(consoleCanonicalSample))
	if err != nil {
		t.Fatal(err)
	}
	canon, err := chromedp.Run(ctx, chromedp.Evaluate[string](
		`window.eudrProof.canonicalJSON(window.eudrProof.parseJSON(`+jsString(consoleCanonicalSample)+`))`))
	if err != nil || canon != string(wantCanon) {
		t.Errorf("canonical JSON in the browser:\ngot  %q (%v)\nwant %q", canon, err, wantCanon)
	}

	// The loss-year layer over the plot, zoomed in past its minZoom: its
	// tiles come from the appliance, as PNGs.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`.overlays input[data-layer="`+lossLayer.LayerID+`"]`)),
	)
	if err != nil {
		fail("the loss-year layer has no toggle", err)
	}
	var drawn []string
	for len(drawn) == 0 {
		select {
		case <-tiles.arrived:
		case <-ctx.Done():
			fail("no tile of the loss-year layer was answered", ctx.Err())
		}
		for _, a := range tiles.snapshot() {
			if strings.HasPrefix(a, "200 image/png "+base+eudrAPI+"/layers/"+lossLayer.LayerID+"/tiles/") {
				drawn = append(drawn, a)
			}
		}
	}
	for _, a := range tiles.snapshot() {
		var status, z int
		var mime, url string
		fmt.Sscanf(a, "%d %s %s", &status, &mime, &url)
		fmt.Sscanf(url[strings.LastIndex(url, "/tiles/")+len("/tiles/"):], "%d/", &z)
		if status != http.StatusOK || mime != "image/png" || z < lossLayer.Raster.MinZoom {
			t.Errorf("tile answer %s: want 200 image/png at zoom %d or more", a, lossLayer.Raster.MinZoom)
		}
	}
	if err := chromedp.Do(ctx, poll(`document.body.dataset.overlaysDrawn === `+jsString(lossLayer.LayerID))); err != nil {
		fail("the map did not draw the loss-year layer", err)
	}
	consoleScreenshot(t, ctx, "console-plot-layers.png", shots)

	// Deleting the failed plot, for its correction to be sent again: asked
	// first, then done.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/plots/`+failed+`"`),
		poll(askDelete("CI-10")),
		chromedp.WaitVisible(chromedp.CSS(".confirm-delete")),
	)
	if err != nil {
		fail("the failed plot did not offer to be deleted", err)
	}
	consoleScreenshot(t, ctx, "console-plot-delete.png", shots)
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.querySelector(".confirm-delete").click()`),
		poll(fmt.Sprintf(`location.hash === "#/plots" && document.querySelectorAll(".plots-table tbody tr").length === %d`, len(ids)-1)),
	)
	if err != nil {
		fail("the plot was not deleted", err)
	}
	apitest.Do(t, "GET", base+eudrAPI+"/polygons/"+failed, apitest.WithKey(key), nil).WantStatus(t, http.StatusNotFound)

	// The plot a batch uses stays, and the page says why, naming the batch.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/plots/`+inBatch+`"`),
		poll(askDelete("CI-04")),
		chromedp.Evaluate[chromedp.Void](`document.querySelector(".confirm-delete").click()`),
		poll(`document.querySelector(".plot-delete .console-error") !== null`),
	)
	if err != nil {
		fail("deleting the plot of a batch was not refused", err)
	}
	refusal, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".plot-delete .console-error").innerText`))
	if err != nil || !strings.Contains(refusal, "A batch uses this plot") || !strings.Contains(refusal, batch) {
		t.Errorf("the refusal reads %q (%v), want it to say a batch uses the plot and name %s", refusal, err, batch)
	}
	if err := chromedp.Do(ctx, chromedp.ScrollIntoView(chromedp.CSS(".plot-delete"))); err != nil {
		fail("scroll to the refusal", err)
	}
	consoleScreenshot(t, ctx, "console-plot-in-use.png", shots)
	apitest.Do(t, "GET", base+eudrAPI+"/polygons/"+inBatch, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)

	// The refused delete's 409 is logged by the browser as a failed load.
	checkStayedOnAppliance(t, activity, base, func(pr string) bool { return strings.Contains(pr, "409") })
}

// askDelete is a condition that clicks the plot panel's Delete of the plot
// named externalID until its confirmation shows. The click is made in the
// page, again at each poll: the panel re-renders as what it shows arrives,
// and a button found by one call and clicked by the next may be gone.
func askDelete(externalID string) string {
	return `(document.querySelector(".plot-detail h2")?.innerText.includes(` + jsString(externalID) + `) === true && ` +
		clickUntilShown(".ask-delete", ".confirm-delete") + `)`
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
