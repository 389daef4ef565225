package plotfile

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
)

// plotJSON is a feature as a test compares it: geometry and properties
// decoded as encoding/json decodes any JSON.
type plotJSON struct {
	Geometry   map[string]any `json:"geometry"`
	Properties map[string]any `json:"properties"`
}

func decodePlots(t *testing.T, data []byte) []plotJSON {
	t.Helper()
	var fc struct {
		Type     string     `json:"type"`
		Features []plotJSON `json:"features"`
	}
	if err := json.Unmarshal(data, &fc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	if fc.Type != "FeatureCollection" {
		t.Fatalf("type %q, want FeatureCollection", fc.Type)
	}
	return fc.Features
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// convertOK converts a file that must have no problem.
func convertOK(t *testing.T, f Format, body []byte, o Options) *Converted {
	t.Helper()
	c, err := Convert(f, body, o)
	if err != nil {
		t.Fatalf("Convert(%s): %v", f, err)
	}
	return c
}

// problemsOf is the problems a conversion fails with.
func problemsOf(t *testing.T, f Format, body []byte, o Options) geo.Problems {
	t.Helper()
	_, err := Convert(f, body, o)
	var ps geo.Problems
	if !errors.As(err, &ps) {
		t.Fatalf("Convert(%s) = %v, want geo.Problems", f, err)
	}
	return ps
}

func wantProblems(t *testing.T, got geo.Problems, want ...geo.Problem) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Code != w.Code || g.Path != w.Path || !strings.Contains(g.Issue, w.Issue) {
			t.Errorf("problem %d = %v, want %s at %s with issue containing %q", i, g, w.Code, w.Path, w.Issue)
		}
	}
}

// The files ogr2ogr wrote from plots.geojson (testdata/make.sh) give its
// plots back: the same geometries and properties, each row named by its
// row number.
func TestTablesFromOGR2OGRMatchGeoJSON(t *testing.T) {
	all := decodePlots(t, readTestdata(t, "plots.geojson"))
	for _, tc := range []struct {
		file  string
		f     Format
		plots []plotJSON
	}{
		{"plots-wkt.csv", CSV, all},
		{"points-xy.csv", CSV, all[2:3]}, // the one point
		{"plots.xlsx", XLSX, all},
	} {
		t.Run(tc.file, func(t *testing.T) {
			c := convertOK(t, tc.f, readTestdata(t, tc.file), Options{})
			got := decodePlots(t, c.GeoJSON)
			if !reflect.DeepEqual(got, tc.plots) {
				t.Errorf("plots differ from plots.geojson:\n got %v\nwant %v", got, tc.plots)
			}
			for i, src := range c.Sources {
				if want := "rows[" + string(rune('2'+i)) + "]"; src != want {
					t.Errorf("Sources[%d] = %q, want %q", i, src, want)
				}
			}
			if len(c.Sources) != len(tc.plots) {
				t.Errorf("%d sources for %d plots", len(c.Sources), len(tc.plots))
			}
			if len(c.Columns) != 0 {
				t.Errorf("Columns = %v, want none: the files use our names", c.Columns)
			}
			// What geo reads of them is what it reads of the GeoJSON.
			if _, err := geo.ParseFeatureCollection(c.GeoJSON, geo.ParseOptions{}); err != nil {
				t.Errorf("geo refuses the converted file: %v", err)
			}
		})
	}
}

