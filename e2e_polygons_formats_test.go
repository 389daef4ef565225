package main_test

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// polPostFile posts a plot file with its Content-Type (or none, when
// query names the format) and a fresh Idempotency-Key.
func polPostFile(t testing.TB, base, key, query, contentType string, body []byte) *apitest.Response {
	t.Helper()
	return apitest.Do(t, "POST", base+polPath+query, apitest.Merge(apitest.WithKey(key),
		apitest.Hdr("Idempotency-Key", apitest.NewIdemKey(), "Content-Type", contentType)), body)
}

// The plots of geo/plotfile/testdata/plots.geojson, written by ogr2ogr as
// CSV, an XLSX workbook, KML, KMZ and zipped Shapefiles (in WGS 84 and in
// UTM zone 30N), are screened as the GeoJSON is: as many polygons, the
// same areas within 0.01 %, the same verdicts and properties.
func TestPolygon_PlotFileFormats(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	key := p.createKey(t, sandbox)
	base := p.SandboxURL
	read := func(name string) []byte {
		b, err := os.ReadFile("geo/plotfile/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	screened := func(r *apitest.Response, n int) map[string]polRecord {
		t.Helper()
		id := polCheckAccepted(t, r, n)
		polWaitJob(t, base, key, id, 60*time.Second)
		out := map[string]polRecord{}
		for _, p := range polWalk(t, base, key, "jobId="+id, 1000) {
			out[polStr(p.ExternalID)] = p
		}
		return out
	}
	want := screened(polPostFile(t, base, key, "", polContentType, read("plots.geojson")), 6)
	for _, tc := range []struct {
		name string
		r    *apitest.Response
		n    int // the UTM zone's file leaves out the plot in Brazil
	}{
		{"CSV", polPostFile(t, base, key, "", "text/csv", read("plots-wkt.csv")), 6},
		{"XLSX", polPostFile(t, base, key, "?format=xlsx", "", read("plots.xlsx")), 6},
		{"KML", polPostFile(t, base, key, "", "application/vnd.google-earth.kml+xml", read("plots.kml")), 6},
		{"KMZ", polPostFile(t, base, key, "?format=kmz", "", read("plots.kmz")), 6},
		{"Shapefile", polPostFile(t, base, key, "", "application/zip", read("plots-wgs84.zip")), 6},
		{"ShapefileUTM", polPostFile(t, base, key, "?format=shapefile", "", read("plots-utm30n.zip")), 5},
	} {
		got := screened(tc.r, tc.n)
		if len(got) != tc.n {
			t.Errorf("%s: %d polygons, want %d", tc.name, len(got), tc.n)
		}
		for id, g := range got {
			w, ok := want[id]
			if !ok || g.EUDRStatus != w.EUDRStatus || polStr(g.FailureReason) != polStr(w.FailureReason) ||
				!polNear(g.AreaHa, w.AreaHa, 1e-4*w.AreaHa) || polStr(g.ProducerName) != polStr(w.ProducerName) {
				t.Errorf("%s: plot %q is %s %s %.6f ha of %s; the GeoJSON's %s %s %.6f ha of %s", tc.name, id,
					g.EUDRStatus, polStr(g.FailureReason), g.AreaHa, polStr(g.ProducerName),
					w.EUDRStatus, polStr(w.FailureReason), w.AreaHa, polStr(w.ProducerName))
			}
		}
	}

	// A refused CSV: its problems at their rows and columns, those of
	// the conversion (a latitude out of range) and, in a file that
	// converts, those of the plots (a commodity, a point's area).
	csv := "lat,lon,commodity,producerCountry,area\n" +
		"5.3,-1.995,cocoa,GH,1.5\n" +
		"95,-1.995,cocoa,GH,1.5\n"
	e := apitest.WantError(t, polPostFile(t, base, key, "", "text/csv", []byte(csv)), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_COORDINATE_RANGE")
	e.Detail(t, "rows[3].lat")
	csv = "lat,lon,commodity,producerCountry,area\n5.3,-1.995,tea,GH,1.5\n5.3,-1.995,cocoa,GH,9\n"
	e = apitest.WantError(t, polPostFile(t, base, key, "?format=csv", "application/octet-stream", []byte(csv)), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE", "POINT_AREA_TOO_LARGE")
	e.Detail(t, "rows[2].commodity")
	e.Detail(t, "rows[3].area")
}
