package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/report"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// oaDDSEntry is a dds.status ledger entry as stored: the fields anchored and
// the "prev" member ledger.Append adds.
type oaDDSEntry struct {
	anchor.DDSEntry
	Prev string `json:"prev"`
}

// dds drives the due-diligence statement routes, the EU system credentials
// and the archive reports on an appliance of its own, whose fake clock
// (started at the real time) the test moves to let the sandbox's simulated
// EU system decide and the submission jobs poll it. Its webhook deliveries
// go to the receiver at base, trusted through the same webhooks.ca_file,
// which checks their Standard Webhooks timestamps on that clock.
//
// Setup: two supplier mappings (one with an EORI), plots, batches (one
// unlinked, one HIGH_RISK, 101 for a split) and their shipment links.
// Then: draft refusals (400, 404, 422 BATCH_NOT_VERIFIED, 422
// EU_SYSTEM_RULE with and without the split hint, idempotency, scopes),
// drafts (one, split in two, split of one), submissions (202, 409, the job
// QUEUED then RUNNING while it polls), a revocation while SUBMITTED, the
// simulator's decisions (VALIDATED, REJECTED for the zero operator UUID),
// the dds.* events, the ledger entries of the history, revocation by
// reference number (200, then 409), a statement grouped by a later one (409
// from the EU system), one rejected before filing, the lists; in
// production: credentials, 422 without them, 503 when the EU system cannot
// be reached, a submission retrying meanwhile; archive reports; and last, as the clock jumps, the 72-hour
// window of revocations and the expiry of a report.
func (c *oaConformance) dds(recv *apitest.Receiver, base string) {
	t := c.t
	t.Helper()
	const (
		suppliers = eudrPrefix + "/suppliers"
		polygons  = eudrPrefix + "/polygons"
		batches   = eudrPrefix + "/batches"
		link      = eudrPrefix + "/shipments/link"
		job       = eudrPrefix + "/jobs/{jobId}"
		entry     = eudrPrefix + "/ledger/entries/{index}"
		webhooks  = eudrPrefix + "/webhooks"
		ddsList   = eudrPrefix + "/declarations/dds"
		ddsOne    = ddsList + "/{ddsId}"
		submit    = ddsOne + "/submit"
		revoke    = ddsOne + "/revoke"
		amend     = ddsOne + "/amend"
		lookup    = eudrPrefix + "/declarations/references/lookup"
		creds     = eudrPrefix + "/credentials/eu-system"
		opUUID    = "5a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4d" // D-1, an importer with an EORI
		beUUID    = "5a1d2c3b-4e5f-4a6b-8c7d-9e0f1a2b3c4e" // D-2, without an EORI
	)
	clock := apitest.NewClock(time.Now().UTC())
	ta := newTestAppAt(t, t.TempDir(), clock,
		"EUDR_WEBHOOKS_CA_FILE="+c.a.cfg.Webhooks.CAFile,
		"EUDR_RATE_LIMIT_PER_SECOND=100000", "EUDR_RATE_LIMIT_BURST=100000",
		"EUDR_RATE_LIMIT_IP_PER_SECOND=100000", "EUDR_RATE_LIMIT_IP_BURST=100000",
		"EUDR_LIMITS_MAX_BODY_BYTES=16384",
		"EUDR_EU_SYSTEM_ALLOW_PRIVATE_ENDPOINTS=true") // the unreachable EU system below is on loopback
	d := &oaConformance{t: t, a: ta.App, doc: c.doc, sc: c.sc}
	rwRec, rwKey := ta.newKey(storage.Sandbox)
	_, roKey := ta.newKey(storage.Sandbox, account.ScopeRead)
	_, liveKey := ta.newKey(storage.Production)
	rw, ro, live := []string{"X-API-Key", rwKey}, []string{"X-API-Key", roKey}, []string{"X-API-Key", liveKey}
	sandbox := storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}
	production := storage.Tenant{Org: defaultOrg, Env: storage.Production}

	with, idem, problems := oaWith, oaIdem, oaProblems
	firstIssue := func(an oaAnswer) string {
		if ds := oaList(an.body["details"]); len(ds) > 0 {
			return fmt.Sprint(ds[0].(map[string]any)["issue"])
		}
		return ""
	}
	path := func(p, id string) string { return strings.Replace(p, "{ddsId}", id, 1) }
	jobPath := func(id string) string { return eudrPrefix + "/jobs/" + id }
	ddsStatus := func(tn storage.Tenant, id string) string {
		var status string
		ta.view(func(tx *storage.Tx) error {
			if dd, err := tx.FindDDS(tn, id); err == nil {
				status = dd.Status
			}
			return nil
		})
		return status
	}
	statuses := func(want map[string]string) func() bool {
		return func() bool {
			for id, s := range want {
				if ddsStatus(sandbox, id) != s {
					return false
				}
			}
			return true
		}
	}
	jobsDone := func(ids ...string) func() bool {
		return func() bool {
			for _, id := range ids {
				if !d.jobFinished(id) {
					return false
				}
			}
			return true
		}
	}
	// run runs the job runner until cond holds, the clock standing still
	// (a shipment link must run within ledger.consensus_timeout of its
	// request).
	run := func(what string, cond func() bool) {
		t.Helper()
		oaRunUntil(t, ta.jobs, what, cond)
	}
	// follow runs the job runner while the clock moves a second at a time
	// (the simulator decides and the sandbox poll schedule runs on it),
	// until cond holds.
	follow := func(what string, cond func() bool) {
		t.Helper()
		ctx, stop := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			if err := ta.jobs.Run(ctx); err != nil {
				t.Errorf("job runner: %v", err)
			}
		}()
		defer func() { stop(); <-stopped }()
		for deadline := time.Now().Add(oaWait); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			clock.Advance(time.Second)
			ta.jobs.Wake()
		}
	}

	// The dispatcher delivers the events to the receiver, which checks
	// their Standard Webhooks timestamps on this appliance's clock until
	// the dispatcher has stopped.
	recv.SetClock(clock.Now)
	defer recv.SetClock(time.Now)
	ctx, stopDispatch := context.WithCancel(context.Background())
	dispatched := make(chan struct{})
	go func() {
		defer close(dispatched)
		ta.dispatcher.Run(ctx)
	}()
	defer func() { stopDispatch(); <-dispatched }()

	// Two supplier mappings: D-1 an importer established in the
	// Netherlands with an EORI, D-2 a Belgian one without.
	d.do(oaCall{method: "POST", target: suppliers, op: suppliers, hdr: idem(rw, "dds-sup-1"), want: 200,
		body: `{"erpVendorId":"D-1","euOperatorUuid":"` + opUUID + `","name":"Importer BV","country":"NL","eori":"NL123456789"}`})
	d.do(oaCall{method: "POST", target: suppliers, op: suppliers, hdr: idem(rw, "dds-sup-2"), want: 200,
		body: `{"erpVendorId":"D-2","euOperatorUuid":"` + beUUID + `","name":"Negoce SA","country":"BE"}`})

	// Plots: two of one named producer, a point of an unnamed one, a plot
	// in Russia (a high-risk country), and D-2's.
	feature := func(geometry, props string) string {
		return `{"type":"Feature","geometry":` + geometry + `,"properties":{"commodity":"cocoa",` + props + `}}`
	}
	an := d.do(oaCall{method: "POST", target: polygons, op: polygons, want: 202,
		hdr: with(idem(rw, "dds-pol"), "Content-Type", "application/geo+json"),
		body: collection(
			feature(`{"type":"Polygon","coordinates":`+square(-1.6, 7, 0.001)+`}`,
				`"producerCountry":"GH","producerName":"Kofi Mensah","productionPlace":"Ashanti","supplierId":"D-1"`),
			feature(`{"type":"Polygon","coordinates":`+square(-1.59, 7, 0.001)+`}`,
				`"producerCountry":"GH","producerName":"Kofi Mensah","supplierId":"D-1"`),
			feature(`{"type":"Point","coordinates":[-1.578766,7.000123]}`, `"producerCountry":"GH","area":2,"supplierId":"D-1"`),
			feature(`{"type":"Polygon","coordinates":`+square(41, 55, 0.001)+`}`, `"producerCountry":"RU","supplierId":"D-1"`),
			feature(`{"type":"Polygon","coordinates":`+square(-1.57, 7, 0.001)+`}`, `"producerCountry":"GH","supplierId":"D-2"`))})
	polJob := fmt.Sprint(an.body["jobId"])
	run("the statement plots to be screened", jobsDone(polJob))
	plotA, plotB, point, plotRU, plotBE := storage.PolygonID(polJob, 0), storage.PolygonID(polJob, 1), storage.PolygonID(polJob, 2),
		storage.PolygonID(polJob, 3), storage.PolygonID(polJob, 4)

	// Batches: the main one of three plots, one left unlinked, a HIGH_RISK
	// one, D-2's, and 101 of one plot each for a statement over the EU
	// system's 100 commodities.
	register := func(key, ref, supplier string, mass int, ids ...string) (string, string) {
		t.Helper()
		an := d.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, key), want: 202,
			body: `{"batchReference":"` + ref + `","commodity":"cocoa","hsCode":"18010000","supplierId":"` + supplier +
				`","polygonIds":["` + strings.Join(ids, `","`) + `"],"quantity":{"netMassKg":` + fmt.Sprint(mass) + `}}`})
		return fmt.Sprint(an.body["batchId"]), fmt.Sprint(an.body["jobId"])
	}
	var batchJobs []string
	bMain, j := register("dds-b-main", "LOT-MAIN", "D-1", 1000, plotA, plotB, point)
	batchJobs = append(batchJobs, j)
	bUnlinked, j := register("dds-b-unlinked", "LOT-UNLINKED", "D-1", 10, plotA)
	batchJobs = append(batchJobs, j)
	bHigh, j := register("dds-b-high", "LOT-RU", "D-1", 10, plotRU)
	batchJobs = append(batchJobs, j)
	bBE, j := register("dds-b-be", "LOT-BE", "D-2", 10, plotBE)
	batchJobs = append(batchJobs, j)
	var bSplit []string
	for i := range euis.MaxCommodities + 1 {
		b, j := register(fmt.Sprintf("dds-b-split-%d", i), fmt.Sprintf("LOT-S%03d", i), "D-1", 10, plotA)
		bSplit, batchJobs = append(bSplit, b), append(batchJobs, j)
	}
	run("the statement batches to be assessed", jobsDone(batchJobs...))
	var linkJobs []string
	linkTo := func(batch, shipment, port string) {
		t.Helper()
		an := d.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "dds-lnk-"+shipment), want: 202,
			body: `{"batchId":"` + batch + `","shipmentId":"` + shipment + `","portOfEntry":"` + port + `"}`})
		linkJobs = append(linkJobs, fmt.Sprint(an.body["jobId"]))
	}
	linkTo(bMain, "SHP-D-MAIN", "NLRTM")
	linkTo(bBE, "SHP-D-BE", "BEANR")
	for i, b := range bSplit {
		linkTo(b, fmt.Sprintf("SHP-D-S%03d", i), "NLRTM")
	}
	run("the statement batches to be linked", jobsDone(linkJobs...))

	// The events of statements go to a subscription of the receiver.
	an = d.do(oaCall{method: "POST", target: webhooks, op: webhooks, hdr: idem(rw, "dds-wh"), want: 200,
		body: `{"targetUrl":"` + base + `/dds","eventTypes":["dds.submitted","dds.validated","dds.rejected"]}`})
	secret := fmt.Sprint(an.body["signingSecret"])
	recv.SetSecret("/dds", secret)

	// Draft refusals: the Idempotency-Key first, then every problem of the
	// body, every unknown batch, every batch that cannot be declared, every
	// rule of the EU system the statement breaks.
	ids := func(bs ...string) string { b, _ := json.Marshal(bs); return string(b) }
	draftBody := func(operator, extra string, bs ...string) string {
		return `{"batchIds":` + ids(bs...) + `,"activityType":"IMPORT","operatorUuid":"` + operator + `"` + extra + `}`
	}
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, body: draftBody(opUUID, "", bMain), hdr: rw, want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("draft without Idempotency-Key: detail %q", an.detail())
	}
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-bad"), want: 400,
		body: `{"batchIds":["x","x"],"activityType":"SELL","operatorUuid":"x","internalReference":"",` +
			`"referencedStatements":[{"referenceNumber":"nope","verificationNumber":"a b"}],"countryOfActivity":"US","borderCrossCountry":"gb","color":"red"}`})
	want := map[string]bool{
		apierr.DetailInvalidValue + " at batchIds[1]": true, apierr.DetailInvalidValue + " at activityType": true, apierr.DetailInvalidValue + " at operatorUuid": true,
		apierr.DetailInvalidValue + " at internalReference": true, apierr.DetailInvalidValue + " at referencedStatements[0].referenceNumber": true,
		apierr.DetailInvalidValue + " at referencedStatements[0].verificationNumber": true, apierr.DetailInvalidValue + " at countryOfActivity": true,
		apierr.DetailInvalidValue + " at borderCrossCountry": true, apierr.DetailUnknownField + " at color": true,
	}
	if got := problems(an); !maps.Equal(got, want) {
		t.Errorf("a draft with nine problems: %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-bad"), body: `{"split":"yes"}`, want: 400})
	want = map[string]bool{apierr.DetailRequired + " at batchIds": true, apierr.DetailRequired + " at activityType": true,
		apierr.DetailRequired + " at operatorUuid": true, apierr.DetailInvalidValue + " at split": true}
	if got := problems(an); !maps.Equal(got, want) {
		t.Errorf("an empty draft: %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-bad"), body: `{"batchIds":`, want: 400})
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-404"), body: draftBody(opUUID, "", bMain, "bat_nope", bUnlinked), want: 404})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailInvalidValue + " at batchIds[1]": true}) {
		t.Errorf("a draft of an unknown batch: %v", slices.Sorted(maps.Keys(got)))
	}
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-422"), body: draftBody(opUUID, "", bUnlinked, bHigh, bMain), want: 422})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailBatchNotVerified + " at batchIds[0]": true, apierr.DetailBatchNotVerified + " at batchIds[1]": true}) {
		t.Errorf("a draft of an unlinked and a HIGH_RISK batch: %v", slices.Sorted(maps.Keys(got)))
	}
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-422"), body: draftBody(beUUID, "", bBE), want: 422})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailEUSystemRule + " at statement.operator.eori": true}) ||
		strings.Contains(fmt.Sprint(an.body["message"]), "split") || !strings.Contains(firstIssue(an), "EORI") {
		t.Errorf("IMPORT for an operator without an EORI: %s", an.rec.Body)
	}
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-422"), body: draftBody(opUUID, "", bSplit...), want: 422})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailEUSystemRule + " at statement.commodities": true}) ||
		!strings.Contains(fmt.Sprint(an.body["message"]), `send "split": true`) || !strings.Contains(firstIssue(an), "at most 100 commodities") {
		t.Errorf("101 commodities without split: %s", an.rec.Body)
	}
	d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: with(idem(rw, "dds-txt"), "Content-Type", "text/plain"), body: draftBody(opUUID, "", bMain), want: 415})
	d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(ro, "dds-ro"), body: draftBody(opUUID, "", bMain), want: 403})
	d.do(oaCall{method: "POST", target: ddsList, op: ddsList, body: draftBody(opUUID, "", bMain), want: 401})
	d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-big"), want: 413,
		body: draftBody(opUUID, `,"internalReference":"`+strings.Repeat("x", 20000)+`"`, bMain)})
	mainBody := draftBody(opUUID, `,"internalReference":"PO-4711"`, bMain)
	inflight := httptest.NewRequest("POST", ddsList, strings.NewReader(mainBody))
	ta.update(func(tx *storage.Tx) error {
		return tx.PutIdempotency(sandbox, &storage.IdempotencyRecord{Key: "dds-busy", Fingerprint: fingerprint(inflight, []byte(mainBody)),
			State: storage.IdemInFlight, Owner: ta.runID, CreatedAt: tx.Now(), ExpiresAt: tx.Now().Add(time.Hour)})
	})
	d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-busy"), body: mainBody, want: 423})
	if an = d.do(oaCall{method: "GET", target: ddsList, op: ddsList, hdr: ro, want: 200}); len(an.list) != 0 {
		t.Errorf("statements after refusals only: %v", oaShort(an.list))
	}

	// A draft: its Annex II statement, the first history entry anchored.
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-main"), body: mainBody, want: 200})
	dMain := fmt.Sprint(an.body["ddsId"])
	hist := oaList(an.body["history"])
	if an.body["status"] != storage.DDSDraft || an.body["internalReference"] != "PO-4711" || an.body["euUuid"] != nil ||
		an.body["submittedAt"] != nil || len(hist) != 1 || hist[0].(map[string]any)["actor"] != rwRec.ID ||
		hist[0].(map[string]any)["ledgerIndex"] == nil {
		t.Errorf("draft: %s", an.rec.Body)
	}
	wantStatement := map[string]any{
		"operatorRole": "OPERATOR", "internalReferenceNumber": "PO-4711", "activityType": "IMPORT",
		"operator":          map[string]any{"name": "Importer BV", "country": "NL", "eori": "NL123456789"},
		"countryOfActivity": "NL", "borderCrossCountry": "NL", "geoLocationConfidential": false,
		"operatorUuid": opUUID, "supplierOperatorUuids": []any{opUUID},
	}
	st, _ := an.body["statement"].(map[string]any)
	for k, v := range wantStatement {
		if !reflect.DeepEqual(st[k], v) {
			t.Errorf("draft statement %s: %v, want %v", k, oaShort(st[k]), oaShort(v))
		}
	}
	var producers []any
	if cs := oaList(st["commodities"]); len(cs) == 1 {
		cm := cs[0].(map[string]any)
		producers = oaList(cm["producers"])
		if cm["hsHeading"] != "180100" || cm["netWeightKg"] != 1000.0 || cm["descriptionOfGoods"] != "cocoa, batch LOT-MAIN" {
			t.Errorf("draft commodity: %v", oaShort(cm))
		}
	}
	if len(producers) != 2 {
		t.Fatalf("draft producers: %v, want the named producer's two plots and the point", oaShort(producers))
	}
	named, unnamed := producers[0].(map[string]any), producers[1].(map[string]any)
	namedGeo, _ := json.Marshal(named["geometryGeojson"])
	unnamedGeo, _ := json.Marshal(unnamed["geometryGeojson"])
	if named["name"] != "Kofi Mensah" || named["country"] != "GH" || strings.Count(string(namedGeo), `"Feature"`) != 2 ||
		!strings.Contains(string(namedGeo), `"ProductionPlace":"Ashanti"`) || unnamed["name"] != nil ||
		!strings.Contains(string(unnamedGeo), `"Area":2`) || !strings.Contains(string(unnamedGeo), `[-1.578766,7.000123]`) {
		t.Errorf("draft producers: %s and %s", namedGeo, unnamedGeo)
	}
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-main"), body: mainBody, want: 200})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["ddsId"] != dMain {
		t.Errorf("replayed draft: %v", oaShort(an.body))
	}
	d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-main"), body: draftBody(opUUID, "", bMain), want: 409})

	// More drafts: for the zero operator UUID (no internal reference: the
	// ddsId is used), one to revoke while SUBMITTED, a statement split in
	// two, and a split that needs no split.
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-rej"), body: draftBody(euis.ZeroOperatorUUID, "", bMain), want: 200})
	dRej := fmt.Sprint(an.body["ddsId"])
	if an.body["internalReference"] != dRej {
		t.Errorf("draft without an internal reference: %v, want its ddsId %s", an.body["internalReference"], dRej)
	}
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-rev"), body: draftBody(opUUID, `,"internalReference":"PO-4712"`, bMain), want: 200})
	dRev := fmt.Sprint(an.body["ddsId"])
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-split"), want: 200,
		body: draftBody(opUUID, `,"internalReference":"SPLIT","split":true`, bSplit...)})
	if len(an.list) != 2 {
		t.Fatalf("a split of 101 commodities: %v, want two drafts", oaShort(an.list))
	}
	part1, part2 := an.list[0].(map[string]any), an.list[1].(map[string]any)
	p1, p2 := fmt.Sprint(part1["ddsId"]), fmt.Sprint(part2["ddsId"])
	for i, p := range []map[string]any{part1, part2} {
		pst, _ := p["statement"].(map[string]any)
		n := []int{euis.MaxCommodities, 1}[i]
		ref := fmt.Sprintf("SPLIT-%d", i+1)
		if p["splitOf"] != p1 || p["part"] != float64(i+1) || p["internalReference"] != ref || pst["internalReferenceNumber"] != ref ||
			len(oaList(pst["commodities"])) != n || p["status"] != storage.DDSDraft {
			t.Errorf("split part %d: splitOf %v, part %v, internalReference %v, %d commodities; want %s, %d, %s, %d",
				i+1, p["splitOf"], p["part"], p["internalReference"], len(oaList(pst["commodities"])), p1, i+1, ref, n)
		}
	}
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-split-1"), body: draftBody(opUUID, `,"split":true`, bMain), want: 200})
	if len(an.list) != 1 || an.list[0].(map[string]any)["splitOf"] != nil || an.list[0].(map[string]any)["part"] != nil {
		t.Errorf("a split of a statement within the limits: %v, want one draft, not a part", oaShort(an.list))
	}
	dOne := fmt.Sprint(an.list[0].(map[string]any)["ddsId"])

	// Submission refusals.
	an = d.do(oaCall{method: "POST", target: path(submit, dMain), op: submit, hdr: rw, want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("submit without Idempotency-Key: detail %q", an.detail())
	}
	d.do(oaCall{method: "POST", target: path(submit, "dds_nope"), op: submit, hdr: idem(rw, "sub-404"), want: 404})
	d.do(oaCall{method: "POST", target: path(submit, dMain), op: submit, hdr: idem(ro, "sub-ro"), want: 403})
	d.do(oaCall{method: "POST", target: path(submit, dMain), op: submit, want: 401})
	d.do(oaCall{env: storage.Production, method: "POST", target: path(submit, dMain), op: submit, hdr: idem(live, "sub-live"), want: 404})

	// Submitted: the job waits QUEUED (the runner is stopped); the DDS
	// stays DRAFT, and cannot be submitted twice.
	an = d.do(oaCall{method: "POST", target: path(submit, dMain), op: submit, hdr: idem(rw, "sub-main"), want: 202})
	jMain, loc := fmt.Sprint(an.body["jobId"]), an.rec.Header().Get("Location")
	if loc != jobPath(jMain) {
		t.Errorf("submit: Location %q, want %s", loc, jobPath(jMain))
	}
	an = d.do(oaCall{method: "POST", target: path(submit, dMain), op: submit, hdr: idem(rw, "sub-main"), want: 202})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["jobId"] != jMain || an.rec.Header().Get("Location") != loc {
		t.Errorf("replayed submit: %v, Location %q", oaShort(an.body), an.rec.Header().Get("Location"))
	}
	an = d.do(oaCall{method: "GET", target: jobPath(jMain), op: job, hdr: ro, want: 200})
	if an.body["type"] != work.DDSSubmission || an.body["status"] != storage.JobQueued || an.rec.Header().Get("Retry-After") == "" ||
		an.body["progress"].(map[string]any)["total"] != 1.0 {
		t.Errorf("queued submission job: %v", oaShort(an.body))
	}
	an = d.do(oaCall{method: "POST", target: path(submit, dMain), op: submit, hdr: idem(rw, "sub-main-2"), want: 409})
	if !problems(an)[apierr.DetailDDSNotDraft+" at path.ddsId"] || !strings.Contains(firstIssue(an), "being submitted") {
		t.Errorf("submitting a queued statement again: %s", an.rec.Body)
	}
	if an = d.do(oaCall{method: "GET", target: path(ddsOne, dMain), op: ddsOne, hdr: ro, want: 200}); an.body["status"] != storage.DDSDraft {
		t.Errorf("a statement whose submission is queued: %v, want DRAFT", an.body["status"])
	}
	jobOf := map[string]string{dMain: jMain}
	for _, id := range []string{dRej, dRev, p2} {
		an = d.do(oaCall{method: "POST", target: path(submit, id), op: submit, hdr: idem(rw, "sub-"+id), want: 202})
		jobOf[id] = fmt.Sprint(an.body["jobId"])
	}

	// The jobs file them: SUBMITTED, and the jobs stay RUNNING while they
	// poll.
	run("the statements to be filed", statuses(map[string]string{dMain: storage.DDSSubmitted, dRej: storage.DDSSubmitted,
		dRev: storage.DDSSubmitted, p2: storage.DDSSubmitted}))
	an = d.do(oaCall{method: "GET", target: jobPath(jMain), op: job, hdr: ro, want: 200})
	if an.body["status"] != storage.JobRunning || an.rec.Header().Get("Retry-After") == "" || an.body["startedAt"] == nil ||
		an.body["completedAt"] != nil || len(oaList(an.body["results"])) != 0 || len(oaList(an.body["ledgerProofs"])) != 1 {
		t.Errorf("a submission job while it polls (its SUBMITTED entry proved): %v", oaShort(an.body))
	}
	an = d.do(oaCall{method: "GET", target: path(ddsOne, dMain), op: ddsOne, hdr: ro, want: 200})
	if an.body["euUuid"] == nil || an.body["referenceNumber"] != nil || an.body["submittedAt"] == nil ||
		len(oaList(an.body["history"])) != 2 || oaList(an.body["history"])[1].(map[string]any)["actor"] != dds.ActorEUSystem {
		t.Errorf("a SUBMITTED statement: %s", an.rec.Body)
	}
	an = d.do(oaCall{method: "POST", target: path(submit, dMain), op: submit, hdr: idem(rw, "sub-main-3"), want: 409})
	if an.detail() != apierr.DetailDDSNotDraft || !strings.Contains(firstIssue(an), "is SUBMITTED") {
		t.Errorf("submitting a SUBMITTED statement: %s", an.rec.Body)
	}

	// Revoked while SUBMITTED, by its ddsId: its job completes at its next
	// poll.
	an = d.do(oaCall{method: "POST", target: path(revoke, dRev), op: revoke, hdr: idem(rw, "rev-sub"), want: 200})
	if _, ok := an.body["statement"]; ok || an.body["status"] != storage.DDSRevoked || historyOf(an) != "DRAFT SUBMITTED REVOKED" ||
		oaList(an.body["history"])[2].(map[string]any)["actor"] != rwRec.ID {
		t.Errorf("revoked while SUBMITTED: %s", an.rec.Body)
	}

	// The simulator decides after eu_system.sandbox_delay; the jobs poll
	// and complete.
	follow("the EU system to decide", func() bool {
		return statuses(map[string]string{dMain: storage.DDSValidated, dRej: storage.DDSRejected, p2: storage.DDSValidated})() &&
			jobsDone(jMain, jobOf[dRej], jobOf[dRev], jobOf[p2])()
	})
	for id, jid := range jobOf {
		an = d.do(oaCall{method: "GET", target: jobPath(jid), op: job, hdr: ro, want: 200})
		if an.body["status"] != storage.JobCompleted || an.rec.Header().Get("Retry-After") != "" || an.body["progress"].(map[string]any)["percent"] != 100.0 {
			t.Errorf("the submission job of %s: %v", id, oaShort(an.body))
		}
	}
	an = d.do(oaCall{method: "GET", target: path(ddsOne, dMain), op: ddsOne, hdr: ro, want: 200})
	refMain, verMain := fmt.Sprint(an.body["referenceNumber"]), fmt.Sprint(an.body["verificationNumber"])
	if !euis.IsReferenceNumber(refMain) || !strings.HasPrefix(refMain[2:], "NL") || !euis.IsVerificationNumber(verMain) ||
		historyOf(an) != "DRAFT SUBMITTED VALIDATED" {
		t.Errorf("a VALIDATED statement: %s", an.rec.Body)
	}
	mainStatement := rawMember(t, an.rec.Body.Bytes(), "statement")
	mainUUID := fmt.Sprint(an.body["euUuid"])
	if an = d.do(oaCall{method: "GET", target: path(ddsOne, refMain), op: ddsOne, hdr: ro, want: 200}); an.body["ddsId"] != dMain {
		t.Errorf("a statement by its reference number: %v, want %s", an.body["ddsId"], dMain)
	}
	an = d.do(oaCall{method: "GET", target: path(ddsOne, dRej), op: ddsOne, hdr: ro, want: 200})
	if !reflect.DeepEqual(an.body["reasons"], []any{euis.ReasonOperatorUUIDMismatch}) || an.body["referenceNumber"] != nil ||
		historyOf(an) != "DRAFT SUBMITTED REJECTED" {
		t.Errorf("the statement for the zero operator UUID: %s", an.rec.Body)
	}
	an = d.do(oaCall{method: "GET", target: path(ddsOne, p2), op: ddsOne, hdr: ro, want: 200})
	refP2, verP2 := fmt.Sprint(an.body["referenceNumber"]), fmt.Sprint(an.body["verificationNumber"])

	// The ledger entries of the history: dds.status, with the statement's
	// hash.
	sum := sha256.Sum256(mainStatement)
	for i, h := range oaList(d.do(oaCall{method: "GET", target: path(ddsOne, dMain), op: ddsOne, hdr: ro, want: 200}).body["history"]) {
		hm := h.(map[string]any)
		an = d.do(oaCall{method: "GET", target: strings.Replace(entry, "{index}", fmt.Sprint(hm["ledgerIndex"]), 1), op: entry, hdr: ro, want: 200})
		raw, err := base64.StdEncoding.DecodeString(fmt.Sprint(an.body["data"]))
		if err != nil {
			t.Fatalf("ledger entry of history %d: %v", i, err)
		}
		var e map[string]any
		json.Unmarshal(raw, &e)
		for _, msg := range d.sc.check(map[string]any{"$ref": "#/components/schemas/LedgerEntryData"}, e, "entry") {
			t.Errorf("ledger entry of history %d: %s", i, msg)
		}
		var typed oaDDSEntry
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&typed); err != nil {
			t.Errorf("ledger entry of history %d does not decode as oaDDSEntry: %v", i, err)
		}
		if e["type"] != anchor.EntryDDSStatus || e["ddsId"] != dMain || e["status"] != hm["status"] || e["actor"] != hm["actor"] ||
			e["statementSha256"] != hex.EncodeToString(sum[:]) {
			t.Errorf("ledger entry of history %d (%v): %s", i, hm["status"], raw)
		}
	}

	// The events: dds.submitted of each statement filed (no reference
	// number yet), dds.validated and dds.rejected of the decisions.
	oaEventually(t, "the seven dds events", func() bool { return len(recv.Requests("/dds", "")) >= 7 })
	got := map[string]map[string]any{}
	for _, dl := range recv.Requests("/dds", "") {
		typ := dl.Header.Get(webhooksig.HeaderEventType)
		if env := c.checkDelivery(typ, dl, secret); env != nil {
			data, _ := env["data"].(map[string]any)
			got[typ+" "+fmt.Sprint(data["ddsId"])] = data
		}
	}
	wantEvents := map[string]map[string]any{
		event.DDSSubmitted + " " + dMain: {"ddsId": dMain, "euUuid": mainUUID, "referenceNumber": nil},
		event.DDSValidated + " " + dMain: {"ddsId": dMain, "referenceNumber": refMain, "verificationNumber": verMain},
		event.DDSValidated + " " + p2:    {"ddsId": p2, "referenceNumber": refP2, "verificationNumber": verP2},
		event.DDSRejected + " " + dRej:   {"ddsId": dRej, "reasons": []any{euis.ReasonOperatorUUIDMismatch}},
	}
	for k, w := range wantEvents {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s: %v, want %v", k, got[k], w)
		}
	}
	for _, id := range []string{dRej, dRev, p2} {
		if _, ok := got[event.DDSSubmitted+" "+id]; !ok {
			t.Errorf("no dds.submitted of %s", id)
		}
	}
	if len(got) != 7 {
		t.Errorf("dds events: %v, want 7", slices.Sorted(maps.Keys(got)))
	}

	// Looked up by its numbers (found, then not found with a wrong
	// verification number): answers of the documented shape.
	pair := func(ver string) string {
		return fmt.Sprintf(`{"referenceNumber":%q,"verificationNumber":%q}`, refMain, ver)
	}
	an = d.do(oaCall{method: "POST", target: lookup, op: lookup, body: pair(verMain), hdr: idem(rw, "look-main"), want: 200})
	if an.body["found"] != true || an.body["statement"] == nil || an.body["usability"] != euis.VerifyExistingUsable {
		t.Errorf("look-up: %s", an.rec.Body)
	}
	if an = d.do(oaCall{method: "POST", target: lookup, op: lookup, body: pair("WRONG123"), hdr: idem(rw, "look-wrong"), want: 200}); an.body["found"] != false {
		t.Errorf("look-up with a wrong verification number: %s", an.rec.Body)
	}
	d.do(oaCall{method: "POST", target: lookup, op: lookup, body: pair("WRONG123"), hdr: idem(ro, "look-ro"), want: 403})

	// Revoked by its reference number: 200 once, then 409 with the reason.
	an = d.do(oaCall{method: "POST", target: path(revoke, refMain), op: revoke, hdr: rw, want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("revoke without Idempotency-Key: detail %q", an.detail())
	}
	d.do(oaCall{method: "POST", target: path(revoke, refMain), op: revoke, hdr: idem(ro, "rev-ro"), want: 403})
	d.do(oaCall{method: "POST", target: path(revoke, "26NL0000000000"), op: revoke, hdr: idem(rw, "rev-404"), want: 404})
	an = d.do(oaCall{method: "POST", target: path(revoke, refMain), op: revoke, hdr: idem(rw, "rev-main"), want: 200})
	if an.body["ddsId"] != dMain || an.body["status"] != storage.DDSRevoked || historyOf(an) != "DRAFT SUBMITTED VALIDATED REVOKED" {
		t.Errorf("revoked by reference number: %s", an.rec.Body)
	}
	an = d.do(oaCall{method: "POST", target: path(revoke, refMain), op: revoke, hdr: idem(rw, "rev-main"), want: 200})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["ddsId"] != dMain {
		t.Errorf("replayed revocation: %v", oaShort(an.body))
	}
	for _, r := range []struct{ id, status string }{{dMain, "REVOKED"}, {refMain, "REVOKED"}, {dRej, "REJECTED"}, {p1, "DRAFT"}} {
		an = d.do(oaCall{method: "POST", target: path(revoke, r.id), op: revoke, hdr: idem(rw, "rev-again-"+r.id), want: 409})
		if !problems(an)[apierr.DetailDDSNotRevocable+" at path.ddsId"] || !strings.Contains(firstIssue(an), "is "+r.status+"; only a SUBMITTED or VALIDATED") {
			t.Errorf("revoking %s (%s): %s", r.id, r.status, an.rec.Body)
		}
	}
	d.do(oaCall{method: "POST", target: path(submit, dMain), op: submit, hdr: idem(rw, "sub-revoked"), want: 409})

	// A statement that references split part 2: filing it groups part 2,
	// which the EU system then refuses to withdraw. One that references a
	// statement the EU system does not know is rejected without filing.
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-group"), want: 200,
		body: draftBody(opUUID, `,"referencedStatements":[{"referenceNumber":"`+refP2+`","verificationNumber":"`+verP2+`"}]`, bMain)})
	dGroup := fmt.Sprint(an.body["ddsId"])
	if !reflect.DeepEqual(an.body["referencedStatements"], []any{map[string]any{"referenceNumber": refP2, "verificationNumber": verP2}}) ||
		!reflect.DeepEqual(an.body["statement"].(map[string]any)["referencedStatements"], an.body["referencedStatements"]) {
		t.Errorf("a statement referencing another: %s", an.rec.Body)
	}
	an = d.do(oaCall{method: "POST", target: ddsList, op: ddsList, hdr: idem(rw, "dds-unknown-ref"), want: 200,
		body: draftBody(opUUID, `,"referencedStatements":[{"referenceNumber":"26NL0000000000","verificationNumber":"ABCDEFGH"}]`, bMain)})
	dUnknown := fmt.Sprint(an.body["ddsId"])
	for _, id := range []string{dGroup, dUnknown} {
		an = d.do(oaCall{method: "POST", target: path(submit, id), op: submit, hdr: idem(rw, "sub-"+id), want: 202})
		jobOf[id] = fmt.Sprint(an.body["jobId"])
	}
	run("the referencing statements to be filed", statuses(map[string]string{dGroup: storage.DDSSubmitted, dUnknown: storage.DDSRejected}))
	an = d.do(oaCall{method: "POST", target: path(revoke, p2), op: revoke, hdr: idem(rw, "rev-grouped"), want: 409})
	if an.detail() != apierr.DetailDDSNotRevocable || !strings.Contains(firstIssue(an), "the EU system refused to withdraw it") ||
		!strings.Contains(firstIssue(an), "GROUPED") {
		t.Errorf("revoking a grouped statement: %s", an.rec.Body)
	}
	an = d.do(oaCall{method: "GET", target: path(ddsOne, dUnknown), op: ddsOne, hdr: ro, want: 200})
	if !reflect.DeepEqual(an.body["reasons"], []any{"REFERENCED_STATEMENT_" + euis.VerifyNonExistent + ": 26NL0000000000"}) ||
		an.body["euUuid"] != nil || an.body["submittedAt"] != nil || historyOf(an) != "DRAFT REJECTED" {
		t.Errorf("a statement referencing an unknown one: %s", an.rec.Body)
	}
	follow("the grouping statement to be validated", func() bool {
		return statuses(map[string]string{dGroup: storage.DDSValidated})() && jobsDone(jobOf[dGroup], jobOf[dUnknown])()
	})
	oaEventually(t, "the ten dds events", func() bool { return len(recv.Requests("/dds", "")) >= 10 })
	for _, dl := range recv.Requests("/dds", "")[7:] {
		c.checkDelivery(dl.Header.Get(webhooksig.HeaderEventType), dl, secret)
	}

	// Amended within 72 hours, by its reference number: still VALIDATED,
	// the history one entry longer, anchored by a dds.amended entry.
	refGroup := fmt.Sprint(d.do(oaCall{method: "GET", target: path(ddsOne, dGroup), op: ddsOne, hdr: ro, want: 200}).body["referenceNumber"])
	an = d.do(oaCall{method: "POST", target: path(amend, refGroup), op: amend, hdr: idem(rw, "amend-group"), want: 200,
		body: `{"commodities":[{"position":1,"netWeightKg":1234.5}]}`})
	amended := oaList(an.body["statement"].(map[string]any)["commodities"])[0].(map[string]any)
	if an.body["ddsId"] != dGroup || an.body["status"] != storage.DDSValidated || historyOf(an) != "DRAFT SUBMITTED VALIDATED VALIDATED" ||
		amended["netWeightKg"] != 1234.5 {
		t.Errorf("amended: %s", an.rec.Body)
	}
	h := oaList(an.body["history"])
	an = d.do(oaCall{method: "GET", target: fmt.Sprintf("%s/ledger/entries/%v", eudrPrefix, h[len(h)-1].(map[string]any)["ledgerIndex"]), op: entry, hdr: ro, want: 200})
	d.do(oaCall{method: "POST", target: path(amend, dGroup), op: amend, hdr: idem(rw, "amend-empty"), body: `{}`, want: 400})
	d.do(oaCall{method: "POST", target: path(amend, dGroup), op: amend, hdr: idem(ro, "amend-ro"), body: `{"countryOfActivity":"BE"}`, want: 403})
	d.do(oaCall{method: "POST", target: path(amend, "26NL0000000000"), op: amend, hdr: idem(rw, "amend-404"), body: `{"countryOfActivity":"BE"}`, want: 404})
	an = d.do(oaCall{method: "POST", target: path(amend, dMain), op: amend, hdr: idem(rw, "amend-revoked"), body: `{"countryOfActivity":"BE"}`, want: 409})
	if an.detail() != apierr.DetailDDSNotAmendable || !strings.Contains(firstIssue(an), "is REVOKED; only a VALIDATED statement can be amended") {
		t.Errorf("amending a revoked statement: %s", an.rec.Body)
	}
	d.do(oaCall{method: "POST", target: path(amend, dGroup), op: amend, hdr: idem(rw, "amend-rule"), want: 422,
		body: `{"commodities":[{"position":1,"descriptionOfGoods":""}]}`})

	// Lists: newest first, without the statement; the filter; pages.
	all := []string{dUnknown, dGroup, dOne, p2, p1, dRev, dRej, dMain}
	ddsIDs := func(list []any) []string {
		var out []string
		for _, it := range list {
			out = append(out, fmt.Sprint(it.(map[string]any)["ddsId"]))
		}
		return out
	}
	an = d.do(oaCall{method: "GET", target: ddsList, op: ddsList, hdr: ro, want: 200})
	if got := ddsIDs(an.list); !slices.Equal(got, all) {
		t.Errorf("statements: %v, want %v", got, all)
	}
	for _, it := range an.list {
		if _, ok := it.(map[string]any)["statement"]; ok {
			t.Errorf("the list shows the statement of %v", it.(map[string]any)["ddsId"])
		}
	}
	for q, w := range map[string][]string{
		"status=DRAFT": {dOne, p1}, "status=VALIDATED": {dGroup, p2}, "status=REJECTED": {dUnknown, dRej},
		"status=REVOKED": {dRev, dMain}, "status=SUBMITTED": nil,
	} {
		if got := ddsIDs(d.do(oaCall{method: "GET", target: ddsList + "?" + q, op: ddsList, hdr: ro, want: 200}).list); !slices.Equal(got, w) {
			t.Errorf("statements?%s: %v, want %v", q, got, w)
		}
	}
	an = d.do(oaCall{method: "GET", target: ddsList + "?limit=3", op: ddsList, hdr: ro, want: 200})
	next := an.rec.Header().Get("X-Next-Cursor")
	if !slices.Equal(ddsIDs(an.list), all[:3]) || next != all[2] || !strings.Contains(an.rec.Header().Get("Link"), `rel="next"`) {
		t.Errorf("statements?limit=3: %v, X-Next-Cursor %q", ddsIDs(an.list), next)
	}
	an = d.do(oaCall{method: "GET", target: ddsList + "?limit=5&cursor=" + next, op: ddsList, hdr: ro, want: 200})
	if !slices.Equal(ddsIDs(an.list), all[3:]) || an.rec.Header().Get("Link") != "" {
		t.Errorf("the last page of statements: %v, Link %q", ddsIDs(an.list), an.rec.Header().Get("Link"))
	}
	an = d.do(oaCall{method: "GET", target: ddsList + "?status=done&limit=0", op: ddsList, hdr: ro, want: 400})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailInvalidValue + " at query.status": true, apierr.DetailInvalidValue + " at query.limit": true}) {
		t.Errorf("statements with two bad parameters: %v", slices.Sorted(maps.Keys(got)))
	}
	d.do(oaCall{method: "GET", target: ddsList, op: ddsList, want: 401})
	d.do(oaCall{method: "GET", target: path(ddsOne, "dds_nope"), op: ddsOne, hdr: ro, want: 404})
	d.do(oaCall{env: storage.Production, method: "GET", target: path(ddsOne, dMain), op: ddsOne, hdr: live, want: 404})
	d.do(oaCall{method: "GET", target: path(ddsOne, dMain), op: ddsOne, want: 401})

	// Production: no credentials, so no submission or revocation (422);
	// credentials set, the auth key never shown; an EU system that cannot
	// be reached is 503 for a revocation and changes nothing, and keeps a
	// submission job RUNNING with its failed attempt shown on the job and
	// the statement. Its statements are made in
	// the store (production screens against imported layers only).
	var pDraft, pSub *storage.DDS
	ta.update(func(tx *storage.Tx) error {
		now := tx.Now()
		pDraft = &storage.DDS{ID: storage.NewID("dds", now), BatchIDs: []string{bMain}, ActivityType: euis.ActivityImport, OperatorUUID: opUUID,
			InternalReference: "PO-LIVE-1", Statement: mainStatement, CreatedAt: now}
		if err := ta.dds.Record(tx, production, pDraft, storage.DDSDraft, "key_test", "created from batches"); err != nil {
			return err
		}
		pSub = &storage.DDS{ID: storage.NewID("dds", now.Add(time.Millisecond)), BatchIDs: []string{bMain}, ActivityType: euis.ActivityImport,
			OperatorUUID: opUUID, InternalReference: "PO-LIVE-2", Statement: mainStatement, CreatedAt: now,
			EUUUID: "4c0d8a52-0f64-4a4e-9a8e-7b1a2c3d4e5f", SubmittedAt: &now, Poll: &storage.DDSPollState{}}
		if err := ta.dds.Record(tx, production, pSub, storage.DDSDraft, "key_test", "created from batches"); err != nil {
			return err
		}
		return ta.dds.Record(tx, production, pSub, storage.DDSSubmitted, dds.ActorEUSystem, "accepted by the EU system")
	})
	for _, env := range []storage.Environment{storage.Production, storage.Sandbox} {
		d.do(oaCall{env: env, method: "GET", target: creds, op: creds, hdr: map[storage.Environment][]string{storage.Production: live, storage.Sandbox: ro}[env], want: 404})
	}
	an = d.do(oaCall{env: storage.Production, method: "POST", target: path(submit, pDraft.ID), op: submit, hdr: idem(live, "sub-live-1"), want: 422})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailEUSystemNotConfigured + " at credentials": true}) {
		t.Errorf("submitting in production without credentials: %s", an.rec.Body)
	}
	an = d.do(oaCall{env: storage.Production, method: "POST", target: path(revoke, pSub.ID), op: revoke, hdr: idem(live, "rev-live-1"), want: 422})
	if an.detail() != apierr.DetailEUSystemNotConfigured {
		t.Errorf("revoking in production without credentials: %s", an.rec.Body)
	}
	// Credentials stored before the endpoint rules, with a plain http URL.
	ta.update(func(tx *storage.Tx) error {
		return tx.PutEUCredentials(production, &storage.EUCredentials{Username: "op-user", ClientID: "eudr-test",
			SealedAuthKey: ta.sealAuthKey(production, "s3cret-auth-key"), Endpoint: "http://relay.example/tracesnt", UpdatedAt: tx.Now()})
	})
	an = d.do(oaCall{env: storage.Production, method: "POST", target: path(submit, pDraft.ID), op: submit, hdr: idem(live, "sub-live-stale"), want: 422})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailEUSystemNotConfigured + " at credentials.endpoint": true}) {
		t.Errorf("submitting with a stored http endpoint: %s", an.rec.Body)
	}
	an = d.do(oaCall{env: storage.Production, method: "PUT", target: creds, op: creds, hdr: live, want: 400,
		body: `{"username":"","authKey":"` + strings.Repeat("k", 257) + `","color":1}`})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailRequired + " at username": true, apierr.DetailInvalidValue + " at authKey": true,
		apierr.DetailRequired + " at clientId": true, apierr.DetailUnknownField + " at color": true}) {
		t.Errorf("credentials with four problems: %v", slices.Sorted(maps.Keys(got)))
	}
	an = d.do(oaCall{env: storage.Production, method: "PUT", target: creds, op: creds, hdr: live, want: 400,
		body: `{"username":"op-user","authKey":"s3cret-auth-key","clientId":"eudr-test","endpoint":"ftp://relay.example"}`})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailInvalidValue + " at endpoint": true}) {
		t.Errorf("credentials with a bad endpoint: %v", slices.Sorted(maps.Keys(got)))
	}
	an = d.do(oaCall{env: storage.Production, method: "PUT", target: creds, op: creds, hdr: live, want: 400,
		body: `{"username":"op-user","authKey":"s3cret-auth-key","clientId":"eudr-test","endpoint":"http://relay.example/tracesnt"}`})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailInvalidValue + " at endpoint": true}) {
		t.Errorf("credentials with a plain http endpoint: %v", slices.Sorted(maps.Keys(got)))
	}
	d.do(oaCall{env: storage.Production, method: "PUT", target: creds, op: creds, hdr: live, body: `{"username":`, want: 400})
	d.do(oaCall{env: storage.Production, method: "PUT", target: creds, op: creds, hdr: with(live, "Content-Type", "text/plain"),
		body: `{"username":"op-user","authKey":"s3cret-auth-key","clientId":"eudr-test"}`, want: 415})
	d.do(oaCall{env: storage.Production, method: "PUT", target: creds, op: creds, hdr: rw,
		body: `{"username":"op-user","authKey":"s3cret-auth-key","clientId":"eudr-test"}`, want: 403})
	d.do(oaCall{env: storage.Production, method: "PUT", target: creds, op: creds,
		body: `{"username":"op-user","authKey":"s3cret-auth-key","clientId":"eudr-test"}`, want: 401})
	an = d.do(oaCall{env: storage.Production, method: "PUT", target: creds, op: creds, hdr: live, want: 200,
		body: `{"username":"op-user","authKey":"s3cret-auth-key","clientId":"eudr-repository"}`})
	if an.body["endpoint"] != nil || an.body["effectiveEndpoint"] != euis.ProductionEndpoint || an.body["authKeySet"] != true ||
		strings.Contains(an.rec.Body.String(), "s3cret") {
		t.Errorf("credentials without an endpoint: %s", an.rec.Body)
	}
	const unreachable = "https://127.0.0.1:1/tracesnt"
	an = d.do(oaCall{env: storage.Production, method: "PUT", target: creds, op: creds, hdr: live, want: 200,
		body: `{"username":"op-user","authKey":"s3cret-auth-key","clientId":"eudr-test","endpoint":"` + unreachable + `"}`})
	put := an.body
	an = d.do(oaCall{env: storage.Production, method: "GET", target: creds, op: creds, hdr: live, want: 200})
	if !reflect.DeepEqual(an.body, put) || an.body["endpoint"] != unreachable || an.body["effectiveEndpoint"] != unreachable ||
		an.body["username"] != "op-user" || an.body["clientId"] != "eudr-test" || strings.Contains(an.rec.Body.String(), "s3cret") {
		t.Errorf("credentials: PUT answered %v, GET %s", put, an.rec.Body)
	}
	d.do(oaCall{env: storage.Production, method: "GET", target: creds, op: creds, want: 401})
	an = d.do(oaCall{env: storage.Production, method: "POST", target: path(revoke, pSub.ID), op: revoke, hdr: idem(live, "rev-live-2"), want: 503})
	if an.rec.Header().Get("Retry-After") == "" {
		t.Error("503 of a revocation without Retry-After")
	}
	if s := ddsStatus(production, pSub.ID); s != storage.DDSSubmitted {
		t.Errorf("a statement the EU system could not be told to withdraw: %s, want SUBMITTED", s)
	}
	// A submission the EU system cannot be reached for: the job stays
	// RUNNING with its failed attempt, which the statement shows too.
	an = d.do(oaCall{env: storage.Production, method: "POST", target: path(submit, pDraft.ID), op: submit, hdr: idem(live, "sub-live-2"), want: 202})
	liveJob, _ := an.body["jobId"].(string)
	run("the production submission to fail an attempt", func() bool {
		var j *storage.Job
		ta.view(func(tx *storage.Tx) error {
			j, _ = tx.FindJob(production, liveJob)
			return nil
		})
		return j != nil && j.Retry != nil
	})
	an = d.do(oaCall{env: storage.Production, method: "GET", target: jobPath(liveJob), op: job, hdr: live, want: 200})
	if la, _ := an.body["lastAttempt"].(map[string]any); an.body["status"] != storage.JobRunning || an.body["attempts"] != 1.0 ||
		la["code"] != apierr.AttemptEUSystemUnreachable || an.body["nextAttemptAt"] == nil || an.rec.Header().Get("Retry-After") != "60" {
		t.Errorf("a submission job that could not reach the EU system: %s (Retry-After %q)", an.rec.Body, an.rec.Header().Get("Retry-After"))
	}
	an = d.do(oaCall{env: storage.Production, method: "GET", target: path(ddsOne, pDraft.ID), op: ddsOne, hdr: live, want: 200})
	if sub, _ := an.body["submission"].(map[string]any); an.body["status"] != storage.DDSDraft || sub["jobId"] != liveJob ||
		sub["attempts"] != 1.0 || sub["lastAttempt"] == nil {
		t.Errorf("a statement whose submission could not reach the EU system: %s", an.rec.Body)
	}
	an = d.do(oaCall{env: storage.Production, method: "GET", target: ddsList, op: ddsList, hdr: live, want: 200})
	if got := ddsIDs(an.list); !slices.Equal(got, []string{pSub.ID, pDraft.ID}) {
		t.Errorf("production's statements: %v, want %v", got, []string{pSub.ID, pDraft.ID})
	}
	d.do(oaCall{env: storage.Production, method: "GET", target: path(ddsOne, pSub.ID), op: ddsOne, hdr: live, want: 200})
	d.do(oaCall{method: "PUT", target: creds, op: creds, hdr: rw, want: 200,
		body: `{"username":"sandbox-user","authKey":"unused","clientId":"eudr-test"}`})
	if an = d.do(oaCall{method: "GET", target: creds, op: creds, hdr: ro, want: 200}); an.body["username"] != "sandbox-user" {
		t.Errorf("the sandbox's credentials: %s", an.rec.Body)
	}

	// Archive reports.
	reportID := d.reports(ta, run, recv, base, rw, ro, live)

	// Last (the clock jumps): past the EU system's 72 hours a statement
	// cannot be revoked.
	clock.Advance(euis.AmendWindow + time.Hour)
	an = d.do(oaCall{method: "POST", target: path(revoke, dGroup), op: revoke, hdr: idem(rw, "rev-late"), want: 409})
	if an.detail() != apierr.DetailDDSNotRevocable || !strings.Contains(firstIssue(an), "within "+euis.AmendWindow.String()+" of submission") {
		t.Errorf("revoking after 72 hours: %s", an.rec.Body)
	}
	// After 72 hours an amendment needs a justification; 8 days later the
	// period is over.
	an = d.do(oaCall{method: "POST", target: path(amend, dGroup), op: amend, hdr: idem(rw, "amend-late"), want: 409,
		body: `{"commodities":[{"position":1,"netWeightKg":1300}]}`})
	if !problems(an)[apierr.DetailDDSNotAmendable+" at justification"] {
		t.Errorf("amending after 72 hours without a justification: %s", an.rec.Body)
	}
	d.do(oaCall{method: "POST", target: path(amend, dGroup), op: amend, hdr: idem(rw, "amend-justified"), want: 200,
		body: `{"commodities":[{"position":1,"netWeightKg":1300}],"justification":"weighed again"}`})
	clock.Advance(euis.AmendExtension)
	an = d.do(oaCall{method: "POST", target: path(amend, dGroup), op: amend, hdr: idem(rw, "amend-closed"), want: 409,
		body: `{"commodities":[{"position":1,"netWeightKg":1400}],"justification":"weighed again"}`})
	if !problems(an)[apierr.DetailDDSNotAmendable+" at path.ddsId"] || !strings.Contains(firstIssue(an), "closed at ") {
		t.Errorf("amending after the amendment period: %s", an.rec.Body)
	}

	// Past reports.retention the report's file is deleted: EXPIRED.
	clock.Advance(ta.cfg.Reports.Retention)
	ta.sweepReports(context.Background())
	an = d.do(oaCall{method: "GET", target: eudrPrefix + "/reports/" + reportID, op: eudrPrefix + "/reports/{reportId}", hdr: ro, want: 200})
	if an.body["status"] != storage.ReportExpired || an.body["downloadPath"] != nil || an.body["expiresAt"] == nil || an.body["sha256"] == nil {
		t.Errorf("an expired report: %s", an.rec.Body)
	}
	d.do(oaCall{method: "GET", target: reportDownloadPath(reportID), op: eudrPrefix + "/reports/{reportId}/download", hdr: ro, want: 404})
}

