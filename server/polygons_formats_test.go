package server

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo/plotfile"
	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

func plotTestdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("../geo/plotfile/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A plot file is taken by its Content-Type, or by ?format= whatever the
// Content-Type, and queued as the GeoJSON it converts to.
func TestPolygons_PlotFileFormats(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	const xlsxType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	for i, tc := range []struct {
		name, path, body string
		hdr              []string
		features         int
	}{
		{"CSV by Content-Type", "/polygons", plotTestdata(t, "plots-wkt.csv"), []string{"Content-Type", "text/csv; charset=utf-8"}, 6},
		{"XLSX by Content-Type", "/polygons", plotTestdata(t, "plots.xlsx"), []string{"Content-Type", xlsxType}, 6},
		{"CSV by ?format=", "/polygons?format=CSV", plotTestdata(t, "points-xy.csv"), []string{"Content-Type", "application/x-www-form-urlencoded"}, 1},
		{"XLSX by ?format= with its sheet", "/polygons?format=xlsx&sheet=PLOTS", plotTestdata(t, "plots.xlsx"), []string{"Content-Type", "application/octet-stream"}, 6},
		{"GeoJSON by ?format=", "/polygons?format=geojson", collection(plot("a", square(5, 6, 0.001))), nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := ta.do("POST", eudrPrefix+tc.path, tc.body, append([]string{"X-API-Key", key, "Idempotency-Key", "f" + string(rune('a'+i))}, tc.hdr...)...)
			if w.Code != http.StatusAccepted {
				t.Fatalf("status %d, want 202: %s", w.Code, w.Body)
			}
			var acc polygonsAcceptedResponse
			mustDecode(t, w, &acc)
			if acc.FeatureCount != tc.features {
				t.Errorf("featureCount %d, want %d", acc.FeatureCount, tc.features)
			}
			// The job reads the converted GeoJSON it was given: every
			// plot screened.
			ta.waitJob(key, acc.JobID, storage.JobCompleted)
			w = ta.do("GET", eudrPrefix+"/polygons?jobId="+acc.JobID, "", "X-API-Key", key)
			var list []polygonResponse
			mustDecode(t, w, &list)
			if len(list) != tc.features {
				t.Errorf("%d polygons recorded, want %d", len(list), tc.features)
			}
		})
	}
}

// A plot file refused: its problems in its own terms, converted GeoJSON's
// problems included; a format or sheet that is not there.
func TestPolygons_PlotFileRefused(t *testing.T) {
	ta := newTestApp(t, "EUDR_LIMITS_MAX_FEATURES=2")
	_, key := ta.newKey(storage.Sandbox)
	post := func(path, body string, hdr ...string) *httptest.ResponseRecorder {
		return ta.do("POST", eudrPrefix+path, body, append([]string{"X-API-Key", key, "Idempotency-Key", "r"}, hdr...)...)
	}
	csv := "Latitude;Longitude;Crop;Country;Area (ha)\n" +
		"north;-1,9;cocoa;GH;1\n" + // not a number: found by the conversion
		"5,3;-1,9;cocoa;GH;\n" // a point with no area: found by geo, rewritten
	e := wantError(t, post("/polygons", csv, "Content-Type", "text/csv"), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	if fs := detailSet(e.Details); len(e.Details) != 1 || !fs["INVALID_VALUE rows[2].Latitude"] {
		t.Errorf("conversion problems: %+v", e.Details)
	}
	csv = strings.Replace(csv, "north", "5", 1)
	e = wantError(t, post("/polygons", csv, "Content-Type", "text/csv"), http.StatusBadRequest, apierr.CodeValidationFailed, "REQUIRED")
	if fs := detailSet(e.Details); len(e.Details) != 1 || !fs["REQUIRED rows[3].Area (ha)"] {
		t.Errorf("problems of the converted GeoJSON: %+v", e.Details)
	}
	e = wantError(t, post("/polygons?format=xlsx&sheet=Farms", plotTestdata(t, "plots.xlsx")), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	if e.Details[0].Field != "query.sheet" || !strings.Contains(e.Details[0].Issue, `"plots"`) {
		t.Errorf("unknown sheet: %+v", e.Details)
	}
	e = wantError(t, post("/polygons?format=gpx", "x"), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	if e.Details[0].Field != "query.format" || !strings.Contains(e.Details[0].Issue, "geojson, kml, kmz, shapefile, csv, xlsx") {
		t.Errorf("unknown format: %+v", e.Details)
	}
	e = wantError(t, post("/polygons?sheet=plots", collection(plot("a", square(5, 6, 0.001)))), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	if e.Details[0].Field != "query.sheet" {
		t.Errorf("sheet of GeoJSON: %+v", e.Details)
	}
	e = wantError(t, post("/polygons", "x", "Content-Type", "text/plain"), http.StatusUnsupportedMediaType, apierr.CodeUnsupportedMediaType, apierr.DetailInvalidValue)
	for _, mt := range plotfile.MediaTypes() {
		if !strings.Contains(e.Message, mt) {
			t.Errorf("415 does not name %s: %s", mt, e.Message)
		}
	}
	e = wantError(t, post("/polygons", plotTestdata(t, "plots-wkt.csv"), "Content-Type", "text/csv"), http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge, apierr.DetailInvalidValue)
	if e.Details[0].Field != "features" {
		t.Errorf("413: %+v", e)
	}
	wantError(t, post("/polygons?format=csv", ""), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailMalformedJSON)
	ta.view(func(tx *storage.Tx) error {
		if n := queue.Pending(tx.Tx); n != 0 {
			t.Errorf("queued jobs after refusals: %d", n)
		}
		return nil
	})
}
