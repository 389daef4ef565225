package server

import (
	"context"
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// exportPlots are four plots of a cocoa producer in Nigeria: a polygon with
// coordinates of 7 decimals, a point (without externalId) with its area,
// a multipolygon, and a self-intersecting polygon (FAILED).
var exportPlots = collection(
	`{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[4.9990004,5.9990006],[5.0010006,5.9990006],[5.0010006,6.0010004],[4.9990004,6.0010004],[4.9990004,5.9990006]]]},`+
		`"properties":{"commodity":"cocoa","producerCountry":"NG","producerName":"Kofi & Sons <Ltd>","productionPlace":"Ondo","externalId":"fine","supplierId":"V-1"}}`,
	`{"type":"Feature","geometry":{"type":"Point","coordinates":[5.020000,6.020000]},"properties":{"commodity":"cocoa","producerCountry":"NG","area":1.5}}`,
	multiPlot("multi", box(5.1, 6.1, 5.101, 6.101), box(5.11, 6.11, 5.111, 6.111)),
	plot("bowtie", "[[[5.000000,6.000000],[5.001000,6.001000],[5.001000,6.000000],[5.000000,6.001000],[5.000000,6.000000]]]"),
)

// exportedApp is an app whose sandbox holds exportPlots, screened, and a
// read key; and the plots' records by externalId ("" for the point).
func exportedApp(t *testing.T) (*testApp, string, map[string]polygonResponse) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	acc, w := ta.postPolygons(key, "exp-1", exportPlots)
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST /polygons: %d %s", w.Code, w.Body)
	}
	ta.waitJob(key, acc.JobID, storage.JobCompleted)
	var list []polygonResponse
	mustDecode(t, ta.do("GET", eudrPrefix+"/polygons", "", "X-API-Key", key), &list)
	byName := map[string]polygonResponse{}
	for _, p := range list {
		name := ""
		if p.ExternalID != nil {
			name = *p.ExternalID
		}
		byName[name] = p
	}
	if len(byName) != 4 || byName["bowtie"].EUDRStatus != "FAILED" || byName["fine"].EUDRStatus != "COMPLIANT" ||
		byName[""].EUDRStatus != "COMPLIANT" || byName["multi"].EUDRStatus != "COMPLIANT" {
		t.Fatalf("plots: %+v", list)
	}
	return ta, key, byName
}

// sevenDecimals finds a number written with more than 6 decimals.
var sevenDecimals = regexp.MustCompile(`\d\.\d{7}`)

// The GeoJSON export is the EU's file profile: a FeatureCollection whose
// features carry the EU's property names (and commodity), Area for the
// point only, coordinates at 6 decimals, rounded.
func TestPolygonsExport_GeoJSON(t *testing.T) {
	ta, key, plots := exportedApp(t)
	w := ta.do("GET", eudrPrefix+"/polygons/export?format=geojson", "", "X-API-Key", key)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/geo+json" ||
		w.Header().Get("Content-Disposition") != `attachment; filename="polygons.geojson"` {
		t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body)
	}
	body := w.Body.String()
	if m := sevenDecimals.FindString(body); m != "" || !strings.Contains(body, "[[[4.999000,5.999001],[5.001001,5.999001],[5.001001,6.001000]") {
		t.Errorf("coordinates not at 6 decimals, rounded (%q): %s", m, body)
	}
	if !strings.Contains(body, `"Kofi & Sons <Ltd>"`) {
		t.Errorf("producer name escaped: %s", body)
	}
	var fc struct {
		Type     string `json:"type"`
		Features []struct {
			Type     string `json:"type"`
			Geometry struct {
				Type string `json:"type"`
			} `json:"geometry"`
			Properties map[string]any `json:"properties"`
		} `json:"features"`
	}
	mustDecode(t, w, &fc)
	if fc.Type != "FeatureCollection" || len(fc.Features) != len(plots) {
		t.Fatalf("got %s", body)
	}
	want := map[string]map[string]any{
		"Polygon":      {"ProducerCountry": "NG", "ProducerName": "Kofi & Sons <Ltd>", "ProductionPlace": "Ondo", "commodity": "cocoa"},
		"Point":        {"ProducerCountry": "NG", "Area": 1.5, "commodity": "cocoa"},
		"MultiPolygon": {"ProducerCountry": "NG", "commodity": "cocoa"},
	}
	seen := 0
	for _, f := range fc.Features {
		w, ok := want[f.Geometry.Type]
		if f.Type != "Feature" || !ok {
			t.Errorf("feature %+v", f)
			continue
		}
		if f.Geometry.Type == "Polygon" && f.Properties["ProducerName"] == nil {
			w = map[string]any{"ProducerCountry": "NG", "commodity": "cocoa"} // the bowtie
		}
		if !maps.Equal(f.Properties, w) {
			t.Errorf("%s properties %v, want %v", f.Geometry.Type, f.Properties, w)
		}
		seen++
	}
	if seen != 4 {
		t.Errorf("%d features as expected, want 4", seen)
	}

	// Filters as the list's: the FAILED one alone.
	w = ta.do("GET", eudrPrefix+"/polygons/export?eudrStatus=FAILED", "", "X-API-Key", key)
	fc.Features = nil
	mustDecode(t, w, &fc)
	if len(fc.Features) != 1 || w.Header().Get("Content-Type") != "application/geo+json" {
		t.Errorf("FAILED only, geojson by default: %s", w.Body)
	}
}

