package main_test

// The operator console with the appliance's users, in a real browser: an
// admin made by `eudr admin create-user` signs in with a name and password,
// uploads a GeoJSON file of plots and watches it screened onto the map,
// stays signed in across a reload and signs out; a reader sees no upload,
// and the appliance refuses a write made with the reader's session.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// sessionCreateUser makes a user with the CLI on a stopped appliance's data
// dir and returns its password.
func sessionCreateUser(t *testing.T, dataDir, username, role string) string {
	t.Helper()
	res := runCLI(t, dataDir, nil, "admin", "create-user", "--username", username, "--role", role)
	password := strings.TrimSpace(res.Stdout)
	if res.Code != 0 || password == "" {
		t.Fatalf("create-user %s: exit %d, stdout %q, stderr %q", username, res.Code, res.Stdout, res.Stderr)
	}
	return password
}

func TestConsole_SessionBrowser(t *testing.T) {
	p := startServer(t, noRateLimit...)
	base := p.SandboxURL
	key := p.createKey(t, sandbox)
	// Two plots are there before the upload.
	before := polCollection(
		polFeature(polSquare(-2.5, 5.5, 0.002), map[string]any{"commodity": "cocoa", "producerCountry": "GH", "externalId": "old-1"}),
		polFeature(polSquare(-2.4, 5.5, 0.002), map[string]any{"commodity": "cocoa", "producerCountry": "GH", "externalId": "old-2"}),
	)
	polWaitJob(t, base, key, polMustPost(t, base, key, before, 2), 2*time.Minute)
	p.Stop(t)
	adminPassword := sessionCreateUser(t, p.DataDir, "ada", "admin")
	readerPassword := sessionCreateUser(t, p.DataDir, "rita", "reader")
	p = p.Restart(t)
	base = p.SandboxURL

	// The file to upload: three plots, one in the sandbox's deforestation
	// box (HIGH_RISK); and a file the appliance refuses, a ring not closed.
	dir := t.TempDir()
	upload := filepath.Join(dir, "plots.geojson")
	body := polCollection(
		polFeature(polSquare(-61.5, -10.5, 0.002), map[string]any{"commodity": "cattle", "producerCountry": "BR", "externalId": "new-1"}),
		polFeature(polSquare(-2.3, 5.5, 0.002), map[string]any{"commodity": "cocoa", "producerCountry": "GH", "externalId": "new-2"}),
		polFeature(polSquare(-2.2, 5.5, 0.002), map[string]any{"commodity": "cocoa", "producerCountry": "GH", "externalId": "new-3"}),
	)
	broken := filepath.Join(dir, "broken.geojson")
	brokenBody := polCollection(polFeature(`{"type":"Polygon","coordinates":[[[-2,5],[-2,5.01],[-1.99,5.01],[-1.99,5]]]}`,
		map[string]any{"commodity": "cocoa", "producerCountry": "GH"}))
	for name, data := range map[string]string{upload: body, broken: brokenBody} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	ctx, activity := consoleBrowser(t)
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(3*time.Minute))
	}
	fail := func(what string, err error) { t.Helper(); activity.fatal(t, what, err) }
	signIn := func(username, password string) error {
		return chromedp.Do(ctx,
			chromedp.WaitVisible(chromedp.CSS("#username")),
			chromedp.SendKeys(chromedp.CSS("#username"), username),
			chromedp.SendKeys(chromedp.CSS("#password"), password),
			chromedp.Click(chromedp.CSS(".sign-in-user button")),
			poll(`document.querySelector(".console-user") !== null`),
		)
	}
	header := func() string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".console-user")?.innerText ?? ""`))
		if err != nil {
			t.Fatalf("read the header: %v", err)
		}
		return s
	}

	// The admin signs in with a name and password; the header says who.
	err := chromedp.Do(ctx, chromedp.Navigate(base+"/console"), chromedp.WaitVisible(chromedp.CSS("#api-key")))
	if err != nil {
		fail("the sign-in page did not show the key sign-in too", err)
	}
	// A wrong password is refused in words.
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#username"), "ada"),
		chromedp.SendKeys(chromedp.CSS("#password"), "not-the-password"),
		chromedp.Click(chromedp.CSS(".sign-in-user button")),
		poll(`document.querySelector(".sign-in-user .console-error")?.innerText === "The username or password is wrong"`),
	)
	if err != nil {
		fail("a wrong password was not refused in words", err)
	}
	shots := consoleScreenshot(t, ctx, "console-session-sign-in.png", "")
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`for (const id of ["username", "password"]) {
			const input = document.getElementById(id);
			input.value = "";
			input.dispatchEvent(new Event("input", { bubbles: true }));
		}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := signIn("ada", adminPassword); err != nil {
		fail("the admin did not sign in", err)
	}
	if h := header(); !strings.Contains(h, "ada") || !strings.Contains(strings.ToLower(h), "admin") {
		t.Errorf("the header reads %q, want the admin's name and role", h)
	}

	// A file the appliance refuses, sent without repair (on by default):
	// each problem listed with its path.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/plots"`),
		poll(`document.body.dataset.plotsDrawn === "2"`),
		chromedp.Click(chromedp.CSS(".upload-repair input")),
		poll(`document.querySelector(".upload-repair input").checked === false`),
		chromedp.SetUploadFiles(chromedp.CSS("#plot-file"), []string{broken}),
		poll(`document.querySelector(".upload-problems li") !== null`),
	)
	if err != nil {
		fail("a refused file was not explained", err)
	}
	problem, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".upload-problems li").innerText`))
	if !strings.Contains(problem, "features[0].geometry") {
		t.Errorf("the refused file's problem reads %q, want its path in the file", problem)
	}
	consoleScreenshot(t, ctx, "console-upload-refused.png", shots)

	// The good file: screened, counted by verdict, drawn.
	err = chromedp.Do(ctx,
		chromedp.SetUploadFiles(chromedp.CSS("#plot-file"), []string{upload}),
		poll(`document.querySelector('[data-job-status="COMPLETED"]') !== null`),
		poll(`document.body.dataset.plotsDrawn === "5"`),
	)
	if err != nil {
		fail("the upload was not screened onto the map", err)
	}
	counts, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".upload-counts").innerText`))
	if !strings.Contains(counts, "1 high risk") || !strings.Contains(counts, "2 compliant") {
		t.Errorf("the upload's counts read %q, want 1 high risk and 2 compliant", counts)
	}
	consoleScreenshot(t, ctx, "console-upload.png", shots)

	// A workbook is sent as it is, a binary file typed by its name: the
	// six plots of the plot-file test data, screened and drawn beside.
	workbook, err := filepath.Abs("geo/plotfile/testdata/plots.xlsx")
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.SetUploadFiles(chromedp.CSS("#plot-file"), []string{workbook}),
		poll(`document.querySelector('[data-job-status="COMPLETED"]')?.innerText.includes("plots.xlsx") === true`),
		poll(`document.body.dataset.plotsDrawn === "11"`),
	)
	if err != nil {
		fail("the workbook was not screened onto the map", err)
	}

	// The refused file again, with repair: its open ring is closed, and
	// the plot's panel (the newest plot heads the table) says so.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".upload-repair input")),
		poll(`document.querySelector(".upload-repair input").checked === true`),
		chromedp.SetUploadFiles(chromedp.CSS("#plot-file"), []string{broken}),
		poll(`document.querySelector('[data-job-status="COMPLETED"]')?.innerText.includes("broken.geojson") === true`),
		poll(`document.body.dataset.plotsDrawn === "12"`),
		chromedp.Focus(chromedp.CSS(".plots-table tbody tr:first-child a")),
		chromedp.KeyEvent(kb.Enter),
		poll(`document.querySelector('.plot-repair li[data-change="RING_CLOSED"]') !== null`),
	)
	if err != nil {
		fail("the file sent with repair was not repaired, or its plot does not say so", err)
	}
	consoleScreenshot(t, ctx, "console-plot-repaired.png", shots)

	// A reload keeps the session: the cookie lives on, the CSRF token is
	// asked for again.
	err = chromedp.Do(ctx, chromedp.Reload(), poll(`document.body.dataset.plotsDrawn === "12"`))
	if err != nil {
		fail("the reloaded page was not signed in", err)
	}
	if h := header(); !strings.Contains(h, "ada") {
		t.Errorf("after a reload the header reads %q, want ada", h)
	}

	// Sign out ends the session on the appliance, not only in the page.
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".sign-out")), chromedp.WaitVisible(chromedp.CSS("#username")))
	if err != nil {
		fail("sign out did not bring back the sign-in form", err)
	}
	status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch(document.body.dataset.api + "/auth/session").then((r) => r.status)`,
		chromedp.EvalAwaitPromise))
	if err != nil || status != 401 {
		t.Errorf("after sign out GET /auth/session answers %d (%v), want 401", status, err)
	}

	// The reader sees the plots, and no upload.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`delete document.body.dataset.plotsDrawn`)); err != nil {
		t.Fatal(err)
	}
	if err := signIn("rita", readerPassword); err != nil {
		fail("the reader did not sign in", err)
	}
	if h := header(); !strings.Contains(h, "rita") || !strings.Contains(strings.ToLower(h), "reader") {
		t.Errorf("the header reads %q, want the reader's name and role", h)
	}
	err = chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](`location.hash = "#/plots"`), poll(`document.body.dataset.plotsDrawn === "12"`))
	if err != nil {
		fail("the reader's map did not draw the plots", err)
	}
	upl, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector(".plot-upload, #plot-file") !== null`))
	if upl {
		t.Error("the reader is offered the upload")
	}
	consoleScreenshot(t, ctx, "console-reader.png", shots)

	// A write with the reader's cookie and CSRF token is refused by the
	// appliance, whatever the page shows.
	refused, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(async () => {
		const api = document.body.dataset.api;
		const s = await (await fetch(api + "/auth/session")).json();
		const r = await fetch(api + "/eudr/polygons", {method: "POST", body: %q,
			headers: {"Content-Type": "application/geo+json", "Idempotency-Key": "reader-1", "X-CSRF-Token": s.csrfToken}});
		const e = await r.json();
		return r.status + " " + e.details.map((d) => d.code).join(",");
	})()`, body), chromedp.EvalAwaitPromise))
	if err != nil || refused != "403 SCOPE_REQUIRED" {
		t.Errorf("the reader's write was answered %q (%v), want 403 SCOPE_REQUIRED", refused, err)
	}

	// A session that ends behind the page's back (here signed out by
	// another request) brings the sign-in back at the next request, saying
	// why.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`(async () => {
			const api = document.body.dataset.api;
			const s = await (await fetch(api + "/auth/session")).json();
			await fetch(api + "/auth/session", {method: "DELETE", headers: {"X-CSRF-Token": s.csrfToken}});
			location.hash = "#/overview";
		})()`, chromedp.EvalAwaitPromise),
		poll(`document.querySelector(".sign-in-page > .console-error")?.innerText.includes("ended") === true`),
	)
	if err != nil {
		fail("an ended session did not bring back the sign-in", err)
	}
	consoleScreenshot(t, ctx, "console-session-ended.png", shots)

	// No request left the appliance; the browser logged only the refusals
	// the test asked for.
	checkStayedOnAppliance(t, activity, base, func(pr string) bool {
		return strings.Contains(pr, "status of 400") || strings.Contains(pr, "status of 401") || strings.Contains(pr, "status of 403")
	})
}

// A link to the console on another site: the browser sends that
// navigation without the SameSite=Strict session cookie, so the appliance
// marks the page "maybe" and the page asks for the session itself (its own
// request carries the cookie). A signed-in user lands signed in; one who
// is not sees the sign-in.
func TestConsole_SessionFromAnotherSite(t *testing.T) {
	p := startServer(t, noRateLimit...)
	base := p.SandboxURL
	// The other site: a page on localhost, another site to the browser
	// than the appliance's 127.0.0.1.
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Elsewhere</title><a id="go" href="%s/console#/overview">The overview</a>`, base)
	}))
	t.Cleanup(other.Close)
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)

	ctx, activity := consoleBrowser(t)
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(time.Minute))
	}
	fail := func(what string, err error) { t.Helper(); activity.fatal(t, what, err) }
	// until waits for expr to hold across the navigations under way: an
	// evaluation that meets a page being replaced fails, and is asked
	// again of the next page.
	until := func(expr string) error {
		deadline := time.Now().Add(time.Minute)
		for {
			ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
			if err == nil && ok {
				return nil
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("%s did not hold in a minute (last error %v)", expr, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// follow opens the other site's page and follows its link.
	follow := func() error {
		if err := chromedp.Do(ctx, chromedp.Navigate(otherURL), chromedp.WaitVisible(chromedp.CSS("#go"))); err != nil {
			return err
		}
		if err := until(`location.origin === ` + jsString(base) + ` || (document.getElementById("go")?.click(), false)`); err != nil {
			return err
		}
		return until(`document.body?.dataset.session === "maybe"`)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console"),
		chromedp.WaitVisible(chromedp.CSS("#username")),
		chromedp.SendKeys(chromedp.CSS("#username"), "admin"),
		chromedp.SendKeys(chromedp.CSS("#password"), p.AdminPassword),
		chromedp.Click(chromedp.CSS(".sign-in-user button")),
		poll(`document.querySelector(".console-user") !== null`),
	)
	if err == nil {
		err = follow()
	}
	if err == nil {
		err = chromedp.Do(ctx, poll(`document.querySelector(".console-user")?.innerText.includes("admin") === true && document.querySelector(".overview-dlq") !== null`))
	}
	if err != nil {
		fail("the link from another site did not land signed in", err)
	}
	// Signed out, the same link shows the sign-in.
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".sign-out")), chromedp.WaitVisible(chromedp.CSS("#username")))
	if err == nil {
		err = follow()
	}
	if err == nil {
		err = chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#username")))
	}
	if err != nil {
		fail("the link from another site, signed out, did not show the sign-in", err)
	}
	// Nothing but the appliance and the other site's page was asked for;
	// the one problem logged is the 401 of the session asked for when
	// there was none.
	requests, blocked, problems := activity.snapshot()
	for _, u := range requests {
		if !strings.HasPrefix(u, base+"/") && !strings.HasPrefix(u, otherURL+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the browser requested %s, neither the appliance nor the other site", u)
		}
	}
	for _, b := range blocked {
		t.Errorf("the browser blocked a request: %s", b)
	}
	for _, pr := range problems {
		// (A new appliance has no checkpoint yet: the overview asks, 404.)
		if !strings.Contains(pr, "status of 401") && !strings.Contains(pr, "ledger/checkpoint") {
			t.Errorf("the console reported a problem: %s", pr)
		}
	}
}
