package main_test

// The operator console in Firefox, as the other console tests see it in
// Chromium: a user signs in with a name and password, the overview counts
// the plots, the map draws them with WebGL, a high-risk plot's page checks
// its proof with WebCrypto, and the batches, statements and webhooks pages
// list what the appliance holds; not one request leaves the appliance and
// the page logs no error. Then in a Firefox with WebGL turned off: no map,
// and the plots still listed.

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestConsole_FirefoxBrowser(t *testing.T) {
	firefoxPath(t) // skip before starting anything when there is no browser
	p := startServer(t, noRateLimit...)
	base := p.SandboxURL
	key := p.createKey(t, sandbox)
	// Ten plots: two high risk, one failed, seven compliant; then a batch
	// of two more, linked to a shipment, and a statement drafted on it.
	body, highRisk, _ := consolePlotBody(10)
	job := polWaitJob(t, base, key, polMustPost(t, base, key, body, 10), 5*time.Minute)
	var plot string // plot-0000 is in the sandbox's deforestation box
	for _, r := range job.Results {
		if polStr(r.ExternalID) == "plot-0000" {
			plot = r.PolygonID
		}
	}
	ddsMapOperator(t, base, key, "V-FF", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-FF", ddsPlots(2, -1.4, 6.9, "V-FF")...)
	dds := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	const plots = 12
	p.Stop(t)
	password := sessionCreateUser(t, p.DataDir, "ada", "admin")
	p = p.Restart(t)
	base = p.SandboxURL

	start := time.Now()
	activity := &pageActivity{}
	ff := startFirefox(t, 1400, 900, activity)
	t.Logf("firefox ready %v after starting it", time.Since(start).Round(time.Millisecond))
	fail := func(what string, err error) { t.Helper(); activity.fatal(t, what, err) }
	steps := func(what string, exprs ...string) {
		t.Helper()
		for _, expr := range exprs {
			if err := ff.poll(expr); err != nil {
				fail(what, err)
			}
		}
	}
	open := func(hash string) {
		t.Helper()
		if err := ff.eval(`location.hash = `+jsString(hash), nil); err != nil {
			fail("open "+hash, err)
		}
	}
	var shots string
	screenshot := func(name string) { t.Helper(); shots = saveScreenshot(t, ff.screenshot(), name, shots) }

	// The user signs in with a name and password; the header says who.
	if err := firefoxSignIn(ff, base, "ada", password); err != nil {
		fail("the user was not signed in", err)
	}
	if h := ff.text(".console-user"); !strings.Contains(h, "ada") || !strings.Contains(strings.ToLower(h), "admin") {
		t.Errorf("the header reads %q, want the user's name and role", h)
	}

	// The overview counts the plots by verdict.
	steps("the overview did not count the plots",
		`document.querySelector('[data-verdict="ALL"]')?.textContent === "`+strconv.Itoa(plots)+`"`,
		`document.querySelector('[data-verdict="HIGH_RISK"]')?.textContent === "`+strconv.Itoa(highRisk)+`"`)
	screenshot("firefox-overview.png")

	// The map draws every plot with WebGL.
	drawing := time.Now()
	open("#/plots")
	steps("the map did not draw the plots", `document.body.dataset.plotsDrawn === "`+strconv.Itoa(plots)+`"`)
	t.Logf("%d plots drawn %v after opening #/plots", plots, time.Since(drawing).Round(time.Millisecond))
	var rows int
	if err := ff.eval(`document.querySelectorAll(".plots-table tbody tr").length`, &rows); err != nil || rows != plots {
		t.Errorf("the table lists %d plots (%v), want %d", rows, err, plots)
	}
	screenshot("firefox-plots.png")

	// The high-risk plot's page says why, and checks its proof.
	open("#/plots/" + plot)
	steps("the plot's proof was not checked",
		`document.body.dataset.plotShown === `+jsString(plot),
		`document.querySelectorAll(".proof-step[data-ok]").length === 4`)
	if got := ff.text(".plot-detail"); !strings.Contains(got, "DEFORESTATION") {
		t.Errorf("the plot's page reads %q, want its DEFORESTATION finding", got)
	}
	var proof string
	err := ff.eval(`Array.from(document.querySelectorAll(".proof-step"), (s) => s.dataset.step + ":" + s.dataset.ok).join(",")`, &proof)
	if want := "document:true,entry:true,inclusion:true,checkpoint:true"; err != nil || proof != want {
		t.Errorf("proof steps %q (%v), want %q\n%s", proof, err, want, ff.text(".proof"))
	}
	screenshot("firefox-plot.png")

	// The batch, the statement and the webhooks (none, and no dead letter).
	open("#/batches")
	steps("the batches were not listed",
		`document.querySelectorAll(".batches-table tbody tr").length === 1`)
	screenshot("firefox-batches.png")
	open("#/dds")
	steps("the statements were not listed",
		`document.querySelector(".dds-table tbody tr a[href='#/dds/`+dds.DDSID+`']") !== null`)
	screenshot("firefox-statements.png")
	open("#/webhooks")
	steps("the webhooks page did not show",
		`document.querySelector(".dlq-empty") !== null`,
		`document.querySelector(".page.ops")?.innerText.includes("No subscription") === true`)
	screenshot("firefox-webhooks.png")
	t.Logf("console walked through in firefox in %v", time.Since(start).Round(time.Millisecond))

	checkStayedOnAppliance(t, activity, base, nil)

	// A Firefox with WebGL turned off, as privacy settings do, has no map:
	// the page says so where the map would be, lists the plots and opens
	// them.
	noWebGL := &pageActivity{}
	ff = startFirefox(t, 1400, 900, noWebGL, `user_pref("webgl.disabled", true);`)
	fail = func(what string, err error) { t.Helper(); noWebGL.fatal(t, what, err) }
	if err := firefoxSignIn(ff, base, "ada", password); err != nil {
		fail("the user was not signed in to the Firefox without WebGL", err)
	}
	open("#/plots")
	steps("without WebGL the plots were not listed",
		`document.querySelectorAll(".plots-table tbody tr").length === `+strconv.Itoa(plots),
		`document.querySelector(".map-unavailable") !== null`)
	screenshot("firefox-no-webgl.png")
	open("#/plots/" + plot)
	steps("without WebGL the plot's page did not check its proof",
		`document.querySelectorAll(".proof-step[data-ok=true]").length === 4`)
	checkStayedOnAppliance(t, noWebGL, base, nil)
}

// firefoxSignIn opens the console at base in ff and signs in as username.
func firefoxSignIn(ff *firefox, base, username, password string) error {
	if err := ff.navigate(base + "/console"); err != nil {
		return err
	}
	if err := ff.poll(`document.getElementById("username") !== null`); err != nil {
		return err
	}
	err := ff.eval(`for (const [id, value] of [["username", `+jsString(username)+`], ["password", `+jsString(password)+`]]) {
		const input = document.getElementById(id);
		input.value = value;
		input.dispatchEvent(new Event("input", { bubbles: true }));
	}`, nil)
	if err != nil {
		return err
	}
	// Clicked by a script of its own: the form sends what the page
	// rendered from the input events, which a re-render after the script
	// above makes current.
	if err := ff.eval(`document.querySelector(".sign-in-user button").click()`, nil); err != nil {
		return err
	}
	return ff.poll(`document.querySelector(".console-user") !== null`)
}