// The CSV export: a row per plot with the fields GET /polygons lists and
// the geometry as WKT at 6 decimals.
func TestPolygonsExport_CSV(t *testing.T) {
	ta, key, plots := exportedApp(t)
	w := ta.do("GET", eudrPrefix+"/polygons/export?format=csv", "", "X-API-Key", key)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/csv; charset=utf-8" ||
		w.Header().Get("Content-Disposition") != `attachment; filename="polygons.csv"` {
		t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body)
	}
	rows, err := csv.NewReader(w.Body).ReadAll()
	if err != nil || len(rows) != 5 {
		t.Fatalf("%d rows (%v)", len(rows), err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	byName := map[string][]string{}
	for _, r := range rows[1:] {
		byName[r[col["externalId"]]] = r
	}
	fine, point, bowtie := byName["fine"], byName[""], byName["bowtie"]
	for _, c := range []struct {
		row        []string
		name, want string
	}{
		{fine, "polygonId", plots["fine"].PolygonID},
		{fine, "producerName", "Kofi & Sons <Ltd>"},
		{fine, "supplierId", "V-1"},
		{fine, "eudrStatus", "COMPLIANT"},
		{fine, "riskScore", "0"},
		{fine, "wkt", "POLYGON ((4.999000 5.999001, 5.001001 5.999001, 5.001001 6.001000, 4.999000 6.001000, 4.999000 5.999001))"},
		{point, "area", "1.5"},
		{point, "measuredAreaHa", "1.5"},
		{point, "geometryType", "Point"},
		{point, "wkt", "POINT (5.020000 6.020000)"},
		{byName["multi"], "wkt", "MULTIPOLYGON (((5.100000 6.100000, 5.101000 6.100000, 5.101000 6.101000, 5.100000 6.101000, 5.100000 6.100000)), " +
			"((5.110000 6.110000, 5.111000 6.110000, 5.111000 6.111000, 5.110000 6.111000, 5.110000 6.110000)))"},
		{bowtie, "eudrStatus", "FAILED"},
		{bowtie, "failureReason", "SELF_INTERSECTION"},
		{bowtie, "riskScore", ""},
		{bowtie, "deforestedHa", ""},
	} {
		if len(c.row) == 0 {
			t.Fatalf("no row for %s", c.name)
		}
		if got := c.row[col[c.name]]; got != c.want {
			t.Errorf("%s of %s: %q, want %q", c.name, c.row[0], got, c.want)
		}
	}
	if a := fine[col["measuredAreaHa"]]; a == "" || a == "0" {
		t.Errorf("areaHa of a polygon: %q", a)
	}
}

// kmlDoc is what the test reads of a KML document.
type kmlDoc struct {
	Placemarks []struct {
		Name string `xml:"name"`
		Data []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value"`
		} `xml:"ExtendedData>Data"`
		Point *struct {
			Coordinates string `xml:"coordinates"`
		} `xml:"Point"`
		Polygon *struct {
			Outer string `xml:"outerBoundaryIs>LinearRing>coordinates"`
		} `xml:"Polygon"`
		MultiPolygons []struct {
			Outer string `xml:"outerBoundaryIs>LinearRing>coordinates"`
		} `xml:"MultiGeometry>Polygon"`
	} `xml:"Document>Placemark"`
}

// The KML export: a Placemark per plot named by externalId or polygonId,
// its fields as ExtendedData, its geometry at 6 decimals.
func TestPolygonsExport_KML(t *testing.T) {
	ta, key, plots := exportedApp(t)
	w := ta.do("GET", eudrPrefix+"/polygons/export?format=kml&commodity=cocoa", "", "X-API-Key", key)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/vnd.google-earth.kml+xml" ||
		w.Header().Get("Content-Disposition") != `attachment; filename="polygons.kml"` {
		t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body)
	}
	var doc kmlDoc
	if err := xml.Unmarshal(w.Body.Bytes(), &doc); err != nil || len(doc.Placemarks) != 4 {
		t.Fatalf("%v: %s", err, w.Body)
	}
	for _, pm := range doc.Placemarks {
		data := map[string]string{}
		for _, d := range pm.Data {
			data[d.Name] = d.Value
		}
		switch pm.Name {
		case "fine":
			if data["producerName"] != "Kofi & Sons <Ltd>" || data["polygonId"] != plots["fine"].PolygonID || data["eudrStatus"] != "COMPLIANT" ||
				pm.Polygon == nil || pm.Polygon.Outer != "4.999000,5.999001 5.001001,5.999001 5.001001,6.001000 4.999000,6.001000 4.999000,5.999001" {
				t.Errorf("fine: %+v", pm)
			}
		case plots[""].PolygonID:
			if _, ok := data["externalId"]; ok || data["area"] != "1.5" || pm.Point == nil || pm.Point.Coordinates != "5.020000,6.020000" {
				t.Errorf("point: %+v", pm)
			}
		case "multi":
			if len(pm.MultiPolygons) != 2 || pm.MultiPolygons[1].Outer != "5.110000,6.110000 5.111000,6.110000 5.111000,6.111000 5.110000,6.111000 5.110000,6.110000" {
				t.Errorf("multi: %+v", pm)
			}
		case "bowtie":
			if data["failureReason"] != "SELF_INTERSECTION" || data["riskScore"] != "" {
				t.Errorf("bowtie: %+v", pm)
			}
		default:
			t.Errorf("placemark %q", pm.Name)
		}
	}
}

