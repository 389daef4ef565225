package main_test

// End-to-end test of a due-diligence statement's PDF report
// (docs/reports.md) against the real binary and the sandbox's simulated EU
// system, read with poppler's tools, and of its copy in an archive.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// TestReportPDF_Statement files a statement of a batch of two plots (a
// polygon and a named point) with the simulated EU system and reads its
// report as an auditor would: poppler checks the file and finds in its
// text the Annex II content as filed, the EU numbers, each change of the
// history with its ledger entry, and the batch's pages; two requests, the
// ledger grown between them, give the same bytes; the archive of the day
// holds the same report, listed in its manifest.
func TestReportPDF_Statement(t *testing.T) {
	pdftotext, pdfinfo := reportTool(t, "pdftotext", "poppler-utils"), reportTool(t, "pdfinfo", "poppler-utils")
	pdftoppm := reportTool(t, "pdftoppm", "poppler-utils")
	p := startServer(t, ddsFast...)
	k := p.CreateKey(t, sandbox)
	key, base := k.Key, p.SandboxURL
	ddsMapOperator(t, base, key, "V-PDF", ddsOperatorUUID, ddsEORI)
	polygon := polFeature(`{"type":"Polygon","coordinates":[[[-1.6,6.7],[-1.59876543,6.7],[-1.59876543,6.70123456],[-1.6,6.70123456],[-1.6,6.7]]]}`,
		map[string]any{"commodity": "cocoa", "producerCountry": "GH", "supplierId": "V-PDF"})
	point := polFeature(`{"type":"Point","coordinates":[-1.65123461,6.65123449]}`,
		map[string]any{"commodity": "cocoa", "producerCountry": "GH", "supplierId": "V-PDF", "area": 2.5,
			"producerName": "Kwame Mensah", "productionPlace": "Ahafo"})
	batch, _ := ddsLinkedBatch(t, base, key, "V-PDF", polygon, point)
	body := ddsBody(ddsOperatorUUID, batch)
	body["internalReference"] = "PO-PDF-17"
	d := ddsDraft(t, base, key, body)
	ddsSubmit(t, base, key, d.DDSID)
	v := ddsWaitStatus(t, base, key, d.DDSID, "VALIDATED")

	url := base + ddsPath + "/" + v.DDSID + "/report.pdf"
	first := apitest.Do(t, "GET", url, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	if ct := first.Header.Get("Content-Type"); ct != "application/pdf" {
		t.Fatalf("Content-Type %q, want application/pdf", ct)
	}
	sum := sha256.Sum256(first.Body)
	if got := first.Header.Get("X-Content-SHA256"); got != hex.EncodeToString(sum[:]) {
		t.Errorf("X-Content-SHA256 %s, body's %x", got, sum)
	}
	// The ledger grows (another statement's changes): the same bytes, its
	// proofs made in the checkpoint signed with the statement's last change.
	other := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	second := apitest.Do(t, "GET", url, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	if !bytes.Equal(first.Body, second.Body) {
		t.Errorf("two requests of the report, the ledger grown between them, gave different bytes (%d and %d)", len(first.Body), len(second.Body))
	}

	// Asked for by its EU reference number: the same report, recorded
	// once, under the statement's ID.
	byRef := apitest.Do(t, "GET", base+ddsPath+"/"+polStr(v.ReferenceNumber)+"/report.pdf", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	if !bytes.Equal(byRef.Body, first.Body) || byRef.Header.Get("X-Ledger-Index") != first.Header.Get("X-Ledger-Index") {
		t.Errorf("by reference number: %d bytes, ledger entry %s; by ID: %d bytes, entry %s",
			len(byRef.Body), byRef.Header.Get("X-Ledger-Index"), len(first.Body), first.Header.Get("X-Ledger-Index"))
	}
	var entry ledEntry
	ledGet(t, base, key, "/ledger/entries/"+first.Header.Get("X-Ledger-Index"), &entry)
	if data, _ := base64.StdEncoding.DecodeString(entry.Data); !strings.Contains(string(data), `"recordId":"`+v.DDSID+`"`) {
		t.Errorf("the report's ledger entry is %s; want it recorded under %s", data, v.DDSID)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "statement.pdf")
	if err := os.WriteFile(file, first.Body, 0o644); err != nil {
		t.Fatal(err)
	}
	info := pdfRun(t, pdfinfo, file)
	if !regexp.MustCompile(`(?m)^Pages:\s+([3-9]|[1-9][0-9]+)$`).MatchString(info) {
		t.Errorf("pdfinfo: want 3 or more pages:\n%s", info)
	}
	text := squeeze(pdfRun(t, pdftotext, "-enc", "UTF-8", file, "-"))
	s := ddsStatementOf(t, v)
	c := s.Commodities[0]
	statementSum := sha256.Sum256(v.Statement)
	want := []string{"Due-diligence statement report", v.DDSID, "Status VALIDATED",
		// Annex II as filed.
		"Annex II information, as filed", "Operator " + s.Operator.Name, "Operator role OPERATOR", "EORI " + ddsEORI,
		"Internal reference PO-PDF-17", "Activity IMPORT", "Country of activity " + s.CountryOfActivity,
		"Country of entry " + s.BorderCrossCountry, "HS " + c.HSHeading, c.DescriptionOfGoods, "Net mass 12500.5 kg",
		"Kwame Mensah", "1 plot (1 polygon)", "1 plot (1 point); 2.5000 ha declared for the points",
		"Referenced statements", "None: the statement references no earlier statement",
		"operator confirms that due diligence in accordance with Regulation (EU) 2023/1115 was carried out",
		hex.EncodeToString(statementSum[:]),
		// The EU numbers.
		"EU UUID " + polStr(v.EUUUID), "Reference number " + polStr(v.ReferenceNumber), "Verification number " + polStr(v.VerificationNumber),
		// The batch's pages.
		"Batch report", "Batch " + batch,
		"eudr ledger verify"}
	// The history: each change with its time, actor and ledger entry.
	var lastLeaf string
	for _, h := range v.History {
		want = append(want, fmt.Sprintf("%s %s %s %d", h.At, h.Status, h.Actor, *h.LedgerIndex))
		var e ledEntry
		ledGet(t, base, key, fmt.Sprintf("/ledger/entries/%d", *h.LedgerIndex), &e)
		want = append(want, fmt.Sprintf("Entry %d · %s", e.Index, h.Status), "Leaf hash "+e.LeafHash)
		lastLeaf = e.LeafHash
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the report's text lacks %q", w)
		}
	}
	if !strings.Contains(text, lastLeaf) || strings.Count(text, "Entry bytes") != len(v.History) {
		t.Errorf("the report does not show the %d ledger entries of the history", len(v.History))
	}
	if t.Failed() {
		t.Logf("pdftotext:\n%s", text)
	}
	pdfPages(t, pdftoppm, file, "statement")

	// A draft: not filed yet, where the EU numbers would be.
	draft := apitest.Do(t, "GET", base+ddsPath+"/"+other.DDSID+"/report.pdf", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	draftFile := filepath.Join(dir, "draft.pdf")
	if err := os.WriteFile(draftFile, draft.Body, 0o644); err != nil {
		t.Fatal(err)
	}
	if text := squeeze(pdfRun(t, pdftotext, "-enc", "UTF-8", draftFile, "-")); !strings.Contains(text, "EU UUID not filed yet") ||
		!strings.Contains(text, "Annex II information, as drafted (not filed yet)") {
		t.Errorf("the draft's report does not say it is not filed yet:\n%s", text)
	}
	apitest.Do(t, "GET", base+ddsPath+"/"+v.DDSID+"x/report.pdf", apitest.WithKey(key), nil).WantStatus(t, http.StatusNotFound)

	// The archive of the day holds the same report, as its manifest says.
	today := time.Now().UTC()
	reportID, jobID := rptRequest(t, base, key, today.AddDate(0, 0, -1).Format(time.DateOnly), today.AddDate(0, 0, 1).Format(time.DateOnly))
	if j := rptWaitJob(t, base, key, jobID); j.Status != "COMPLETED" {
		t.Fatalf("archive job: %+v", j)
	}
	files, m := rptOpen(t, rptDownload(t, base, key, reportID))
	path := "reports/" + v.DDSID + ".pdf"
	listed := false
	for _, f := range m.Files {
		if f.Path == path {
			listed = f.SHA256 == hex.EncodeToString(sum[:]) && f.SizeBytes == int64(len(first.Body))
		}
	}
	if !listed || !bytes.Equal(files[path], first.Body) {
		t.Errorf("the archive's %s (%d bytes) is not the report served (%d bytes, SHA-256 %x) as listed in the manifest: %s",
			path, len(files[path]), len(first.Body), sum, files["manifest.json"])
	}
	if _, ok := files["reports/"+other.DDSID+".pdf"]; !ok || m.Counts.DDS != 2 {
		t.Errorf("the archive lacks the draft's report or counts %d statements, want 2", m.Counts.DDS)
	}
	if !strings.Contains(string(files["README.txt"]), "reports/<ddsId>.pdf") {
		t.Errorf("README.txt does not explain the reports")
	}
	t.Logf("statement report: %d bytes, %s", len(first.Body), strconv.Quote(strings.TrimSpace(regexp.MustCompile(`(?m)^Pages:.*$`).FindString(info))))
}
