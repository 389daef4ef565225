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
// CSV and as an XLSX workbook, are screened as the GeoJSON is: as many
// polygons, the same areas within 0.01 % and the same verdicts.
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
	screened := func(r *apitest.Response) []polRecord {
		t.Helper()
		id := polCheckAccepted(t, r, 6)
		polWaitJob(t, base, key, id, 60*time.Second)
		return polWalk(t, base, key, "jobId="+id, 1000)
	}
	want := screened(polPostFile(t, base, key, "", polContentType, read("plots.geojson")))
	for _, tc := range []struct {
		name string
		r    *apitest.Response
	}{
		{"CSV", polPostFile(t, base, key, "", "text/csv", read("plots-wkt.csv"))},
		{"XLSX", polPostFile(t, base, key, "?format=xlsx", "", read("plots.xlsx"))},
	} {
		got := screened(tc.r)
		if len(got) != len(want) {
			t.Fatalf("%s: %d polygons, the GeoJSON %d", tc.name, len(got), len(want))
		}
		for i, g := range got {
			w := want[i]
			if polStr(g.ExternalID) != polStr(w.ExternalID) || g.EUDRStatus != w.EUDRStatus || polStr(g.FailureReason) != polStr(w.FailureReason) ||
				!polNear(g.AreaHa, w.AreaHa, 1e-4*w.AreaHa) {
				t.Errorf("%s: polygon %d is %s %s %s %.6f ha; the GeoJSON's %s %s %s %.6f ha", tc.name, i,
					polStr(g.ExternalID), g.EUDRStatus, polStr(g.FailureReason), g.AreaHa,
					polStr(w.ExternalID), w.EUDRStatus, polStr(w.FailureReason), w.AreaHa)
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
