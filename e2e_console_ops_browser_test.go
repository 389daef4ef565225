package main_test

// The console's operations pages in a real browser, signed in with an API
// key: a webhook whose receiver fails lands in the dead-letter queue, which
// the console shows and replays once the receiver is back; a ping; the
// ledger's checkpoint and entries; a supplier created from the form; and
// the keys page, which tells an API key that key management takes a user.

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/eudr/eudr/server/apitest"
)

// opsPoll waits until expr is true in the page, checking every interval.
func opsPoll(expr string, interval time.Duration) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(interval), chromedp.WithPollingTimeout(2*time.Minute))
}

func TestConsole_OpsBrowser(t *testing.T) {
	chromiumPath(t) // skip before starting anything when there is no browser
	rc := apitest.NewReceiver(t)
	var failing atomic.Bool
	failing.Store(true)
	rc.SetPolicy(func(*apitest.Delivery) apitest.Answer {
		if failing.Load() {
			return apitest.Answer{Status: http.StatusInternalServerError, Body: "receiver down for maintenance"}
		}
		return apitest.Answer{Status: http.StatusOK, Body: "thanks"}
	})
	p := startWebhookServer(t, rc, noRateLimit...)
	key := p.createKey(t, sandbox)
	// An administrator, who manages keys in the console.
	p.Stop(t)
	adminPassword := sessionCreateUser(t, p.DataDir, "ada", "admin")
	p = p.Restart(t)
	base := p.SandboxURL
	const hookPath = "/console-ops"
	sub := subscribe(t, p, key, rc, hookPath, "job.failed")
	ev := publishEvent(t, p, key, "job.failed", map[string]any{"jobId": "job_console_ops"})
	gone := publishEvent(t, p, key, "job.failed", map[string]any{"jobId": "job_console_ops_2"})
	// Screened plots give the ledger its entries.
	body, _, _ := consolePlotBody(10)
	polWaitJob(t, base, key, polMustPost(t, base, key, body, 10), 5*time.Minute)
	waitDLQ(t, base, key, "", "both events in the DLQ", func(l dlqList) bool { return dlqIDs(l)[ev.EventID] && dlqIDs(l)[gone.EventID] })

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

	// The overview counts the dead letter and the ledger's entries.
	if err := consoleSignIn(ctx, base, key); err != nil {
		fail("sign in with the key", err)
	}
	err := chromedp.Do(ctx,
		poll(`document.querySelector(".overview-dlq")?.dataset.dlq === "2"`),
		poll(`document.querySelector(".overview-ledger a") !== null`),
	)
	if err != nil {
		fail("the overview did not show the dead letter and the ledger", err)
	}
	shots := consoleScreenshot(t, ctx, "console-ops-overview.png", "")

	// The DLQ lists the event, with the receiver's answer.
	row := fmt.Sprintf(`.dlq-table tr[data-event-id=%q]`, ev.EventID)
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/webhooks"`),
		poll(fmt.Sprintf(`document.querySelector(%q) !== null`, row)),
	)
	if err != nil {
		fail("the DLQ did not list the event", err)
	}
	if got := text(row); !strings.Contains(got, "job.failed") || !strings.Contains(got, "500") || !strings.Contains(got, rc.URL(hookPath)) {
		t.Errorf("the DLQ row reads %q, want the event type, the receiver and its 500", got)
	}
	if got := text(".webhooks-table"); !strings.Contains(got, rc.URL(hookPath)) || !strings.Contains(got, "whsec_****") || strings.Contains(got, sub.SigningSecret) {
		t.Errorf("the subscriptions read %q, want the receiver and its secret masked", got)
	}
	consoleScreenshot(t, ctx, "console-ops-dlq.png", shots)

	// Acknowledging one, after a confirmation, deletes it and only it.
	goneRow := fmt.Sprintf(`.dlq-table tr[data-event-id=%q]`, gone.EventID)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(goneRow+" .dlq-ack")),
		chromedp.Click(chromedp.CSS(goneRow+" .ops-confirm-yes")),
		poll(fmt.Sprintf(`document.querySelector(%q) === null && document.querySelector(%q) !== null`, goneRow, row)),
	)
	if err != nil {
		fail("acknowledging a dead letter did not delete it", err)
	}
	if l := getDLQ(t, base, key, ""); len(l.Messages) != 1 || l.Messages[0].EventID != ev.EventID {
		t.Errorf("after acknowledging %s the DLQ holds %+v, want %s alone", gone.EventID, l.Messages, ev.EventID)
	}

	// The receiver is back: replaying the selection empties the DLQ, and
	// the subscription's attempts show the delivery answered 200.
	failing.Store(false)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(row+" input[type=checkbox]")),
		chromedp.Click(chromedp.CSS(".dlq-replay-selected")),
		poll(`document.querySelector(".dlq-empty") !== null`),
	)
	if err != nil {
		fail("replaying from the console did not empty the DLQ", err)
	}
	if got := text(".dlq"); !strings.Contains(got, "1 event sent again") || strings.Contains(got, "JSON") {
		t.Errorf("after the replay the DLQ card reads %q, want it to say the event was sent again", got)
	}
	if l := getDLQ(t, base, key, ""); l.RetrievedCount != 0 {
		t.Errorf("after the replay the DLQ holds %+v", l.Messages)
	}
	delivered := fmt.Sprintf(`.deliveries-table tr[data-event-id=%q] [data-status="200"]`, ev.EventID)
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = "#/webhooks/%s"`, sub.WebhookID)),
		chromedp.WaitVisible(chromedp.CSS(".deliveries-refresh")),
		// The replay is delivered in the background: refresh until it is listed.
		opsPoll(fmt.Sprintf(`document.querySelector(%q) !== null || (document.querySelector(".deliveries-refresh").click(), false)`, delivered), 500*time.Millisecond),
	)
	if err != nil {
		fail("the replayed delivery did not show as answered 200", err)
	}

	// Ping: its attempt is listed at once, answered 200.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".webhook-ping")),
		poll(`document.querySelector('.deliveries-table tr[data-event-type="webhook.ping"] [data-status="200"]') !== null`),
	)
	if err != nil {
		fail("the ping's attempt was not listed", err)
	}
	consoleScreenshot(t, ctx, "console-ops-deliveries.png", shots)

	// An unknown subscription is told in words.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/webhooks/wh_00000000000000000000000000"`),
		poll(`document.querySelector(".ops .console-error")?.innerText.includes("No subscription wh_00000000000000000000000000")`),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`location.hash = "#/webhooks/%s"`, sub.WebhookID)),
		chromedp.WaitVisible(chromedp.CSS(".webhook-rotate")),
	)
	if err != nil {
		fail("an unknown subscription was not told", err)
	}

	// Rotating the secret asks first, then shows the new one once.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".webhook-rotate")),
		chromedp.Click(chromedp.CSS(".ops-confirm-yes")),
		poll(`document.querySelector(".once-secret input")?.value.startsWith("whsec_")`),
	)
	if err != nil {
		fail("rotating the secret did not show the new one", err)
	}
	secret, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".once-secret input").value`))
	if err != nil || !whSecretPattern.MatchString(secret) || secret == sub.SigningSecret {
		t.Errorf("the new secret shown is %q (%v), want a new whsec_ secret", secret, err)
	}
	consoleScreenshot(t, ctx, "console-ops-secret.png", shots)

	// The ledger: the checkpoint, the latest entry decoded, and the one
	// before it.
	var cp struct {
		TreeSize int `json:"treeSize"`
	}
	apitest.Do(t, "GET", base+eudrAPI+"/ledger/checkpoint", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &cp)
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/ledger"`),
		poll(fmt.Sprintf(`document.querySelector(".ledger-checkpoint [data-tree-size]")?.dataset.treeSize === "%d"`, cp.TreeSize)),
		poll(fmt.Sprintf(`document.querySelector('.ledger-entry[data-index="%d"] .entry-data')?.innerText.includes('"type": "polygon.screened"')`, cp.TreeSize-1)),
	)
	if err != nil {
		fail("the ledger page did not show the checkpoint and the latest entry", err)
	}
	if note := text(".ledger-note"); !strings.Contains(note, fmt.Sprintf("\n%d\n", cp.TreeSize)) {
		t.Errorf("the signed note reads %q, want the tree size %d in it", note, cp.TreeSize)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".entry-prev")),
		poll(fmt.Sprintf(`location.hash === "#/ledger/%d" && document.querySelector('.ledger-entry[data-index="%d"] .entry-data') !== null`, cp.TreeSize-2, cp.TreeSize-2)),
	)
	if err != nil {
		fail("the previous entry did not open", err)
	}
	consoleScreenshot(t, ctx, "console-ops-ledger.png", shots)

	// A supplier made with the form is listed, and stored.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/suppliers"`),
		chromedp.WaitVisible(chromedp.CSS(`.supplier-form input[name=erpVendorId]`)),
		chromedp.SendKeys(chromedp.CSS(`.supplier-form input[name=erpVendorId]`), "V-100"),
		chromedp.SendKeys(chromedp.CSS(`.supplier-form input[name=name]`), "Cooperative du Sud"),
		chromedp.SendKeys(chromedp.CSS(`.supplier-form input[name=euOperatorUuid]`), "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b"),
		chromedp.SendKeys(chromedp.CSS(`.supplier-form input[name=country]`), "CI"),
		chromedp.Click(chromedp.CSS(`.supplier-form button[type=submit]`)),
		poll(`document.querySelector('.suppliers-table tr[data-vendor="V-100"]') !== null`),
	)
	if err != nil {
		fail("the supplier was not created from the form", err)
	}
	var supplier struct {
		Name    string `json:"name"`
		Country string `json:"country"`
		Role    string `json:"role"`
	}
	apitest.Do(t, "GET", base+eudrAPI+"/suppliers/V-100", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &supplier)
	if supplier.Name != "Cooperative du Sud" || supplier.Country != "CI" || supplier.Role != "OPERATOR" {
		t.Errorf("the supplier stored is %+v", supplier)
	}
	consoleScreenshot(t, ctx, "console-ops-suppliers.png", shots)

	// Keys: an API key may not manage keys, and the page says so in words.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/keys"`),
		poll(`document.querySelector(".keys-need-user") !== null`),
	)
	if err != nil {
		fail("the keys page did not explain that it needs a signed-in user", err)
	}
	if got := text(".keys-need-user"); !regexp.MustCompile(`username and password`).MatchString(got) {
		t.Errorf("the keys page reads %q", got)
	}
	consoleScreenshot(t, ctx, "console-ops-keys.png", shots)

	// Signed in as the administrator: a key made in the console is shown
	// once and works; rotated, the old value is refused and the new one
	// works; revoked, it is refused and no longer listed.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".sign-out")),
		chromedp.WaitVisible(chromedp.CSS("#username")),
		chromedp.SendKeys(chromedp.CSS("#username"), "ada"),
		chromedp.SendKeys(chromedp.CSS("#password"), adminPassword),
		chromedp.Click(chromedp.CSS(".sign-in-user button")),
		poll(`document.querySelector(".console-user") !== null`),
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/keys"`),
		chromedp.WaitVisible(chromedp.CSS(".keys-new input[name=name]")),
		chromedp.SendKeys(chromedp.CSS(".keys-new input[name=name]"), "made in the console"),
		chromedp.Click(chromedp.CSS(".keys-new input[type=checkbox]")),
		chromedp.Click(chromedp.CSS(".keys-new button[type=submit]")),
		poll(`document.querySelector(".once-secret input")?.value.startsWith("sk_test_")`),
		poll(`document.querySelector('.keys-table tr[data-name="made in the console"]') !== null`),
	)
	if err != nil {
		fail("the administrator did not create a key in the console", err)
	}
	made, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".once-secret input").value`))
	if err != nil {
		fail("read the new key", err)
	}
	if got := text(`.keys-table tr[data-name="made in the console"]`); !strings.Contains(got, "read, write") || !strings.Contains(got, made[:12]+"…"+made[len(made)-4:]) {
		t.Errorf("the new key's row reads %q, want its scopes and %s…%s", got, made[:12], made[len(made)-4:])
	}
	apitest.Do(t, "GET", base+eudrAPI+"/health", apitest.WithKey(made), nil).WantStatus(t, http.StatusOK)
	consoleScreenshot(t, ctx, "console-ops-key-created.png", shots)

	madeRow := `.keys-table tr[data-name="made in the console"]`
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".once-secret button.secondary")), // Done
		chromedp.Click(chromedp.CSS(madeRow+" .key-rotate")),
		chromedp.Click(chromedp.CSS(madeRow+" .ops-confirm-yes")),
		poll(`document.querySelector(".once-secret input")?.value.startsWith("sk_test_")`),
	)
	if err != nil {
		fail("rotating the key did not show its new value", err)
	}
	rotated, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".once-secret input").value`))
	if err != nil || rotated == made {
		t.Errorf("the rotated value shown is %q (%v), want a new one", rotated, err)
	}
	apitest.Do(t, "GET", base+eudrAPI+"/health", apitest.WithKey(rotated), nil).WantStatus(t, http.StatusOK)
	apitest.WantError(t, apitest.Do(t, "GET", base+eudrAPI+"/health", apitest.WithKey(made), nil), http.StatusForbidden, "FORBIDDEN", "KEY_ROTATED")

	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".once-secret button.secondary")),
		chromedp.Click(chromedp.CSS(madeRow+" .key-revoke")),
		chromedp.Click(chromedp.CSS(madeRow+" .ops-confirm-yes")),
		poll(fmt.Sprintf(`document.querySelector(%q) === null && document.querySelector(".keys-table") !== null`, madeRow)),
	)
	if err != nil {
		fail("revoking the key did not remove it", err)
	}
	apitest.WantError(t, apitest.Do(t, "GET", base+eudrAPI+"/health", apitest.WithKey(rotated), nil), http.StatusUnauthorized, "UNAUTHORIZED")

	// The browser logs the refusals the test asks for as failed loads: the
	// keys page's 403, the unknown subscription's 404.
	checkStayedOnAppliance(t, activity, base, func(pr string) bool {
		return strings.Contains(pr, "403") && strings.Contains(pr, "/api-keys") || strings.Contains(pr, "404") && strings.Contains(pr, "/deliveries")
	})
}
