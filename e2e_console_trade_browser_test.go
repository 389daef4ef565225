package main_test

// The console's batches, shipments and statements, in a real browser: a
// batch registered, assessed and linked through the API is opened in the
// console with its risk factors and its shipment's ledger transaction; a
// statement is drafted from it, submitted and revoked there, each behind
// its confirmation, with not one request leaving the appliance.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/eudr/eudr/server/apitest"
)

// consoleSignIn opens the console at base and signs in with key.
func consoleSignIn(ctx context.Context, base, key string) error {
	return chromedp.Do(ctx,
		chromedp.Navigate(base+"/console"),
		chromedp.WaitVisible(chromedp.CSS("#api-key")),
		chromedp.SendKeys(chromedp.CSS("#api-key"), key),
		chromedp.Click(chromedp.CSS(".sign-in button")),
		chromedp.WaitVisible(chromedp.CSS(".console-nav a")),
	)
}

func TestConsole_TradeBrowser(t *testing.T) {
	p := startServer(t, ddsFast...)
	base := p.SandboxURL
	key := p.createKey(t, sandbox)
	ddsMapOperator(t, base, key, "V-CON", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-CON", ddsPlots(2, -1.4, 6.9, "V-CON")...)
	shipments := apitest.Do(t, "GET", base+eudrAPI+"/shipments?batchId="+batch, apitest.WithKey(key), nil).WantStatus(t, 200).Array(t)
	if len(shipments) != 1 {
		t.Fatalf("GET /shipments?batchId=%s: %v, want its one shipment", batch, shipments)
	}
	shipment, txHash := shipments[0]["shipmentId"].(string), shipments[0]["transactionHash"].(string)
	ledgerIndex := int(shipments[0]["ledgerIndex"].(float64))

	ctx, activity := consoleBrowser(t)
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(3*time.Minute))
	}
	fail := func(what string, err error) { t.Helper(); activity.fatal(t, what, err) }
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q)?.innerText ?? ""`, sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}
	timeline := `[...document.querySelectorAll(".dds-timeline li")].map((li) => li.dataset.status).join(",")`

	if err := consoleSignIn(ctx, base, key); err != nil {
		fail("sign-in", err)
	}

	// The list of batches, then the batch: its three factors, each with
	// its inputs and explanation, and its shipment.
	err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/batches"`),
		poll(`document.querySelectorAll(".batches-table tbody tr").length === 1`),
		chromedp.Click(chromedp.CSS(".batches-table tbody tr")),
		poll(`document.querySelectorAll(".risk-factors tr[data-factor]").length === 3`),
		poll(`document.querySelector(".batch-shipment a") !== null`),
	)
	if err != nil {
		fail("the batch's page did not show its factors and shipment", err)
	}
	if got := text(`tr[data-factor="country_benchmark"]`); !strings.Contains(got, "GH low (2 plots") || !strings.Contains(got, "simplified due diligence") {
		t.Errorf("the country factor reads %q, want Ghana's low class and why", got)
	}
	if got := text(".batch-shipment"); !strings.Contains(got, shipment) || !strings.Contains(got, "LINKED") {
		t.Errorf("the batch's shipment reads %q, want %s LINKED", got, shipment)
	}
	shots := consoleScreenshot(t, ctx, "console-batch.png", "")

	// Its PDF report, saved by the browser: the page says the file's hash
	// and ledger entry, which are the file's and the API's.
	downloads := t.TempDir()
	if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior,
		cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads}); err != nil {
		t.Fatalf("allow downloads: %v", err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".batch-page .report-button")),
		poll(`/^[0-9a-f]{64}$/.test(document.querySelector(".report-sha256")?.innerText ?? "")`),
	)
	if err != nil {
		fail("the batch's PDF report was not saved", err)
	}
	report := apitest.Do(t, "GET", base+eudrAPI+"/batches/"+batch+"/report.pdf", apitest.WithKey(key), nil).WantStatus(t, 200)
	if got := text(".report-sha256"); got != report.Header.Get("X-Content-SHA256") {
		t.Errorf("the page says the report's SHA-256 is %s, the API %s", got, report.Header.Get("X-Content-SHA256"))
	}
	if got := text(".report-ledger-index"); got != report.Header.Get("X-Ledger-Index") {
		t.Errorf("the page says the report's ledger entry is %s, the API %s", got, report.Header.Get("X-Ledger-Index"))
	}
	saved := waitForFile(t, filepath.Join(downloads, batch+".pdf"))
	if !bytes.Equal(saved, report.Body) {
		t.Errorf("the saved %s.pdf (%d bytes) is not the report the API answers (%d bytes)", batch, len(saved), len(report.Body))
	}
	consoleScreenshot(t, ctx, "console-batch-report.png", shots)

	// Its shipment: the ledger transaction, and a link to its entry.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".batch-shipment a")),
		poll(fmt.Sprintf(`document.querySelector(".shipment-tx")?.innerText === %q`, txHash)),
	)
	if err != nil {
		fail("the shipment's page did not show its transaction", err)
	}
	if got := text(fmt.Sprintf(`a[href="#/ledger/%d"]`, ledgerIndex)); got != fmt.Sprintf("#%d", ledgerIndex) {
		t.Errorf("the link to ledger entry %d reads %q", ledgerIndex, got)
	}
	consoleScreenshot(t, ctx, "console-shipment.png", shots)

	// A statement drafted on the batch's page, for the supplier's operator.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`history.back()`),
		poll(fmt.Sprintf(`document.querySelector(".draft-form input[name=operatorUuid]")?.value === %q`, ddsOperatorUUID)),
		chromedp.Click(chromedp.CSS(".draft-form button[type=submit]")),
		poll(`location.hash.startsWith("#/dds/dds_") && document.querySelector(".dds-submit") !== null`),
	)
	if err != nil {
		fail("the statement was not drafted", err)
	}
	ddsID, err := chromedp.Run(ctx, chromedp.Evaluate[string](`decodeURIComponent(location.hash.slice("#/dds/".length))`))
	if err != nil {
		t.Fatal(err)
	}
	if got := text(".dds-summary"); !strings.Contains(got, "IMPORT") || !strings.Contains(got, "180100") || !strings.Contains(got, "12,500.5") {
		t.Errorf("the statement's summary reads %q, want the activity, HS heading and net mass", got)
	}
	consoleScreenshot(t, ctx, "console-dds-draft.png", shots)

	// Submitted after its confirmation, which says where it goes: it
	// reaches VALIDATED with its EU numbers, each step on the timeline.
	err = chromedp.Do(ctx, poll(clickUntilShown(".dds-submit", ".trade-confirm")), chromedp.WaitVisible(chromedp.CSS(".trade-confirm")))
	if err != nil {
		fail("submit asked for no confirmation", err)
	}
	if got := text(".trade-confirm"); !strings.Contains(got, "simulator") || !strings.Contains(got, "cannot be changed") {
		t.Errorf("the submit confirmation reads %q", got)
	}
	consoleScreenshot(t, ctx, "console-dds-submit.png", shots)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".trade-confirm .confirm")),
		poll(timeline+` === "DRAFT,SUBMITTED,VALIDATED"`),
		poll(`document.querySelector(".dds-revoke") !== null && document.querySelector(".dds-waiting") === null`),
	)
	if err != nil {
		fail("the statement did not reach VALIDATED", err)
	}
	v := ddsGet(t, base, key, ddsID)
	if v.ReferenceNumber == nil || text(".dds-reference") != *v.ReferenceNumber {
		t.Errorf("the page shows reference number %q, the API %v", text(".dds-reference"), v.ReferenceNumber)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".dds-page .report-button").length`)); err != nil || n != 1 {
		t.Errorf("the statement's page has %d PDF report buttons (%v), want 1", n, err)
	}
	consoleScreenshot(t, ctx, "console-dds-validated.png", shots)

	// Revoked after a confirmation that says it is for good.
	err = chromedp.Do(ctx, poll(clickUntilShown(".dds-revoke", ".trade-confirm")), chromedp.WaitVisible(chromedp.CSS(".trade-confirm")))
	if err != nil {
		fail("revoke asked for no confirmation", err)
	}
	if got := text(".trade-confirm"); !strings.Contains(got, "cannot be undone") {
		t.Errorf("the revoke confirmation reads %q", got)
	}
	consoleScreenshot(t, ctx, "console-dds-revoke.png", shots)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".trade-confirm .confirm")),
		poll(timeline+` === "DRAFT,SUBMITTED,VALIDATED,REVOKED"`),
		poll(`document.querySelector(".dds-revoke") === null && document.querySelector(".trade-confirm") === null`),
	)
	if err != nil {
		fail("the statement was not revoked", err)
	}
	if v := ddsGet(t, base, key, ddsID); v.Status != "REVOKED" {
		t.Errorf("the API says the statement is %s, want REVOKED", v.Status)
	}
	consoleScreenshot(t, ctx, "console-dds-revoked.png", shots)

	// The lists of shipments and statements.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/shipments"`),
		poll(`document.querySelectorAll(".shipments-table tbody tr").length === 1`),
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/dds"`),
		poll(`document.querySelectorAll(".dds-table tbody tr").length === 1 && document.querySelector(".dds-table tbody tr").innerText.includes("REVOKED")`),
	)
	if err != nil {
		fail("the lists of shipments and statements", err)
	}
	consoleScreenshot(t, ctx, "console-dds-list.png", shots)

	// No request left the appliance, and the page's own policy refused
	// nothing.
	checkStayedOnAppliance(t, activity, base, nil)
}

// waitForFile reads the file at path once the browser has finished
// writing it (Chromium writes a download under another name and renames it
// into place), polling; the test's own timeout bounds the wait.
func waitForFile(t *testing.T, path string) []byte {
	t.Helper()
	for {
		if b, err := os.ReadFile(path); err == nil {
			return b
		}
		time.Sleep(50 * time.Millisecond)
	}
}
