package main_test

// The console for a user with the reader role, in a real browser: every
// page is visited as a reader and as an administrator. Each control that
// changes something carries data-write, so one selector finds them all: it
// matches nothing on any page for the reader, and something on each page
// that writes for the administrator, and nothing for an API key with the
// read scope only. On every page each control has a name a screen reader
// can say; the confirmations take the keyboard's focus, close on Escape and
// give the focus back; and the console keeps nothing in the browser's
// storage.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/eudr/eudr/server/apitest"
)

// readerUnnamed lists the controls of the page without an accessible name:
// no aria-label, no text, no label, no title.
const readerUnnamed = `[...document.querySelectorAll("button, input, select, a[href]")].filter((el) => {
	const labels = el.labels ? [...el.labels].map((l) => l.textContent).join(" ") : "";
	const name = el.getAttribute("aria-label") || labels || (el.type === "hidden" ? "hidden" : "") ||
		(el.tagName === "INPUT" ? "" : el.textContent) || el.title || "";
	return name.trim() === "";
}).map((el) => el.outerHTML.slice(0, 160))`

// readerPage is a page of the console, how to tell it has loaded, and
// whether it offers changes to an administrator.
type readerPage struct {
	hash, loaded string
	writes       bool
}

func TestConsole_ReaderBrowser(t *testing.T) {
	chromiumPath(t) // skip before starting anything when there is no browser
	rc := apitest.NewReceiver(t)
	rc.SetPolicy(func(*apitest.Delivery) apitest.Answer {
		return apitest.Answer{Status: http.StatusInternalServerError, Body: "receiver down"}
	})
	p := startWebhookServer(t, rc, ddsFast...)
	base := p.SandboxURL
	key := p.createKey(t, sandbox)
	ddsMapOperator(t, base, key, "V-RDR", ddsOperatorUUID, ddsEORI)
	batch, plots := ddsLinkedBatch(t, base, key, "V-RDR", ddsPlots(2, -1.4, 6.9, "V-RDR")...)
	dds := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	sub := subscribe(t, p, key, rc, "/reader", "job.failed")
	ev := publishEvent(t, p, key, "job.failed", map[string]any{"jobId": "job_console_reader"})
	waitDLQ(t, base, key, "", "the event in the DLQ", func(l dlqList) bool { return dlqIDs(l)[ev.EventID] })
	readKey := p.createKey(t, sandbox, "read")
	p.Stop(t)
	adminPassword := sessionCreateUser(t, p.DataDir, "ada", "admin")
	readerPassword := sessionCreateUser(t, p.DataDir, "rita", "reader")
	p = p.Restart(t)
	base = p.SandboxURL

	pages := []readerPage{
		{"#/overview", `document.querySelector(".overview-dlq") !== null`, false},
		{"#/plots", `document.body.dataset.plotsDrawn === "2"`, true},
		{"#/plots/" + plots[0], `document.querySelector(".plot-why") !== null`, true},
		{"#/batches", `document.querySelector(".batches-table tbody tr") !== null`, false},
		{"#/batches/" + batch, `document.querySelector(".batch-shipment a") !== null && document.querySelector(".risk-factors") !== null`, true},
		{"#/shipments", `document.querySelector("table tbody tr") !== null`, false},
		{"#/dds", `document.querySelector("table tbody tr") !== null`, false},
		{"#/dds/" + dds.DDSID, `document.querySelector(".dds-timeline li") !== null`, true},
		{"#/webhooks", fmt.Sprintf(`document.querySelector('.dlq-table tr[data-event-id=%q]') !== null`, ev.EventID), true},
		{"#/webhooks/" + sub.WebhookID, `document.querySelector(".ops .card dl") !== null && document.querySelector(".deliveries-refresh") !== null`, true},
		{"#/keys", `document.querySelector(".keys-table, .console-notice") !== null`, true},
		{"#/suppliers", `document.querySelector(".suppliers-table") !== null`, true},
		// Loaded once the entry's bytes are drawn: signing out while its
		// request is in flight would have it refused (401).
		{"#/ledger", `document.querySelector(".ledger-checkpoint") !== null && document.querySelector(".ledger-entry .entry-data") !== null`, false},
	}

	ctx, activity := consoleBrowser(t)
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(3*time.Minute))
	}
	fail := func(what string, err error) { t.Helper(); activity.fatal(t, what, err) }
	eval := func(expr string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](expr))
		if err != nil {
			fail("evaluate "+expr, err)
		}
		return n
	}
	unnamed := func(where string) {
		t.Helper()
		list, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](readerUnnamed))
		if err != nil {
			fail("list the controls without a name", err)
		}
		for _, el := range list {
			t.Errorf("%s: a control has no accessible name: %s", where, el)
		}
	}
	signIn := func(username, password string) {
		t.Helper()
		err := chromedp.Do(ctx,
			chromedp.Navigate(base+"/console#/overview"),
			chromedp.WaitVisible(chromedp.CSS("#username")),
			chromedp.SendKeys(chromedp.CSS("#username"), username),
			chromedp.SendKeys(chromedp.CSS("#password"), password),
			chromedp.Click(chromedp.CSS(".sign-in-user button")),
			poll(`document.querySelector(".console-user") !== null`),
		)
		if err != nil {
			fail(username+" did not sign in", err)
		}
	}

	// The sign-in page has named controls too, and the appliance marks a
	// page asked for without a session cookie.
	err := chromedp.Do(ctx, chromedp.Navigate(base+"/console"), chromedp.WaitVisible(chromedp.CSS("#username")))
	if err != nil {
		fail("open the console", err)
	}
	unnamed("the sign-in page")
	if eval(`document.body.dataset.session === "" ? 1 : 0`) != 1 {
		t.Errorf("a page asked for without a session cookie is marked as having one")
	}

	// Whoever may only read: not one write control, and no form, on any
	// page.
	shots := ""
	readOnly := func(who string) {
		t.Helper()
		for _, pg := range pages {
			err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = %q`, pg.hash)), poll(pg.loaded))
			if err != nil {
				fail(who+"'s "+pg.hash+" did not load", err)
			}
			if n := eval(`document.querySelectorAll("[data-write], main form").length`); n != 0 {
				t.Errorf("%s's %s shows %d write controls", who, pg.hash, n)
			}
			unnamed(who + "'s " + pg.hash)
			if who == "the reader" && (pg.hash == "#/webhooks" || pg.hash == "#/dds/"+dds.DDSID) {
				shots = consoleScreenshot(t, ctx, "console-reader-"+strings.Split(pg.hash, "/")[1]+".png", shots)
			}
		}
	}
	signIn("rita", readerPassword)
	readOnly("the reader")
	// A reload asks for the session again: the page is marked, the
	// storage empty.
	err = chromedp.Do(ctx, chromedp.Reload(), poll(`document.querySelector(".console-user") !== null`))
	if err != nil {
		fail("the reloaded page was not signed in", err)
	}
	if eval(`document.body.dataset.session === "1" ? 1 : 0`) != 1 {
		t.Errorf("the page reloaded with a session cookie is not marked as having one")
	}
	if n := eval(`localStorage.length + sessionStorage.length`); n != 0 {
		t.Errorf("the console keeps %d items in the browser's storage, want none", n)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".sign-out")), chromedp.WaitVisible(chromedp.CSS("#username")))
	if err != nil {
		fail("the reader did not sign out", err)
	}

	// An API key with the read scope only is offered no write either: the
	// console asks the appliance what the key may do (GET /auth/whoami).
	if err := consoleSignIn(ctx, base, readKey); err != nil {
		fail("sign in with the read key", err)
	}
	role, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".console-role").textContent`))
	if err != nil || role != "read-only" {
		t.Errorf("the header names a read key's role %q (%v), want \"read-only\"", role, err)
	}
	readOnly("the read key")
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".sign-out")), chromedp.WaitVisible(chromedp.CSS("#username")))
	if err != nil {
		fail("the read key did not sign out", err)
	}

	// The administrator, on the same pages: each page that writes offers it.
	signIn("ada", adminPassword)
	for _, pg := range pages {
		err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = %q`, pg.hash)), poll(pg.loaded))
		if err != nil {
			fail("the administrator's "+pg.hash+" did not load", err)
		}
		n := eval(`document.querySelectorAll("[data-write]").length`)
		if pg.writes && n == 0 {
			t.Errorf("the administrator's %s shows no write control", pg.hash)
		}
		unnamed("the administrator's " + pg.hash)
	}

	// A confirmation takes the focus (on its Cancel) and Escape closes it:
	// the statement's modal, and a question asked in the page.
	confirms := []struct{ hash, open, question, focused string }{
		{"#/dds/" + dds.DDSID, ".dds-submit", ".trade-modal", ".trade-modal button.secondary"},
		{"#/webhooks/" + sub.WebhookID, ".webhook-rotate", ".ops-confirm", ".ops-confirm button.secondary"},
		{"#/plots/" + plots[0], ".ask-delete", ".confirm-delete", ".plot-delete button.secondary"},
	}
	for _, c := range confirms {
		err := chromedp.Do(ctx,
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = %q`, c.hash)),
			poll(fmt.Sprintf(`document.querySelector(%q) !== null`, c.open)),
			chromedp.Click(chromedp.CSS(c.open)),
			poll(fmt.Sprintf(`document.querySelector(%q) !== null`, c.question)),
		)
		if err != nil {
			fail("the confirmation of "+c.open+" did not open", err)
		}
		// The focus moves once the page has drawn the question.
		err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.activeElement === document.querySelector(%q)`, c.focused),
			chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
		if err != nil {
			active, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement?.outerHTML.slice(0, 160) ?? "none"`))
			t.Errorf("the confirmation of %s does not focus %s; the focus is on %s", c.open, c.focused, active)
			continue
		}
		err = chromedp.Do(ctx, chromedp.KeyEvent(kb.Escape), poll(fmt.Sprintf(`document.querySelector(%q) === null`, c.question)))
		if err != nil {
			fail("the confirmation of "+c.open+" did not close on Escape", err)
		}
		// Closed, the question gives the focus back to the button that
		// asked it.
		err = chromedp.Do(ctx, chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.activeElement === document.querySelector(%q)`, c.open),
			chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second)))
		if err != nil {
			active, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.activeElement?.outerHTML.slice(0, 160) ?? "none"`))
			t.Errorf("closing the confirmation of %s leaves the focus on %s, want it back on the button", c.open, active)
		}
	}
	// No request left the appliance, and the browser logged no refusal but
	// the reader's of the keys (403): not a 401, which a page asking for
	// a session it has no cookie for would have.
	checkStayedOnAppliance(t, activity, base, func(pr string) bool { return strings.Contains(pr, "status of 403") })
}
