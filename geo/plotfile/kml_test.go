package plotfile

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
)

func TestReadKML_GDAL(t *testing.T) {
	c, err := Convert(KML, testdataFile(t, "plots.kml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	assertSamePlots(t, c, "plots.geojson", nil)
	for i, s := range c.Sources {
		if want := fmt.Sprintf("placemarks[%d]", i); s != want {
			t.Errorf("source %d is %s, want %s", i, s, want)
		}
	}
	if len(c.Columns) != 0 {
		t.Errorf("columns %v, want none: the file uses the appliance's names", c.Columns)
	}
}

// The LIBKML driver writes a doc.kml that links to layers/plots.kml.
func TestReadKMZ_GDAL(t *testing.T) {
	c, err := Convert(KMZ, testdataFile(t, "plots.kmz"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	assertSamePlots(t, c, "plots.geojson", nil)
}

// Holes, a MultiGeometry whose second polygon has one, letters beyond
// ASCII, and <name> and <description> (GDAL's from the Name and
// Description fields) kept as the properties name and description.
func TestReadKML_HolesAndNames(t *testing.T) {
	c, err := Convert(KML, testdataFile(t, "extra.kml"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	assertSamePlots(t, c, "extra.geojson", nil)
	props := rawProperties(t, c.GeoJSON)
	if props[0]["name"] != "Talhão 7" || props[0]["description"] != "pasto & soja <2024>" || props[2]["name"] != "Parcelle Soubré" {
		t.Errorf("properties %v, want the names and description of the placemarks", props)
	}
	if _, ok := props[1]["description"]; ok {
		t.Errorf("a placemark without <description> got one: %v", props[1])
	}
}

// kmlDoc is a KML document around placemarks.
func kmlDoc(placemarks ...string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2"><Document>` + strings.Join(placemarks, "\n") + `</Document></kml>`)
}

const kmlSquare = `<Polygon><outerBoundaryIs><LinearRing><coordinates>
	-2.001000,5.501000,0 -1.997000,5.501000,0 -1.997000,5.505000,0 -2.001000,5.505000,0 -2.001000,5.501000,0
</coordinates></LinearRing></outerBoundaryIs></Polygon>`

const kmlCocoaGH = `<ExtendedData><SchemaData><SimpleData name="commodity">cocoa</SimpleData><SimpleData name="producerCountry">GH</SimpleData></SchemaData></ExtendedData>`

// Placemarks at any depth of folders, in document order; names the file
// gives matched to the appliance's (Columns saying which); numbers kept
// as written, for the appliance judges precision by the decimals.
func TestReadKML_PropertiesAndDepth(t *testing.T) {
	body := kmlDoc(
		`<Folder><name>farm</name><Folder><Placemark><name>A</name>
		<ExtendedData><Data name="Producer Country"><value>gh</value></Data>
		<Data name="Area (ha)"><value>1,5</value></Data><Data name="crop"><value>Cocoa</value></Data>
		<Data name="soil"><value>clay</value></Data><Data name="country"><value>CI</value></Data></ExtendedData>
		<Point><coordinates>-1.995000, 5.300000</coordinates></Point></Placemark></Folder></Folder>`,
		`<Placemark><Style><PolyStyle><fill>0</fill></PolyStyle></Style>`+kmlSquare+kmlCocoaGH+`</Placemark>`,
		`<Placemark><MultiGeometry><Point><coordinates>-1.9,5.3000001</coordinates></Point><Point><coordinates>-1.8,5.3000002</coordinates></Point></MultiGeometry>
		<ExtendedData><Data name="area"><value>2</value></Data><Data name="commodity"><value>cocoa</value></Data><Data name="producerCountry"><value>GH</value></Data></ExtendedData></Placemark>`)
	c, err := Convert(KML, body, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.Sources, " "); got != "placemarks[0] placemarks[1] placemarks[2]" {
		t.Errorf("sources %s", got)
	}
	props := rawProperties(t, c.GeoJSON)
	want := map[string]any{"name": "A", "producerCountry": "GH", "area": 1.5, "commodity": "cocoa", "soil": "clay", "country": "CI"}
	if fmt.Sprint(props[0]) != fmt.Sprint(want) {
		t.Errorf("properties %v, want %v", props[0], want)
	}
	wantCols := map[string]string{"producerCountry": "Producer Country", "area": "Area (ha)", "commodity": "crop"}
	if fmt.Sprint(c.Columns) != fmt.Sprint(wantCols) {
		t.Errorf("columns %v, want %v", c.Columns, wantCols)
	}
	if p := c.Path("features[0].properties.area"); p != "placemarks[0].Area (ha)" {
		t.Errorf("path %s", p)
	}
	out := string(c.GeoJSON)
	for _, s := range []string{`[-1.995000,5.300000]`, `[-2.001000,5.501000]`, `"type":"MultiPoint"`, `[-1.8,5.3000002]`} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %s: %s", s, out)
		}
	}
	fs := parsedFeatures(t, c.GeoJSON)
	if fs[0].MaxDecimals != 6 || fs[1].MaxDecimals != 6 {
		t.Errorf("decimals %d and %d, want 6 as written", fs[0].MaxDecimals, fs[1].MaxDecimals)
	}
}

// Every placemark's problem at once, each at its placemark.
func TestReadKML_Problems(t *testing.T) {
	body := kmlDoc(
		`<Placemark>`+kmlSquare+`</Placemark>`,
		`<Placemark><LineString><coordinates>0,0 1,1</coordinates></LineString></Placemark>`,
		`<Placemark><name>no geometry</name></Placemark>`,
		`<Placemark><MultiGeometry><Point><coordinates>0,0</coordinates></Point>`+kmlSquare+`</MultiGeometry></Placemark>`,
		`<Placemark><Point><coordinates>1;2</coordinates></Point></Placemark>`,
		`<Placemark><Point><coordinates>NaN,2</coordinates></Point></Placemark>`,
		`<Placemark><MultiGeometry><Polygon><outerBoundaryIs><LinearRing><coordinates>0,0 1,0 1,1 0,0</coordinates></LinearRing></outerBoundaryIs></Polygon><LineString><coordinates>0,0 1,1</coordinates></LineString></MultiGeometry></Placemark>`,
		`<Placemark><Model><Location/></Model></Placemark>`,
	)
	_, err := Convert(KML, body, Options{})
	ps := problemsFrom(t, err)
	if len(ps) != 7 {
		t.Errorf("%d problems, want 7: %v", len(ps), ps)
	}
	hasProblem(t, ps, "placemarks[1].geometry", "LineString", "does not enclose")
	hasProblem(t, ps, "placemarks[2].geometry", "no geometry")
	hasProblem(t, ps, "placemarks[3].geometry", "both Points and Polygons")
	hasProblem(t, ps, "placemarks[4].geometry", `"1;2"`)
	hasProblem(t, ps, "placemarks[5].geometry", `"NaN"`, "not a number")
	hasProblem(t, ps, "placemarks[6].geometry", "LineString")
	hasProblem(t, ps, "placemarks[7].geometry", "Model")
	for _, p := range ps {
		if p.Path == "placemarks[1].geometry" && p.Code != geo.CodeInvalidGeometryType {
			t.Errorf("code %s, want %s", p.Code, geo.CodeInvalidGeometryType)
		}
	}
}

func TestReadKML_Malformed(t *testing.T) {
	body := []byte("<kml><Document>\n<Placemark>\n<name>x</nam>\n</Placemark></Document></kml>")
	ps := problemsFrom(t, func() error { _, err := Convert(KML, body, Options{}); return err }())
	hasProblem(t, ps, "body", "not well-formed", "line 3")

	ps = problemsFrom(t, func() error { _, err := Convert(KML, []byte(`{"type":"FeatureCollection"}`), Options{}); return err }())
	hasProblem(t, ps, "body", "not well-formed", "line 1", "not XML")

	ps = problemsFrom(t, func() error { _, err := Convert(KML, []byte("<?xml version=\"1.0\"?>\n<gpx/>"), Options{}); return err }())
	hasProblem(t, ps, "body", "line 2", "<gpx>, not <kml>")

	ps = problemsFrom(t, func() error { _, err := Convert(KML, kmlDoc(), Options{}); return err }())
	hasProblem(t, ps, "body", "no Placemark")
}

// A KML in another encoding than UTF-8 says so in its declaration.
func TestReadKML_Latin1(t *testing.T) {
	body := []byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<kml><Document><Placemark><name>Soubr\xe9</name>" + kmlSquare + "</Placemark></Document></kml>")
	c, err := Convert(KML, body, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rawProperties(t, c.GeoJSON)[0]["name"]; got != "Soubré" {
		t.Errorf("name %q, want Soubré", got)
	}
}

func TestReadKML_TooMany(t *testing.T) {
	pm := `<Placemark>` + kmlSquare + `</Placemark>`
	if _, err := Convert(KML, kmlDoc(pm, pm, pm), Options{MaxFeatures: 3}); err != nil {
		t.Errorf("3 placemarks, at most 3: %v", err)
	}
	if _, err := Convert(KML, kmlDoc(pm, pm, pm, pm), Options{MaxFeatures: 3}); !errors.Is(err, geo.ErrTooManyFeatures) {
		t.Errorf("4 placemarks, at most 3: %v, want ErrTooManyFeatures", err)
	}
}

// kmz zips files given as name, content pairs, in that order.
func kmz(t *testing.T, files ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i+1 < len(files); i += 2 {
		w, err := zw.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(files[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadKMZ_Links(t *testing.T) {
	pm := func(id string) string {
		return `<Placemark><ExtendedData><Data name="externalId"><value>` + id + `</value></Data></ExtendedData>` + kmlSquare + `</Placemark>`
	}
	link := func(href string) string { return `<NetworkLink><Link><href>` + href + `</href></Link></NetworkLink>` }

	// doc.kml is read whatever its place; links are read where they
	// stand, relative to the linking file; a loop is read once.
	body := kmz(t,
		"a/first.kml", string(kmlDoc(pm("never"))),
		"a/b.kml", string(kmlDoc(pm("B"), link("../doc.kml"))),
		"doc.kml", string(kmlDoc(pm("A"), link("a/b.kml"), pm("C"))),
	)
	c, err := Convert(KMZ, body, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range rawProperties(t, c.GeoJSON) {
		ids = append(ids, fmt.Sprint(p["externalId"]))
	}
	if got := strings.Join(ids, " "); got != "A B C" {
		t.Errorf("placemarks %s, want A B C", got)
	}

	// Without doc.kml, the first .kml.
	c, err = Convert(KMZ, kmz(t, "images/x.png", "png", "plots.kml", string(kmlDoc(pm("P")))), Options{})
	if err != nil || rawProperties(t, c.GeoJSON)[0]["externalId"] != "P" {
		t.Errorf("first .kml: %v", err)
	}

	// Links out of the archive, or to what it does not hold, are problems.
	body = kmz(t, "doc.kml", string(kmlDoc(pm("A"), link("http://example.com/more.kml"), link("missing.kml"), link("../up.kml"))))
	ps := problemsFrom(t, func() error { _, err := Convert(KMZ, body, Options{}); return err }())
	hasProblem(t, ps, "body", `"http://example.com/more.kml"`, "not followed")
	hasProblem(t, ps, "body", `"missing.kml"`, "not followed")
	hasProblem(t, ps, "body", `"../up.kml"`, "not followed")

	// A KML's links are never followed.
	ps = problemsFrom(t, func() error { _, err := Convert(KML, kmlDoc(pm("A"), link("b.kml")), Options{}); return err }())
	hasProblem(t, ps, "body", `"b.kml"`, "not followed")
}

func TestReadKMZ_NotKMZ(t *testing.T) {
	ps := problemsFrom(t, func() error { _, err := Convert(KMZ, testdataFile(t, "plots.kml"), Options{}); return err }())
	hasProblem(t, ps, "body", "not a KMZ")
	ps = problemsFrom(t, func() error { _, err := Convert(KMZ, kmz(t, "readme.txt", "hello"), Options{}); return err }())
	hasProblem(t, ps, "body", "no .kml")
	ps = problemsFrom(t, func() error { _, err := Convert(KMZ, kmz(t, "doc.kml", "<kml><Placemark>"), Options{}); return err }())
	hasProblem(t, ps, "body", "doc.kml line 1")
}
