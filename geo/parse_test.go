package geo_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tidwall/geojson"
	"github.com/tidwall/geojson/geometry"

	"github.com/eudr/eudr/geo"
)

var update = flag.Bool("update", false, "rewrite testdata/invalid/*.golden.json from the current output")

// TestParseFeatureCollection_Invalid runs every testdata/invalid/*.geojson
// and compares the problems with the .golden.json beside it.
func TestParseFeatureCollection_Invalid(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.geojson")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test inputs: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".geojson")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			feats, err := geo.ParseFeatureCollection(body, geo.ParseOptions{MaxFeatures: 100})
			var probs geo.Problems
			if !errors.As(err, &probs) || len(probs) == 0 {
				t.Fatalf("%s: got %d features, err %v; want problems", file, len(feats), err)
			}
			if feats != nil {
				t.Errorf("%s: got %d features with the problems, want none", file, len(feats))
			}
			got, err := json.MarshalIndent(probs, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := strings.TrimSuffix(file, ".geojson") + ".golden.json"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: problems differ\ngot:\n%s\nwant:\n%s", file, got, want)
			}
		})
	}
}

// TestParseFeatureCollection_Valid parses every testdata/valid/*.geojson:
// no problems, and Check finds nothing wrong with any feature.
func TestParseFeatureCollection_Valid(t *testing.T) {
	files, err := filepath.Glob("testdata/valid/*.geojson")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test inputs: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".geojson"), func(t *testing.T) {
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			feats, err := geo.ParseFeatureCollection(body, geo.ParseOptions{})
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			for _, f := range feats {
				if reason, detail := geo.Check(f); reason != "" {
					t.Errorf("%s: feature %d: Check = %s (%s), want none", file, f.Index, reason, detail)
				}
				if !json.Valid(f.Raw) {
					t.Errorf("%s: feature %d: Raw is not JSON: %s", file, f.Index, f.Raw)
				}
			}
		})
	}
}

func mustParse(t *testing.T, body string) []geo.Feature {
	t.Helper()
	feats, err := geo.ParseFeatureCollection([]byte(body), geo.ParseOptions{})
	if err != nil {
		t.Fatalf("parse %s: %v", body, err)
	}
	return feats
}

func TestParseFeatureCollection_Decoded(t *testing.T) {
	body, err := os.ReadFile("testdata/valid/points.geojson")
	if err != nil {
		t.Fatal(err)
	}
	feats := mustParse(t, string(body))
	if len(feats) != 5 {
		t.Fatalf("got %d features, want 5", len(feats))
	}
	f := feats[3]
	if f.Index != 3 || f.Geometry.Type != geo.TypePoint || len(f.Geometry.Points) != 1 ||
		f.Geometry.Points[0] != (geo.Position{-47.123456, -15.123456}) || f.Geometry.Polygons != nil {
		t.Errorf("feature 3: got %+v", f)
	}
	if p := f.Properties; p.Commodity != "cattle" || p.ProducerCountry != "BR" || p.Area == nil || *p.Area != 250 {
		t.Errorf("feature 3: properties %+v", p)
	}
	if want := `{"type":"Feature","geometry":{"type":"Point","coordinates":[-47.123456,-15.123456]},"properties":{"commodity":"cattle","producerCountry":"BR","area":250}}`; string(f.Raw) != want {
		t.Errorf("feature 3: Raw\ngot  %s\nwant %s", f.Raw, want)
	}
	mp := feats[4].Geometry
	if mp.Type != geo.TypeMultiPoint || len(mp.Points) != 2 || mp.Points[1] != (geo.Position{38.133456, 7.133456}) || !mp.IsPoint() {
		t.Errorf("feature 4: geometry %+v", mp)
	}

	body, err = os.ReadFile("testdata/valid/gis-export.geojson")
	if err != nil {
		t.Fatal(err)
	}
	f = mustParse(t, string(body))[0]
	ring := f.Geometry.Polygons[0][0]
	if len(f.Geometry.Polygons) != 1 || len(f.Geometry.Polygons[0]) != 1 || len(ring) != 6 ||
		ring[3] != (geo.Position{-75.1229567, 4.1239567}) {
		t.Errorf("gis export: geometry %+v", f.Geometry)
	}
	// "Area", as the EU spells it, is read as area.
	if p := f.Properties; p.ProducerName != `Finca Águila "La Esperanza"` || p.Area == nil || *p.Area != 99 || p.Commodity != "coffee" {
		t.Errorf("gis export: properties %+v", p)
	}
	if f.MaxDecimals != 7 {
		t.Errorf("gis export: MaxDecimals %d, want 7", f.MaxDecimals)
	}

	body, err = os.ReadFile("testdata/valid/positions-3d.geojson")
	if err != nil {
		t.Fatal(err)
	}
	feats = mustParse(t, string(body))
	if got := feats[0].Geometry.Polygons[0][0][2]; got != (geo.Position{24.133456, 60.133456}) {
		t.Errorf("3D position: got %v, want the altitude dropped", got)
	}
	if got := feats[1].Geometry.Points[0]; got != (geo.Position{24.123456, 60.123456}) {
		t.Errorf("3D point: got %v", got)
	}

	body, err = os.ReadFile("testdata/valid/multipolygon.geojson")
	if err != nil {
		t.Fatal(err)
	}
	f = mustParse(t, string(body))[0]
	if g := f.Geometry; g.Type != geo.TypeMultiPolygon || len(g.Polygons) != 2 || len(g.Polygons[1][0]) != 4 || g.IsPoint() {
		t.Errorf("multipolygon: geometry %+v", g)
	}
	if p := f.Properties; p.ProducerName != "Kebun Sawit Sdn Bhd" || p.ProductionPlace != "Lot 12" || p.Commodity != "oil_palm" {
		t.Errorf("multipolygon: properties %+v", p)
	}
}

