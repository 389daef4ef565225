package main_test

// End-to-end tests of evidence documents: they verify, and fail at the
// step that catches each kind of tampering.

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/server/apitest"
)

func TestEvidence_VerifyAndTamper(t *testing.T) {
	t.Parallel()
	p := startServer(t, noRateLimit...)
	key := p.createKey(t, sandbox)
	base := p.SandboxURL
	_, ids := ledScreen(t, base, key, []string{"COMPLIANT", "COMPLIANT", "HIGH_RISK", "FAILED"},
		ledPlot(-1.81, 6.69, "GH", "V-EV"), ledPlot(-1.82, 6.69, "GH", "V-EV"), ledPlot(-54.5, -4.5, "BR", "V-EV"),
		ledPlot(10.5, 10.5, "NG", "V-EV"))
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