// Columns named otherwise are matched, kept in Columns for Path, and the
// other columns pass through as text.
func TestCSVAliasesAndPath(t *testing.T) {
	body := "\uFEFFLat;Lng;Crop;Country;Area (ha);Farm Name;Notes\n" +
		"5,3;-1,995;Cocoa;gh;1,5;Bogoso;\"multi\nline; note\"\n" +
		"\n" +
		"5.4;-1.9;cocoa;GH;2;Tarkwa;plain\n"
	c := convertOK(t, CSV, []byte(body), Options{})
	got := decodePlots(t, c.GeoJSON)
	want := []plotJSON{
		{Geometry: map[string]any{"type": "Point", "coordinates": []any{-1.995, 5.3}},
			Properties: map[string]any{"commodity": "cocoa", "producerCountry": "GH", "area": 1.5, "productionPlace": "Bogoso", "Notes": "multi\nline; note"}},
		{Geometry: map[string]any{"type": "Point", "coordinates": []any{-1.9, 5.4}},
			Properties: map[string]any{"commodity": "cocoa", "producerCountry": "GH", "area": 2.0, "productionPlace": "Tarkwa", "Notes": "plain"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("plots:\n got %v\nwant %v", got, want)
	}
	// Row 2 spans two lines; row 3 is the blank line; row 4 the second plot.
	if want := []string{"rows[2]", "rows[4]"}; !reflect.DeepEqual(c.Sources, want) {
		t.Errorf("Sources = %v, want %v", c.Sources, want)
	}
	wantCols := map[string]string{"commodity": "Crop", "producerCountry": "Country", "area": "Area (ha)", "productionPlace": "Farm Name"}
	if !reflect.DeepEqual(c.Columns, wantCols) {
		t.Errorf("Columns = %v, want %v", c.Columns, wantCols)
	}
	for in, want := range map[string]string{
		"features[1].properties.area":         "rows[4].Area (ha)",
		"features[0].properties.producerName": "rows[2].producerName",
		"features[0].geometry.coordinates[0]": "rows[2].geometry.coordinates[0]",
		"body":                                "body",
	} {
		if got := c.Path(in); got != want {
			t.Errorf("Path(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every problem of a file is reported at once, at its row and column.
func TestCSVProblemsAllAtOnce(t *testing.T) {
	body := "WKT,externalId,commodity,producerCountry\n" +
		"\"POLYGON ((-2 5,-1.9 5,-1.9 5.1,-2 5))\",A,cocoa,GH\n" +
		"\"POLYGON ((-2 5,-1.9 5,oops))\",B,cocoa,GH\n" +
		",C,cocoa,GH\n" +
		"\"CIRCLE (1 2, 3)\",D,cocoa,GH\n" +
		"\"POINT (1 2)\",E,cocoa\n" +
		"\"POINT (1 2)\",F,cocoa,GH,extra\n"
	wantProblems(t, problemsOf(t, CSV, []byte(body), Options{}),
		geo.Problem{Code: geo.CodeInvalidValue, Path: "rows[3].WKT", Issue: "is not valid WKT"},
		geo.Problem{Code: geo.CodeRequired, Path: "rows[4].WKT", Issue: "is empty"},
		geo.Problem{Code: geo.CodeInvalidGeometryType, Path: "rows[5].WKT", Issue: `not "CIRCLE (1 2, 3)"`},
		geo.Problem{Code: geo.CodeInvalidValue, Path: "rows[6]", Issue: "has 3 cells, the header 4"},
		geo.Problem{Code: geo.CodeInvalidValue, Path: "rows[7]", Issue: "has 5 cells, the header 4"},
	)
}

func TestCSVCoordinateProblems(t *testing.T) {
	body := "latitude,longitude,commodity,producerCountry,area\n" +
		"north,-1.9,cocoa,GH,1\n" +
		"95,-190,cocoa,GH,1\n" +
		",-1.9,cocoa,GH,1\n" +
		"5.1,-1.9,cocoa,GH,1\n"
	wantProblems(t, problemsOf(t, CSV, []byte(body), Options{}),
		geo.Problem{Code: geo.CodeInvalidValue, Path: "rows[2].latitude", Issue: `in decimal degrees, not "north"`},
		geo.Problem{Code: geo.CodeInvalidCoordinateRange, Path: "rows[3].latitude", Issue: "from -90 to 90, not 95"},
		geo.Problem{Code: geo.CodeInvalidCoordinateRange, Path: "rows[3].longitude", Issue: "from -180 to 180, not -190"},
		geo.Problem{Code: geo.CodeRequired, Path: "rows[4].latitude", Issue: "is empty"},
	)
}

func TestCSVHeaderProblems(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       geo.Problem
	}{
		{"no geometry column", "name,commodity\nA,cocoa\n",
			geo.Problem{Code: geo.CodeRequired, Path: "header", Issue: "has no geometry column"}},
		{"latitude alone", "lat,commodity\n5,cocoa\n",
			geo.Problem{Code: geo.CodeRequired, Path: "header", Issue: `latitude column ("lat") but no longitude`}},
		{"two columns for one property", "wkt,country,Producer Country\nPOINT (1 2),GH,GH\n",
			geo.Problem{Code: geo.CodeInvalidValue, Path: "header", Issue: `columns "country" and "Producer Country" are both producerCountry`}},
		{"empty file", "", geo.Problem{Code: geo.CodeRequired, Path: "header", Issue: "the file is empty"}},
		{"not UTF-8", "wkt,producerName\nPOINT (1 2),Jos\xe9\n", geo.Problem{Code: geo.CodeInvalidValue, Path: "body", Issue: "is not UTF-8"}},
		{"broken quotes", "wkt,commodity\n\"POINT (1 2),cocoa\nPOINT (1 2),co\"coa\n",
			geo.Problem{Code: geo.CodeInvalidValue, Path: "rows[2]", Issue: "cannot be read as CSV"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantProblems(t, problemsOf(t, CSV, []byte(tc.body), Options{}), tc.want)
		})
	}
}

func TestTableMaxFeatures(t *testing.T) {
	body := "lat,lon\n1,1\n2,2\n\n3,3\n"
	if _, err := Convert(CSV, []byte(body), Options{MaxFeatures: 2}); !errors.Is(err, geo.ErrTooManyFeatures) {
		t.Errorf("3 rows, at most 2: %v, want geo.ErrTooManyFeatures", err)
	}
	if c := convertOK(t, CSV, []byte(body), Options{MaxFeatures: 3}); len(c.Sources) != 3 {
		t.Errorf("3 rows, at most 3: %d features", len(c.Sources))
	}
}

func TestColumnLetters(t *testing.T) {
	for j, want := range map[int]string{0: "A", 25: "Z", 26: "AA", 27: "AB", 701: "ZZ", 702: "AAA"} {
		if got := columnLetters(j); got != want {
			t.Errorf("columnLetters(%d) = %q, want %q", j, got, want)
		}
	}
}

// Coordinates keep the decimals the file wrote, trailing zeros too: the
// appliance judges precision by them.
func TestConvertCSV_KeepsDecimalsWritten(t *testing.T) {
	body := "wkt,commodity,producerCountry,area\n" +
		`"POLYGON ((-1.500000 6.500000, -1.499000 6.500000, -1.499000 6.501000, -1.500000 6.500000))",cocoa,GH,` + "\n" +
		`"MULTIPOLYGON (((-1.5 6.5, -1.4 6.5, -1.4 6.6, -1.5 6.5)))",cocoa,GH,` + "\n" +
		`"POINT (+1.5 .5)",cocoa,GH,1` + "\n"
	c, err := Convert(CSV, []byte(body), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"type":"Polygon","coordinates":[[[-1.500000,6.500000],[-1.499000,6.500000],[-1.499000,6.501000],[-1.500000,6.500000]]]}`,
		`{"type":"MultiPolygon","coordinates":[[[[-1.5,6.5],[-1.4,6.5],[-1.4,6.6],[-1.5,6.5]]]]}`, // one part stays a MultiPolygon
		`{"type":"Point","coordinates":[1.5,0.5]}`,                                                // not JSON's way of writing numbers: the shortest form
	} {
		if !strings.Contains(string(c.GeoJSON), want) {
			t.Errorf("the GeoJSON lacks %s:\n%s", want, c.GeoJSON)
		}
	}
	c, err = Convert(CSV, []byte("lat;lon;commodity;producerCountry;area\n6.500000;-1,5;cocoa;GH;1\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"Point","coordinates":[-1.5,6.500000]}`; !strings.Contains(string(c.GeoJSON), want) {
		t.Errorf("the GeoJSON lacks %s:\n%s", want, c.GeoJSON)
	}
}

// An area that parses as NaN or infinity stays text, for the appliance to
// refuse: JSON has no such number, and the conversion must not fail on it.
func TestConvertCSV_AreaNotFinite(t *testing.T) {
	c, err := Convert(CSV, []byte("lat,lon,commodity,producerCountry,area\n1.000001,2.000001,cocoa,GH,NaN\n1.000001,2.000001,cocoa,GH,inf\n"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(c.GeoJSON), `"area":"NaN"`) || !strings.Contains(string(c.GeoJSON), `"area":"inf"`) {
		t.Errorf("the areas are not kept as text:\n%s", c.GeoJSON)
	}
}
