package main_test

// The console's overview in a real browser: a sandbox test job working
// through its items shows with its progress, the ledger's last checkpoint
// with its age, the batches and statements counted by status, and the EU
// system's last answer, with not one request leaving the appliance.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestConsole_OverviewBrowser(t *testing.T) {
	chromiumPath(t) // skip before starting anything when there is no browser
	p := startServer(t, ddsFast...)
	base := p.SandboxURL
	key := p.createKey(t, sandbox)
	ddsMapOperator(t, base, key, "V-OVW", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-OVW", ddsPlots(2, -1.4, 6.9, "V-OVW")...)
	draft := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	// A job that stays RUNNING for minutes: 1,000 items of 300 ms.
	job := queueJob(t, p, key, map[string]any{"items": 1000, "itemMillis": 300})

	ctx, activity := consoleBrowser(t)
	poll := func(expr string) chromedp.Action[chromedp.Void] { return opsPoll(expr, 50*time.Millisecond) }
	fail := func(what string, err error) { t.Helper(); activity.fatal(t, what, err) }
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q)?.innerText ?? ""`, sel)))
		if err != nil {
			fail("read "+sel, err)
		}
		return s
	}
	if err := consoleSignIn(ctx, base, key); err != nil {
		fail("sign in with the key", err)
	}

	// The running job, its progress bar moving as the overview reads it
	// again.
	bar := fmt.Sprintf(`document.querySelector('.job[data-job=%q] progress')`, job)
	err := chromedp.Do(ctx,
		poll(bar+` !== null`),
		poll(`document.querySelector(".overview-jobs [data-jobs=RUNNING]")?.innerText === "1"`),
	)
	if err != nil {
		fail("the overview did not show the running job", err)
	}
	first, err := chromedp.Run(ctx, chromedp.Evaluate[float64](bar+`.value`))
	if err != nil {
		fail("read the job's progress", err)
	}
	if err := chromedp.Do(ctx, poll(fmt.Sprintf(`%s.value > %v`, bar, first))); err != nil {
		fail("the job's progress bar did not move", err)
	}
	if got := text(fmt.Sprintf(`.job[data-job=%q]`, job)); !strings.Contains(got, "sandbox_test") || !strings.Contains(got, "of 1000") {
		t.Errorf("the job reads %q, want its type and how many of its 1000 items are done", got)
	}

	// The batch, the statement and the ledger's checkpoint.
	err = chromedp.Do(ctx,
		poll(`document.querySelector(".overview-batches [data-status=ALL]")?.innerText === "1"`),
		poll(`document.querySelector(".overview-statements [data-status=DRAFT]")?.innerText === "1"`),
	)
	if err != nil {
		fail("the overview did not count the batch and the statement", err)
	}
	if got := text(".overview-batches [data-status=VERIFIED]"); got != "1" {
		t.Errorf("verified batches: %q, want 1", got)
	}
	if got := text(".overview-statements [data-status=ALL]"); got != "1" {
		t.Errorf("all statements: %q, want 1", got)
	}
	// The checkpoint was signed when the shipment was linked, moments ago.
	if got := text(".overview-checkpoint"); got != "signed less than a minute ago" && !strings.HasSuffix(got, "minutes ago") &&
		got != "signed 1 minute ago" {
		t.Errorf("the last checkpoint reads %q, want its age", got)
	}
	if got := text(".overview-ledger"); got != "4" {
		t.Errorf("the ledger reads %q, want the 4 entries of the plots, the batch and its link", got)
	}
	if got := text(".overview-eu"); !strings.Contains(got, "No call since the appliance started") {
		t.Errorf("the EU system card reads %q before any call, want that none was made", got)
	}

	// Filed, the statement's last call is the poll that found it
	// VALIDATED: the card says so when the overview opens again.
	ddsSubmit(t, base, key, draft.DDSID)
	ddsWaitStatus(t, base, key, draft.DDSID, "VALIDATED")
	// (Signed in with a key, which a reload forgets.)
	if err := consoleSignIn(ctx, base, key); err != nil {
		fail("sign in with the key again", err)
	}
	if err := chromedp.Do(ctx, poll(`document.querySelector(".overview-eu-outcome") !== null`)); err != nil {
		fail("the overview did not show the EU system's answer", err)
	}
	if got := text(".overview-eu"); !strings.Contains(got, "answered") || !strings.Contains(got, "getDds") || !strings.Contains(got, "ago") {
		t.Errorf("the EU system card reads %q, want getDds answered moments ago", got)
	}
	consoleScreenshot(t, ctx, "console-overview.png", "")

	// A mangled link opens the overview, not a blank page.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/plots"`),
		poll(`document.querySelector(".plots-table, .plot-upload") !== null`),
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/plots/%E0"`),
		poll(`document.querySelector(".overview h1") !== null`),
	)
	if err != nil {
		fail("a mangled link did not open the overview", err)
	}

	// No request left the appliance, and the page's own policy refused
	// nothing.
	checkStayedOnAppliance(t, activity, base, nil)
}
