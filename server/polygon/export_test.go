package polygon_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/storage"
)

// exportJob is the job the plots put straight into the store belong to.
const exportJob = "job_01JEXPORTTEST0000000000000"

// putPlots records n screened plots of exportJob straight into the store,
// as the screening job would, without screening them.
func putPlots(tb testing.TB, b *apitest.Bench, n int) {
	tb.Helper()
	const perTx = 1000
	for from := 0; from < n; from += perTx {
		b.Update(tb, func(tx *storage.Tx) error {
			for i := from; i < min(from+perTx, n); i++ {
				lon, lat := 5+float64(i%100)*0.01, 6+float64(i/100)*0.01
				p := &storage.Polygon{ID: storage.PolygonID(exportJob, i), JobID: exportJob, FeatureIndex: i,
					ExternalID: fmt.Sprintf("plot-%d", i), Commodity: "cocoa", ProducerCountry: "GH", GeometryType: "Polygon",
					AreaHa: 4.9, Status: "COMPLIANT", Risk: &storage.PolygonRisk{}, ScreenedAt: start}
				d := &storage.PolygonDetail{Feature: json.RawMessage(plot(p.ExternalID, square(lon, lat, 0.001))), Evidence: json.RawMessage(`{}`)}
				if err := tx.PutPolygon(tenant, p, d); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// writeHook calls first before the first bytes written through it.
type writeHook struct {
	w     io.Writer
	first func()
}

func (h *writeHook) Write(p []byte) (int, error) {
	if h.first != nil {
		h.first()
		h.first = nil
	}
	return h.w.Write(p)
}

// The export writes each page before reading the next, each page in a
// transaction of its own: the oldest plot, deleted once the first bytes
// are out, is not in the file. Read at once, or in one transaction, it
// would be.
func TestExport_PageByPage(t *testing.T) {
	b, s := newService(t, 100)
	const n = 617 // three pages and some
	putPlots(t, b, n)
	oldest := storage.PolygonID(exportJob, 0)
	var out bytes.Buffer
	w := &writeHook{w: &out, first: func() {
		b.Update(t, func(tx *storage.Tx) error { return tx.DeletePolygon(tenant, oldest) })
	}}
	if err := s.Export(context.Background(), tenant, storage.PolygonFilter{}, polygon.ExportCSV, w); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != n { // the header and n-1 plots
		t.Fatalf("%d rows, want %d (header and %d plots)", len(rows), n, n-1)
	}
	for i, r := range rows[1:] {
		if want := storage.PolygonID(exportJob, n-1-i); r[0] != want {
			t.Fatalf("row %d: %s, want %s (newest first)", i+1, r[0], want)
		}
	}
}

// A bad format or filter is refused before anything is written.
func TestExport_Refused(t *testing.T) {
	_, s := newService(t, 100)
	var out bytes.Buffer
	err := s.Export(context.Background(), tenant, storage.PolygonFilter{Status: "GREEN"}, "xlsx", &out)
	e := apierr.From(err)
	fields := map[string]bool{}
	for _, d := range e.Details {
		fields[d.Field] = d.Code == apierr.DetailInvalidValue
	}
	if e.Status != 400 || !fields["query.format"] || !fields["query.eudrStatus"] || out.Len() != 0 {
		t.Errorf("got %+v, %d bytes written", e, out.Len())
	}
	if f, err := polygon.CheckExport("", storage.PolygonFilter{}); f != polygon.ExportGeoJSON || err != nil {
		t.Errorf(`CheckExport(""): %q, %v; want geojson`, f, err)
	}
}

// peakHeap is a writer that samples the live heap as the export writes.
type peakHeap struct {
	writes int
	peak   uint64
}

func (p *peakHeap) Write(b []byte) (int, error) {
	if p.writes%16 == 0 {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		p.peak = max(p.peak, m.HeapAlloc)
	}
	p.writes++
	return len(b), nil
}

// BenchmarkExport reports the highest live heap seen while exporting 2,000
// and 20,000 plots: with the plots read a page at a time it stays about
// the same for both.
func BenchmarkExport(b *testing.B) {
	for _, n := range []int{2000, 20000} {
		for _, f := range []polygon.ExportFormat{polygon.ExportGeoJSON, polygon.ExportCSV, polygon.ExportKML} {
			b.Run(fmt.Sprintf("%s/plots=%d", f, n), func(b *testing.B) {
				bench, s := newService(b, 100)
				putPlots(b, bench, n)
				runtime.GC()
				var peak uint64
				b.ResetTimer()
				for b.Loop() {
					w := &peakHeap{}
					if err := s.Export(context.Background(), tenant, storage.PolygonFilter{}, f, w); err != nil {
						b.Fatal(err)
					}
					peak = max(peak, w.peak)
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "plots/s")
				b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			})
		}
	}
}

// The CSV's columns are named as GET /polygons names the fields.
func TestExport_CSVHeader(t *testing.T) {
	b, s := newService(t, 100)
	putPlots(t, b, 1)
	var out bytes.Buffer
	if err := s.Export(context.Background(), tenant, storage.PolygonFilter{}, polygon.ExportCSV, &out); err != nil {
		t.Fatal(err)
	}
	header, _, _ := strings.Cut(out.String(), "\n")
	want := "polygonId,jobId,externalId,supplierId,commodity,producerCountry,producerName,productionPlace,area," +
		"measuredAreaHa,geometryType,eudrStatus,failureReason,deforestedHa,deforestedPct,protectedHa,protectedPct,riskScore,screenedAt,wkt"
	if header != want {
		t.Errorf("header\n%s\nwant\n%s", header, want)
	}
}

// A client's text that a spreadsheet would run as a formula is written
// with a leading apostrophe; numbers and the geometry are left alone.
func TestExport_CSVFormulaText(t *testing.T) {
	b, s := newService(t, 100)
	b.Update(t, func(tx *storage.Tx) error {
		p := &storage.Polygon{ID: storage.PolygonID(exportJob, 0), JobID: exportJob, ExternalID: "=HYPERLINK(\"http://x\")",
			SupplierID: "V-1", ProducerName: "@SUM(A1)", ProductionPlace: "-3+4", Commodity: "cocoa", ProducerCountry: "GH",
			GeometryType: "Polygon", AreaHa: 4.9, Status: "COMPLIANT", Risk: &storage.PolygonRisk{}, ScreenedAt: start}
		d := &storage.PolygonDetail{Feature: json.RawMessage(plot(p.ExternalID, square(-5, 6, 0.001))), Evidence: json.RawMessage(`{}`)}
		return tx.PutPolygon(tenant, p, d)
	})
	var out bytes.Buffer
	if err := s.Export(context.Background(), tenant, storage.PolygonFilter{}, polygon.ExportCSV, &out); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&out).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %v (%v)", rows, err)
	}
	got := map[string]string{}
	for i, name := range rows[0] {
		got[name] = rows[1][i]
	}
	for name, want := range map[string]string{"externalId": `'=HYPERLINK("http://x")`, "producerName": "'@SUM(A1)",
		"productionPlace": "'-3+4", "supplierId": "V-1", "measuredAreaHa": "4.9"} {
		if got[name] != want {
			t.Errorf("%s: %q, want %q", name, got[name], want)
		}
	}
	if !strings.HasPrefix(got["wkt"], "POLYGON ((-5.") {
		t.Errorf("wkt %q, want the polygon as it is", got["wkt"])
	}
}