// feature wraps a geometry (JSON) in a one-feature collection with valid
// properties.
func feature(typ, coords string) string {
	props := `{"commodity":"cocoa","producerCountry":"CI"}`
	if typ == geo.TypePoint || typ == geo.TypeMultiPoint {
		props = `{"commodity":"cocoa","producerCountry":"CI","area":1}`
	}
	return fmt.Sprintf(`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":%q,"coordinates":%s},"properties":%s}]}`, typ, coords, props)
}

func TestParseFeatureCollection_MaxDecimals(t *testing.T) {
	tests := []struct {
		lon, lat string
		want     int
	}{
		{"-61.5", "-10", 1},
		{"1.50", "2", 2},
		{"1.500000", "2", 6},
		{"100", "0", 0},
		{"-0.0", "0", 1},
		{"1e-7", "0", 7},
		{"1.5e-7", "0", 8},
		{"1.5E-7", "0", 8},
		{"1.234567e2", "0", 4},
		{"12.3456789e+1", "0", 6},
		{"1e2", "0.1234567", 7},
		{"-61.123456789012345678", "-10.1", 18},
		{"0.1e-300", "0", 301},
	}
	for _, tt := range tests {
		f := mustParse(t, feature(geo.TypePoint, "["+tt.lon+","+tt.lat+"]"))[0]
		if f.MaxDecimals != tt.want {
			t.Errorf("[%s,%s]: MaxDecimals %d, want %d", tt.lon, tt.lat, f.MaxDecimals, tt.want)
		}
	}
	// The altitude is not a longitude or latitude.
	f := mustParse(t, feature(geo.TypePoint, "[1.5,2.25,3.1234567]"))[0]
	if f.MaxDecimals != 2 {
		t.Errorf("altitude counted: MaxDecimals %d, want 2", f.MaxDecimals)
	}
	// The most of all positions of the feature.
	f = mustParse(t, feature(geo.TypePolygon, "[[[1.5,2.5],[1.6,2.5],[1.6,2.612345],[1.5,2.5]]]"))[0]
	if f.MaxDecimals != 6 {
		t.Errorf("polygon: MaxDecimals %d, want 6", f.MaxDecimals)
	}
}

