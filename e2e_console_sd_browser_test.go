package main_test

// The console's simplified declarations and the amendment of a statement,
// in a real browser: a declaration filed through the API is listed under
// the Statements page, opened with its producers and their kinds of
// location, and withdrawn through its confirmation; a validated statement
// is amended through its form, only the field changed being sent, and the
// amendment shows on its timeline. A read key sees neither Withdraw nor
// Amend, and no request leaves the appliance.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/storage"
)

// consoleSDBody is a representative's declaration of two producers of oak
// logs in France, one located by a postal address, one by the land
// registry, and a third commodity whose producer has a geometry.
func consoleSDBody() map[string]any {
	return map[string]any{
		"operatorRole": "REPRESENTATIVE_MSPO", "activityType": "DOMESTIC", "countryOfActivity": "FR",
		"operator": map[string]any{"name": "Ferme Dupont", "country": "FR", "identifiers": []any{map[string]any{"type": "vat", "value": "FR40303265045"}}},
		"commodities": []any{
			map[string]any{"hsHeading": "4403", "descriptionOfGoods": "Oak logs", "netWeightKg": json.Number("1200.5"), "percentageEstimation": 5,
				"producers": []any{
					map[string]any{"country": "FR", "name": "Ferme Dupont",
						"postalAddresses": []any{map[string]any{"producerStreet": "1 Chemin des Vignes", "producerPostalCode": "21000", "producerCity": "Dijon"}}},
					map[string]any{"country": "FR", "name": "Bois Martin", "cadastralIdentifiers": []any{"21231000AB0042"}},
				}},
			map[string]any{"hsHeading": "4401", "descriptionOfGoods": "Oak firewood", "netWeightKg": json.Number("300"), "percentageEstimation": 5,
				"producers": []any{map[string]any{"country": "FR", "name": "Forêt Lambert",
					"geometryGeoJSON": map[string]any{"type": "Polygon", "coordinates": [][][]float64{{{5.01, 47.31}, {5.02, 47.31}, {5.02, 47.32}, {5.01, 47.32}, {5.01, 47.31}}}}}}},
		},
	}
}

