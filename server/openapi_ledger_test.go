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
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// ledgerAndShipments drives POST /shipments/link, GET /shipments, the ledger
// routes and POST /evidence/verify. Production's log is empty (404). Plots
// and batches of a supplier of its own are made first (two VERIFIED, one
// HIGH_RISK, one left ASSESSING). With the job runner stopped: link
// refusals (400 with every problem, 404, 422, 409 for a shipment or a
// batch another link holds, idempotency, scopes) and two accepted links,
// one of which is made to wait past ledger.consensus_timeout. Then the
// runner anchors the first and fails the other (LEDGER_CONSENSUS_TIMEOUT),
// whose batch and shipment are linked again; shipment.linked and job.failed
// reach a subscription of the receiver at base. Every ledger route then
// answers about the log as it stands, checked as a client would: the
// checkpoint against the public key, every entry with its chain, canonical
// form and proof, consistency. Last, evidence: as served it verifies (also
// an older copy, proved in an older checkpoint), each kind of tampering
// fails at its step, malformed requests are 400. It leaves no job queued.
func (c *oaConformance) ledgerAndShipments(recv *apitest.Receiver, base string, rw, ro, live []string) {
	t := c.t
	t.Helper()
	const (
		link        = eudrPrefix + "/shipments/link"
		shipment    = eudrPrefix + "/shipments/{shipmentId}"
		checkpoint  = eudrPrefix + "/ledger/checkpoint"
		publicKey   = eudrPrefix + "/ledger/public-key"
		entry       = eudrPrefix + "/ledger/entries/{index}"
		inclusion   = eudrPrefix + "/ledger/proofs/inclusion"
		consistency = eudrPrefix + "/ledger/proofs/consistency"
		verify      = eudrPrefix + "/evidence/verify"
		evidence    = eudrPrefix + "/polygons/{polygonId}/evidence"
		polygons    = eudrPrefix + "/polygons"
		batches     = eudrPrefix + "/batches"
		batch       = batches + "/{batchId}"
		suppliers   = eudrPrefix + "/suppliers"
		job         = eudrPrefix + "/jobs/{jobId}"
	)
	sandbox := storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}
	with, idem, problems := oaWith, oaIdem, oaProblems
	run := func(what string, jobs ...string) {
		oaRunUntil(t, c.a.jobs, what, func() bool {
			for _, j := range jobs {
				if !c.jobFinished(j) {
					return false
				}
			}
			return true
		})
	}
	hash := func(what, h string) tlog.Hash {
		t.Helper()
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != tlog.HashSize {
			t.Fatalf("%s: %q is not a hex SHA-256 hash", what, h)
		}
		return tlog.Hash(b)
	}
	hashes := func(what string, v any) []tlog.Hash {
		t.Helper()
		var out []tlog.Hash
		for i, h := range oaList(v) {
			out = append(out, hash(fmt.Sprintf("%s[%d]", what, i), fmt.Sprint(h)))
		}
		return out
	}
	num := func(v any) int64 { f, _ := v.(float64); return int64(f) }
	firstDetail := func(an oaAnswer) map[string]any {
		if ds := oaList(an.body["details"]); len(ds) > 0 {
			d, _ := ds[0].(map[string]any)
			return d
		}
		return nil
	}
	get := func(env storage.Environment, target, op string, hdr []string, want int) oaAnswer {
		t.Helper()
		return c.do(oaCall{env: env, method: "GET", target: target, op: op, hdr: hdr, want: want})
	}

	// Production's log is empty: no checkpoint, entry or proof yet; its key
	// is the appliance's one key.
	for _, target := range []struct{ path, op string }{
		{checkpoint, checkpoint}, {eudrPrefix + "/ledger/entries/0", entry}, {inclusion + "?index=0", inclusion},
		{inclusion + "?index=0&treeSize=0", inclusion}, {consistency + "?from=1", consistency},
	} {
		get(storage.Production, target.path, target.op, live, 404)
	}
	prodKey := fmt.Sprint(get(storage.Production, publicKey, publicKey, live, 200).body["verifierKey"])

	// A supplier, three plots (two from Ghana, one from Russia, a
	// high-risk country) and their batches: two VERIFIED, one HIGH_RISK.
	c.do(oaCall{method: "POST", target: suppliers, op: suppliers, hdr: idem(rw, "led-sup"), want: 200,
		body: `{"erpVendorId":"L-1","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6e","name":"Ledger supplier","country":"GH"}`})
	plotOf := func(country string, lon, lat float64) string {
		return `{"type":"Feature","geometry":{"type":"Polygon","coordinates":` + square(lon, lat, 0.001) +
			`},"properties":{"commodity":"cocoa","producerCountry":"` + country + `","supplierId":"L-1"}}`
	}
	an := c.do(oaCall{method: "POST", target: polygons, op: polygons, hdr: with(idem(rw, "led-pol"), "Content-Type", "application/geo+json"),
		body: collection(plotOf("GH", -1.8, 7), plotOf("GH", -1.7, 7), plotOf("RU", 41, 55)), want: 202})
	polJob := fmt.Sprint(an.body["jobId"])
	run("the ledger plots to be screened", polJob)
	plotA, plotB, plotRU := storage.PolygonID(polJob, 0), storage.PolygonID(polJob, 1), storage.PolygonID(polJob, 2)
	early := get("", strings.Replace(evidence, "{polygonId}", plotA, 1), evidence, ro, 200).rec.Body.String()
	batchBody := func(ref string, ids ...string) string {
		return `{"batchReference":"` + ref + `","commodity":"cocoa","hsCode":"1801","supplierId":"L-1","polygonIds":["` +
			strings.Join(ids, `","`) + `"],"quantity":{"netMassKg":500}}`
	}
	register := func(key, body string) (string, string) {
		an := c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, key), body: body, want: 202})
		return fmt.Sprint(an.body["batchId"]), fmt.Sprint(an.body["jobId"])
	}
	b1, j1 := register("led-b1", batchBody("LED-1", plotA))
	b2, j2 := register("led-b2", batchBody("LED-2", plotB))
	b3, j3 := register("led-b3", batchBody("LED-3", plotRU))
	run("the ledger batches to be assessed", j1, j2, j3)
	for id, status := range map[string]string{b1: storage.BatchVerified, b2: storage.BatchVerified, b3: storage.BatchHighRisk} {
		if an := get("", batches+"/"+id, batch, ro, 200); an.body["status"] != status {
			t.Fatalf("batch %s: %v, want %s", id, an.body["status"], status)
		}
	}
	b4, j4 := register("led-b4", batchBody("LED-4", plotA)) // ASSESSING until the runner runs again

	// Refusals, nothing linked: the Idempotency-Key first, then every
	// problem of the body, the unknown batch, the batch not VERIFIED.
	linkBody := func(batchID, shipmentID string) string {
		return `{"batchId":"` + batchID + `","shipmentId":"` + shipmentID + `"}`
	}
	an = c.do(oaCall{method: "POST", target: link, op: link, body: linkBody(b1, "SHP-L1"), hdr: rw, want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("link without Idempotency-Key: detail %q", an.detail())
	}
	an = c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-bad"), want: 400,
		body: `{"batchId":"","shipmentId":"-x","billOfLading":"","containerNumbers":["CSQU3054384","CSQU3054383","CSQU3054383"],` +
			`"portOfEntry":"nlrtm","eta":"soon","color":"red"}`})
	want := map[string]bool{
		apierr.DetailRequired + " at batchId": true, apierr.DetailInvalidValue + " at shipmentId": true, apierr.DetailInvalidValue + " at billOfLading": true,
		apierr.DetailInvalidValue + " at containerNumbers[0]": true, apierr.DetailInvalidValue + " at containerNumbers[2]": true,
		apierr.DetailInvalidValue + " at portOfEntry": true, apierr.DetailInvalidValue + " at eta": true, apierr.DetailUnknownField + " at color": true,
	}
	if got := problems(an); !maps.Equal(got, want) {
		t.Errorf("a link with eight problems: %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-bad"), body: `{"batchId":`, want: 400})
	an = c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-404"), body: linkBody("bat_nope", "SHP-L9"), want: 404})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailInvalidValue + " at batchId": true}) {
		t.Errorf("a link of an unknown batch: %v", slices.Sorted(maps.Keys(got)))
	}
	for _, b := range []string{b3, b4} {
		an = c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-422"), body: linkBody(b, "SHP-L9"), want: 422})
		if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailBatchNotVerified + " at batchId": true}) {
			t.Errorf("a link of a batch not VERIFIED: %v", slices.Sorted(maps.Keys(got)))
		}
	}
	c.do(oaCall{method: "POST", target: link, op: link, hdr: with(idem(rw, "lnk-xml"), "Content-Type", "application/xml"), body: linkBody(b1, "SHP-L1"), want: 415})
	c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(ro, "lnk-ro"), body: linkBody(b1, "SHP-L1"), want: 403})
	c.do(oaCall{method: "POST", target: link, op: link, body: linkBody(b1, "SHP-L1"), want: 401})
	c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-big"), want: 413,
		body: `{"batchId":"` + b1 + `","shipmentId":"SHP-L1","billOfLading":"` + strings.Repeat("x", 5000) + `"}`})
	inflight := httptest.NewRequest("POST", link, strings.NewReader(linkBody(b1, "SHP-L1")))
	err := c.a.db.Update(context.Background(), func(tx *storage.Tx) error {
		return tx.PutIdempotency(sandbox, &storage.IdempotencyRecord{Key: "lnk-busy",
			Fingerprint: fingerprint(inflight, []byte(linkBody(b1, "SHP-L1"))), State: storage.IdemInFlight, Owner: c.a.runID,
			CreatedAt: tx.Now(), ExpiresAt: tx.Now().Add(time.Hour)})
	})
	if err != nil {
		t.Fatal(err)
	}
	c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-busy"), body: linkBody(b1, "SHP-L1"), want: 423})
	get("", eudrPrefix+"/shipments/SHP-L1", shipment, ro, 404)

	// Accepted: PENDING, holding the batch and the shipment, until the
	// runner runs; a replay answers the same.
	full := `{"batchId":"` + b1 + `","shipmentId":"SHP-L1","billOfLading":"MAEU240112345","containerNumbers":["CSQU3054383","MSKU9070323"],` +
		`"portOfEntry":"NLRTM","eta":"2026-12-01T06:00:00Z"}`
	an = c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-1"), body: full, want: 202})
	linkID, linkJob := fmt.Sprint(an.body["linkId"]), fmt.Sprint(an.body["jobId"])
	if an.rec.Header().Get("Location") != eudrPrefix+"/jobs/"+linkJob {
		t.Errorf("link: Location %q", an.rec.Header().Get("Location"))
	}
	an = c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-1"), body: full, want: 202})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["linkId"] != linkID {
		t.Errorf("replayed link: Idempotent-Replayed %q, %v", an.rec.Header().Get("Idempotent-Replayed"), an.body)
	}
	an = c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-1"), body: linkBody(b1, "SHP-L1"), want: 409})
	if an.detail() != apierr.DetailIdempotencyKeyReused {
		t.Errorf("link with a reused key: detail %q", an.detail())
	}
	an = get("", eudrPrefix+"/shipments/SHP-L1", shipment, ro, 200)
	if an.body["status"] != storage.LinkPending || an.body["linkId"] != linkID || an.body["jobId"] != linkJob || an.body["batchId"] != b1 ||
		an.body["transactionHash"] != nil || an.body["linkedAt"] != nil || len(oaList(an.body["containerNumbers"])) != 2 {
		t.Errorf("pending link: %v", oaShort(an.body))
	}
	an = get("", eudrPrefix+"/jobs/"+linkJob, job, ro, 200)
	if an.body["type"] != work.ShipmentLink || an.body["status"] != storage.JobQueued || an.rec.Header().Get("Retry-After") == "" {
		t.Errorf("queued link job: %v", oaShort(an.body))
	}
	an = c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-c1"), body: linkBody(b2, "SHP-L1"), want: 409})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailShipmentAlreadyLinked + " at shipmentId": true}) || !strings.Contains(an.rec.Body.String(), linkID) {
		t.Errorf("a link of a shipment a pending link holds: %s", an.rec.Body)
	}
	an = c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-c2"), body: linkBody(b1, "SHP-L2"), want: 409})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailBatchAlreadyLinked + " at batchId": true}) {
		t.Errorf("a link of a batch a pending link holds: %s", an.rec.Body)
	}

	// A second link, whose job waits past ledger.consensus_timeout (as if
	// the appliance had been down since the request).
	an = c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-late"), body: linkBody(b2, "SHP-LATE"), want: 202})
	lateLink, lateJob := fmt.Sprint(an.body["linkId"]), fmt.Sprint(an.body["jobId"])
	an = get("", eudrPrefix+"/shipments/SHP-LATE", shipment, ro, 200)
	if an.body["billOfLading"] != nil || an.body["eta"] != nil || len(oaList(an.body["containerNumbers"])) != 0 {
		t.Errorf("a link without logistics data: %v", oaShort(an.body))
	}
	err = c.a.db.Update(context.Background(), func(tx *storage.Tx) error {
		j, err := tx.FindJob(sandbox, lateJob)
		if err != nil {
			return err
		}
		j.CreatedAt = j.CreatedAt.Add(-time.Hour)
		return tx.PutJob(sandbox, j)
	})
	if err != nil {
		t.Fatal(err)
	}

	// The runner anchors the first link and fails the late one; their
	// events go to a subscription.
	an = c.do(oaCall{method: "POST", target: eudrPrefix + "/webhooks", op: eudrPrefix + "/webhooks", hdr: idem(rw, "led-wh"), want: 200,
		body: `{"targetUrl":"` + base + `/shipments","eventTypes":["shipment.linked","job.failed"]}`})
	secret := fmt.Sprint(an.body["signingSecret"])
	recv.SetSecret("/shipments", secret)
	before := num(get("", checkpoint, checkpoint, ro, 200).body["treeSize"])
	run("the link jobs to finish", linkJob, lateJob, j4)

	an = get("", checkpoint, checkpoint, ro, 200)
	cpRoot := fmt.Sprint(an.body["rootHash"])
	if num(an.body["treeSize"]) != before+1 {
		t.Errorf("checkpoint after one link: %v entries, want %d", an.body["treeSize"], before+1)
	}
	an = get("", eudrPrefix+"/jobs/"+linkJob, job, ro, 200)
	proofs := oaList(an.body["ledgerProofs"])
	if an.body["status"] != storage.JobCompleted || len(proofs) != 1 || len(oaList(an.body["results"])) != 0 || an.rec.Header().Get("Retry-After") != "" {
		t.Fatalf("completed link job: %v", oaShort(an.body))
	}
	p := proofs[0].(map[string]any)
	txHash := fmt.Sprint(p["transactionHash"])
	if num(p["index"]) != before || num(p["treeSize"]) != before+1 || p["rootHash"] != cpRoot ||
		tlog.CheckRecord(hashes("proof", p["proof"]), before+1, hash("rootHash", cpRoot), before, hash("transactionHash", txHash)) != nil {
		t.Errorf("the link job's proof: %v", p)
	}
	an = get("", eudrPrefix+"/shipments/SHP-L1", shipment, ro, 200)
	if an.body["status"] != storage.LinkLinked || an.body["transactionHash"] != txHash || num(an.body["ledgerIndex"]) != before ||
		num(an.body["treeSize"]) != before+1 || an.body["rootHash"] != cpRoot || an.body["linkedAt"] == nil ||
		an.body["eta"] != "2026-12-01T06:00:00Z" || an.body["portOfEntry"] != "NLRTM" {
		t.Errorf("linked shipment: %v", oaShort(an.body))
	}
	linked := an.body
	an = get("", eudrPrefix+"/jobs/"+lateJob, job, ro, 200)
	jerr, _ := an.body["error"].(map[string]any)
	if an.body["status"] != storage.JobFailed || jerr["code"] != apierr.JobLedgerConsensusTimeout || len(oaList(an.body["ledgerProofs"])) != 0 {
		t.Errorf("late link job: %v", oaShort(an.body))
	}
	if an = get("", eudrPrefix+"/shipments/SHP-LATE", shipment, ro, 200); an.body["status"] != storage.LinkFailed || an.body["linkId"] != lateLink {
		t.Errorf("late link: %v", oaShort(an.body))
	}

	// A FAILED link holds nothing: its batch and shipment link again; a
	// LINKED one holds both.
	an = c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-again"), body: linkBody(b2, "SHP-LATE"), want: 202})
	againLink, againJob := fmt.Sprint(an.body["linkId"]), fmt.Sprint(an.body["jobId"])
	run("the link made again to finish", againJob)
	if an = get("", eudrPrefix+"/shipments/SHP-LATE", shipment, ro, 200); an.body["status"] != storage.LinkLinked || an.body["linkId"] != againLink ||
		num(an.body["ledgerIndex"]) != before+1 {
		t.Errorf("the shipment linked again: %v", oaShort(an.body))
	}
	an = c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-c3"), body: linkBody(b1, "SHP-L3"), want: 409})
	if an.detail() != apierr.DetailBatchAlreadyLinked {
		t.Errorf("a link of a linked batch: %s", an.rec.Body)
	}
	an = c.do(oaCall{method: "POST", target: link, op: link, hdr: idem(rw, "lnk-c4"), body: linkBody(b2, "SHP-L1"), want: 409})
	if an.detail() != apierr.DetailShipmentAlreadyLinked {
		t.Errorf("a link of a linked shipment: %s", an.rec.Body)
	}
	get("", eudrPrefix+"/shipments/SHP-nope", shipment, ro, 404)
	get(storage.Production, eudrPrefix+"/shipments/SHP-L1", shipment, live, 404)
	get("", eudrPrefix+"/shipments/SHP-L1", shipment, nil, 401)

	// The events: shipment.linked as the shipment shows it, for each
	// anchored link; job.failed for the late one.
	oaEventually(t, "the shipment events", func() bool { return len(recv.Requests("/shipments", "")) >= 3 })
	events := map[string]map[string]any{}
	for _, d := range recv.Requests("/shipments", "") {
		typ := d.Header.Get(webhooksig.HeaderEventType)
		if env := c.checkDelivery(typ, d, secret); env != nil {
			data, _ := env["data"].(map[string]any)
			key := typ + " " + fmt.Sprint(data["linkId"])
			if typ == event.JobFailed {
				key = typ + " " + fmt.Sprint(data["jobId"])
			}
			events[key] = data
		}
	}
	wantLinked := map[string]any{"linkId": linkID, "batchId": b1, "shipmentId": "SHP-L1", "transactionHash": txHash,
		"ledgerIndex": float64(before), "treeSize": float64(before + 1), "rootHash": cpRoot}
	if got := events[event.ShipmentLinked+" "+linkID]; !reflect.DeepEqual(got, wantLinked) {
		t.Errorf("shipment.linked: %v, want %v", got, wantLinked)
	}
	for k, v := range wantLinked {
		if linked[k] != v {
			t.Errorf("shipment.linked %s %v, the shipment %v", k, v, linked[k])
		}
	}
	if got := events[event.ShipmentLinked+" "+againLink]; got == nil || got["ledgerIndex"] != float64(before+1) {
		t.Errorf("shipment.linked of the link made again: %v", got)
	}
	if got, _ := events[event.JobFailed+" "+lateJob]["error"].(map[string]any); got["code"] != apierr.JobLedgerConsensusTimeout ||
		events[event.JobFailed+" "+lateJob]["type"] != work.ShipmentLink {
		t.Errorf("job.failed of the late link: %v", events[event.JobFailed+" "+lateJob])
	}

	// The public key and the checkpoint, checked as a client would.
	an = get("", publicKey, publicKey, ro, 200)
	keyName, verifierKey := fmt.Sprint(an.body["keyName"]), fmt.Sprint(an.body["verifierKey"])
	verifier, err := note.NewVerifier(verifierKey)
	if err != nil || verifier.Name() != keyName || verifierKey != prodKey {
		t.Fatalf("public key %v (production's %s): %v", an.body, prodKey, err)
	}
	an = get("", checkpoint, checkpoint, ro, 200)
	size, root := num(an.body["treeSize"]), fmt.Sprint(an.body["rootHash"])
	cp, err := ledger.OpenCheckpoint([]byte(fmt.Sprint(an.body["note"])), verifierKey)
	if err != nil || cp.Origin != keyName+"/"+sandbox.String() || cp.Size != size || anchor.Hex(cp.Root) != root || size != before+2 {
		t.Fatalf("checkpoint %v: %v (note says %s, %d, %s)", an.body, err, cp.Origin, cp.Size, anchor.Hex(cp.Root))
	}
	// Signed when the last link's entry was appended: by the app's clock.
	if at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(an.body["signedAt"])); err != nil || at.After(c.a.now()) {
		t.Errorf("checkpoint signedAt %v, at or before %v: %v", an.body["signedAt"], c.a.now(), err)
	}
	// The jobs of those links, listed without their results.
	an = get("", eudrPrefix+"/jobs?type="+work.ShipmentLink+"&limit=1", eudrPrefix+"/jobs", ro, 200)
	if len(an.list) != 1 || an.rec.Header().Get("X-Next-Cursor") == "" {
		t.Errorf("GET /jobs?type=shipment_link&limit=1: %v, next %q", an.list, an.rec.Header().Get("X-Next-Cursor"))
	}
	get("", eudrPrefix+"/jobs?status=LATE", eudrPrefix+"/jobs", ro, 400)

	// Every entry: its leaf hash, its place in the chain, its canonical
	// form, its schema by type, its proof in the checkpoint.
	prev := ""
	types := map[string]int{}
	for i := range size {
		an = get("", fmt.Sprintf("%s/ledger/entries/%d", eudrPrefix, i), entry, ro, 200)
		data, err := base64.StdEncoding.DecodeString(fmt.Sprint(an.body["data"]))
		leaf := tlog.RecordHash(data)
		if err != nil || an.body["leafHash"] != anchor.Hex(leaf) || num(an.body["index"]) != i {
			t.Errorf("entry %d: %v", i, oaShort(an.body))
		}
		var fields map[string]any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&fields); err != nil {
			t.Fatalf("entry %d: %s: %v", i, data, err)
		}
		if canon, err := ledger.CanonicalJSON(fields); err != nil || !bytes.Equal(canon, data) || fields["prev"] != prev {
			t.Errorf("entry %d: %s; want canonical JSON with prev %q", i, data, prev)
		}
		var v any
		json.Unmarshal(data, &v)
		for _, e := range c.sc.check(map[string]any{"$ref": "#/components/schemas/LedgerEntryData"}, v, fmt.Sprintf("entry %d", i)) {
			t.Error(e)
		}
		types[fmt.Sprint(fields["type"])]++
		prev = anchor.Hex(leaf)
		an = get("", fmt.Sprintf("%s?index=%d", inclusion, i), inclusion, ro, 200)
		if num(an.body["treeSize"]) != size || an.body["rootHash"] != root || an.body["leafHash"] != anchor.Hex(leaf) ||
			tlog.CheckRecord(hashes("proof", an.body["proof"]), size, hash("root", root), i, leaf) != nil {
			t.Errorf("inclusion proof of entry %d: %v", i, oaShort(an.body))
		}
		if i == before && (anchor.Hex(leaf) != txHash || fields["linkId"] != linkID || fields["batchId"] != b1 || fields["billOfLading"] != "MAEU240112345" ||
			fields["eta"] != "2026-12-01T06:00:00Z" || oaShort(fields["containerNumbers"]) != `["CSQU3054383","MSKU9070323"]`) {
			t.Errorf("entry %d, of link %s: %s", i, linkID, data)
		}
	}
	if types[anchor.EntryShipmentLinked] != 2 || types[anchor.EntryPolygonScreened] != int(size)-2 {
		t.Errorf("entries by type: %v; want 2 %s, the others %s", types, anchor.EntryShipmentLinked, anchor.EntryPolygonScreened)
	}

	// The polygon job's proofs, in the same checkpoint.
	an = get("", eudrPrefix+"/jobs/"+polJob, job, ro, 200)
	if proofs := oaList(an.body["ledgerProofs"]); len(proofs) != 3 {
		t.Errorf("the plots' job: %d ledger proofs, want 3", len(proofs))
	} else {
		for _, pv := range proofs {
			p := pv.(map[string]any)
			if num(p["treeSize"]) != size || p["rootHash"] != root || tlog.CheckRecord(hashes("proof", p["proof"]), size, hash("root", root),
				num(p["index"]), hash("transactionHash", fmt.Sprint(p["transactionHash"]))) != nil {
				t.Errorf("the plots' job: proof %v", p)
			}
		}
	}

	// A page of the job's results: the proofs of its own entries, the
	// counts of all, the next page's path; that page, and a list page's
	// Link; a bad limit and cursor, both listed; an unknown job.
	results := job + "/results"
	an = get("", eudrPrefix+"/jobs/"+polJob+"?limit=2", job, ro, 200)
	nextResults := eudrPrefix + "/jobs/" + polJob + "/results?cursor=" + polJob + "_1&limit=2"
	if counts, _ := an.body["resultCounts"].(map[string]any); len(oaList(an.body["results"])) != 2 || len(oaList(an.body["ledgerProofs"])) != 2 ||
		an.body["nextResults"] != nextResults || num(counts["total"]) != 3 {
		t.Errorf("the plots' job, 2 a page: %s; want 2 results and proofs of 3, next %s", an.rec.Body, nextResults)
	}
	an = get("", nextResults, results, ro, 200)
	var item map[string]any
	if len(an.list) > 0 {
		item, _ = an.list[0].(map[string]any)
	}
	if len(an.list) != 1 || num(item["featureIndex"]) != 2 || an.rec.Header().Get("Link") != "" {
		t.Errorf("the plots' job's second page: %s (Link %q); want feature 2 alone", an.rec.Body, an.rec.Header().Get("Link"))
	}
	an = get("", eudrPrefix+"/jobs/"+polJob+"/results?limit=1", results, ro, 200)
	if len(an.list) != 1 || an.rec.Header().Get("X-Next-Cursor") != polJob+"_0" ||
		an.rec.Header().Get("Link") != "<"+eudrPrefix+"/jobs/"+polJob+"/results?cursor="+polJob+"_0&limit=1>; rel=\"next\"" {
		t.Errorf("the plots' job's results, 1 a page: %s (Link %q)", an.rec.Body, an.rec.Header().Get("Link"))
	}
	an = get("", eudrPrefix+"/jobs/"+polJob+"/results?limit=0&cursor=nope", results, ro, 400)
	if got := problems(an); len(got) != 2 || !got["INVALID_VALUE at query.limit"] || !got["INVALID_VALUE at query.cursor"] {
		t.Errorf("bad limit and cursor: %v", got)
	}
	get("", eudrPrefix+"/jobs/"+polJob+"?limit=1001", job, ro, 400)
	get("", eudrPrefix+"/jobs/job_nope/results", results, ro, 404)

	// Proofs in an older tree, consistency between two trees, refusals.
	an = get("", inclusion+"?index=1&treeSize=2", inclusion, ro, 200)
	root2 := fmt.Sprint(an.body["rootHash"])
	if num(an.body["treeSize"]) != 2 || root2 == root {
		t.Errorf("inclusion in the tree of 2: %v", oaShort(an.body))
	}
	an = get("", consistency+"?from=2", consistency, ro, 200)
	if num(an.body["from"]) != 2 || num(an.body["to"]) != size ||
		tlog.CheckTree(hashes("proof", an.body["proof"]), size, hash("root", root), 2, hash("root2", root2)) != nil {
		t.Errorf("consistency 2 -> %d: %v", size, oaShort(an.body))
	}
	an = get("", fmt.Sprintf("%s?from=%d&to=%d", consistency, size, size), consistency, ro, 200)
	if len(oaList(an.body["proof"])) != 0 {
		t.Errorf("consistency of a tree with itself: %v", oaShort(an.body))
	}
	for target, want := range map[string]map[string]bool{
		inclusion + "?treeSize=1":          {apierr.DetailRequired + " at query.index": true},
		inclusion + "?index=x&treeSize=-1": {apierr.DetailInvalidValue + " at query.index": true, apierr.DetailInvalidValue + " at query.treeSize": true},
		consistency:                        {apierr.DetailRequired + " at query.from": true},
		consistency + "?from=a&to=1.5":     {apierr.DetailInvalidValue + " at query.from": true, apierr.DetailInvalidValue + " at query.to": true},
	} {
		op, _, _ := strings.Cut(target, "?")
		if got := problems(get("", target, op, ro, 400)); !maps.Equal(got, want) {
			t.Errorf("%s: %v, want %v", target, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
	}
	for _, target := range []string{"x", "-1", "1e3"} {
		if got := problems(get("", eudrPrefix+"/ledger/entries/"+target, entry, ro, 400)); !got[apierr.DetailInvalidValue+" at path.index"] {
			t.Errorf("entry %s: %v", target, slices.Sorted(maps.Keys(got)))
		}
	}
	get("", fmt.Sprintf("%s/ledger/entries/%d", eudrPrefix, size), entry, ro, 404)
	for _, q := range []string{fmt.Sprintf("?index=%d", size), fmt.Sprintf("?index=0&treeSize=%d", size+1), "?index=3&treeSize=3"} {
		get("", inclusion+q, inclusion, ro, 404)
	}
	for _, q := range []string{"?from=0", fmt.Sprintf("?from=%d", size+1), fmt.Sprintf("?from=1&to=%d", size+1)} {
		get("", consistency+q, consistency, ro, 404)
	}
	for _, o := range []struct{ target, op string }{
		{checkpoint, checkpoint}, {publicKey, publicKey}, {inclusion + "?index=0", inclusion}, {consistency + "?from=1", consistency},
		{eudrPrefix + "/ledger/entries/0", entry},
	} {
		get("", o.target, o.op, nil, 401)
	}

	// Evidence: as served, the document is byte for byte the canonical
	// one the entry hashes, with the ledger member after it.
	evidenceOf := func(id string) oaAnswer {
		return get("", strings.Replace(evidence, "{polygonId}", id, 1), evidence, ro, 200)
	}
	an = evidenceOf(plotA)
	served := an.rec.Body.String()
	var members map[string]json.RawMessage
	if err := json.Unmarshal([]byte(served), &members); err != nil {
		t.Fatal(err)
	}
	var lm struct {
		Index int64  `json:"index"`
		Data  string `json:"data"`
	}
	json.Unmarshal(members["ledger"], &lm)
	delete(members, "ledger")
	canon, err := ledger.CanonicalJSON(members)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(canon)
	data, _ := base64.StdEncoding.DecodeString(lm.Data)
	var screenedEntry map[string]any
	json.Unmarshal(data, &screenedEntry)
	if !strings.HasPrefix(served, string(canon[:len(canon)-1])+`,"ledger":{`) || screenedEntry["evidenceSha256"] != hex.EncodeToString(sum[:]) ||
		screenedEntry["polygonId"] != plotA || screenedEntry["type"] != anchor.EntryPolygonScreened {
		t.Errorf("evidence of %s: %s; entry %s", plotA, served, data)
	}
	post := func(env storage.Environment, body string, hdr []string, want int) oaAnswer {
		t.Helper()
		return c.do(oaCall{env: env, method: "POST", target: verify, op: verify, body: body, hdr: hdr, want: want})
	}
	an = post("", served, rw, 200)
	if an.body["valid"] != true || num(an.body["ledgerIndex"]) != lm.Index || num(an.body["treeSize"]) != size ||
		an.body["evidenceSha256"] != hex.EncodeToString(sum[:]) || !reflect.DeepEqual(an.body["steps"], oaAnys(polygon.StepDocument,
		polygon.StepEntry, polygon.StepInclusion, polygon.StepCheckpoint, polygon.StepLog)) {
		t.Errorf("verify: %v", oaShort(an.body))
	}
	// Re-encoded with its members in another order; and a copy read
	// before the links, proved in an older checkpoint.
	var anyDoc map[string]any
	json.Unmarshal([]byte(served), &anyDoc)
	post("", string(mustJSON(t, anyDoc)), rw, 200)
	if an = post("", early, rw, 200); num(an.body["treeSize"]) >= size {
		t.Errorf("verify evidence read earlier: %v; want its older tree", oaShort(an.body))
	}

	// Each kind of tampering fails at its step, naming the member.
	otherKey, _, _ := note.GenerateKey(strings.NewReader(strings.Repeat("x", 64)), keyName)
	otherSigner, _ := note.NewSigner(otherKey)
	for _, tc := range []struct {
		name, step, field string
		edit              func(doc, l map[string]any)
	}{
		{"verdict changed", polygon.StepDocument, "body", func(doc, _ map[string]any) { doc["eudrStatus"] = geo.StatusHighRisk }},
		{"member added", polygon.StepDocument, "body", func(doc, _ map[string]any) { doc["note"] = "ok" }},
		{"data not base64", polygon.StepEntry, "ledger.data", func(_, l map[string]any) { l["data"] = "!!" }},
		{"transaction hash changed", polygon.StepEntry, "ledger.transactionHash", func(_, l map[string]any) { l["transactionHash"] = strings.Repeat("0", 64) }},
		{"root not hex", polygon.StepInclusion, "ledger.rootHash", func(_, l map[string]any) { l["rootHash"] = "root" }},
		{"proof not hex", polygon.StepInclusion, "ledger.proof[0]", func(_, l map[string]any) { oaList(l["proof"])[0] = "x" }},
		{"proof changed", polygon.StepInclusion, "ledger.proof", func(_, l map[string]any) { oaList(l["proof"])[0] = strings.Repeat("0", 64) }},
		{"checkpoint signed by another key", polygon.StepCheckpoint, "ledger.checkpoint", func(_, l map[string]any) {
			body, _, _ := strings.Cut(fmt.Sprint(l["checkpoint"]), "\n\n")
			msg, _ := note.Sign(&note.Note{Text: body + "\n"}, otherSigner)
			l["checkpoint"] = string(msg)
		}},
	} {
		var doc map[string]any
		json.Unmarshal([]byte(served), &doc)
		tc.edit(doc, doc["ledger"].(map[string]any))
		an = post("", string(mustJSON(t, doc)), rw, 422)
		if d := firstDetail(an); len(oaList(an.body["details"])) != 1 || d["code"] != apierr.DetailProofNotReproducible || d["field"] != tc.field ||
			!strings.HasPrefix(fmt.Sprint(d["issue"]), tc.step+": ") {
			t.Errorf("verify, %s: %s; want %s at %s", tc.name, an.rec.Body, tc.step, tc.field)
		}
	}
	// Evidence of the sandbox is not of production's log.
	an = post(storage.Production, served, live, 422)
	if d := firstDetail(an); d["field"] != "ledger.checkpoint" || !strings.HasPrefix(fmt.Sprint(d["issue"]), polygon.StepCheckpoint+": ") {
		t.Errorf("sandbox evidence verified on production: %s", an.rec.Body)
	}

	// A plot screened before the ledger existed has no ledger member, and
	// nothing to verify.
	err = c.a.db.Update(context.Background(), func(tx *storage.Tx) error {
		p, err := tx.FindPolygon(sandbox, plotRU)
		if err != nil {
			return err
		}
		d, err := tx.FindPolygonDetail(sandbox, plotRU)
		if err != nil {
			return err
		}
		p.LedgerIndex = nil
		return tx.PutPolygon(sandbox, p, d)
	})
	if err != nil {
		t.Fatal(err)
	}
	an = evidenceOf(plotRU)
	if v, ok := an.body["ledger"]; !ok || v != nil {
		t.Errorf("evidence of a plot screened before the ledger: %s", an.rec.Body)
	}
	for body, want := range map[string]string{
		an.rec.Body.String():       apierr.DetailRequired + " at ledger",
		`{"polygonId":"x"}`:        apierr.DetailRequired + " at ledger",
		`{"ledger":{"nope":1}}`:    apierr.DetailInvalidValue + " at ledger",
		`{"ledger":{"index":"1"}}`: apierr.DetailInvalidValue + " at ledger",
		`[]`:                       apierr.DetailInvalidValue + " at body",
		`{"ledger":`:               apierr.DetailMalformedJSON + " at body",
		``:                         apierr.DetailMalformedJSON + " at body",
	} {
		if got := problems(post("", body, rw, 400)); !maps.Equal(got, map[string]bool{want: true}) {
			t.Errorf("verify %.40q: %v, want %s", body, slices.Sorted(maps.Keys(got)), want)
		}
	}
	post("", served, with(rw, "Content-Type", "text/plain"), 415)
	// Checking changes nothing: a read-only key (an auditor's) may.
	if an = post("", served, ro, 200); an.body["valid"] != true {
		t.Errorf("verify with a read-only key: %s", an.rec.Body)
	}
	post("", served, nil, 401)
	post("", `{"ledger":null,"pad":"`+strings.Repeat("x", 5000)+`"}`, rw, 413)
}

// TestOpenAPI_LedgerExamples checks that the document's ledger examples
// are one consistent log, as a client would check real answers: the
// checkpoint against the public key, the evidence's ledger member (its
// document hash, entry, proof and checkpoint), the entry, the inclusion
// and consistency proofs, the job's proofs and the shipment and its event.
func TestOpenAPI_LedgerExamples(t *testing.T) {
	doc := loadOpenAPI(t)
	example := func(method, path, status string) map[string]any {
		t.Helper()
		op := oaFindOperation(t, doc, method, path)
		v, ok := oaPointer(op, "/responses/"+status+"/content/application~1json/example")
		if !ok {
			t.Fatalf("%s %s: no example of %s", method, path, status)
		}
		return v.(map[string]any)
	}
	str := func(v any) string { return fmt.Sprint(v) }
	num := func(v any) int64 { f, _ := v.(float64); return int64(f) }
	hash := func(v any) tlog.Hash {
		b, err := hex.DecodeString(str(v))
		if err != nil || len(b) != tlog.HashSize {
			t.Fatalf("%v is not a hex SHA-256 hash", v)
		}
		return tlog.Hash(b)
	}
	hashes := func(v any) []tlog.Hash {
		var out []tlog.Hash
		for _, h := range oaList(v) {
			out = append(out, hash(h))
		}
		return out
	}

	pk := example("GET", eudrPrefix+"/ledger/public-key", "200")
	cpEx := example("GET", eudrPrefix+"/ledger/checkpoint", "200")
	sandbox := storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}
	cp, err := ledger.OpenCheckpoint([]byte(str(cpEx["note"])), str(pk["verifierKey"]))
	if err != nil || cp.Origin != str(pk["keyName"])+"/"+sandbox.String() ||
		cp.Size != num(cpEx["treeSize"]) || anchor.Hex(cp.Root) != cpEx["rootHash"] {
		t.Fatalf("checkpoint example %v: %v", cpEx, err)
	}
	size, root := cp.Size, cp.Root

	// The evidence, checked offline as PolygonEvidenceLedger says.
	ev := example("GET", eudrPrefix+"/polygons/{polygonId}/evidence", "200")
	l := ev["ledger"].(map[string]any)
	body := map[string]any{}
	for k, v := range ev {
		if k != "ledger" {
			body[k] = v
		}
	}
	canon, _ := ledger.CanonicalJSON(body)
	sum := sha256.Sum256(canon)
	data, _ := base64.StdEncoding.DecodeString(str(l["data"]))
	var e map[string]any
	json.Unmarshal(data, &e)
	leaf0 := tlog.RecordHash(data)
	if e["evidenceSha256"] != hex.EncodeToString(sum[:]) || anchor.Hex(leaf0) != l["transactionHash"] || e["polygonId"] != ev["polygonId"] ||
		tlog.CheckRecord(hashes(l["proof"]), num(l["treeSize"]), hash(l["rootHash"]), num(l["index"]), leaf0) != nil ||
		l["checkpoint"] != cpEx["note"] || num(l["treeSize"]) != size {
		t.Errorf("the evidence example does not verify: entry %s", data)
	}
	verifyOp := oaFindOperation(t, doc, "POST", eudrPrefix+"/evidence/verify")
	if req, _ := oaPointer(verifyOp, "/requestBody/content/application~1json/example"); !reflect.DeepEqual(req, ev) {
		t.Error("the evidence/verify request example is not the evidence example")
	}
	res := example("POST", eudrPrefix+"/evidence/verify", "200")
	if res["evidenceSha256"] != hex.EncodeToString(sum[:]) || res["transactionHash"] != l["transactionHash"] || res["rootHash"] != l["rootHash"] ||
		res["treeSize"] != l["treeSize"] || res["ledgerIndex"] != l["index"] {
		t.Errorf("the evidence/verify answer %v is not of the evidence example", res)
	}

	// The inclusion proof and the polygon job's proofs.
	inc := example("GET", eudrPrefix+"/ledger/proofs/inclusion", "200")
	if inc["leafHash"] != l["transactionHash"] || tlog.CheckRecord(hashes(inc["proof"]), num(inc["treeSize"]), root, num(inc["index"]), hash(inc["leafHash"])) != nil {
		t.Errorf("the inclusion example does not check: %v", inc)
	}
	leaves := map[int64]tlog.Hash{}
	for _, pv := range oaList(example("GET", eudrPrefix+"/jobs/{jobId}", "200")["ledgerProofs"]) {
		p := pv.(map[string]any)
		leaves[num(p["index"])] = hash(p["transactionHash"])
		if num(p["treeSize"]) != size || tlog.CheckRecord(hashes(p["proof"]), size, hash(p["rootHash"]), num(p["index"]), hash(p["transactionHash"])) != nil {
			t.Errorf("the job example's proof %v does not check", p)
		}
	}

	// The last entry is the shipment's link, as the shipment and its event
	// show it.
	en := example("GET", eudrPrefix+"/ledger/entries/{index}", "200")
	data, _ = base64.StdEncoding.DecodeString(str(en["data"]))
	json.Unmarshal(data, &e)
	leaves[num(en["index"])] = tlog.RecordHash(data)
	sh := example("GET", eudrPrefix+"/shipments/{shipmentId}", "200")
	ev2, _ := oaPointer(doc, "/components/pathItems/ShipmentLinkedEvent/post/requestBody/content/application~1json/example/data")
	event := ev2.(map[string]any)
	if anchor.Hex(leaves[num(en["index"])]) != en["leafHash"] || e["type"] != anchor.EntryShipmentLinked || num(en["index"]) != size-1 {
		t.Errorf("the entry example: %v (%s)", en, data)
	}
	for _, k := range []string{"linkId", "batchId", "shipmentId", "transactionHash", "ledgerIndex", "treeSize", "rootHash"} {
		if sh[k] != event[k] {
			t.Errorf("%s: the shipment example has %v, the shipment.linked example %v", k, sh[k], event[k])
		}
	}
	if sh["transactionHash"] != en["leafHash"] || sh["ledgerIndex"] != en["index"] || num(sh["treeSize"]) != size || sh["rootHash"] != anchor.Hex(root) ||
		e["linkId"] != sh["linkId"] || e["shipmentId"] != sh["shipmentId"] || !reflect.DeepEqual(e["containerNumbers"], sh["containerNumbers"]) {
		t.Errorf("the shipment example %v is not the entry %s", sh, data)
	}

	// Consistency: the tree before the link (its root from the leaves
	// the other examples show) is a prefix of the checkpoint's.
	cons := example("GET", eudrPrefix+"/ledger/proofs/consistency", "200")
	from := num(cons["from"])
	var rootFrom tlog.Hash
	if len(leaves) == int(size) {
		var hs []tlog.Hash
		for i := range from {
			hs = append(hs, leaves[i])
		}
		rootFrom = oaMerkleRoot(hs)
	}
	if num(cons["to"]) != size || tlog.CheckTree(hashes(cons["proof"]), size, root, from, rootFrom) != nil {
		t.Errorf("the consistency example does not check: %v (leaves known: %d)", cons, len(leaves))
	}
}

// oaMerkleRoot is the RFC 6962 root of a list of leaf hashes.
func oaMerkleRoot(leaves []tlog.Hash) tlog.Hash {
	if len(leaves) == 1 {
		return leaves[0]
	}
	k := 1
	for k*2 < len(leaves) {
		k *= 2
	}
	return tlog.NodeHash(oaMerkleRoot(leaves[:k]), oaMerkleRoot(leaves[k:]))
}