// reports drives POST /reports/archive and the report routes on the
// appliance of dds (ta), whose statements, plots and ledger it archives,
// with run running its job runner: refusals, a report followed from
// PENDING (Retry-After, 409 REPORT_NOT_READY) to READY, its zip checked
// file by file against the document and the manifest, report.ready to the
// receiver at base, and a report whose archive cannot be written (FAILED,
// 409 REPORT_FAILED). It returns the READY report's ID.
func (c *oaConformance) reports(ta *testApp, run func(string, func() bool), recv *apitest.Receiver, base string, rw, ro, live []string) string {
	t := c.t
	t.Helper()
	const (
		archive  = eudrPrefix + "/reports/archive"
		reportOp = eudrPrefix + "/reports/{reportId}"
		download = reportOp + "/download"
		job      = eudrPrefix + "/jobs/{jobId}"
	)
	with, idem := oaWith, oaIdem
	rpath := func(p, id string) string { return strings.Replace(p, "{reportId}", id, 1) }
	problems := oaProblems
	validate := func(what, schema string, v any) {
		t.Helper()
		for _, e := range c.sc.check(map[string]any{"$ref": "#/components/schemas/" + schema}, v, what) {
			t.Error(e)
		}
	}

	// Refusals: the Idempotency-Key first, then every problem of the period.
	an := c.do(oaCall{method: "POST", target: archive, op: archive, body: `{"from":"2026-01-01","to":"2026-01-02"}`, hdr: rw, want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("report without Idempotency-Key: detail %q", an.detail())
	}
	for body, want := range map[string]map[string]bool{
		`{"from":"yesterday","to":"","x":1}`:         {apierr.DetailInvalidValue + " at from": true, apierr.DetailRequired + " at to": true, apierr.DetailUnknownField + " at x": true},
		`{"from":"2026-01-02","to":"2026-01-01"}`:    {apierr.DetailInvalidValue + " at to": true},
		`{"from":"2010-01-01","to":"2020-01-01"}`:    {apierr.DetailInvalidValue + " at to": true},
		`{"from":"2026-01-01T00:00:00Z","to":false}`: {apierr.DetailInvalidValue + " at to": true},
	} {
		an = c.do(oaCall{method: "POST", target: archive, op: archive, body: body, hdr: idem(rw, "rpt-bad"), want: 400})
		if got := problems(an); !maps.Equal(got, want) {
			t.Errorf("report %s: %v, want %v", body, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
	}
	c.do(oaCall{method: "POST", target: archive, op: archive, body: `{"from":`, hdr: idem(rw, "rpt-bad"), want: 400})
	c.do(oaCall{method: "POST", target: archive, op: archive, body: `{}`, hdr: with(idem(rw, "rpt-txt"), "Content-Type", "text/plain"), want: 415})
	c.do(oaCall{method: "POST", target: archive, op: archive, body: `{}`, hdr: idem(ro, "rpt-ro"), want: 403})
	c.do(oaCall{method: "POST", target: archive, op: archive, body: `{}`, want: 401})

	// A report of the days around now, PENDING until the runner runs.
	an = c.do(oaCall{method: "POST", target: eudrPrefix + "/webhooks", op: eudrPrefix + "/webhooks", hdr: idem(rw, "rpt-wh"), want: 200,
		body: `{"targetUrl":"` + base + `/reports","eventTypes":["report.ready"]}`})
	secret := fmt.Sprint(an.body["signingSecret"])
	recv.SetSecret("/reports", secret)
	now := ta.clock.Now().UTC()
	from, to := now.AddDate(0, 0, -1).Format(time.DateOnly), now.AddDate(0, 0, 1).Format(time.DateOnly)
	body := `{"from":"` + from + `","to":"` + to + `"}`
	an = c.do(oaCall{method: "POST", target: archive, op: archive, body: body, hdr: idem(rw, "rpt-1"), want: 202})
	rid, jid := fmt.Sprint(an.body["reportId"]), fmt.Sprint(an.body["jobId"])
	if loc := an.rec.Header().Get("Location"); loc != eudrPrefix+"/jobs/"+jid {
		t.Errorf("report: Location %q", loc)
	}
	an = c.do(oaCall{method: "POST", target: archive, op: archive, body: body, hdr: idem(rw, "rpt-1"), want: 202})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["reportId"] != rid {
		t.Errorf("replayed report: %v", oaShort(an.body))
	}
	c.do(oaCall{method: "POST", target: archive, op: archive, body: `{"from":"` + from + `","to":"` + from + `"}`, hdr: idem(rw, "rpt-1"), want: 409})
	an = c.do(oaCall{method: "GET", target: rpath(reportOp, rid), op: reportOp, hdr: ro, want: 200})
	if an.body["status"] != storage.ReportPending || an.rec.Header().Get("Retry-After") == "" || an.body["from"] != from+"T00:00:00.000Z" ||
		an.body["to"] != to+"T23:59:59.999Z" || an.body["jobId"] != jid {
		t.Errorf("a PENDING report: %s, Retry-After %q", an.rec.Body, an.rec.Header().Get("Retry-After"))
	}
	an = c.do(oaCall{method: "GET", target: rpath(download, rid), op: download, hdr: ro, want: 409})
	if an.detail() != apierr.DetailReportNotReady || an.rec.Header().Get("Retry-After") == "" {
		t.Errorf("downloading a PENDING report: %s, Retry-After %q", an.rec.Body, an.rec.Header().Get("Retry-After"))
	}
	if an = c.do(oaCall{method: "GET", target: "/api/v1/enterprise/eudr/jobs/" + jid, op: job, hdr: ro, want: 200}); an.body["type"] != work.ArchiveReport {
		t.Errorf("the report's job: %v", oaShort(an.body))
	}

	// Written: READY, downloaded and checked.
	run("the archive report", func() bool { return c.jobFinished(jid) })
	an = c.do(oaCall{method: "GET", target: rpath(reportOp, rid), op: reportOp, hdr: ro, want: 200})
	ready := an.body
	if ready["status"] != storage.ReportReady || an.rec.Header().Get("Retry-After") != "" || ready["downloadPath"] != reportDownloadPath(rid) ||
		ready["completedAt"] == nil || ready["expiresAt"] == nil || ready["error"] != nil {
		t.Errorf("a READY report: %s", an.rec.Body)
	}
	an = c.do(oaCall{method: "GET", target: rpath(download, rid), op: download, hdr: ro, want: 200})
	zipped := an.rec.Body.Bytes()
	sum := sha256.Sum256(zipped)
	if hex.EncodeToString(sum[:]) != ready["sha256"] || an.rec.Header().Get("X-Content-SHA256") != ready["sha256"] ||
		float64(len(zipped)) != ready["sizeBytes"] || an.rec.Header().Get("Content-Type") != "application/zip" {
		t.Errorf("download: %d bytes, SHA-256 %x, headers %v; the report says %v bytes, %v", len(zipped), sum, an.rec.Header(), ready["sizeBytes"], ready["sha256"])
	}
	files, m := archiveFiles(t, zipped)
	var manifest any
	json.Unmarshal(files[report.PathManifest], &manifest)
	validate("manifest.json", "ArchiveManifest", manifest)
	var list []any
	for _, l := range jsonLines(t, files[report.PathDDS]) {
		var v any
		json.Unmarshal(l, &v)
		list = append(list, v)
	}
	for i, v := range list {
		for _, e := range c.sc.check(map[string]any{"allOf": []any{map[string]any{"$ref": "#/components/schemas/Dds"}, map[string]any{"required": []any{"statement"}}}},
			v, fmt.Sprintf("dds.jsonl[%d]", i)) {
			t.Error(e)
		}
	}
	ledgerLines := jsonLines(t, files[report.PathDDSLedger])
	for i, l := range ledgerLines {
		var v map[string]any
		json.Unmarshal(l, &v)
		validate(fmt.Sprintf("dds-ledger.jsonl[%d]", i), "ArchiveDdsLedger", v)
		for k, e := range oaList(v["entries"]) {
			raw, _ := base64.StdEncoding.DecodeString(fmt.Sprint(e.(map[string]any)["data"]))
			var data any
			json.Unmarshal(raw, &data)
			validate(fmt.Sprintf("dds-ledger.jsonl[%d].entries[%d].data", i, k), "LedgerEntryData", data)
		}
	}
	evidence := jsonLines(t, files[report.PathEvidence])
	for i, l := range evidence {
		var v any
		json.Unmarshal(l, &v)
		validate(fmt.Sprintf("evidence.jsonl[%d]", i), "PolygonEvidence", v)
	}
	for name, schema := range map[string]string{report.PathCheckpoint: "LedgerCheckpoint", report.PathPublicKey: "LedgerPublicKey"} {
		var v any
		if err := json.Unmarshal(files[name], &v); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		validate(name, schema, v)
	}
	if m.ReportID != rid || m.Counts.DDS != 8 || len(list) != 8 || len(ledgerLines) != 8 || m.Counts.Polygons != 5 || len(evidence) != 5 {
		t.Errorf("the archive: manifest %s; %d statements, %d ledger lines, %d evidence lines; want 8 statements of the sandbox and 5 plots",
			files[report.PathManifest], len(list), len(ledgerLines), len(evidence))
	}
	data := map[string]any{"reportId": rid, "sha256": ready["sha256"], "sizeBytes": ready["sizeBytes"], "downloadPath": ready["downloadPath"]}
	an = c.do(oaCall{method: "GET", target: "/api/v1/enterprise/eudr/jobs/" + jid, op: job, hdr: ro, want: 200})
	if an.body["status"] != storage.JobCompleted || !reflect.DeepEqual(an.body["results"], []any{data}) {
		t.Errorf("the report's job: %s, want its one result %v", an.rec.Body, data)
	}
	var dl apitest.Delivery
	oaEventually(t, "the report.ready delivery", func() (ok bool) { dl, ok = oaFindPath(recv, "/reports"); return ok })
	if env := c.checkDelivery(event.ReportReady, dl, secret); env != nil && !reflect.DeepEqual(env["data"], data) {
		t.Errorf("report.ready: %s, want data %v", dl.Body, data)
	}
	for _, p := range []string{reportOp, download} {
		c.do(oaCall{method: "GET", target: rpath(p, "rpt_nope"), op: p, hdr: ro, want: 404})
		c.do(oaCall{env: storage.Production, method: "GET", target: rpath(p, rid), op: p, hdr: live, want: 404})
		c.do(oaCall{method: "GET", target: rpath(p, rid), op: p, want: 401})
	}

	// An archive that cannot be written (the reports directory is a file):
	// FAILED, and nothing to download.
	dir := ta.cfg.Reports.Path(ta.cfg.DataDir)
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	an = c.do(oaCall{method: "POST", target: archive, op: archive, body: body, hdr: idem(rw, "rpt-fail"), want: 202})
	failID, failJob := fmt.Sprint(an.body["reportId"]), fmt.Sprint(an.body["jobId"])
	run("the report that cannot be written", func() bool { return c.jobFinished(failJob) })
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir+".away", dir); err != nil {
		t.Fatal(err)
	}
	an = c.do(oaCall{method: "GET", target: rpath(reportOp, failID), op: reportOp, hdr: ro, want: 200})
	if em, _ := an.body["error"].(map[string]any); an.body["status"] != storage.ReportFailed || em["code"] != apierr.JobFailed || an.body["sha256"] != nil {
		t.Errorf("a FAILED report: %s", an.rec.Body)
	}
	if an = c.do(oaCall{method: "GET", target: rpath(download, failID), op: download, hdr: ro, want: 409}); an.detail() != apierr.DetailReportFailed {
		t.Errorf("downloading a FAILED report: %s", an.rec.Body)
	}
	if an = c.do(oaCall{method: "GET", target: "/api/v1/enterprise/eudr/jobs/" + failJob, op: job, hdr: ro, want: 200}); an.body["status"] != storage.JobFailed {
		t.Errorf("the job of a report that cannot be written: %v", oaShort(an.body))
	}
	return rid
}

// historyOf lists the statuses of a DDS answer's history.
func historyOf(an oaAnswer) string {
	var out []string
	for _, h := range oaList(an.body["history"]) {
		out = append(out, fmt.Sprint(h.(map[string]any)["status"]))
	}
	return strings.Join(out, " ")
}

// rawMember returns the bytes of member name of the JSON object body, as
// sent.
func rawMember(t interface{ Fatalf(string, ...any) }, body []byte, name string) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return m[name]
}

// TestOpenAPI_JobAttemptCodes: the codes a job's lastAttempt can carry are
// the Attempt* constants, each documented.
func TestOpenAPI_JobAttemptCodes(t *testing.T) {
	doc := loadOpenAPI(t)
	var codes []string
	for name, v := range oaStringConstants(t, "apierr/*.go") {
		if strings.HasPrefix(name, "Attempt") {
			codes = append(codes, v)
		}
	}
	slices.Sort(codes)
	enum := oaStrings(oaMust(t, doc, "/components/schemas/JobAttempt/properties/code/enum"))
	slices.Sort(enum)
	if len(codes) == 0 || !slices.Equal(enum, codes) {
		t.Errorf("JobAttempt.code enum %v, want the Attempt* constants %v", enum, codes)
	}
	desc := oaMust(t, doc, "/components/schemas/JobAttempt/properties/code/description").(string)
	for _, c := range codes {
		if !strings.Contains(desc, "`"+c+"`") {
			t.Errorf("JobAttempt.code's description does not explain %s", c)
		}
	}
}