func TestConsole_SDBrowser(t *testing.T) {
	chromiumPath(t) // skip before starting anything when there is no browser
	p := startServer(t, ddsFast...)
	base := p.SandboxURL
	key := p.createKey(t, sandbox)
	readKey := p.createKey(t, sandbox, "read")

	// A declaration, filed and validated through the API.
	r := apitest.Do(t, "POST", base+sdPath, idem(key), consoleSDBody()).WantStatus(t, http.StatusAccepted)
	var acc struct{ SDID string }
	r.Decode(t, &acc)
	var sd sdView
	waitUntil(t, ddsWait, "the declaration decided", func() bool {
		sd = sdGet(t, base, key, acc.SDID)
		return sd.Status == "VALIDATED" || sd.Status == "REJECTED"
	})
	if sd.Status != "VALIDATED" || sd.ReferenceNumber == nil || sd.SDIdentifier == nil {
		t.Fatalf("the declaration: %+v", sd)
	}

	// A statement, submitted and validated through the API.
	ddsMapOperator(t, base, key, "V-CSD", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-CSD", ddsPlots(1, -1.4, 6.9, "V-CSD")...)
	draft := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	ddsSubmit(t, base, key, draft.DDSID)
	dds := ddsWaitStatus(t, base, key, draft.DDSID, "VALIDATED")
	var st struct {
		Commodities []struct {
			DescriptionOfGoods string `json:"descriptionOfGoods"`
		} `json:"commodities"`
	}
	if err := json.Unmarshal(dds.Statement, &st); err != nil || len(st.Commodities) != 1 {
		t.Fatalf("the statement: %v %s", err, dds.Statement)
	}

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
	count := func(sel string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
		if err != nil {
			t.Fatalf("count %s: %v", sel, err)
		}
		return n
	}
	timeline := `[...document.querySelectorAll(".dds-timeline li")].map((li) => li.dataset.status).join(",")`
	// input types into a field of the form as a user does: Preact hears
	// the input event.
	input := func(sel, value string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const el = document.querySelector(%q);
			el.value = %q; el.dispatchEvent(new Event("input", { bubbles: true })); })()`, sel, value))
	}

	// choose picks a value of a list as a user does: Preact hears the
	// change event.
	choose := func(sel, value string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const el = document.querySelector(%q);
			el.value = %q; el.dispatchEvent(new Event("change", { bubbles: true })); })()`, sel, value))
	}

	// A read key sees the declaration and the statement, and neither
	// Withdraw nor Amend.
	if err := consoleSignIn(ctx, base, readKey); err != nil {
		fail("sign-in with the read key", err)
	}
	err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/sd/`+acc.SDID+`"`),
		poll(`document.querySelector(".sd-summary") !== null && document.querySelector(".dds-timeline li") !== null`),
	)
	if err != nil {
		fail("the declaration's page for a reader", err)
	}
	if n := count(".sd-withdraw, [data-write]"); n != 0 {
		t.Errorf("a read key is offered %d controls that write on the declaration's page", n)
	}
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/dds/`+dds.DDSID+`"`),
		poll(`document.querySelector(".dds-summary") !== null`),
	)
	if err != nil {
		fail("the statement's page for a reader", err)
	}
	if n := count(".dds-amend, .dds-revoke, [data-write]"); n != 0 {
		t.Errorf("a read key is offered %d controls that write on a validated statement's page", n)
	}

	// A writer reaches the declarations from the statements' page; the
	// navigation keeps Statements as the current entry.
	if err := consoleSignIn(ctx, base, key); err != nil {
		fail("sign-in", err)
	}
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/dds"`),
		poll(`document.querySelector(".dds-table tbody tr") !== null`),
		chromedp.Click(chromedp.CSS(`.trade-tabs a[href="#/sd"]`)),
		poll(`document.querySelectorAll(".sd-table tbody tr").length === 1`),
	)
	if err != nil {
		fail("the list of declarations", err)
	}
	if got := text(".sd-table tbody tr"); !strings.Contains(got, acc.SDID) || !strings.Contains(got, "VALIDATED") ||
		!strings.Contains(got, *sd.ReferenceNumber) || !strings.Contains(got, sd.InternalReference) || !strings.Contains(got, "Representative") {
		t.Errorf("the declaration's row reads %q, want its ID, reference, role, VALIDATED and %s", got, *sd.ReferenceNumber)
	}
	if got := text(".console-nav a.active"); got != "Statements" {
		t.Errorf("the navigation's current entry is %q on #/sd, want Statements", got)
	}
	shots := consoleScreenshot(t, ctx, "console-sd-list.png", "")

	// The status filter: no declaration is WITHDRAWN yet.
	err = chromedp.Do(ctx,
		choose(".trade-filter", "WITHDRAWN"),
		poll(`document.querySelector(".sd-table") === null && document.querySelector(".trade p.muted:last-child")?.innerText === "No declarations WITHDRAWN."`),
		choose(".trade-filter", ""),
		poll(`document.querySelectorAll(".sd-table tbody tr").length === 1`),
	)
	if err != nil {
		fail("the status filter", err)
	}

	// The declaration's page: its operator, numbers, producers with their
	// kinds of location, and its history.
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".sd-table tbody tr")),
		poll(`document.querySelector(".sd-commodities") !== null && document.querySelector(".sd-withdraw") !== null`),
	)
	if err != nil {
		fail("the declaration's page", err)
	}
	if got := text(".sd-reference"); got != *sd.ReferenceNumber {
		t.Errorf("the page shows declaration number %q, the API %s", got, *sd.ReferenceNumber)
	}
	if got := text(".sd-identifier"); got != *sd.SDIdentifier {
		t.Errorf("the page shows EU identifier %q, the API %s", got, *sd.SDIdentifier)
	}
	if got := text(".sd-operator"); !strings.Contains(got, "Ferme Dupont") || !strings.Contains(got, "VAT FR40303265045") {
		t.Errorf("the operator reads %q", got)
	}
	got := text(".sd-commodities")
	for _, want := range []string{"4403", "Oak logs", "1,200.5", "Postal address", "1 Chemin des Vignes, 21000 Dijon",
		"Cadastral", "21231000AB0042", "Bois Martin", "4401", "Geometry", "Polygon", "Forêt Lambert"} {
		if !strings.Contains(got, want) {
			t.Errorf("the commodities read %q, want %q in them", got, want)
		}
	}
	if tl, err := chromedp.Run(ctx, chromedp.Evaluate[string](timeline)); err != nil || tl != "DRAFT,SUBMITTED,VALIDATED" {
		t.Errorf("the timeline reads %q (%v)", tl, err)
	}
	consoleScreenshot(t, ctx, "console-sd.png", shots)

	// Withdrawn after a confirmation that says it is for good.
	err = chromedp.Do(ctx, poll(clickUntilShown(".sd-withdraw", ".trade-confirm")), chromedp.WaitVisible(chromedp.CSS(".trade-confirm")))
	if err != nil {
		fail("withdraw asked for no confirmation", err)
	}
	if got := text(".trade-confirm"); !strings.Contains(got, "cannot be undone") || !strings.Contains(got, *sd.ReferenceNumber) {
		t.Errorf("the withdrawal's confirmation reads %q", got)
	}
	consoleScreenshot(t, ctx, "console-sd-withdraw.png", shots)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".trade-confirm .confirm")),
		poll(timeline+` === "DRAFT,SUBMITTED,VALIDATED,WITHDRAWN"`),
		poll(`document.querySelector(".sd-withdraw") === null && document.querySelector(".trade-confirm") === null`),
	)
	if err != nil {
		fail("the declaration was not withdrawn", err)
	}
	if got := text(".sd-page h1"); !strings.Contains(got, "WITHDRAWN") {
		t.Errorf("the declaration's heading reads %q after the withdrawal", got)
	}
	if v := sdGet(t, base, key, acc.SDID); v.Status != "WITHDRAWN" {
		t.Errorf("the API says the declaration is %s, want WITHDRAWN", v.Status)
	}
	consoleScreenshot(t, ctx, "console-sd-withdrawn.png", shots)

	// The validated statement's Amend form, prefilled; sent unchanged it
	// says so and sends nothing.
	err = chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/dds/`+dds.DDSID+`"`),
		poll(`document.querySelector(".dds-amend") !== null`),
		poll(clickUntilShown(".dds-amend", ".amend-form")),
		chromedp.WaitVisible(chromedp.CSS(".amend-form")),
	)
	if err != nil {
		fail("the Amend form did not open", err)
	}
	desc, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".amend-form input[name='descriptionOfGoods-1']").value`))
	if err != nil || desc != st.Commodities[0].DescriptionOfGoods {
		t.Errorf("the form's description is %q (%v), the statement's %q", desc, err, st.Commodities[0].DescriptionOfGoods)
	}
	mass, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".amend-form input[name='netWeightKg-1']").value`))
	if err != nil || mass != "12500.5" {
		t.Errorf("the form's net mass is %q (%v), want 12500.5", mass, err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".amend-form button[type=submit]")),
		poll(`document.querySelector(".amend-form .console-error")?.innerText.includes("Nothing to amend") === true`),
	)
	if err != nil {
		fail("an unchanged form was not refused in the page", err)
	}

	// A new description and a justification: only the description is sent,
	// and the amendment shows on the timeline.
	const newDesc, why = "Cocoa beans, fermented and dried", "the bill of lading named the goods more precisely"
	err = chromedp.Do(ctx,
		input(".amend-form input[name='descriptionOfGoods-1']", newDesc),
		input(".amend-form textarea[name=justification]", why),
	)
	if err != nil {
		fail("fill in the Amend form", err)
	}
	consoleScreenshot(t, ctx, "console-dds-amend.png", shots)
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(".amend-form button[type=submit]")),
		poll(timeline+` === "DRAFT,SUBMITTED,VALIDATED,VALIDATED" && document.querySelector(".amend-form") === null`),
	)
	if err != nil {
		fail("the statement was not amended", err)
	}
	last := text(".dds-timeline li:last-child")
	if !strings.Contains(last, "commodities[0].descriptionOfGoods") || strings.Contains(last, "netWeightKg") || !strings.Contains(last, why) {
		t.Errorf("the amendment's step reads %q, want the description changed alone, and why", last)
	}
	if got := text(".dds-commodities"); !strings.Contains(got, newDesc) {
		t.Errorf("the statement's commodities read %q after the amendment, want %q", got, newDesc)
	}
	a := ddsGet(t, base, key, dds.DDSID)
	if a.Status != "VALIDATED" || !strings.Contains(string(a.Statement), `"descriptionOfGoods":"`+newDesc+`"`) || len(a.History) != 4 ||
		a.History[3].Note == nil || !strings.Contains(*a.History[3].Note, "justification: "+why) {
		t.Errorf("the API's statement after the amendment: %s, history %+v", a.Statement, a.History)
	}
	consoleScreenshot(t, ctx, "console-dds-amended.png", shots)

	checkStayedOnAppliance(t, activity, base, nil)
}

