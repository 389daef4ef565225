package plotfile

import (
	"reflect"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/eudr/eudr/geo"
)

// workbook is an .xlsx file of sheets, each a list of rows set from A1
// with SetSheetRow (numbers as number cells, text as text).
func workbook(t *testing.T, sheets map[string][][]any, order ...string) []byte {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, name := range order {
		if i == 0 {
			if err := f.SetSheetName("Sheet1", name); err != nil {
				t.Fatal(err)
			}
		} else if _, err := f.NewSheet(name); err != nil {
			t.Fatal(err)
		}
		for r, row := range sheets[name] {
			cell, _ := excelize.CoordinatesToCellName(1, r+1)
			if err := f.SetSheetRow(name, cell, &row); err != nil {
				t.Fatal(err)
			}
		}
	}
	buf, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Numeric cells are read as numbers: coordinates, the area and columns
// passed through; a date cell as the text it shows.
func TestXLSXNumericCells(t *testing.T) {
	body := workbook(t, map[string][][]any{"Sheet1": {
		{"Latitude", "Longitude", "Commodity", "Country", "Area (ha)", "Trees", "Plot code", "Surveyed"},
		{5.3, -1.995, "cocoa", "GH", 1.5, 420, 1001, time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)},
		{},
		{"5.4", "-1.9", "cocoa", "GH", "2", "none"},
	}}, "Sheet1")
	c := convertOK(t, XLSX, body, Options{})
	got := decodePlots(t, c.GeoJSON)
	if len(got) != 2 {
		t.Fatalf("%d plots, want 2: %s", len(got), c.GeoJSON)
	}
	want0 := map[string]any{"commodity": "cocoa", "producerCountry": "GH", "area": 1.5, "Trees": 420.0, "externalId": "1001"}
	surveyed := got[0].Properties["Surveyed"]
	delete(got[0].Properties, "Surveyed")
	if !reflect.DeepEqual(got[0].Properties, want0) {
		t.Errorf("row 2 properties = %v, want %v", got[0].Properties, want0)
	}
	if s, ok := surveyed.(string); !ok || s == "" {
		t.Errorf("a date cell = %#v, want the text it shows", surveyed)
	}
	if want := []any{-1.995, 5.3}; !reflect.DeepEqual(got[0].Geometry["coordinates"], want) {
		t.Errorf("row 2 point = %v, want %v", got[0].Geometry["coordinates"], want)
	}
	want1 := map[string]any{"commodity": "cocoa", "producerCountry": "GH", "area": 2.0, "Trees": "none"}
	if !reflect.DeepEqual(got[1].Properties, want1) {
		t.Errorf("row 4 properties = %v, want %v", got[1].Properties, want1)
	}
	if want := []string{"rows[2]", "rows[4]"}; !reflect.DeepEqual(c.Sources, want) {
		t.Errorf("Sources = %v, want %v", c.Sources, want)
	}
	if c.Columns["area"] != "Area (ha)" || c.Columns["externalId"] != "Plot code" {
		t.Errorf("Columns = %v", c.Columns)
	}
}

func TestXLSXSheets(t *testing.T) {
	body := workbook(t, map[string][][]any{
		"Notes": {{"read me"}},
		"Plots": {{"WKT", "commodity"}, {"POINT (1 2)", "cocoa"}, {"POINT (3 4)", "coffee"}},
	}, "Notes", "Plots")
	c := convertOK(t, XLSX, body, Options{Sheet: "plots"})
	if got := decodePlots(t, c.GeoJSON); len(got) != 2 || got[1].Properties["commodity"] != "coffee" {
		t.Errorf("sheet Plots: %s", c.GeoJSON)
	}
	// The first sheet by default: it has no geometry column.
	wantProblems(t, problemsOf(t, XLSX, body, Options{}),
		geo.Problem{Code: geo.CodeRequired, Path: "header", Issue: "has no geometry column"})
	wantProblems(t, problemsOf(t, XLSX, body, Options{Sheet: "Farms"}),
		geo.Problem{Code: geo.CodeInvalidValue, Path: "sheet", Issue: `no sheet "Farms"; its sheets are "Notes", "Plots"`})
}

func TestXLSXProblems(t *testing.T) {
	body := workbook(t, map[string][][]any{"Sheet1": {
		{nil},
		{"lat", "lon", "commodity"},
		{"x", 200, "cocoa"},
		{5, 1, "cocoa", nil, "stray"},
		{5, 1, "cocoa", nil, nil},
	}}, "Sheet1")
	// The header is row 2, below an empty row 1.
	wantProblems(t, problemsOf(t, XLSX, body, Options{}),
		geo.Problem{Code: geo.CodeInvalidValue, Path: "rows[3].lat", Issue: `not "x"`},
		geo.Problem{Code: geo.CodeInvalidCoordinateRange, Path: "rows[3].lon", Issue: "not 200"},
		geo.Problem{Code: geo.CodeInvalidValue, Path: "rows[4]", Issue: "a value in column E"},
	)
	wantProblems(t, problemsOf(t, XLSX, []byte("lat,lon\n1,2\n"), Options{}),
		geo.Problem{Code: geo.CodeInvalidValue, Path: "body", Issue: "is not an Excel workbook"})
}