func TestParseFeatureCollection_Malformed(t *testing.T) {
	valid := feature(geo.TypePoint, "[1.123456,2.123456]")
	tests := []struct {
		name, body, issue string
	}{
		{"Empty", "", "the body is empty"},
		{"WhiteSpace", " \n\t", "the body is empty"},
		{"Truncated", valid[:len(valid)-3], "unexpected end of input"},
		{"TrailingData", valid + "}", "expected end of input after the JSON value"},
		{"TrailingValue", valid + ` {"type":"FeatureCollection"}`, "line 1, column"},
		{"TrailingComma", `{"type":"FeatureCollection","features":[1,]}`, `unexpected ']', expected a value`},
		{"MissingColon", `{"type" "FeatureCollection"}`, `expected ':'`},
		{"SingleQuotes", `{'type':'FeatureCollection'}`, "a member name in double quotes"},
		{"BadLiteral", `{"type":"FeatureCollection","features":[tru]}`, "expected true"},
		{"LeadingZero", feature(geo.TypePoint, "[01,2]"), `unexpected '1', expected ',' or ']'`},
		{"BareMinus", feature(geo.TypePoint, "[-,2]"), "expected a digit"},
		{"NoFraction", feature(geo.TypePoint, "[1.,2]"), "a digit after the decimal point"},
		{"NoExponent", feature(geo.TypePoint, "[1e,2]"), "a digit in the exponent"},
		{"PlusSign", feature(geo.TypePoint, "[+1,2]"), "expected a value"},
		{"NaN", feature(geo.TypePoint, "[NaN,2]"), "expected a value"},
		{"ControlCharacter", "{\"type\":\"Feature\tCollection\"}", "control character 0x09"},
		{"BadEscape", `{"type":"Feature\xCollection"}`, `invalid escape "\\x"`},
		{"ShortUnicodeEscape", `{"type":"\u12"}`, `invalid \u escape`},
		{"InvalidUTF8", "{\"type\":\"Feature\xffCollection\"}", "invalid UTF-8"},
		{"InvalidUTF8AfterEscape", "{\"type\":\"\\n\xc3(\"}", "invalid UTF-8"},
		{"UnterminatedString", `{"type":"FeatureCollection`, "end of input in string"},
		{"DeepNesting", strings.Repeat("[", 600) + strings.Repeat("]", 600), "nesting deeper than 512"},
		{"DeepNestingInProperties", strings.Replace(valid, `"area":1`, `"area":1,"x":`+strings.Repeat("[", 600)+strings.Repeat("]", 600), 1), "nesting deeper than 512"},
		{"LineAndColumn", "{\n  \"type\": \"FeatureCollection\",\n  \"features\": [\n    {]\n}", "line 4, column 6 (byte 54)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := geo.ParseFeatureCollection([]byte(tt.body), geo.ParseOptions{})
			var probs geo.Problems
			if !errors.As(err, &probs) || len(probs) != 1 {
				t.Fatalf("%q: got %v, want one MALFORMED_JSON", tt.body, err)
			}
			if p := probs[0]; p.Code != geo.CodeMalformedJSON || p.Path != "body" || !strings.Contains(p.Issue, tt.issue) {
				t.Errorf("%q: got %v, want MALFORMED_JSON at body mentioning %q", tt.body, p, tt.issue)
			}
		})
	}
}

func TestParseFeatureCollection_Strings(t *testing.T) {
	body := `{"type":"Feature\u0043ollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1.123456,2.123456]},` +
		`"properties":{"commodity":"c\u006fcoa","producerCountry":"CI","area":1,` +
		`"producerName":"Jos\u00e9 \ud83c\udf31 \ud83c x\/y \"q\" \\ \b\f\n\r\t","productionPlace":"Łódź \udc00"}}]}`
	f := mustParse(t, body)[0]
	if f.Properties.Commodity != "cocoa" {
		t.Errorf("escaped commodity: got %q", f.Properties.Commodity)
	}
	if want := "José 🌱 \ufffd x/y \"q\" \\ \b\f\n\r\t"; f.Properties.ProducerName != want {
		t.Errorf("producerName: got %q, want %q", f.Properties.ProducerName, want)
	}
	if want := "Łódź \ufffd"; f.Properties.ProductionPlace != want {
		t.Errorf("productionPlace: got %q, want %q", f.Properties.ProductionPlace, want)
	}
}