// TestConsole_AmendClosedBrowser: past the amendment period (set to
// seconds in this sandbox) the Amend form shows the appliance's refusal,
// which says when the period closed, and the statement is unchanged; a
// net mass that is not a number is refused in the page before anything
// is sent.
func TestConsole_AmendClosedBrowser(t *testing.T) {
	chromiumPath(t)
	const window, extension = time.Second, time.Second
	p := startServer(t, append([]string{"EUDR_EU_SYSTEM_SANDBOX_DELAY=200ms", "EUDR_EU_SYSTEM_SANDBOX_POLL_SCHEDULE=100ms",
		"EUDR_EU_SYSTEM_SANDBOX_AMEND_WINDOW=1s", "EUDR_EU_SYSTEM_SANDBOX_AMEND_EXTENSION=1s"}, noRateLimit...)...)
	base := p.SandboxURL
	key := p.createKey(t, sandbox)
	ddsMapOperator(t, base, key, "V-CAC", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-CAC", ddsPlots(1, -1.4, 6.9, "V-CAC")...)
	draft := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	ddsSubmit(t, base, key, draft.DDSID)
	v := ddsWaitStatus(t, base, key, draft.DDSID, "VALIDATED")
	if v.SubmittedAt == nil {
		t.Fatalf("validated without submittedAt: %+v", v)
	}
	closes := apitest.ParseTime(t, *v.SubmittedAt).Add(window + extension)
	time.Sleep(time.Until(closes.Add(500 * time.Millisecond)))

	ctx, activity := consoleBrowser(t)
	poll := func(expr string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(3*time.Minute))
	}
	fail := func(what string, err error) { t.Helper(); activity.fatal(t, what, err) }
	input := func(sel, value string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const el = document.querySelector(%q);
			el.value = %q; el.dispatchEvent(new Event("input", { bubbles: true })); })()`, sel, value))
	}
	if err := consoleSignIn(ctx, base, key); err != nil {
		fail("sign-in", err)
	}
	mass := ".amend-form input[name='netWeightKg-1']"
	err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`location.hash = "#/dds/`+v.DDSID+`"`),
		poll(`document.querySelector(".dds-amend") !== null`),
		poll(clickUntilShown(".dds-amend", ".amend-form")),
		input(mass, "12,600"),
		chromedp.Click(chromedp.CSS(".amend-form button[type=submit]")),
		poll(`document.querySelector(".amend-form .console-error")?.innerText.includes("is not a number of kilograms") === true`),
		input(mass, "12600.25"),
		chromedp.Click(chromedp.CSS(".amend-form button[type=submit]")),
		poll(`document.querySelector(".amend-form .console-error")?.innerText.includes("closed at") === true`),
	)
	if err != nil {
		fail("the form did not show the refusals", err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".amend-form .console-error").innerText`))
	if err != nil {
		t.Fatal(err)
	}
	// The period counts from the start of the filing attempt, a moment
	// before submittedAt (closedAbout).
	if !closedAbout(t, got, closes) || strings.Count(got, "closed at") != 1 {
		t.Errorf("the refusal reads %q, want it to say once that the period closed at about %s", got, storage.FormatTime(closes))
	}
	consoleScreenshot(t, ctx, "console-dds-amend-closed.png", "")
	if a := ddsGet(t, base, key, v.DDSID); len(a.History) != 3 || string(a.Statement) != string(v.Statement) {
		t.Errorf("the statement changed after a refused amendment: %s, history %+v", a.Statement, a.History)
	}
	checkStayedOnAppliance(t, activity, base, func(pr string) bool { return strings.Contains(pr, "409") })
}
