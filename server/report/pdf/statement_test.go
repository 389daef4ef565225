package pdf

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// sampleStatement is a VALIDATED statement of one batch of one plot, its
// three changes in the ledger, a quantity with more digits than a float64
// keeps, a polygon and a point producer, and a long note.
func sampleStatement(t *testing.T) Statement {
	t.Helper()
	area := 2.5
	point, err := euis.PlotFeature(json.RawMessage(`{"type":"Feature","geometry":{"type":"Point","coordinates":[-1.65,6.65]}}`),
		euis.PlotProperties{ProducerCountry: "GH", ProducerName: "Kwame Mensah", AreaHa: &area})
	if err != nil {
		t.Fatal(err)
	}
	payload := dds.Payload{OperatorRole: "OPERATOR", InternalReferenceNumber: "PO-4711", ActivityType: "IMPORT",
		Operator:          dds.PayloadOperator{Name: "Importer V-DDS BV", Country: "NL", EORI: "NL123456789", Identifiers: []dds.Identifier{{Type: "vat", Value: "NL999999999B01"}}},
		CountryOfActivity: "NL", BorderCrossCountry: "BE",
		Commodities: []dds.PayloadCommodity{{Position: 1, HSHeading: "180100", DescriptionOfGoods: "cocoa beans, whole, raw (LOT-7)",
			NetWeightKg: "9999999999.999999",
			Producers: []dds.PayloadProducer{
				{Position: 1, Country: "GH", GeometryGeojson: json.RawMessage(`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-1.6,6.7],[-1.599,6.7],[-1.599,6.701],[-1.6,6.701],[-1.6,6.7]]]},"properties":{"ProducerCountry":"GH"}}]}`)},
				{Position: 2, Country: "GH", Name: "Kwame Mensah", GeometryGeojson: json.RawMessage(`{"type":"FeatureCollection","features":[` + string(point) + `]}`)},
			}}},
		ReferencedStatements: []dds.Reference{{ReferenceNumber: "25NLABCDEFGH12", VerificationNumber: "K7M2P9QX"}},
		OperatorUUID:         "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b"}
	statement, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	idx := func(i int64) *int64 { return &i }
	s := &storage.DDS{ID: "dds_01JTESTSTATEMENT0000000000", Status: storage.DDSValidated, BatchIDs: []string{"bat_X"}, ActivityType: "IMPORT",
		OperatorUUID: payload.OperatorUUID, InternalReference: "PO-4711", Statement: statement,
		EUUUID: "0f0e0d0c-0b0a-4908-8706-050403020100", ReferenceNumber: "26NL0123456789", VerificationNumber: "AB12CD34",
		CreatedAt: at, SubmittedAt: &at,
		History: []storage.DDSChange{
			{At: at, Status: storage.DDSDraft, Actor: "key_01JTESTKEY00000000000000", LedgerIndex: idx(10)},
			{At: at.Add(time.Second), Status: storage.DDSSubmitted, Actor: "key_01JTESTKEY00000000000000", LedgerIndex: idx(11),
				Note: "filed with the EU information system after one retry: the first attempt timed out waiting for its answer"},
			{At: at.Add(3 * time.Second), Status: storage.DDSValidated, Actor: "eu-system", LedgerIndex: idx(12)},
		}}
	cp := "eudr/default/sandbox\n13\nRk9PQkFS\n\n— eudr SIGNATURE=\n"
	var entries []anchor.DocumentLedger
	for i, h := range s.History {
		data := `{"actor":"` + h.Actor + `","ddsId":"` + s.ID + `","status":"` + h.Status + `","type":"dds.status"}`
		entries = append(entries, anchor.DocumentLedger{Index: *h.LedgerIndex, TransactionHash: strings.Repeat(string(rune('a'+i)), 64),
			Data: base64Std(data), TreeSize: 13, RootHash: strings.Repeat("02", 32), Proof: []string{strings.Repeat("03", 32), strings.Repeat("04", 32)}, Checkpoint: cp})
	}
	plot := samplePlot(t)
	batch := Batch{Batch: &storage.Batch{ID: "bat_X", Reference: "LOT-7", CreatedAt: at}, Plots: []Plot{plot}, PlotPages: 25}
	return Statement{Proved: dds.Proved{Declaration: dds.Declaration{DDS: s}, Entries: entries, Checkpoint: cp},
		BatchIDs: []string{"bat_X"}, Batch: func(context.Context, string) (Batch, error) { return batch, nil }}
}