func TestParseFeatureCollection_Lengths(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) }
	props := func(name string, n int) string {
		return fmt.Sprintf(`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1.123456,2.123456]},`+
			`"properties":{"commodity":"cocoa","producerCountry":"CI","area":1,%q:%q}}]}`, name, long(n))
	}
	tests := []struct {
		name string
		max  int
	}{
		{"producerName", geo.MaxNameLen},
		{"productionPlace", geo.MaxNameLen},
		{"externalId", geo.MaxExternalIDLen},
	}
	for _, tt := range tests {
		if _, err := geo.ParseFeatureCollection([]byte(props(tt.name, tt.max)), geo.ParseOptions{}); err != nil {
			t.Errorf("%s of %d characters: %v", tt.name, tt.max, err)
		}
		_, err := geo.ParseFeatureCollection([]byte(props(tt.name, tt.max+1)), geo.ParseOptions{})
		want := geo.Problems{{Code: geo.CodeInvalidValue, Path: "features[0].properties." + tt.name,
			Issue: fmt.Sprintf("must be at most %d characters", tt.max)}}
		if fmt.Sprint(err) != fmt.Sprint(want) {
			t.Errorf("%s of %d characters: got %v, want %v", tt.name, tt.max+1, err, want)
		}
	}
	for _, id := range []string{"V1", "a", "vendor_12.3-x", strings.Repeat("9", 64), ""} {
		if _, err := geo.ParseFeatureCollection([]byte(strings.Replace(props("x", 1), `"x":"é"`, `"supplierId":"`+id+`"`, 1)), geo.ParseOptions{}); err != nil {
			t.Errorf("supplierId %q: %v", id, err)
		}
	}
	for _, id := range []string{"-V1", "V 1", strings.Repeat("9", 65), "Vé"} {
		_, err := geo.ParseFeatureCollection([]byte(strings.Replace(props("x", 1), `"x":"é"`, `"supplierId":"`+id+`"`, 1)), geo.ParseOptions{})
		var probs geo.Problems
		if !errors.As(err, &probs) || len(probs) != 1 || probs[0].Path != "features[0].properties.supplierId" {
			t.Errorf("supplierId %q: got %v, want one problem at features[0].properties.supplierId", id, err)
		}
	}
}

