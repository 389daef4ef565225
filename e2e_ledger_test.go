package main_test

// End-to-end tests of batches, shipment links, evidence and the ledger
// (API.md sections 4, 6 and 8; DESIGN.md "Ledger") against the real binary:
// the whole flow from plots to a shipment.linked delivery whose hashes and
// proofs a client recomputes on its own (crypto/sha256, sumdb/tlog,
// sumdb/note); every 409 and 422 of the flow, races of concurrent links and
// a link that times out (LEDGER_CONSENSUS_TIMEOUT); evidence documents that
// verify, and fail at the step that catches each kind of tampering; and
// `eudr ledger verify` on a stopped store, then on one tampered with bbolt
// directly.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/storage"
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

// ledLinked is the data of shipment.linked (API.md section 6).
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
// escaping, numbers as written: the canonical form API.md section 6 names.
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
	for i, r := range j.Results {
		ids[i] = r.PolygonID
		if r.EUDRStatus != want[i] {
			t.Fatalf("polygon %d (%s) is %s (%s), want %s", i, r.PolygonID, r.EUDRStatus, polStr(r.FailureReason), want[i])
		}
	}
	if len(j.LedgerProofs) != len(features) {
		t.Errorf("polygon job %s: %d ledgerProofs, want one per feature (%d)", jobID, len(j.LedgerProofs), len(features))
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

// --- 1. the whole flow ---

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

// --- 2. refusals and races ---

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
		ledPlot(-61.5, -10.5, "BR", "V-REF"), ledPlot(10.5, 10.5, "GH", "V-REF"))
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

// --- 3. evidence ---

