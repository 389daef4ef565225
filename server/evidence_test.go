package server

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/storage"
)

func mustHash(t *testing.T, h string) tlog.Hash {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != tlog.HashSize {
		t.Fatalf("hash %q", h)
	}
	return tlog.Hash(b)
}

func mustHashes(t *testing.T, hs []string) []tlog.Hash {
	out := make([]tlog.Hash, len(hs))
	for i, h := range hs {
		out[i] = mustHash(t, h)
	}
	return out
}

// screenFixtures posts the fixture collection and waits for its job.
func screenFixtures(t *testing.T, ta *testApp, key string) jobResponse {
	t.Helper()
	acc, w := ta.postPolygons(key, "ev-"+fmt.Sprint(len(key)), fixtureCollection)
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST /polygons: %d %s", w.Code, w.Body)
	}
	job, _ := ta.waitJob(key, acc.JobID, storage.JobCompleted)
	return job
}

func TestLedger_ScreeningAnchored(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	job := screenFixtures(t, ta, key)

	// The public key and the latest checkpoint, checked as a client would.
	var pk publicKeyResponse
	mustDecode(t, ta.do("GET", eudrPrefix+"/ledger/public-key", "", "X-API-Key", key), &pk)
	verifier, err := note.NewVerifier(pk.VerifierKey)
	if err != nil || pk.KeyName != "eudr-appliance" {
		t.Fatalf("public key %+v: %v", pk, err)
	}
	var cp checkpointResponse
	mustDecode(t, ta.do("GET", eudrPrefix+"/ledger/checkpoint", "", "X-API-Key", key), &cp)
	n, err := note.Open([]byte(cp.Note), note.VerifierList(verifier))
	root := mustHash(t, cp.RootHash)
	if err != nil || cp.TreeSize != 5 ||
		n.Text != fmt.Sprintf("eudr-appliance/%s/sandbox\n5\n%s\n", defaultOrg, base64.StdEncoding.EncodeToString(root[:])) {
		t.Fatalf("checkpoint %+v: %v (note %+v)", cp, err, n)
	}

	// One proof per feature in the job, each checking against the root.
	if len(job.LedgerProofs) != 5 {
		t.Fatalf("ledgerProofs: %d, want 5", len(job.LedgerProofs))
	}
	prev := ""
	for i, p := range job.LedgerProofs {
		var e entryResponse
		mustDecode(t, ta.do("GET", eudrPrefix+fmt.Sprintf("/ledger/entries/%d", p.Index), "", "X-API-Key", key), &e)
		data, _ := base64.StdEncoding.DecodeString(e.Data)
		leaf := tlog.RecordHash(data)
		if anchor.Hex(leaf) != p.TransactionHash || e.LeafHash != p.TransactionHash {
			t.Errorf("entry %d: leaf %s, proof says %s", p.Index, anchor.Hex(leaf), p.TransactionHash)
		}
		if !strings.Contains(string(data), fmt.Sprintf(`"prev":%q`, prev)) || !strings.Contains(string(data), `"type":"polygon.screened"`) {
			t.Errorf("entry %d: %s (want prev %q)", i, data, prev)
		}
		prev = anchor.Hex(leaf)
		if err := tlog.CheckRecord(mustHashes(t, p.Proof), p.TreeSize, mustHash(t, p.RootHash), p.Index, leaf); err != nil || p.RootHash != cp.RootHash {
			t.Errorf("proof of entry %d: %v", p.Index, err)
		}
		var inc inclusionResponse
		mustDecode(t, ta.do("GET", eudrPrefix+fmt.Sprintf("/ledger/proofs/inclusion?index=%d", p.Index), "", "X-API-Key", key), &inc)
		if inc.TreeSize != 5 || inc.RootHash != cp.RootHash || strings.Join(inc.Proof, ",") != strings.Join(p.Proof, ",") {
			t.Errorf("inclusion endpoint for %d: %+v", p.Index, inc)
		}
	}

	// A second job: the log grows, and consistency from 5 to 10 checks.
	acc, _ := ta.postPolygons(key, "ev-second", fixtureCollection)
	ta.waitJob(key, acc.JobID, storage.JobCompleted)
	var cp2 checkpointResponse
	mustDecode(t, ta.do("GET", eudrPrefix+"/ledger/checkpoint", "", "X-API-Key", key), &cp2)
	var cons consistencyResponse
	mustDecode(t, ta.do("GET", eudrPrefix+"/ledger/proofs/consistency?from=5", "", "X-API-Key", key), &cons)
	if cp2.TreeSize != 10 || cons.To != 10 ||
		tlog.CheckTree(mustHashes(t, cons.Proof), 10, mustHash(t, cp2.RootHash), 5, mustHash(t, cp.RootHash)) != nil {
		t.Errorf("consistency 5 -> 10: %+v (checkpoint %+v)", cons, cp2)
	}

	// Bad and out-of-range requests.
	wantError(t, ta.do("GET", eudrPrefix+"/ledger/entries/10", "", "X-API-Key", key), 404, apierr.CodeNotFound, "")
	wantError(t, ta.do("GET", eudrPrefix+"/ledger/entries/x", "", "X-API-Key", key), 400, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	wantError(t, ta.do("GET", eudrPrefix+"/ledger/proofs/inclusion?index=3&treeSize=3", "", "X-API-Key", key), 404, apierr.CodeNotFound, "")
	wantError(t, ta.do("GET", eudrPrefix+"/ledger/proofs/inclusion", "", "X-API-Key", key), 400, apierr.CodeValidationFailed, apierr.DetailRequired)
	wantError(t, ta.do("GET", eudrPrefix+"/ledger/proofs/consistency?from=11", "", "X-API-Key", key), 404, apierr.CodeNotFound, "")
	// Production has its own, empty log.
	_, live := ta.newKey(storage.Production)
	wantError(t, ta.serve(storage.Production, newRequest("GET", eudrPrefix+"/ledger/checkpoint", "", "X-API-Key", live)), 404, apierr.CodeNotFound, "")
}

func TestEvidence_Verify(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	job := screenFixtures(t, ta, key)
	var results []polygon.Result
	if err := json.Unmarshal(job.Results, &results); err != nil {
		t.Fatal(err)
	}
	ev := ta.do("GET", eudrPrefix+"/polygons/"+results[0].PolygonID+"/evidence", "", "X-API-Key", key)
	if ev.Code != http.StatusOK {
		t.Fatalf("evidence: %d %s", ev.Code, ev.Body)
	}
	original := ev.Body.String()
	verify := func(body string) *httptest.ResponseRecorder {
		return ta.do("POST", eudrPrefix+"/evidence/verify", body, "X-API-Key", key)
	}
	w := verify(original)
	var ok evidenceVerifyResponse
	mustDecode(t, w, &ok)
	if !ok.Valid || ok.LedgerIndex != 0 || ok.TreeSize != 5 || len(ok.Steps) != 5 {
		t.Errorf("verify: %s", w.Body)
	}
	// Pretty-printed, members reordered: still the same document.
	var m map[string]any
	json.Unmarshal([]byte(original), &m)
	pretty, _ := json.MarshalIndent(m, "", "  ")
	if w := verify(string(pretty)); w.Code != http.StatusOK {
		t.Errorf("verify re-encoded: %d %s", w.Code, w.Body)
	}

	// A tampered document is refused at its step as a 422 (each kind of
	// tampering is polygon's tests').
	m["eudrStatus"] = "COMPLIANT"
	e := wantError(t, verify(string(mustJSON(t, m))), http.StatusUnprocessableEntity, apierr.CodeBusinessRule, apierr.DetailProofNotReproducible)
	if e.Details[0].Field != "body" {
		t.Errorf("failed at %s (%s), want body", e.Details[0].Field, e.Details[0].Issue)
	}
	wantError(t, verify(`{"polygonId":"x"}`), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailRequired)
	wantError(t, verify(`{"ledger":{"nope":1}}`), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}