// The same records give the same bytes, dated at the last change of the
// history, and the text holds the Annex II content, the EU numbers, the
// history, the ledger entries and the batch's pages.
func TestStatementReport(t *testing.T) {
	st := sampleStatement(t)
	first, err := StatementReport(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	second, err := StatementReport(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("two renders of one record differ (%d and %d bytes)", len(first), len(second))
	}
	if !bytes.Contains(first, []byte("/CreationDate (D:20260304050610")) {
		t.Errorf("the creation date is not the last change's")
	}
	text := pdfText(t, first)
	sum := sha256.Sum256(st.Proved.DDS.Statement)
	want := []string{"Due-diligence statement report", st.Proved.DDS.ID, "Importer V-DDS BV", "NL123456789", "NL999999999B01",
		"PO-4711", "IMPORT", "Country of activity NL", "Country of entry BE", "HS 180100", "cocoa beans, whole, raw (LOT-7)",
		"9999999999.999999 kg", "Kwame Mensah", "1 plot (1 polygon)", "1 plot (1 point)", "2.5000 ha declared",
		"25NLABCDEFGH12", "K7M2P9QX", "26NL0123456789", "AB12CD34", "0f0e0d0c-0b0a-4908-8706-050403020100",
		"operator confirms that due diligence", hex.EncodeToString(sum[:]),
		"2026-03-04T05:06:08.000Z", "SUBMITTED", "eu-system", "after one retry", "Entry 12 · VALIDATED",
		strings.Repeat("c", 64), strings.Repeat("04", 32), "eudr ledger verify", "Batch report", "bat_X"}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the report's text lacks %q", w)
		}
	}
	if t.Failed() {
		t.Logf("pdftotext:\n%s", text)
	}
}

// A statement not filed yet says so where the EU numbers would be.
func TestStatementReport_NotFiled(t *testing.T) {
	st := sampleStatement(t)
	s := *st.Proved.DDS
	s.Status, s.EUUUID, s.ReferenceNumber, s.VerificationNumber, s.History = storage.DDSDraft, "", "", "", s.History[:1]
	st.Proved.DDS, st.Proved.Entries = &s, st.Proved.Entries[:1]
	body, err := StatementReport(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, []byte("/CreationDate (D:20260304050607")) {
		t.Errorf("the creation date is not the draft's")
	}
	st.MissingBatches = []string{"bat_GONE"}
	body, err = StatementReport(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if text := pdfText(t, body); !strings.Contains(text, "EU UUID not filed yet") || !strings.Contains(text, "Missing batches bat_GONE: the appliance no longer has them") {
		t.Errorf("the draft's report does not say it is not filed yet, or that a batch is missing:\n%s", text)
	}
	s.Statement = json.RawMessage(`[]`)
	if _, err := StatementReport(context.Background(), st); err == nil {
		t.Error("a statement that is not a JSON object: no error")
	}
}

func TestGeolocationSummary(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"type":"FeatureCollection","features":[]}`, "no plot"},
		{`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"MultiPoint","coordinates":[[1,2],[3,4]]},"properties":{"Area":1.5}},{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}}]}`,
			"3 plots (2 points, 1 unreadable); 1.5000 ha declared for the points"},
		{`"e30="`, "not a GeoJSON FeatureCollection; 6 bytes, SHA-256 "},
	} {
		if got := geolocationSummary(json.RawMessage(c.in)); !strings.HasPrefix(got, c.want) {
			t.Errorf("geolocationSummary(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// pdfText is the text of a PDF as pdftotext reads it, each run of white
// space one space; it skips the test when poppler-utils is not installed.
func pdfText(t *testing.T, body []byte) string {
	t.Helper()
	pdftotext, err := exec.LookPath("pdftotext")
	if err != nil {
		t.Skip("pdftotext is not installed (poppler-utils): the report's text is not checked")
	}
	file := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(pdftotext, "-enc", "UTF-8", file, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

// A statement's batches share reports.batch_plot_pages: two batches of 15
// plots each, within 25 one by one, are tables together.
func TestSharedPlotPages(t *testing.T) {
	for _, tc := range []struct{ plots, limit, want int }{
		{15, 25, 25}, {25, 25, 25}, {30, 25, 0}, {0, 0, 0}, {1, 0, 0},
	} {
		if got := sharedPlotPages(tc.plots, tc.limit); got != tc.want {
			t.Errorf("sharedPlotPages(%d plots, limit %d) = %d, want %d", tc.plots, tc.limit, got, tc.want)
		}
	}
}
