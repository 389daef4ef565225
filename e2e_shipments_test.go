package main_test

// End-to-end tests of shipment links: every 409 and 422 of the flow,
// races of concurrent links, and a link that times out
// (LEDGER_CONSENSUS_TIMEOUT).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

func TestShipment_Refusals(t *testing.T) {
	t.Parallel()
	p := startServer(t, noRateLimit...)
	key := p.createKey(t, sandbox)
	base := p.SandboxURL
	mustCreateSupplier(t, base, key, "V-REF", "Refusal Coop")

	// Two compliant plots, one from Russia (compliant plot, high-risk
	// country), one on the deforestation fixture, one without coverage.
	_, ids := ledScreen(t, base, key, []string{"COMPLIANT", "COMPLIANT", "COMPLIANT", "HIGH_RISK", "FAILED"},
		ledPlot(-1.71, 6.69, "GH", "V-REF"), ledPlot(-1.72, 6.69, "GH", "V-REF"), ledPlot(37.61, 55.75, "RU", "V-REF"),
		ledPlot(-61.5, -10.5, "BR", "V-REF"), ledPlot(10.5, 10.5, "NG", "V-REF"))
	a, b, ru, defo, nodata := ids[0], ids[1], ids[2], ids[3], ids[4]

	// POST /batches with plots not COMPLIANT: 422 listing each of them.
	e := apitest.WantError(t, ledPostBatch(t, base, key, ledBatchBody("LOT-BAD", "V-REF", a, defo, nodata)),
		http.StatusUnprocessableEntity, "BUSINESS_RULE", "POLYGON_NOT_COMPLIANT", "POLYGON_NOT_COMPLIANT")
	if d := e.Detail(t, "polygonIds[1]"); !strings.Contains(d.Issue, defo) || !strings.Contains(d.Issue, "HIGH_RISK") {
		t.Errorf("detail of the HIGH_RISK plot: %+v", d)
	}
	if d := e.Detail(t, "polygonIds[2]"); !strings.Contains(d.Issue, nodata) || !strings.Contains(d.Issue, "FAILED") {
		t.Errorf("detail of the FAILED plot: %+v", d)
	}
	if r := apitest.Do(t, "GET", base+eudrAPI+"/batches", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK); strings.TrimSpace(string(r.Body)) != "[]" {
		t.Errorf("a refused batch was registered: %s", r.Body)
	}

	batchA := ledVerified(t, base, key, "V-REF", a)
	batchB := ledVerified(t, base, key, "V-REF", b)
	high := ledAssess(t, base, key, ledBatchBody("LOT-RU", "V-REF", ru))
	if high.Status != "HIGH_RISK" {
		t.Fatalf("batch of a plot from RU: %+v, want HIGH_RISK", high)
	}

	// A polygon in a batch cannot be deleted; one in none can.
	e = apitest.WantError(t, apitest.Do(t, "DELETE", polItemURL(base, a), apitest.WithKey(key), nil), http.StatusConflict, "CONFLICT", "POLYGON_IN_USE")
	if !strings.Contains(e.Details[0].Issue, batchA) {
		t.Errorf("POLYGON_IN_USE does not name batch %s: %+v", batchA, e.Details)
	}
	apitest.Do(t, "GET", polItemURL(base, a), apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	apitest.Do(t, "DELETE", polItemURL(base, nodata), apitest.WithKey(key), nil).WantStatus(t, http.StatusNoContent)

	// The first link holds both its shipment and its batch.
	ik := apitest.NewIdemKey()
	first := apitest.Do(t, "POST", ledLinkURL(base), apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", ik)), ledLinkBody(batchA, "SHP-1"))
	acc := ledAccepted(t, first, "linkId", "jobId")
	// A retry answers the same link.
	again := apitest.Do(t, "POST", ledLinkURL(base), apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", ik)), ledLinkBody(batchA, "SHP-1"))
	if again.Status != http.StatusAccepted || !bytes.Equal(again.Body, first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replayed link: %d %s (replayed %q), first %s", again.Status, again.Body, again.Header.Get("Idempotent-Replayed"), first.Body)
	}
	if j := ledWaitJob(t, base, key, acc["jobId"], ledLinkJobType); j.Status != "COMPLETED" {
		t.Fatalf("link job: %+v", j)
	}

	issue := ledWantRefusal(t, ledLink(t, base, key, batchB, "SHP-1"), http.StatusConflict, "CONFLICT", "SHIPMENT_ALREADY_LINKED", "shipmentId")
	if !strings.Contains(issue, batchA) {
		t.Errorf("SHIPMENT_ALREADY_LINKED does not name batch %s: %s", batchA, issue)
	}
	issue = ledWantRefusal(t, ledLink(t, base, key, batchA, "SHP-2"), http.StatusConflict, "CONFLICT", "BATCH_ALREADY_LINKED", "batchId")
	if !strings.Contains(issue, "SHP-1") {
		t.Errorf("BATCH_ALREADY_LINKED does not name shipment SHP-1: %s", issue)
	}
	// The same pair again (a new request, not a retry) is refused too.
	ledWantRefusal(t, ledLink(t, base, key, batchA, "SHP-1"), http.StatusConflict, "CONFLICT", "SHIPMENT_ALREADY_LINKED", "shipmentId")
	ledWantRefusal(t, ledLink(t, base, key, high.BatchID, "SHP-3"), http.StatusUnprocessableEntity, "BUSINESS_RULE", "BATCH_NOT_VERIFIED", "batchId")
	r := ledLink(t, base, key, "bat_01JD0000000000000000000000", "SHP-3")
	if r.Status != http.StatusNotFound {
		t.Fatalf("link of an unknown batch: %d %s, want 404", r.Status, r.Body)
	}
	var nf apitest.APIError
	r.Decode(t, &nf)
	if nf.Code != "NOT_FOUND" {
		t.Errorf("link of an unknown batch: %s", r.Body)
	}
	// A production key does not see the sandbox's batch.
	live := p.createKey(t, production)
	if r := apitest.Do(t, "POST", ledLinkURL(p.ProductionURL), idem(live), ledLinkBody(batchB, "SHP-LIVE")); r.Status != http.StatusNotFound {
		t.Errorf("link of a sandbox batch in production: %d %s, want 404", r.Status, r.Body)
	}
	// A container number with a wrong check digit is a 400.
	body := ledLinkBody(batchB, "SHP-4")
	body["containerNumbers"] = []string{"CSQU3054384"}
	ledWantRefusal(t, apitest.Do(t, "POST", ledLinkURL(base), idem(key), body), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE", "containerNumbers[0]")
	// Nothing refused holds anything: SHP-3 is unknown, and batchB and
	// SHP-2 (both named in refusals) link.
	apitest.WantError(t, apitest.Do(t, "GET", base+eudrAPI+"/shipments/SHP-3", apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
	acc = ledAccepted(t, ledLink(t, base, key, batchB, "SHP-2"), "linkId", "jobId")
	if j := ledWaitJob(t, base, key, acc["jobId"], ledLinkJobType); j.Status != "COMPLETED" {
		t.Fatalf("link of batchB to SHP-2: %+v", j)
	}

	// Eight links of one shipment to eight batches at once: one wins.
	const n = 8
	batches := make([]string, n)
	for i := range batches {
		batches[i] = ledVerified(t, base, key, "V-REF", b)
	}
	ledRace := func(batchOf, shipmentOf func(i int) string, detail string) int {
		t.Helper()
		codes := make([]int, n)
		bodies := make([][]byte, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				r, err := apitest.TryDo(t, "POST", ledLinkURL(base), idem(key), ledLinkBody(batchOf(i), shipmentOf(i)))
				if err != nil {
					t.Error(err)
					return
				}
				codes[i], bodies[i] = r.Status, r.Body
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, c := range codes {
			switch {
			case c == http.StatusAccepted && winner < 0:
				winner = i
			case c == http.StatusConflict && bytes.Contains(bodies[i], []byte(`"code":"`+detail+`"`)):
			default:
				t.Errorf("racing link %d: %d %s", i, c, bodies[i])
			}
		}
		if winner < 0 {
			t.Fatalf("no racing link was accepted: %v", codes)
		}
		var acc map[string]string
		json.Unmarshal(bodies[winner], &acc)
		if j := ledWaitJob(t, base, key, acc["jobId"], ledLinkJobType); j.Status != "COMPLETED" {
			t.Fatalf("the winning link's job: %+v", j)
		}
		return winner
	}
	w := ledRace(func(i int) string { return batches[i] }, func(int) string { return "SHP-RACE" }, "SHIPMENT_ALREADY_LINKED")
	var s ledShipment
	ledGet(t, base, key, "/shipments/SHP-RACE", &s)
	if s.Status != "LINKED" || s.BatchID != batches[w] {
		t.Errorf("SHP-RACE: %+v, want LINKED to %s", s, batches[w])
	}

	// And one batch to eight shipments at once: one wins.
	free := batches[(w+1)%n]
	w2 := ledRace(func(int) string { return free }, func(i int) string { return fmt.Sprint("SHP-R", i) }, "BATCH_ALREADY_LINKED")
	ledGet(t, base, key, fmt.Sprint("/shipments/SHP-R", w2), &s)
	if s.Status != "LINKED" || s.BatchID != free {
		t.Errorf("SHP-R%d: %+v, want LINKED to %s", w2, s, free)
	}
	for i := range n {
		if i != w2 {
			apitest.WantError(t, apitest.Do(t, "GET", fmt.Sprint(base, eudrAPI, "/shipments/SHP-R", i), apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
		}
	}

	// Four links anchored four entries after the five plots; the log is
	// one chain.
	if got := len(ledWalk(t, base, key)); got != 5+4 {
		t.Errorf("the log holds %d entries, want 9 (5 plots, 4 links)", got)
	}
}

// TestShipment_ConsensusTimeout: with one job worker held by a sandbox
// test job, a link's job runs later than ledger.consensus_timeout after its
// request: it fails with LEDGER_CONSENSUS_TIMEOUT (job.failed, no
// shipment.linked), anchors nothing, and frees its batch and shipment.
func TestShipment_ConsensusTimeout(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, append([]string{"EUDR_JOBS_WORKERS=1", "EUDR_LEDGER_CONSENSUS_TIMEOUT=1s"}, noRateLimit...)...)
	key := p.createKey(t, sandbox)
	base := p.SandboxURL
	reg := subscribe(t, p, key, rc, "/t", "job.failed", "shipment.linked")
	mustCreateSupplier(t, base, key, "V-TO", "Timeout Coop")
	_, ids := ledScreen(t, base, key, []string{"COMPLIANT"}, ledPlot(-1.91, 6.69, "GH", "V-TO"))
	batch := ledVerified(t, base, key, "V-TO", ids...)
	var before ledCheckpoint
	ledGet(t, base, key, "/ledger/checkpoint", &before)

	// The only worker is busy for 2.5 s.
	busy := queueJob(t, p, key, map[string]any{"items": 25, "itemMillis": 100})
	waitUntil(t, ledWait, "the sandbox job to run", func() bool { return getJob(t, base, key, busy).Status == "RUNNING" })
	acc := ledAccepted(t, ledLink(t, base, key, batch, "SHP-LATE"), "linkId", "jobId")
	j := ledWaitJob(t, base, key, acc["jobId"], ledLinkJobType)
	if j.Status != "FAILED" || j.Error == nil || j.Error.Code != "LEDGER_CONSENSUS_TIMEOUT" || len(j.LedgerProofs) != 0 {
		t.Fatalf("late link job: %+v", j)
	}
	var s ledShipment
	ledGet(t, base, key, "/shipments/SHP-LATE", &s)
	if s.Status != "FAILED" || s.LinkID != acc["linkId"] || s.TransactionHash != nil || s.LedgerIndex != nil || s.LinkedAt != nil {
		t.Errorf("late link: %+v, want FAILED without an anchor", s)
	}
	var after ledCheckpoint
	ledGet(t, base, key, "/ledger/checkpoint", &after)
	if after != before {
		t.Errorf("the ledger moved for a link that timed out: %+v, before %+v", after, before)
	}
	waitUntil(t, ledWait, "job.failed of the link", func() bool {
		for _, r := range rc.Requests("/t", "") {
			if r.Env.EventType == "job.failed" && dataField(&r, "jobId") == acc["jobId"] && rc.IsDelivered("/t", r.Env.EventID) {
				apitest.CheckSignatures(t, r, reg.SigningSecret)
				return true
			}
		}
		return false
	})

	// Batch and shipment are free again: the link goes through now.
	acc2 := ledAccepted(t, ledLink(t, base, key, batch, "SHP-LATE"), "linkId", "jobId")
	if j := ledWaitJob(t, base, key, acc2["jobId"], ledLinkJobType); j.Status != "COMPLETED" || len(j.LedgerProofs) != 1 {
		t.Fatalf("link after the timeout: %+v", j)
	}
	ledGet(t, base, key, "/shipments/SHP-LATE", &s)
	if s.Status != "LINKED" || s.LinkID != acc2["linkId"] || s.LedgerIndex == nil || *s.LedgerIndex != before.TreeSize {
		t.Errorf("SHP-LATE after the second link: %+v, want LINKED at entry %d", s, before.TreeSize)
	}
	waitUntil(t, ledWait, "shipment.linked of the second link", func() bool {
		for _, r := range rc.Requests("/t", "") {
			if r.Env.EventType == "shipment.linked" && rc.IsDelivered("/t", r.Env.EventID) {
				if got := dataField(&r, "linkId"); got != acc2["linkId"] {
					t.Fatalf("shipment.linked for link %s, want only %s", got, acc2["linkId"])
				}
				return true
			}
		}
		return false
	})
}