func collection(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"type":"Feature","geometry":{"type":"Point","coordinates":[1.123456,%d.123456]},"properties":{"commodity":"cocoa","producerCountry":"CI","area":1}}`, i%90)
	}
	b.WriteString("]}")
	return b.Bytes()
}

func TestParseFeatureCollection_MaxFeatures(t *testing.T) {
	feats, err := geo.ParseFeatureCollection(collection(3), geo.ParseOptions{MaxFeatures: 3})
	if err != nil || len(feats) != 3 {
		t.Fatalf("3 features, limit 3: got %d, %v", len(feats), err)
	}
	for i, f := range feats {
		if f.Index != i {
			t.Errorf("feature %d has Index %d", i, f.Index)
		}
	}
	_, err = geo.ParseFeatureCollection(collection(4), geo.ParseOptions{MaxFeatures: 3})
	if !errors.Is(err, geo.ErrTooManyFeatures) {
		t.Errorf("4 features, limit 3: got %v, want ErrTooManyFeatures", err)
	}
	// The limit is decided before the rest is read.
	body := append(collection(4)[:len(collection(4))-2], []byte(`,{]`)...)
	if _, err = geo.ParseFeatureCollection(body, geo.ParseOptions{MaxFeatures: 3}); !errors.Is(err, geo.ErrTooManyFeatures) {
		t.Errorf("4 features then malformed, limit 3: got %v, want ErrTooManyFeatures", err)
	}
	if feats, err := geo.ParseFeatureCollection(collection(50), geo.ParseOptions{}); err != nil || len(feats) != 50 {
		t.Errorf("no limit: got %d features, %v", len(feats), err)
	}
}

func TestParseFeatureCollection_MaxProblems(t *testing.T) {
	// 20 points out of range, 2 problems each... one each: lat and lon.
	body := bytes.ReplaceAll(collection(20), []byte("[1.123456,"), []byte("[-300,"))
	_, err := geo.ParseFeatureCollection(body, geo.ParseOptions{MaxProblems: 5})
	var probs geo.Problems
	if !errors.As(err, &probs) {
		t.Fatalf("got %v, want problems", err)
	}
	if len(probs) != 6 {
		t.Fatalf("got %d problems, want 5 and TOO_MANY_PROBLEMS: %v", len(probs), probs)
	}
	for i, p := range probs[:5] {
		if want := fmt.Sprintf("features[%d].geometry.coordinates", i); p.Code != geo.CodeInvalidCoordinateRange || p.Path != want {
			t.Errorf("problem %d: got %v, want INVALID_COORDINATE_RANGE at %s", i, p, want)
		}
	}
	want := geo.Problem{Code: geo.CodeTooManyProblems, Path: "body", Issue: "15 more problems are not listed; fix these and send again"}
	if probs[5] != want {
		t.Errorf("last problem: got %v, want %v", probs[5], want)
	}
	// The collection's own problems come first even when found last.
	body = bytes.Replace(body, []byte(`"type":"FeatureCollection"`), []byte(`"type":"Collection"`), 1)
	_, err = geo.ParseFeatureCollection(body, geo.ParseOptions{MaxProblems: 5})
	if !errors.As(err, &probs) || len(probs) != 6 || probs[0].Path != "type" || probs[5].Issue != "16 more problems are not listed; fix these and send again" {
		t.Errorf("with a bad type: got %v", err)
	}
	// By default up to DefaultMaxProblems.
	body = bytes.ReplaceAll(collection(1500), []byte("[1.123456,"), []byte("[-300,"))
	_, err = geo.ParseFeatureCollection(body, geo.ParseOptions{})
	if !errors.As(err, &probs) || len(probs) != geo.DefaultMaxProblems+1 {
		t.Errorf("default: got %d problems, want %d", len(probs), geo.DefaultMaxProblems+1)
	}
}

func TestProblems_Error(t *testing.T) {
	p := geo.Problem{Code: "REQUIRED", Path: "features[0].properties.commodity", Issue: "is required"}
	tests := []struct {
		probs geo.Problems
		want  string
	}{
		{nil, "no problems"},
		{geo.Problems{p}, "features[0].properties.commodity: REQUIRED: is required"},
		{geo.Problems{p, p}, "2 problems: features[0].properties.commodity: REQUIRED: is required; features[0].properties.commodity: REQUIRED: is required"},
		{geo.Problems{p, p, p, p, p}, "5 problems: " + strings.Repeat(p.String()+"; ", 3) + "and 2 more"},
	}
	for _, tt := range tests {
		if got := tt.probs.Error(); got != tt.want {
			t.Errorf("%d problems: got %q, want %q", len(tt.probs), got, tt.want)
		}
	}
	if err := geo.Problems(nil).Err(); err != nil {
		t.Errorf("Err of no problems: got %v, want nil", err)
	}
	var probs geo.Problems
	if err := (geo.Problems{p}).Err(); !errors.As(fmt.Errorf("submit: %w", err), &probs) || len(probs) != 1 {
		t.Errorf("Err of one problem: got %v", err)
	}
}

func TestParseFeature(t *testing.T) {
	feats := mustParse(t, string(collection(3)))
	f, err := geo.ParseFeature(feats[2].Raw, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f, feats[2]) {
		t.Errorf("reparsed Raw: got %+v, want %+v", f, feats[2])
	}
	_, err = geo.ParseFeature([]byte(`{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{}}`), 7)
	want := "3 problems: features[7].properties.commodity: REQUIRED"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("bad feature: got %v, want %s...", err, want)
	}
	for _, raw := range []string{"", `{"type":"Feature"} x`, `{"type":`} {
		_, err = geo.ParseFeature([]byte(raw), 0)
		var probs geo.Problems
		if !errors.As(err, &probs) || probs[0].Code != geo.CodeMalformedJSON {
			t.Errorf("%q: got %v, want MALFORMED_JSON", raw, err)
		}
	}
}

func TestGeometry_Object(t *testing.T) {
	body, err := os.ReadFile("testdata/valid/multipolygon.geojson")
	if err != nil {
		t.Fatal(err)
	}
	mp := mustParse(t, string(body))[0].Geometry.Object()
	if _, ok := mp.(*geojson.MultiPolygon); !ok {
		t.Fatalf("MultiPolygon: got %T", mp)
	}
	inside := geojson.NewRect(geometry.Rect{Min: geometry.Point{X: 101.105, Y: 2.105}, Max: geometry.Point{X: 101.106, Y: 2.106}})
	between := geojson.NewRect(geometry.Rect{Min: geometry.Point{X: 101.1102, Y: 2.101}, Max: geometry.Point{X: 101.1198, Y: 2.109}})
	if !mp.Intersects(inside) || mp.Intersects(between) {
		t.Errorf("MultiPolygon intersects: inside %v (want true), between the parts %v (want false)", mp.Intersects(inside), mp.Intersects(between))
	}
	pts := mustParse(t, feature(geo.TypeMultiPoint, "[[10.5,10.5],[20.5,20.5]]"))[0].Geometry.Object()
	box := geojson.NewRect(geometry.Rect{Min: geometry.Point{X: 10, Y: 10}, Max: geometry.Point{X: 11, Y: 11}})
	if _, ok := pts.(*geojson.MultiPoint); !ok || !pts.Intersects(box) {
		t.Errorf("MultiPoint: got %T, intersects the box %v", pts, pts.Intersects(box))
	}
	pt := mustParse(t, feature(geo.TypePoint, "[-61.5,-10.5]"))[0].Geometry.Object()
	if c := pt.Center(); c != (geometry.Point{X: -61.5, Y: -10.5}) {
		t.Errorf("Point: center %v", c)
	}
	poly := mustParse(t, feature(geo.TypePolygon, "[[[-62,-11],[-61,-11],[-61,-10],[-62,-11]],[[-61.9,-10.95],[-61.2,-10.95],[-61.2,-10.3],[-61.9,-10.95]]]"))[0].Geometry.Object()
	if p, ok := poly.(*geojson.Polygon); !ok || len(p.Base().Holes) != 1 {
		t.Errorf("Polygon with a hole: got %T", poly)
	}
	if (geo.Geometry{}).Object() != nil || (geo.Geometry{Type: geo.TypePolygon}).Object() != nil {
		t.Error("an empty geometry should give a nil object")
	}
}

func TestIsCountryCode(t *testing.T) {
	for _, c := range []string{"BR", "CI", "XK", "AX", "ZW", "AD", "SS", "BQ"} {
		if !geo.IsCountryCode(c) {
			t.Errorf("%s: got false, want true", c)
		}
	}
	for _, c := range []string{"", "br", "Br", "BRA", "ZZ", "UK", "EU", "XX", "A", "É1"} {
		if geo.IsCountryCode(c) {
			t.Errorf("%q: got true, want false", c)
		}
	}
	n := 0
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			if geo.IsCountryCode(string([]rune{a, b})) {
				n++
			}
		}
	}
	if n != 250 {
		t.Errorf("got %d codes, want 249 and XK", n)
	}
}

func TestIsCommodity(t *testing.T) {
	for _, c := range geo.Commodities() {
		if !geo.IsCommodity(c) {
			t.Errorf("%s: got false", c)
		}
	}
	if len(geo.Commodities()) != 7 {
		t.Errorf("got %d commodities, want 7", len(geo.Commodities()))
	}
	for _, c := range []string{"", "Cocoa", "soy", "palm_oil", "timber"} {
		if geo.IsCommodity(c) {
			t.Errorf("%q: got true, want false", c)
		}
	}
}

func TestParseFeatureCollection_Each(t *testing.T) {
	body := []byte(`{"type":"FeatureCollection","features":[` +
		`{"type":"Feature","geometry":{"type":"Point","coordinates":[1.000001,2.000001]},"properties":{"commodity":"cocoa","producerCountry":"GH","area":1}},` +
		`{"type":"Feature","geometry":{"type":"Point","coordinates":[3.000001,4.000001]},"properties":{"commodity":"coffee","producerCountry":"GH","area":2}},` +
		`{"type":"Feature","geometry":{"type":"Point","coordinates":[5.000001,6.000001]},"properties":{"commodity":"soya","producerCountry":"GH","area":3}}]}`)
	var got []string
	feats, err := geo.ParseFeatureCollection(body, geo.ParseOptions{Each: func(f geo.Feature) error {
		got = append(got, fmt.Sprintf("%d:%s:%v", f.Index, f.Properties.Commodity, f.Geometry.Points[0]))
		return nil
	}})
	if err != nil || feats != nil || strings.Join(got, " ") != "0:cocoa:[1.000001 2.000001] 1:coffee:[3.000001 4.000001] 2:soya:[5.000001 6.000001]" {
		t.Errorf("Each: %v, features %v, err %v", got, feats, err)
	}
	stop := errors.New("stop")
	n := 0
	_, err = geo.ParseFeatureCollection(body, geo.ParseOptions{Each: func(geo.Feature) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	}})
	if !errors.Is(err, stop) || n != 2 {
		t.Errorf("Each returning an error: %v after %d features", err, n)
	}
	// A problem anywhere still comes back as Problems; no feature after it
	// is handed out.
	bad := bytes.Replace(body, []byte(`"coffee"`), []byte(`"tea"`), 1)
	n = 0
	_, err = geo.ParseFeatureCollection(bad, geo.ParseOptions{Each: func(geo.Feature) error { n++; return nil }})
	var probs geo.Problems
	if !errors.As(err, &probs) || n != 1 {
		t.Errorf("with a problem: %v, %d features handed out", err, n)
	}
}
