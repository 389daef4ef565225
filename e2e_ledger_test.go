package main_test

// End-to-end tests of batches, shipment links, evidence and the ledger
// (docs/screening.md, docs/batches.md, docs/ledger.md) against the real
// binary: the whole flow from plots to a shipment.linked delivery whose
// hashes and proofs a client recomputes on its own (crypto/sha256,
// sumdb/tlog, sumdb/note). This file also holds the views and helpers the
// ledger, shipment and evidence tests share.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/server/apitest"
)

const (
	ledBatchJobType = "batch_risk_assessment"
	ledLinkJobType  = "shipment_link"
	// ledSandboxLog is the sandbox log of organisation default: the name
	// of its bucket under "ledger" in the store.
	ledSandboxLog = "default/sandbox"
	// ledWait bounds every wait for a job or a delivery.
	ledWait = 20 * time.Second
)

var (
	ledBatchIDPattern = regexp.MustCompile(`^bat_[0-9A-HJKMNP-TV-Z]{26}$`)
	ledLinkIDPattern  = regexp.MustCompile(`^lnk_[0-9A-HJKMNP-TV-Z]{26}$`)
	ledHexPattern     = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// --- views ---

// ledProof is an item of a job's ledgerProofs.
type ledProof struct {
	Index           int64    `json:"index"`
	TransactionHash string   `json:"transactionHash"`
	TreeSize        int64    `json:"treeSize"`
	RootHash        string   `json:"rootHash"`
	Proof           []string `json:"proof"`
}

// ledJob is GET /jobs/{jobId} of any job type.
type ledJob struct {
	JobID    string `json:"jobId"`
	Type     string `json:"type"`
	Status   string `json:"status"`
	Progress struct {
		Total     int `json:"total"`
		Processed int `json:"processed"`
		Succeeded int `json:"succeeded"`
		Failed    int `json:"failed"`
		Percent   int `json:"percent"`
	} `json:"progress"`
	Results      json.RawMessage `json:"results"`
	ResultCounts jobResultCounts `json:"resultCounts"`
	NextResults  *string         `json:"nextResults"`
	LedgerProofs []ledProof      `json:"ledgerProofs"`
	Error        *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	CreatedAt     string          `json:"createdAt"`
	StartedAt     *string         `json:"startedAt"`
	CompletedAt   *string         `json:"completedAt"`
	Attempts      int             `json:"attempts"`
	LastAttempt   json.RawMessage `json:"lastAttempt"`
	NextAttemptAt *string         `json:"nextAttemptAt"`
}

// ledBatch is GET /batches/{batchId} (the members these tests read).
type ledBatch struct {
	BatchID    string   `json:"batchId"`
	JobID      string   `json:"jobId"`
	SupplierID string   `json:"supplierId"`
	PolygonIDs []string `json:"polygonIds"`
	Status     string   `json:"status"`
	RiskScore  *int     `json:"riskScore"`
	RiskLevel  *string  `json:"riskLevel"`
}

// ledShipment is GET /shipments/{shipmentId}.
type ledShipment struct {
	LinkID           string   `json:"linkId"`
	JobID            string   `json:"jobId"`
	BatchID          string   `json:"batchId"`
	ShipmentID       string   `json:"shipmentId"`
	BillOfLading     *string  `json:"billOfLading"`
	ContainerNumbers []string `json:"containerNumbers"`
	PortOfEntry      *string  `json:"portOfEntry"`
	ETA              *string  `json:"eta"`
	Status           string   `json:"status"`
	TransactionHash  *string  `json:"transactionHash"`
	LedgerIndex      *int64   `json:"ledgerIndex"`
	TreeSize         *int64   `json:"treeSize"`
	RootHash         *string  `json:"rootHash"`
	CreatedAt        string   `json:"createdAt"`
	LinkedAt         *string  `json:"linkedAt"`
}

// ledLinked is the data of shipment.linked (docs/ledger.md).
type ledLinked struct {
	LinkID          string `json:"linkId"`
	BatchID         string `json:"batchId"`
	ShipmentID      string `json:"shipmentId"`
	TransactionHash string `json:"transactionHash"`
	LedgerIndex     int64  `json:"ledgerIndex"`
	TreeSize        int64  `json:"treeSize"`
	RootHash        string `json:"rootHash"`
}

type ledCheckpoint struct {
	TreeSize int64  `json:"treeSize"`
	RootHash string `json:"rootHash"`
	Note     string `json:"note"`
	SignedAt string `json:"signedAt"`
}

type ledEntry struct {
	Index    int64  `json:"index"`
	LeafHash string `json:"leafHash"`
	Data     string `json:"data"`
}

type ledInclusion struct {
	Index    int64    `json:"index"`
	TreeSize int64    `json:"treeSize"`
	LeafHash string   `json:"leafHash"`
	RootHash string   `json:"rootHash"`
	Proof    []string `json:"proof"`
}

type ledConsistency struct {
	From  int64    `json:"from"`
	To    int64    `json:"to"`
	Proof []string `json:"proof"`
}

// --- hashing, as any client would do it ---

// ledLeaf is the RFC 6962 leaf hash SHA-256(0x00 || data), in hex.
func ledLeaf(data []byte) string {
	h := sha256.New()
	h.Write([]byte{0})
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// ledHash decodes a lowercase hex SHA-256 hash.
func ledHash(t testing.TB, s string) tlog.Hash {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != tlog.HashSize || !ledHexPattern.MatchString(s) {
		t.Fatalf("%q is not a lowercase hex SHA-256 hash", s)
	}
	return tlog.Hash(b)
}

func ledHashes(t testing.TB, hs []string) []tlog.Hash {
	t.Helper()
	out := make([]tlog.Hash, len(hs))
	for i, h := range hs {
		out[i] = ledHash(t, h)
	}
	return out
}

// ledCanonical is data's JSON with keys sorted, no whitespace and no HTML
// escaping, numbers as written: the canonical form of a ledger entry
// (docs/ledger.md).
func ledCanonical(t testing.TB, data []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, data)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// --- API helpers ---

// ledGet GETs path under the eudr API with key and wants a 200.
func ledGet(t testing.TB, base, key, path string, v any) *apitest.Response {
	t.Helper()
	r := apitest.Do(t, "GET", base+eudrAPI+path, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	if v != nil {
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%s: %v: %s", r.Request, err, r.Body)
		}
	}
	return r
}

// ledPlot is a small cocoa plot around lon, lat from country, supplied by
// supplier: COMPLIANT in the sandbox away from the fixture boxes.
func ledPlot(lon, lat float64, country, supplier string) string {
	return polFeature(polSquare(lon, lat, 0.001), map[string]any{
		"commodity": "cocoa", "producerCountry": country, "supplierId": supplier})
}

// ledScreen posts features as one polygon job, waits for it and returns
// the job and its polygon IDs in feature order, checking each status.
func ledScreen(t testing.TB, base, key string, want []string, features ...string) (polJob, []string) {
	t.Helper()
	jobID := polMustPost(t, base, key, polCollection(features...), len(features))
	j := polWaitJob(t, base, key, jobID, ledWait)
	ids := make([]string, len(features))
	for i, r := range polAllResults(t, base, key, j) {
		ids[i] = r.PolygonID
		if r.EUDRStatus != want[i] {
			t.Fatalf("polygon %d (%s) is %s (%s), want %s", i, r.PolygonID, r.EUDRStatus, polStr(r.FailureReason), want[i])
		}
	}
	if want := min(len(features), polPage); len(j.LedgerProofs) != want {
		t.Errorf("polygon job %s: %d ledgerProofs, want one per feature on its page (%d)", jobID, len(j.LedgerProofs), want)
	}
	return j, ids
}

// ledBatchBody is a POST /batches body: cocoa beans from supplier.
func ledBatchBody(ref, supplier string, ids ...string) map[string]any {
	return map[string]any{
		"batchReference": ref, "commodity": "cocoa", "hsCode": "18010000", "supplierId": supplier,
		"polygonIds": ids, "quantity": map[string]any{"netMassKg": 12500.5},
		"harvestStart": "2026-03-01", "harvestEnd": "2026-05-31",
	}
}

// ledPostBatch posts a batch and returns the answer.
func ledPostBatch(t testing.TB, base, key string, body any) *apitest.Response {
	t.Helper()
	return apitest.Do(t, "POST", base+eudrAPI+"/batches", idem(key), body)
}

// ledWaitJob polls a job until it is finished, checking its shape and type
// on every answer, and returns it.
func ledWaitJob(t testing.TB, base, key, id, typ string) ledJob {
	t.Helper()
	var j ledJob
	waitUntil(t, ledWait, typ+" job "+id+" to finish", func() bool {
		r := apitest.Do(t, "GET", jobURL(base, id), apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		j = ledJob{}
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			t.Fatalf("%s: %v: %s", r.Request, err, r.Body)
		}
		if j.JobID != id || j.Type != typ || j.LedgerProofs == nil {
			t.Fatalf("%s: jobId %q type %q ledgerProofs %v, want %s %s and an array: %s", r.Request, j.JobID, j.Type, j.LedgerProofs, id, typ, r.Body)
		}
		finished := j.Status == "COMPLETED" || j.Status == "FAILED"
		if ra := r.Header.Get("Retry-After"); finished != (ra == "") {
			t.Errorf("%s: %s with Retry-After %q", r.Request, j.Status, ra)
		}
		return finished
	})
	return j
}

// ledAccepted checks a 202 whose body is exactly the members named (each a
// string) and whose Location names the job; it returns the body.
func ledAccepted(t testing.TB, r *apitest.Response, members ...string) map[string]string {
	t.Helper()
	r.WantStatus(t, http.StatusAccepted)
	var raw map[string]any
	r.Decode(t, &raw)
	out := map[string]string{}
	for k, v := range raw {
		s, ok := v.(string)
		if !ok || !slices.Contains(members, k) {
			t.Fatalf("%s: 202 body %s, want exactly the strings %v", r.Request, r.Body, members)
		}
		out[k] = s
	}
	if len(out) != len(members) || !jobIDPattern.MatchString(out["jobId"]) {
		t.Fatalf("%s: 202 body %s, want exactly %v with a jobId", r.Request, r.Body, members)
	}
	if loc := r.Header.Get("Location"); loc != eudrAPI+"/jobs/"+out["jobId"] {
		t.Errorf("%s: Location %q, want %s", r.Request, loc, eudrAPI+"/jobs/"+out["jobId"])
	}
	return out
}

// ledAssess registers a batch, waits for its risk assessment and returns
// the batch as GET /batches/{batchId} then answers it.
func ledAssess(t testing.TB, base, key string, body any) ledBatch {
	t.Helper()
	acc := ledAccepted(t, ledPostBatch(t, base, key, body), "batchId", "jobId")
	if !ledBatchIDPattern.MatchString(acc["batchId"]) {
		t.Errorf("batchId %q", acc["batchId"])
	}
	if j := ledWaitJob(t, base, key, acc["jobId"], ledBatchJobType); j.Status != "COMPLETED" {
		t.Fatalf("batch job %s: %s %+v", j.JobID, j.Status, j.Error)
	}
	var b ledBatch
	r := apitest.Do(t, "GET", base+eudrAPI+"/batches/"+acc["batchId"], apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	r.Decode(t, &b)
	if b.BatchID != acc["batchId"] || b.JobID != acc["jobId"] {
		t.Fatalf("%s: %s", r.Request, r.Body)
	}
	return b
}

// ledVerified registers a batch that must end VERIFIED and returns its ID.
func ledVerified(t testing.TB, base, key, supplier string, ids ...string) string {
	t.Helper()
	b := ledAssess(t, base, key, ledBatchBody("LOT-"+apitest.RandHex(3), supplier, ids...))
	if b.Status != "VERIFIED" {
		t.Fatalf("batch %s over %v is %s (score %v), want VERIFIED", b.BatchID, ids, b.Status, b.RiskScore)
	}
	return b.BatchID
}

// ledLinkBody is a full POST /shipments/link body.
func ledLinkBody(batchID, shipmentID string) map[string]any {
	return map[string]any{"batchId": batchID, "shipmentId": shipmentID, "billOfLading": "BL-" + shipmentID,
		"containerNumbers": []string{"CSQU3054383", "MSKU9070323"}, "portOfEntry": "NLRTM", "eta": "2026-12-01"}
}

func ledLinkURL(base string) string { return base + eudrAPI + "/shipments/link" }

// ledLink posts a link with a fresh Idempotency-Key.
func ledLink(t testing.TB, base, key, batchID, shipmentID string) *apitest.Response {
	t.Helper()
	return apitest.Do(t, "POST", ledLinkURL(base), idem(key), ledLinkBody(batchID, shipmentID))
}

// ledWantRefusal checks an error's status, top-level code and its one
// detail (code and field), and returns the detail's issue.
func ledWantRefusal(t testing.TB, r *apitest.Response, status int, code, detail, field string) string {
	t.Helper()
	e := apitest.WantError(t, r, status, code, detail)
	if len(e.Details) != 1 {
		return ""
	}
	if e.Details[0].Field != field {
		t.Errorf("%s: detail at %q, want %q: %s", r.Request, e.Details[0].Field, field, r.Body)
	}
	return e.Details[0].Issue
}

// ledFlowResult is what ledFlow did.
type ledFlowResult struct {
	polygonJob polJob
	polygonIDs []string
	batchID    string
	shipmentID string
	linkID     string
	linkJob    ledJob
}

// ledFlow maps supplier V-LED, screens three compliant plots, registers a
// batch of them that ends VERIFIED and links it to shipment SHP-LED-1, and
// waits for the link's job to complete.
func ledFlow(t testing.TB, p *serverProc, key string) ledFlowResult {
	t.Helper()
	base := p.SandboxURL
	mustCreateSupplier(t, base, key, "V-LED", "Kumasi Cocoa Coop")
	var f ledFlowResult
	f.polygonJob, f.polygonIDs = ledScreen(t, base, key, []string{"COMPLIANT", "COMPLIANT", "COMPLIANT"},
		ledPlot(-1.61, 6.69, "GH", "V-LED"), ledPlot(-1.62, 6.69, "GH", "V-LED"), ledPlot(-1.63, 6.69, "GH", "V-LED"))
	f.batchID = ledVerified(t, base, key, "V-LED", f.polygonIDs...)
	f.shipmentID = "SHP-LED-1"
	acc := ledAccepted(t, ledLink(t, base, key, f.batchID, f.shipmentID), "linkId", "jobId")
	f.linkID = acc["linkId"]
	if !ledLinkIDPattern.MatchString(f.linkID) {
		t.Errorf("linkId %q", f.linkID)
	}
	f.linkJob = ledWaitJob(t, base, key, acc["jobId"], ledLinkJobType)
	if f.linkJob.Status != "COMPLETED" || f.linkJob.Error != nil {
		t.Fatalf("link job %s: %s %+v", f.linkJob.JobID, f.linkJob.Status, f.linkJob.Error)
	}
	return f
}

// ledWalk reads every entry of key's log from 0 to the first 404 and checks
// the chain: each entry's leafHash is SHA-256(0x00 || data), its data is
// canonical JSON, and its prev is the leaf hash of the entry before ("" for
// the first). It returns the entries' bytes.
func ledWalk(t testing.TB, base, key string) [][]byte {
	t.Helper()
	var out [][]byte
	prev := ""
	for i := int64(0); ; i++ {
		r := apitest.Do(t, "GET", fmt.Sprintf("%s%s/ledger/entries/%d", base, eudrAPI, i), apitest.WithKey(key), nil)
		if r.Status == http.StatusNotFound {
			apitest.WantError(t, r, http.StatusNotFound, "NOT_FOUND")
			return out
		}
		r.WantStatus(t, http.StatusOK)
		var e ledEntry
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("%s: %v: %s", r.Request, err, r.Body)
		}
		data, err := base64.StdEncoding.DecodeString(e.Data)
		if err != nil {
			t.Fatalf("%s: data is not standard base64: %v", r.Request, err)
		}
		if e.Index != i || e.LeafHash != ledLeaf(data) {
			t.Errorf("entry %d: index %d leafHash %s; SHA-256(0x00||data) is %s", i, e.Index, e.LeafHash, ledLeaf(data))
		}
		if c := ledCanonical(t, data); !bytes.Equal(c, data) {
			t.Errorf("entry %d is not canonical JSON:\n got  %s\n want %s", i, data, c)
		}
		var fields map[string]any
		json.Unmarshal(data, &fields)
		if got, ok := fields["prev"].(string); !ok || got != prev {
			t.Errorf("entry %d: prev %v, want the leaf hash of entry %d, %q", i, fields["prev"], i-1, prev)
		}
		prev = ledLeaf(data)
		out = append(out, data)
		if i > 10000 {
			t.Fatal("the log does not end")
		}
	}
}

// ledOpenCheckpoint verifies a checkpoint note with the appliance's public
// key (GET /ledger/public-key) and returns its size and root hash lines.
func ledOpenCheckpoint(t testing.TB, base, key, msg string) (int64, tlog.Hash) {
	t.Helper()
	var pk struct {
		KeyName     string `json:"keyName"`
		VerifierKey string `json:"verifierKey"`
	}
	ledGet(t, base, key, "/ledger/public-key", &pk)
	v, err := note.NewVerifier(pk.VerifierKey)
	if err != nil || v.Name() != pk.KeyName {
		t.Fatalf("public key %+v: %v (verifier name %q)", pk, err, v.Name())
	}
	n, err := note.Open([]byte(msg), note.VerifierList(v))
	if err != nil {
		t.Fatalf("checkpoint note does not verify with %s: %v\n%s", pk.VerifierKey, err, msg)
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) < 4 || lines[0] == "" || lines[len(lines)-1] != "" {
		t.Fatalf("checkpoint body %q: want origin, size and root lines", n.Text)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		t.Fatalf("checkpoint size line %q", lines[1])
	}
	root, err := tlog.ParseHash(lines[2])
	if err != nil {
		t.Fatalf("checkpoint root line %q: %v", lines[2], err)
	}
	if !strings.HasSuffix(lines[0], "/sandbox") {
		t.Errorf("checkpoint origin %q does not name the sandbox log", lines[0])
	}
	return size, root
}

// --- the whole flow ---

func TestLedger_ShipmentFlow(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, noRateLimit...)
	key := p.createKey(t, sandbox)
	base := p.SandboxURL
	reg := subscribe(t, p, key, rc, "/ship", "shipment.linked")

	f := ledFlow(t, p, key)

	// The polygon job lists its three plots' entries (GET /jobs proves
	// them in the latest checkpoint).
	pj := polGetJob(t, base, key, f.polygonJob.JobID)
	var proofs3 []ledProof
	for _, raw := range pj.LedgerProofs {
		var lp ledProof
		if err := json.Unmarshal(raw, &lp); err != nil {
			t.Fatal(err)
		}
		proofs3 = append(proofs3, lp)
	}

	// shipment.linked reaches the HTTPS receiver, signed.
	var req apitest.Delivery
	waitUntil(t, ledWait, "shipment.linked at the receiver", func() bool {
		for _, r := range rc.Requests("/ship", "") {
			if rc.IsDelivered("/ship", r.Env.EventID) {
				req = r
				return true
			}
		}
		return false
	})
	if req.SigErr != nil || req.Env.EventType != "shipment.linked" || req.Header.Get("X-Service-Event-Type") != "shipment.linked" {
		t.Fatalf("delivery: type %s, signature %v: %s", req.Env.EventType, req.SigErr, req.Body)
	}
	apitest.CheckSignatures(t, req, reg.SigningSecret)
	var keys map[string]json.RawMessage
	json.Unmarshal(req.Env.Data, &keys)
	if gotKeys, want := ledSortedKeys(keys), []string{"batchId", "ledgerIndex", "linkId", "rootHash", "shipmentId", "transactionHash", "treeSize"}; !slices.Equal(gotKeys, want) {
		t.Errorf("shipment.linked data members %v, want %v: %s", gotKeys, want, req.Env.Data)
	}
	var ev ledLinked
	if err := json.Unmarshal(req.Env.Data, &ev); err != nil {
		t.Fatal(err)
	}
	if ev.LinkID != f.linkID || ev.BatchID != f.batchID || ev.ShipmentID != f.shipmentID ||
		ev.LedgerIndex != 3 || ev.TreeSize != 4 || !ledHexPattern.MatchString(ev.TransactionHash) {
		t.Errorf("shipment.linked %+v; want link %s, batch %s, shipment %s, entry 3 in a tree of 4", ev, f.linkID, f.batchID, f.shipmentID)
	}

	// transactionHash is SHA-256(0x00 || the entry's bytes), recomputed here.
	var entry ledEntry
	ledGet(t, base, key, fmt.Sprintf("/ledger/entries/%d", ev.LedgerIndex), &entry)
	data, err := base64.StdEncoding.DecodeString(entry.Data)
	if err != nil {
		t.Fatal(err)
	}
	if got := ledLeaf(data); got != ev.TransactionHash || entry.LeafHash != got || entry.Index != ev.LedgerIndex {
		t.Errorf("entry %d: SHA-256(0x00||data) %s, leafHash %s, event transactionHash %s", ev.LedgerIndex, got, entry.LeafHash, ev.TransactionHash)
	}
	var fields struct {
		Type             string   `json:"type"`
		LinkID           string   `json:"linkId"`
		BatchID          string   `json:"batchId"`
		ShipmentID       string   `json:"shipmentId"`
		ContainerNumbers []string `json:"containerNumbers"`
		PortOfEntry      string   `json:"portOfEntry"`
	}
	if err := json.Unmarshal(data, &fields); err != nil || fields.Type != "shipment.linked" || fields.LinkID != f.linkID ||
		fields.BatchID != f.batchID || fields.ShipmentID != f.shipmentID || fields.PortOfEntry != "NLRTM" ||
		!slices.Equal(fields.ContainerNumbers, []string{"CSQU3054383", "MSKU9070323"}) {
		t.Errorf("the link's entry: %s (%v)", data, err)
	}

	// The checkpoint is the event's tree, signed by the appliance's key.
	var cp ledCheckpoint
	ledGet(t, base, key, "/ledger/checkpoint", &cp)
	size, root := ledOpenCheckpoint(t, base, key, cp.Note)
	if cp.TreeSize != ev.TreeSize || cp.RootHash != ev.RootHash || size != cp.TreeSize || root != ledHash(t, cp.RootHash) {
		t.Errorf("checkpoint %+v (note: size %d root %x); event tree %d root %s", cp, size, root[:], ev.TreeSize, ev.RootHash)
	}

	// The inclusion proof puts the entry in that tree.
	var inc ledInclusion
	ledGet(t, base, key, fmt.Sprintf("/ledger/proofs/inclusion?index=%d&treeSize=%d", ev.LedgerIndex, ev.TreeSize), &inc)
	if inc.Index != ev.LedgerIndex || inc.TreeSize != ev.TreeSize || inc.LeafHash != ev.TransactionHash || inc.RootHash != cp.RootHash {
		t.Errorf("inclusion proof %+v", inc)
	}
	if err := tlog.CheckRecord(ledHashes(t, inc.Proof), ev.TreeSize, root, ev.LedgerIndex, ledHash(t, ev.TransactionHash)); err != nil {
		t.Errorf("inclusion proof of entry %d does not check against the checkpoint: %v", ev.LedgerIndex, err)
	}
	// A forged leaf does not.
	if tlog.CheckRecord(ledHashes(t, inc.Proof), ev.TreeSize, root, ev.LedgerIndex, ledHash(t, ledLeaf([]byte("{}")))) == nil {
		t.Error("the inclusion proof also proves another leaf")
	}
	// Without treeSize: the latest checkpoint's.
	var inc2 ledInclusion
	ledGet(t, base, key, fmt.Sprintf("/ledger/proofs/inclusion?index=%d", ev.LedgerIndex), &inc2)
	if inc2.TreeSize != cp.TreeSize || !slices.Equal(inc2.Proof, inc.Proof) {
		t.Errorf("inclusion proof without treeSize: %+v", inc2)
	}

	if len(proofs3) != 3 || proofs3[0].TreeSize != 4 {
		// GET /jobs proves in the latest checkpoint: by now the tree of 4.
		t.Errorf("polygon job ledgerProofs %+v, want 3 proofs in the tree of 4", proofs3)
	}
	for i, lp := range proofs3 {
		if lp.Index != int64(i) || tlog.CheckRecord(ledHashes(t, lp.Proof), lp.TreeSize, ledHash(t, lp.RootHash), lp.Index, ledHash(t, lp.TransactionHash)) != nil {
			t.Errorf("polygon job proof %d: %+v", i, lp)
		}
	}
	// The tree of the screening (3 entries) is a prefix of this one.
	var inc3 ledInclusion
	ledGet(t, base, key, "/ledger/proofs/inclusion?index=0&treeSize=3", &inc3)
	var cons ledConsistency
	ledGet(t, base, key, "/ledger/proofs/consistency?from=3&to=4", &cons)
	if cons.From != 3 || cons.To != 4 ||
		tlog.CheckTree(ledHashes(t, cons.Proof), 4, root, 3, ledHash(t, inc3.RootHash)) != nil {
		t.Errorf("consistency 3 -> 4: %+v (root of 3: %s)", cons, inc3.RootHash)
	}

	// The shipment is LINKED with the same anchor.
	var s ledShipment
	ledGet(t, base, key, "/shipments/"+f.shipmentID, &s)
	if s.Status != "LINKED" || s.LinkID != f.linkID || s.JobID != f.linkJob.JobID || s.BatchID != f.batchID ||
		s.ShipmentID != f.shipmentID || polStr(s.TransactionHash) != ev.TransactionHash || s.LedgerIndex == nil ||
		*s.LedgerIndex != ev.LedgerIndex || s.TreeSize == nil || *s.TreeSize != ev.TreeSize || polStr(s.RootHash) != ev.RootHash ||
		polStr(s.BillOfLading) != "BL-"+f.shipmentID || polStr(s.PortOfEntry) != "NLRTM" || polStr(s.ETA) != "2026-12-01" ||
		!slices.Equal(s.ContainerNumbers, []string{"CSQU3054383", "MSKU9070323"}) || s.LinkedAt == nil {
		t.Errorf("GET /shipments/%s: %+v", f.shipmentID, s)
	} else if apitest.ParseTime(t, *s.LinkedAt).Before(apitest.ParseTime(t, s.CreatedAt)) {
		t.Errorf("linkedAt %s before createdAt %s", *s.LinkedAt, s.CreatedAt)
	}
	apitest.WantError(t, apitest.Do(t, "GET", base+eudrAPI+"/shipments/SHP-NONE", apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")

	// The link's job lists the entry with its proof.
	j := ledWaitJob(t, base, key, f.linkJob.JobID, ledLinkJobType)
	if len(j.LedgerProofs) != 1 {
		t.Fatalf("link job ledgerProofs: %+v, want one", j.LedgerProofs)
	}
	lp := j.LedgerProofs[0]
	if lp.Index != ev.LedgerIndex || lp.TransactionHash != ev.TransactionHash || lp.TreeSize != cp.TreeSize || lp.RootHash != cp.RootHash ||
		tlog.CheckRecord(ledHashes(t, lp.Proof), lp.TreeSize, root, lp.Index, ledHash(t, lp.TransactionHash)) != nil {
		t.Errorf("link job proof %+v", lp)
	}
	if j.Progress.Total != 1 || j.Progress.Succeeded != 1 || j.Progress.Percent != 100 {
		t.Errorf("link job progress %+v", j.Progress)
	}

	// The whole log is a chain; it ends at the checkpoint's size.
	entries := ledWalk(t, base, key)
	if int64(len(entries)) != cp.TreeSize {
		t.Fatalf("the log holds %d entries, the checkpoint signs %d", len(entries), cp.TreeSize)
	}
	for i, e := range entries[:3] {
		if !bytes.Contains(e, []byte(`"type":"polygon.screened"`)) || !bytes.Contains(e, []byte(`"polygonId":"`+f.polygonIDs[i]+`"`)) {
			t.Errorf("entry %d: %s, want polygon.screened of %s", i, e, f.polygonIDs[i])
		}
	}

	// One event, delivered once.
	if n := len(rc.Requests("/ship", "")); n != 1 {
		t.Errorf("/ship got %d requests, want 1", n)
	}
	// Production has its own log, still empty.
	live := p.createKey(t, production)
	apitest.WantError(t, apitest.Do(t, "GET", p.ProductionURL+eudrAPI+"/ledger/checkpoint", apitest.WithKey(live), nil), http.StatusNotFound, "NOT_FOUND")
	apitest.WantError(t, apitest.Do(t, "GET", p.ProductionURL+eudrAPI+"/shipments/"+f.shipmentID, apitest.WithKey(live), nil), http.StatusNotFound, "NOT_FOUND")
}

// ledSortedKeys is m's keys in order (for messages).
func ledSortedKeys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