// Refusals, each as the OpenAPI document describes it: a bad format and
// bad filters at once, another method, no key; HEAD answers the headers.
func TestPolygonsExport_Refused(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	doc := loadOpenAPI(t)
	c := &oaConformance{t: t, a: ta.App, doc: doc, sc: oaSchemaChecker{doc: doc}}
	const export = eudrPrefix + "/polygons/export"
	an := c.do(oaCall{method: "GET", target: export + "?format=shp&eudrStatus=GREEN&commodity=tea", op: export, hdr: []string{"X-API-Key", key}, want: 400})
	var fields []string
	for _, d := range envelope(t, an.rec).Details {
		if d.Code == apierr.DetailInvalidValue {
			fields = append(fields, d.Field)
		}
	}
	slices.Sort(fields)
	if want := []string{"query.commodity", "query.eudrStatus", "query.format"}; !slices.Equal(fields, want) {
		t.Errorf("fields %v, want %v", fields, want)
	}
	c.do(oaCall{method: "GET", target: export, op: export, want: 401})
	c.do(oaCall{method: "DELETE", target: export, hdr: []string{"X-API-Key", key}, want: 405})
	for _, f := range []string{"geojson", "csv", "kml"} {
		an = c.do(oaCall{method: "GET", target: export + "?format=" + f, op: export, hdr: []string{"X-API-Key", key}, want: 200})
		if f == "geojson" && strings.TrimSpace(an.rec.Body.String()) != `{"type":"FeatureCollection","features":[`+"\n]}" {
			t.Errorf("no plots, geojson: %q", an.rec.Body)
		}
	}
	w := ta.do("HEAD", export+"?format=kml", "", "X-API-Key", key)
	if w.Code != http.StatusOK || w.Body.Len() != 0 || w.Header().Get("Content-Type") != "application/vnd.google-earth.kml+xml" {
		t.Errorf("HEAD: %d %v %q", w.Code, w.Header(), w.Body)
	}
	// A polygon route still answers below /polygons/: export is not taken
	// for a polygon ID, and an ID is not taken for export.
	wantError(t, ta.do("GET", eudrPrefix+"/polygons/pol_x_000000", "", "X-API-Key", key), 404, apierr.CodeNotFound, "")
	wantError(t, ta.do("GET", export+"/status", "", "X-API-Key", key), 404, apierr.CodeNotFound, "")
}

// cancelOnWrite is a response writer whose first write cancels the
// request, as a client that goes away once the download has begun.
type cancelOnWrite struct {
	*httptest.ResponseRecorder
	cancel context.CancelFunc
}

func (c *cancelOnWrite) Write(p []byte) (int, error) {
	c.cancel()
	return c.ResponseRecorder.Write(p)
}

// A download that cannot go on once under way is cut (http.ErrAbortHandler),
// not ended as if the file were whole: here the client went away after the
// first bytes, before the second page of plots was read.
func TestPolygonsExport_CutShort(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	feats := make([]string, 250) // more than a page
	for i := range feats {
		feats[i] = plot(fmt.Sprintf("p%d", i), square(5+float64(i%50)*0.01, 6+float64(i/50)*0.01, 0.001))
	}
	acc, w := ta.postPolygons(key, "exp-cut", collection(feats...))
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST /polygons: %d %s", w.Code, w.Body)
	}
	ta.waitJob(key, acc.JobID, storage.JobCompleted)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rw := &cancelOnWrite{ResponseRecorder: httptest.NewRecorder(), cancel: cancel}
	r := newRequest("GET", eudrPrefix+"/polygons/export?format=csv", "", "X-API-Key", key).WithContext(ctx)
	func() {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Errorf("recovered %v, want http.ErrAbortHandler", p)
			}
		}()
		ta.Handler(storage.Sandbox).ServeHTTP(rw, r)
	}()
	if rows := strings.Count(rw.Body.String(), "\n"); rw.Code != http.StatusOK || rows == 0 || rows > 200 {
		t.Errorf("status %d, %d lines written before the cut", rw.Code, rows)
	}
}
