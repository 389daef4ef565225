package plotfile

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/xuri/excelize/v2"
)

// benchRows is how many plots the benchmarks' files hold: limits.max_features
// by default.
const benchRows = 10000

// benchTable is the header and rows of a file of benchRows square plots
// (WKT) across Ghana, with the properties a real file has.
func benchTable() [][]any {
	rows := [][]any{{"WKT", "externalId", "commodity", "producerCountry", "producerName", "productionPlace", "supplierId", "Area (ha)"}}
	for i := range benchRows {
		lon, lat := -3+float64(i%100)*0.01, 5+float64(i/100)*0.01
		wkt := fmt.Sprintf("POLYGON ((%.6f %.6f,%.6f %.6f,%.6f %.6f,%.6f %.6f,%.6f %.6f))",
			lon, lat, lon+0.002, lat, lon+0.002, lat+0.002, lon, lat+0.002, lon, lat)
		rows = append(rows, []any{wkt, fmt.Sprintf("GH-%05d", i), "cocoa", "GH", "Kofi Mensah", "Bogoso", "V-100", 4.9})
	}
	return rows
}

func benchConvert(b *testing.B, f Format, body []byte) {
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		c, err := Convert(f, body, Options{MaxFeatures: benchRows})
		if err != nil || len(c.Sources) != benchRows {
			b.Fatalf("Convert: %v", err)
		}
	}
	b.ReportMetric(float64(benchRows*b.N)/b.Elapsed().Seconds(), "features/s")
}

// BenchmarkConvertCSV converts a CSV file of 10,000 polygons (WKT).
func BenchmarkConvertCSV(b *testing.B) {
	var buf bytes.Buffer
	for _, row := range benchTable() {
		for j, v := range row {
			if j > 0 {
				buf.WriteByte(',')
			}
			fmt.Fprintf(&buf, "%q", fmt.Sprint(v))
		}
		buf.WriteByte('\n')
	}
	benchConvert(b, CSV, buf.Bytes())
}

// BenchmarkConvertXLSX converts a workbook of 10,000 polygons (WKT), its
// areas numeric cells.
func BenchmarkConvertXLSX(b *testing.B) {
	f := excelize.NewFile()
	defer f.Close()
	sw, err := f.NewStreamWriter("Sheet1")
	if err != nil {
		b.Fatal(err)
	}
	for i, row := range benchTable() {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := sw.SetRow(cell, row); err != nil {
			b.Fatal(err)
		}
	}
	if err := sw.Flush(); err != nil {
		b.Fatal(err)
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		b.Fatal(err)
	}
	benchConvert(b, XLSX, buf.Bytes())
}
