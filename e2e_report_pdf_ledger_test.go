package main_test

// End-to-end test of the ledger record of PDF reports (docs/reports.md):
// the first time a report's bytes are made their SHA-256 is a
// report.generated entry, which POST /reports/verify finds again.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

func TestReportPDF_RecordedInLedger(t *testing.T) {
	t.Parallel()
	p := startServer(t, noRateLimit...)
	key := p.createKey(t, sandbox)
	base := p.SandboxURL
	_, ids := ledScreen(t, base, key, []string{"HIGH_RISK"}, ledPlot(-54.5, -4.5, "BR", "V-RP"))
	url := polItemURL(base, ids[0]) + "/report.pdf"

	first := apitest.Do(t, "GET", url, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	sum := sha256.Sum256(first.Body)
	hash := hex.EncodeToString(sum[:])
	index, err := strconv.ParseInt(first.Header.Get("X-Ledger-Index"), 10, 64)
	if err != nil {
		t.Fatalf("X-Ledger-Index %q: %v", first.Header.Get("X-Ledger-Index"), err)
	}
	// The entry records the report's hash, and its leaf hash is its bytes'.
	var entry ledEntry
	ledGet(t, base, key, fmt.Sprintf("/ledger/entries/%d", index), &entry)
	data, err := base64.StdEncoding.DecodeString(entry.Data)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	if fields["type"] != "report.generated" || fields["report"] != "polygon" || fields["recordId"] != ids[0] ||
		fields["sha256"] != hash || fields["bytes"] != float64(len(first.Body)) {
		t.Errorf("entry %d is %s; want report.generated of polygon %s with sha256 %s and %d bytes", index, data, ids[0], hash, len(first.Body))
	}
	if ledLeaf(data) != entry.LeafHash {
		t.Errorf("entry %d: leaf hash %s, SHA-256(0x00||data) %s", index, entry.LeafHash, ledLeaf(data))
	}

	// Made again, the same bytes are found, not recorded twice: the same
	// entry, and the ledger does not grow.
	var cp1, cp2 struct {
		TreeSize int64  `json:"treeSize"`
		RootHash string `json:"rootHash"`
		Note     string `json:"note"`
		SignedAt string `json:"signedAt"`
	}
	ledGet(t, base, key, "/ledger/checkpoint", &cp1)
	second := apitest.Do(t, "GET", url, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	ledGet(t, base, key, "/ledger/checkpoint", &cp2)
	if !bytes.Equal(first.Body, second.Body) || second.Header.Get("X-Ledger-Index") != first.Header.Get("X-Ledger-Index") {
		t.Errorf("second request: %d bytes with entry %s; want the first's %d bytes and entry %d", len(second.Body), second.Header.Get("X-Ledger-Index"), len(first.Body), index)
	}
	if cp2.TreeSize != cp1.TreeSize || cp1.TreeSize != index+1 {
		t.Errorf("tree size %d after the first report and %d after the second; want %d both times", cp1.TreeSize, cp2.TreeSize, index+1)
	}

	// A client holding the ETag is told nothing changed, without a body.
	notModified := apitest.Do(t, "GET", url, apitest.Merge(apitest.WithKey(key), apitest.Hdr("If-None-Match", first.Header.Get("ETag"))), nil).
		WantStatus(t, http.StatusNotModified)
	if len(notModified.Body) != 0 || notModified.Header.Get("ETag") != first.Header.Get("ETag") {
		t.Errorf("304: %d bytes, ETag %q; want none and %q", len(notModified.Body), notModified.Header.Get("ETag"), first.Header.Get("ETag"))
	}

	// POST /reports/verify finds the bytes and proves their entry; one
	// byte changed, they are not the appliance's.
	verify := func(body []byte) (v struct {
		SHA256   string `json:"sha256"`
		Recorded bool   `json:"recorded"`
		Report   *struct {
			Kind, RecordID string
			SHA256         string `json:"sha256"`
			Bytes          int
			LedgerIndex    int64
			GeneratedAt    string
		} `json:"report"`
		Ledger *struct {
			Index           int64    `json:"index"`
			TransactionHash string   `json:"transactionHash"`
			TreeSize        int64    `json:"treeSize"`
			RootHash        string   `json:"rootHash"`
			Proof           []string `json:"proof"`
			Checkpoint      string   `json:"checkpoint"`
		} `json:"ledger"`
	}) {
		t.Helper()
		apitest.Do(t, "POST", base+eudrAPI+"/reports/verify", apitest.Merge(apitest.WithKey(key), apitest.Hdr("Content-Type", "application/pdf")), body).
			WantStatus(t, http.StatusOK).Decode(t, &v)
		return v
	}
	v := verify(first.Body)
	if !v.Recorded || v.SHA256 != hash || v.Report == nil || v.Report.Kind != "polygon" || v.Report.RecordID != ids[0] ||
		v.Report.LedgerIndex != index || v.Report.Bytes != len(first.Body) || v.Ledger == nil || v.Ledger.Index != index ||
		v.Ledger.TransactionHash != entry.LeafHash || v.Ledger.TreeSize != cp2.TreeSize {
		t.Errorf("verify of the report: %+v", v)
	} else {
		var inc ledInclusion
		ledGet(t, base, key, fmt.Sprintf("/ledger/proofs/inclusion?index=%d&treeSize=%d", index, v.Ledger.TreeSize), &inc)
		if inc.RootHash != v.Ledger.RootHash || fmt.Sprint(inc.Proof) != fmt.Sprint(v.Ledger.Proof) {
			t.Errorf("verify's proof %v to %s; the ledger's %v to %s", v.Ledger.Proof, v.Ledger.RootHash, inc.Proof, inc.RootHash)
		}
	}
	// An auditor's read-only key checks a copy too.
	readKey := p.createKey(t, sandbox, "read")
	var byReader struct {
		Recorded bool `json:"recorded"`
	}
	apitest.Do(t, "POST", base+eudrAPI+"/reports/verify", apitest.Merge(apitest.WithKey(readKey), apitest.Hdr("Content-Type", "application/pdf")), first.Body).
		WantStatus(t, http.StatusOK).Decode(t, &byReader)
	if !byReader.Recorded {
		t.Errorf("verify with a read-only key: not recorded")
	}
	changed := bytes.Clone(first.Body)
	changed[len(changed)/2] ^= 1
	if v := verify(changed); v.Recorded || v.Report != nil || v.Ledger != nil || v.SHA256 == hash {
		t.Errorf("verify of a changed report: %+v; want recorded false", v)
	}
	apitest.Do(t, "POST", base+eudrAPI+"/reports/verify", apitest.Merge(apitest.WithKey(key), apitest.Hdr("Content-Type", "text/plain")), first.Body).
		WantStatus(t, http.StatusUnsupportedMediaType)
}
