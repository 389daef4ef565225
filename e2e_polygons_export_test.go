package main_test

// End-to-end test of GET /polygons/export (docs/screening.md) against the
// real binary: plots exported in the EU's GeoJSON file profile, as CSV
// and as KML, and posted back, give the same plots.

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// polExportPlots are plots of every outcome whose geometry survives the
// export as it is (coordinates with 6 decimals): a clean polygon with its
// producer, a point with its area, a multipolygon, one in the sandbox's
// deforestation box (HIGH_RISK), one without reference data and a bowtie
// (both FAILED).
func polExportPlots() string {
	multi := `{"type":"MultiPolygon","coordinates":[[` + polBoxRing(-1.52, 6.52, -1.518, 6.522, 6, false) + `],[` +
		polBoxRing(-1.515, 6.52, -1.513, 6.522, 6, false) + `]]}`
	bowtie := `{"type":"Polygon","coordinates":[` +
		polRing([][2]float64{{-1.3, 6.4}, {-1.298, 6.402}, {-1.298, 6.4}, {-1.3, 6.402}, {-1.3, 6.4}}, 6) + `]}`
	return polCollection(
		polFeature(polSquare(-1.5, 6.5, 0.001), map[string]any{"commodity": "cocoa", "producerCountry": "GH",
			"producerName": "Kofi & Sons <Ltd>", "productionPlace": "Ashanti", "externalId": "clean"}),
		polFeature(`{"type":"Point","coordinates":[-1.000000,6.100000]}`, map[string]any{"commodity": "oil_palm", "producerCountry": "GH", "area": 2.5}),
		polFeature(multi, map[string]any{"commodity": "coffee", "producerCountry": "CI", "producerName": "Awa Traoré"}),
		polFeature(polSquare(-61.5, -10.5, 0.001), map[string]any{"commodity": "soya", "producerCountry": "BR"}),
		polFeature(polSquare(10.5, 10.5, 0.001), map[string]any{"commodity": "cocoa", "producerCountry": "CM"}),
		polFeature(bowtie, map[string]any{"commodity": "rubber", "producerCountry": "GH"}),
	)
}

// Each export of a job's plots (GeoJSON, CSV, KML), posted back to POST
// /polygons, gives the same plots: as many, with the same areas, verdicts,
// commodities, countries and declared areas.
func TestPolygonExport_GeoJSONRoundTrip(t *testing.T) {
	t.Parallel()
	p := startServer(t, noRateLimit...)
	key := p.createKey(t, sandbox)
	base := p.SandboxURL

	first := polMustPost(t, base, key, polExportPlots(), 6)
	polWaitJob(t, base, key, first, 2*time.Minute)
	sent := polWalk(t, base, key, "jobId="+first, 100)

	r := apitest.Do(t, "GET", base+polPath+"/export?format=geojson&jobId="+first, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	if ct, cd := r.Header.Get("Content-Type"), r.Header.Get("Content-Disposition"); ct != "application/geo+json" ||
		cd != `attachment; filename="polygons.geojson"` {
		t.Errorf("Content-Type %q, Content-Disposition %q", ct, cd)
	}
	for _, name := range []string{`"ProducerCountry":"GH"`, `"ProducerName":"Kofi & Sons <Ltd>"`, `"ProductionPlace":"Ashanti"`, `"Area":2.5`} {
		if !strings.Contains(string(r.Body), name) {
			t.Errorf("export lacks %s: %s", name, r.Body)
		}
	}

	// Each export goes back as it came: POST /polygons reads the EU's
	// property names as its own, and the CSV and KML exports' columns
	// under the names it reads.
	for _, format := range []struct{ name, contentType string }{
		{"geojson", polContentType},
		{"csv", "text/csv"},
		{"kml", "application/vnd.google-earth.kml+xml"},
	} {
		if format.name != "geojson" {
			r = apitest.Do(t, "GET", base+polPath+"/export?format="+format.name+"&jobId="+first, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		}
		id := polCheckAccepted(t, polPostFile(t, base, key, "", format.contentType, r.Body), 6)
		polWaitJob(t, base, key, id, 2*time.Minute)
		back := polWalk(t, base, key, "jobId="+id, 100)
		if len(back) != len(sent) {
			t.Fatalf("%s: %d plots posted back, %d sent", format.name, len(back), len(sent))
		}
		// Both lists are newest first, the last feature first; the file
		// is in that order too, so its first feature was the last one
		// sent.
		n := len(sent)
		for i, b := range back {
			s := sent[n-1-i]
			if b.EUDRStatus != s.EUDRStatus || polStr(b.FailureReason) != polStr(s.FailureReason) || b.GeometryType != s.GeometryType ||
				b.Commodity != s.Commodity || b.ProducerCountry != s.ProducerCountry ||
				math.Abs(b.AreaHa-s.AreaHa) > 1e-9*math.Max(1, s.AreaHa) || !sameArea(b.DeclaredAreaHa, s.DeclaredAreaHa, s.GeometryType, format.name) {
				t.Errorf("%s posted back %s: %s %s %s %s %s area %v declared %v;\nsent %s: %s %s %s %s %s area %v declared %v", format.name,
					b.PolygonID, b.EUDRStatus, polStr(b.FailureReason), b.GeometryType, b.Commodity, b.ProducerCountry, b.AreaHa, b.DeclaredAreaHa,
					s.PolygonID, s.EUDRStatus, polStr(s.FailureReason), s.GeometryType, s.Commodity, s.ProducerCountry, s.AreaHa, s.DeclaredAreaHa)
			}
			if format.name != "geojson" && polStr(b.ExternalID) != polStr(s.ExternalID) {
				t.Errorf("%s posted back %s: externalId %q, sent %q", format.name, b.PolygonID, polStr(b.ExternalID), polStr(s.ExternalID))
			}
		}
	}
}

// sameArea compares declared areas: the EU's profile carries a point's
// only (a polygon's area is its shape's); the CSV and KML exports carry
// every plot's.
func sameArea(back, sent *float64, geometryType, format string) bool {
	if format == "geojson" && !strings.HasSuffix(geometryType, "Point") {
		return back == nil
	}
	if back == nil || sent == nil {
		return back == sent
	}
	return *back == *sent
}
