package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/storage"
)

// verifiedBatch registers a VERIFIED batch over a fresh compliant plot.
func (ta *testApp) verifiedBatch(key string, lon float64) string {
	ta.tb.Helper()
	ids := ta.screen(key, countryPlot("cocoa", "GH", lon, 6))
	b := ta.assessBatch(key, batchBody("REF-"+randomHex(4), ids...))
	if b.Status != storage.BatchVerified {
		ta.tb.Fatalf("batch %s is %s, want VERIFIED", b.BatchID, b.Status)
	}
	return b.BatchID
}

func (ta *testApp) link(key, idem, batchID, shipmentID string) *httptest.ResponseRecorder {
	return ta.do("POST", eudrPrefix+"/shipments/link",
		fmt.Sprintf(`{"batchId":%q,"shipmentId":%q,"billOfLading":"BL-77","containerNumbers":["CSQU3054383"],"portOfEntry":"NLRTM","eta":"2026-12-01"}`,
			batchID, shipmentID), "X-API-Key", key, "Idempotency-Key", idem)
}

func TestShipments_Link(t *testing.T) {
	rc := newReceiver(t)
	ta := newTestApp(t, "EUDR_WEBHOOKS_CA_FILE="+rc.caFile)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	ta.mapSupplier(key, "V-1")
	batch := ta.verifiedBatch(key, -1.6)
	rc.subscribe(ta, key, event.ShipmentLinked)

	w := ta.link(key, "l1", batch, "SHP-1")
	var acc shipmentLinkAccepted
	mustDecode(t, w, &acc)
	if w.Code != http.StatusAccepted || w.Header().Get("Location") != eudrPrefix+"/jobs/"+acc.JobID {
		t.Fatalf("link: %d %s", w.Code, w.Body)
	}
	job, _ := ta.waitJob(key, acc.JobID, storage.JobCompleted)

	// shipment.linked carries the entry's hash, in a signed tree.
	typ, raw := rc.next(t)
	var ev event.ShipmentLinkedData
	if err := json.Unmarshal(raw, &ev); err != nil || typ != event.ShipmentLinked {
		t.Fatalf("event %s %s: %v", typ, raw, err)
	}
	var cp checkpointResponse
	mustDecode(t, ta.do("GET", eudrPrefix+"/ledger/checkpoint", "", "X-API-Key", key), &cp)
	var entry entryResponse
	mustDecode(t, ta.do("GET", eudrPrefix+fmt.Sprintf("/ledger/entries/%d", ev.LedgerIndex), "", "X-API-Key", key), &entry)
	if ev.LinkID != acc.LinkID || ev.BatchID != batch || ev.ShipmentID != "SHP-1" || ev.TransactionHash != entry.LeafHash ||
		ev.TreeSize != cp.TreeSize || ev.RootHash != cp.RootHash {
		t.Errorf("shipment.linked %+v; entry %+v; checkpoint %+v", ev, entry, cp)
	}
	if len(job.LedgerProofs) != 1 || job.LedgerProofs[0].TransactionHash != ev.TransactionHash ||
		tlog.CheckRecord(mustHashes(t, job.LedgerProofs[0].Proof), cp.TreeSize, mustHash(t, cp.RootHash), ev.LedgerIndex, mustHash(t, ev.TransactionHash)) != nil {
		t.Errorf("job ledgerProofs: %+v", job.LedgerProofs)
	}
	var s shipmentResponse
	mustDecode(t, ta.do("GET", eudrPrefix+"/shipments/SHP-1", "", "X-API-Key", key), &s)
	if s.Status != storage.LinkLinked || s.TransactionHash == nil || *s.TransactionHash != ev.TransactionHash || s.BatchID != batch ||
		strings.Join(s.ContainerNumbers, ",") != "CSQU3054383" || s.LinkedAt == nil {
		t.Errorf("GET shipment: %+v", s)
	}

	// The list has it, by itself or by its batch.
	for _, q := range []string{"", "?batchId=" + batch} {
		var list []shipmentResponse
		mustDecode(t, ta.do("GET", eudrPrefix+"/shipments"+q, "", "X-API-Key", key), &list)
		if len(list) != 1 || !reflect.DeepEqual(list[0], s) {
			t.Errorf("GET /shipments%s: %+v, want [%+v]", q, list, s)
		}
	}
	var none []shipmentResponse
	if mustDecode(t, ta.do("GET", eudrPrefix+"/shipments?batchId=bat_other", "", "X-API-Key", key), &none); len(none) != 0 {
		t.Errorf("GET /shipments of another batch: %+v", none)
	}
	wantError(t, ta.do("GET", eudrPrefix+"/shipments?limit=0", "", "X-API-Key", key), http.StatusBadRequest, apierr.CodeValidationFailed, "")

	// A refusal of the workflow as its answer (the refusals themselves are
	// shipment's tests').
	wantError(t, ta.link(key, "l3", batch, "SHP-2"), http.StatusConflict, apierr.CodeConflict, apierr.DetailBatchAlreadyLinked)
	e := wantError(t, ta.do("POST", eudrPrefix+"/shipments/link",
		`{"shipmentId":"a b","containerNumbers":["CSQU3054384","x"],"portOfEntry":"rotterdam","eta":"soon","billOfLading":""}`,
		"X-API-Key", key, "Idempotency-Key", "l7"), http.StatusBadRequest, apierr.CodeValidationFailed, "")
	for _, f := range []string{"batchId", "shipmentId", "containerNumbers[0]", "containerNumbers[1]", "portOfEntry", "eta", "billOfLading"} {
		if !strings.Contains(fmt.Sprint(e.Details), f+" ") {
			t.Errorf("no problem at %s: %+v", f, e.Details)
		}
	}
	wantError(t, ta.do("GET", eudrPrefix+"/shipments/SHP-9", "", "X-API-Key", key), http.StatusNotFound, apierr.CodeNotFound, "")
}

// TestShipments_Race: of concurrent links of one shipment to different
// batches, exactly one is accepted.
func TestShipments_Race(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	ta.mapSupplier(key, "V-1")
	const n = 6
	batches := make([]string, n)
	for i := range batches {
		batches[i] = ta.verifiedBatch(key, -1.6+float64(i)*0.1)
	}
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = ta.link(key, fmt.Sprint("race-", i), batches[i], "SHP-RACE").Code
		}()
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		switch c {
		case http.StatusAccepted:
			won++
		case http.StatusConflict:
		default:
			t.Errorf("status %d", c)
		}
	}
	if won != 1 {
		t.Errorf("accepted links: %d of %v, want exactly 1", won, codes)
	}
}