func TestEvidence_VerifyAndTamper(t *testing.T) {
	t.Parallel()
	p := startServer(t, noRateLimit...)
	key := p.createKey(t, sandbox)
	base := p.SandboxURL
	_, ids := ledScreen(t, base, key, []string{"COMPLIANT", "COMPLIANT", "HIGH_RISK", "FAILED"},
		ledPlot(-1.81, 6.69, "GH", "V-EV"), ledPlot(-1.82, 6.69, "GH", "V-EV"), ledPlot(-54.5, -4.5, "BR", "V-EV"),
		ledPlot(10.5, 10.5, "GH", "V-EV"))
	verifyURL := base + eudrAPI + "/evidence/verify"

	evidence := func(id string) []byte {
		t.Helper()
		return apitest.Do(t, "GET", polItemURL(base, id)+"/evidence", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Body
	}
	type verified struct {
		Valid           bool     `json:"valid"`
		LedgerIndex     int64    `json:"ledgerIndex"`
		TransactionHash string   `json:"transactionHash"`
		TreeSize        int64    `json:"treeSize"`
		RootHash        string   `json:"rootHash"`
		EvidenceSHA256  string   `json:"evidenceSha256"`
		Steps           []string `json:"steps"`
	}
	for i, id := range ids {
		doc := evidence(id)
		var m map[string]json.RawMessage
		if err := json.Unmarshal(doc, &m); err != nil {
			t.Fatal(err)
		}
		var l struct {
			Index           int64    `json:"index"`
			TransactionHash string   `json:"transactionHash"`
			Data            string   `json:"data"`
			TreeSize        int64    `json:"treeSize"`
			RootHash        string   `json:"rootHash"`
			Proof           []string `json:"proof"`
			Checkpoint      string   `json:"checkpoint"`
		}
		dec := json.NewDecoder(bytes.NewReader(m["ledger"]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("evidence of %s: ledger member: %v: %s", id, err, doc)
		}

		// Checked here as an auditor would, without the appliance.
		delete(m, "ledger")
		rest, _ := json.Marshal(m)
		docSum := sha256.Sum256(ledCanonical(t, rest))
		data, err := base64.StdEncoding.DecodeString(l.Data)
		if err != nil {
			t.Fatal(err)
		}
		var entry struct {
			Type           string `json:"type"`
			PolygonID      string `json:"polygonId"`
			EUDRStatus     string `json:"eudrStatus"`
			EvidenceSHA256 string `json:"evidenceSha256"`
		}
		json.Unmarshal(data, &entry)
		var status string
		json.Unmarshal(m["eudrStatus"], &status)
		if entry.Type != "polygon.screened" || entry.PolygonID != id || entry.EUDRStatus != status ||
			entry.EvidenceSHA256 != hex.EncodeToString(docSum[:]) {
			t.Errorf("evidence of %s: entry %s; the document (without ledger) hashes to %x", id, data, docSum)
		}
		if l.Index != int64(i) || ledLeaf(data) != l.TransactionHash || l.TreeSize != 4 {
			t.Errorf("evidence of %s: ledger index %d tree %d, transactionHash %s, SHA-256(0x00||data) %s", id, l.Index, l.TreeSize, l.TransactionHash, ledLeaf(data))
		}
		size, root := ledOpenCheckpoint(t, base, key, l.Checkpoint)
		if size != l.TreeSize || root != ledHash(t, l.RootHash) ||
			tlog.CheckRecord(ledHashes(t, l.Proof), l.TreeSize, root, l.Index, ledHash(t, l.TransactionHash)) != nil {
			t.Errorf("evidence of %s: the proof does not check against its signed checkpoint", id)
		}

		// And by the appliance.
		r := apitest.Do(t, "POST", verifyURL, apitest.WithKey(key), doc).WantStatus(t, http.StatusOK)
		var v verified
		r.Decode(t, &v)
		if !v.Valid || v.LedgerIndex != int64(i) || v.TransactionHash != l.TransactionHash || v.TreeSize != 4 ||
			v.RootHash != l.RootHash || v.EvidenceSHA256 != hex.EncodeToString(docSum[:]) {
			t.Errorf("verify evidence of %s: %s", id, r.Body)
		}
	}

	original := evidence(ids[0])
	// Re-encoded (members reordered, indented): the same document.
	var generic map[string]any
	json.Unmarshal(original, &generic)
	pretty, _ := json.MarshalIndent(generic, "", "  ")
	apitest.Do(t, "POST", verifyURL, apitest.WithKey(key), pretty).WantStatus(t, http.StatusOK)

	// Each kind of tampering fails at the step that catches it. The
	// forged checkpoint: the same body, signed by a key of the same name.
	cp, _ := generic["ledger"].(map[string]any)["checkpoint"].(string)
	forged := string(ledResign(t, []byte(cp)))
	for _, c := range []struct {
		name, field string
		edit        func(doc, l map[string]any)
	}{
		{"eudrStatus changed", "body", func(doc, _ map[string]any) { doc["eudrStatus"] = "HIGH_RISK" }},
		{"proof hash changed", "ledger.proof", func(_, l map[string]any) {
			proof := l["proof"].([]any)
			h := []byte(proof[0].(string))
			if h[0] == '0' {
				h[0] = '1'
			} else {
				h[0] = '0'
			}
			proof[0] = string(h)
		}},
		{"checkpoint of another key", "ledger.checkpoint", func(_, l map[string]any) {
			l["checkpoint"] = forged
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var doc map[string]any
			if err := json.Unmarshal(original, &doc); err != nil {
				t.Fatal(err)
			}
			l := doc["ledger"].(map[string]any)
			if len(l["proof"].([]any)) == 0 {
				t.Fatal("the evidence's proof is empty: nothing to tamper with")
			}
			c.edit(doc, l)
			r := apitest.Do(t, "POST", verifyURL, apitest.WithKey(key), doc)
			ledWantRefusal(t, r, http.StatusUnprocessableEntity, "BUSINESS_RULE", "PROOF_NOT_REPRODUCIBLE", c.field)
		})
	}

	// Evidence fetched earlier still verifies once the log has grown, and
	// fresh evidence is proved in the larger tree.
	ledScreen(t, base, key, []string{"COMPLIANT"}, ledPlot(-1.83, 6.69, "GH", "V-EV"))
	var v verified
	apitest.Do(t, "POST", verifyURL, apitest.WithKey(key), original).WantStatus(t, http.StatusOK).Decode(t, &v)
	if !v.Valid || v.TreeSize != 4 {
		t.Errorf("earlier evidence after the log grew: %+v", v)
	}
	apitest.Do(t, "POST", verifyURL, apitest.WithKey(key), evidence(ids[0])).WantStatus(t, http.StatusOK).Decode(t, &v)
	if !v.Valid || v.TreeSize != 5 || v.LedgerIndex != 0 {
		t.Errorf("fresh evidence: %+v, want entry 0 in the tree of 5", v)
	}
}

// ledResign signs the body of the checkpoint note msg with a new key
// named like the appliance's (note.GenerateKey): a checkpoint the
// appliance's verifier key must refuse.
func ledResign(t testing.TB, msg []byte) []byte {
	t.Helper()
	text, _, ok := bytes.Cut(msg, []byte("\n\n"))
	if !ok {
		t.Fatalf("checkpoint %q is not a signed note", msg)
	}
	skey, _, err := note.GenerateKey(rand.Reader, "eudr-appliance")
	if err != nil {
		t.Fatal(err)
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := note.Sign(&note.Note{Text: string(text) + "\n"}, signer)
	if err != nil {
		t.Fatal(err)
	}
	return forged
}

// --- 4. eudr ledger verify ---

// ledOutput is a CLI run's stdout and stderr together.
func ledOutput(r cliResult) string { return r.Stdout + r.Stderr }

// ledTamper opens the stopped store with bbolt itself and runs fn on the
// sandbox log's entries and checkpoints buckets in one write transaction.
func ledTamper(t testing.TB, dataDir string, fn func(entries, checkpoints *bolt.Bucket) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dataDir, storage.FileName), 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("open the store with bbolt: %v", err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket([]byte("ledger"))
		if root == nil {
			return fmt.Errorf("no ledger bucket")
		}
		log := root.Bucket([]byte(ledSandboxLog))
		if log == nil {
			return fmt.Errorf("no bucket ledger/%s", ledSandboxLog)
		}
		entries, cps := log.Bucket([]byte("entries")), log.Bucket([]byte("checkpoints"))
		if entries == nil || cps == nil {
			return fmt.Errorf("no entries or checkpoints bucket in ledger/%s", ledSandboxLog)
		}
		return fn(entries, cps)
	})
	if err != nil {
		t.Fatalf("tamper with the store: %v", err)
	}
}

func ledKey(i int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }

// ledVerifyOK runs `eudr ledger verify` and wants exit 0 with the sandbox
// log ok with entries entries.
func ledVerifyOK(t testing.TB, dataDir string, entries int) {
	t.Helper()
	r := runCLI(t, dataDir, nil, "ledger", "verify")
	if r.Code != 0 {
		t.Fatalf("eudr ledger verify: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	ledCheckOKLine(t, r.Stdout, entries)
}

func ledCheckOKLine(t testing.TB, stdout string, entries int) {
	t.Helper()
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, ledSandboxLog+":") {
			if !strings.Contains(line, "ok") || !regexp.MustCompile(`\b`+strconv.Itoa(entries)+` entries`).MatchString(line) {
				t.Errorf("eudr ledger verify: %q, want ok with %d entries", line, entries)
			}
			return
		}
	}
	t.Errorf("eudr ledger verify says nothing of %s:\n%s", ledSandboxLog, stdout)
}

// ledVerifyBad runs `eudr ledger verify` and wants a non-zero exit whose
// output names what (e.g. "entry 2:").
func ledVerifyBad(t testing.TB, dataDir, what string) {
	t.Helper()
	r := runCLI(t, dataDir, nil, "ledger", "verify")
	out := ledOutput(r)
	if r.Code == 0 || !strings.Contains(out, what) || !strings.Contains(out, ledSandboxLog) {
		t.Errorf("eudr ledger verify on a tampered store: exit %d, want non-zero naming %q in %s\nstdout: %s\nstderr: %s",
			r.Code, what, ledSandboxLog, r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stdout, ledSandboxLog+": ok") {
		t.Errorf("eudr ledger verify calls the tampered log ok: %s", r.Stdout)
	}
}

func TestLedger_VerifyCLI(t *testing.T) {
	t.Parallel()
	p := startServer(t, noRateLimit...)
	key := p.createKey(t, sandbox)
	f := ledFlow(t, p, key)
	var cp ledCheckpoint
	ledGet(t, p.SandboxURL, key, "/ledger/checkpoint", &cp)
	if cp.TreeSize != 4 || len(f.linkJob.LedgerProofs) != 1 || f.linkJob.LedgerProofs[0].Index != 3 {
		t.Fatalf("after the flow: checkpoint %+v, link proof %+v; want 4 entries, the link at 3", cp, f.linkJob.LedgerProofs)
	}
	pubKey := string(ledGet(t, p.SandboxURL, key, "/ledger/public-key", nil).Body)

	// The running appliance holds the store.
	r := runCLI(t, p.DataDir, nil, "ledger", "verify")
	if r.Code == 0 || !strings.Contains(r.Stderr, "in use") {
		t.Errorf("eudr ledger verify while serving: exit %d, stderr %q; want non-zero and \"in use\"", r.Code, r.Stderr)
	}
	p.Stop(t)

	// Stopped: every log checks.
	ledVerifyOK(t, p.DataDir, 4)

	// Restarted: the same signing key and log; a new link chains on.
	p = p.Restart(t)
	if got := string(ledGet(t, p.SandboxURL, key, "/ledger/public-key", nil).Body); got != pubKey {
		t.Errorf("public key after a restart: %s, before: %s", got, pubKey)
	}
	var cp2 ledCheckpoint
	ledGet(t, p.SandboxURL, key, "/ledger/checkpoint", &cp2)
	if cp2 != cp {
		t.Errorf("checkpoint after a restart: %+v, before: %+v", cp2, cp)
	}
	batch2 := ledVerified(t, p.SandboxURL, key, "V-LED", f.polygonIDs[0])
	acc := ledAccepted(t, ledLink(t, p.SandboxURL, key, batch2, "SHP-LED-2"), "linkId", "jobId")
	if j := ledWaitJob(t, p.SandboxURL, key, acc["jobId"], ledLinkJobType); j.Status != "COMPLETED" || len(j.LedgerProofs) != 1 || j.LedgerProofs[0].Index != 4 {
		t.Fatalf("link after a restart: %+v", j)
	}
	if n := len(ledWalk(t, p.SandboxURL, key)); n != 5 {
		t.Errorf("the log holds %d entries after the second link, want 5", n)
	}
	p.Stop(t)
	ledVerifyOK(t, p.DataDir, 5)

	// --config works the same (the data dir from the file, no EUDR_DATA_DIR).
	cfg := filepath.Join(t.TempDir(), "eudr.yaml")
	if err := os.WriteFile(cfg, []byte("data_dir: "+strconv.Quote(p.DataDir)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, eudrBin, "ledger", "verify", "--config", cfg)
	cmd.Env = baseEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Errorf("eudr ledger verify --config: %v\nstdout: %s", err, out)
	}
	ledCheckOKLine(t, string(out), 5)

	// A checkpoint kept from before the second link still matches the log;
	// another verifier key does not sign it.
	cpFile := filepath.Join(t.TempDir(), "checkpoint-4.note")
	if err := os.WriteFile(cpFile, []byte(cp.Note), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, p.DataDir, nil, "ledger", "verify", "--checkpoint", cpFile); r.Code != 0 || !strings.Contains(r.Stdout, "consistent with checkpoint") {
		t.Errorf("verify --checkpoint: exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	other, err := ledger.GenerateKey("eudr-appliance")
	if err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, p.DataDir, nil, "ledger", "verify", "--key", other.Verifier); r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, "signature") {
		t.Errorf("verify --key OTHER: exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	// A data dir without a store is an error, and verify creates nothing.
	empty := filepath.Join(t.TempDir(), "no-appliance")
	if r := runCLI(t, empty, nil, "ledger", "verify"); r.Code == 0 {
		t.Errorf("verify of an empty data dir: exit 0\nstdout %s", r.Stdout)
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("verify of a missing data dir created it: %v", err)
	}

	// (a) One digit changed inside entry 1 (still canonical JSON).
	var orig1 []byte
	ledTamper(t, p.DataDir, func(entries, _ *bolt.Bucket) error {
		orig1 = bytes.Clone(entries.Get(ledKey(1)))
		i := bytes.Index(orig1, []byte(`"evidenceSha256":"`))
		if i < 0 {
			return fmt.Errorf("entry 1 has no evidenceSha256: %s", orig1)
		}
		v := bytes.Clone(orig1)
		j := i + len(`"evidenceSha256":"`)
		for v[j] < '0' || v[j] > '9' {
			j++
		}
		v[j] = '0' + (v[j]-'0'+1)%10
		if !json.Valid(v) {
			return fmt.Errorf("the changed entry is not JSON: %s", v)
		}
		return entries.Put(ledKey(1), v)
	})
	ledVerifyBad(t, p.DataDir, "entry 1:")
	ledTamper(t, p.DataDir, func(entries, _ *bolt.Bucket) error { return entries.Put(ledKey(1), orig1) })
	ledVerifyOK(t, p.DataDir, 5)

	// (b) Entries 1 and 3 swapped.
	swap := func(entries, _ *bolt.Bucket) error {
		e1, e3 := bytes.Clone(entries.Get(ledKey(1))), bytes.Clone(entries.Get(ledKey(3)))
		if err := entries.Put(ledKey(1), e3); err != nil {
			return err
		}
		return entries.Put(ledKey(3), e1)
	}
	ledTamper(t, p.DataDir, swap)
	ledVerifyBad(t, p.DataDir, "entry 1:")
	ledTamper(t, p.DataDir, swap)
	ledVerifyOK(t, p.DataDir, 5)

	// (c) The newest checkpoint replaced by one signed by another key.
	var origCP []byte
	ledTamper(t, p.DataDir, func(_, cps *bolt.Bucket) error {
		k, v := cps.Cursor().Last()
		if k == nil || binary.BigEndian.Uint64(k) != 5 {
			return fmt.Errorf("the newest checkpoint is for %x, want tree size 5", k)
		}
		origCP = bytes.Clone(v)
		return cps.Put(bytes.Clone(k), ledResign(t, v))
	})
	ledVerifyBad(t, p.DataDir, "checkpoint of size 5")
	ledTamper(t, p.DataDir, func(_, cps *bolt.Bucket) error { return cps.Put(ledKey(5), origCP) })
	ledVerifyOK(t, p.DataDir, 5)

	// (d) The newest entry removed: the checkpoint signs more than the log holds.
	ledTamper(t, p.DataDir, func(entries, _ *bolt.Bucket) error { return entries.Delete(ledKey(4)) })
	ledVerifyBad(t, p.DataDir, "checkpoint of size 5")
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
