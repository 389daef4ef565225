package pdf

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/storage"
)

// samplePlot is a HIGH_RISK plot's report input with a ledger entry and
// an overlapped protected area, drawn from no raster layer.
func samplePlot(t *testing.T) Plot {
	t.Helper()
	reason, detail := geo.ReasonProtectedAreaOverlap, "0.5 ha (12 % of the plot) overlaps protected area WDPA-1"
	ev := evidenceDoc{Evidence: polygon.Evidence{PolygonID: "pol_X_000001", JobID: "job_X", InputSHA256: strings.Repeat("ab", 32),
		EUDRStatus: geo.StatusHighRisk, FailureReason: &reason, FailureDetail: &detail, AreaHa: 4.1234,
		Risk:          &polygon.Risk{ProtectedHa: 0.5, ProtectedPct: 12, RiskScore: 80},
		Rules:         polygon.EvidenceRules{MaxRiskScore: 50, LossThresholdPct: 10, LossThresholdHa: 0.5, Cutoff: geo.CutoffDate},
		Layers:        []polygon.EvidenceLayer{{LayerID: "wdpa", Name: "Protected areas", Kind: string(geo.ProtectedArea), Version: "2024-01", Source: "WDPA", SHA256: strings.Repeat("cd", 32), Covered: true}},
		Overlaps:      []polygon.EvidenceOverlap{{LayerID: "wdpa", Kind: string(geo.ProtectedArea), OverlapHa: 0.5, OverlapPct: 12, FeatureIDs: []string{"WDPA-1"}}},
		EngineVersion: geo.EngineVersion, AppVersion: "test", ScreenedAt: "2025-03-04T05:06:07.123Z"},
		Ledger: &anchor.DocumentLedger{Index: 7, TransactionHash: strings.Repeat("01", 32), TreeSize: 9, RootHash: strings.Repeat("02", 32),
			Proof: []string{strings.Repeat("03", 32)}, Checkpoint: "eudr/default/sandbox\n9\nAAAA\n\n— eudr SIGNATURE=\n"}}
	body, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	ring := geo.Ring{{-6.59, 5.79}, {-6.588, 5.79}, {-6.588, 5.792}, {-6.59, 5.792}, {-6.59, 5.79}}
	return Plot{
		Polygon:  &storage.Polygon{ID: "pol_X_000001", ExternalID: "F-1", ProducerName: "Awa Traoré (Ɔkɔ)", Commodity: "cocoa", ProducerCountry: "CI"},
		Evidence: body,
		Geometry: json.RawMessage(`{"type":"Polygon","coordinates":[[[-6.59,5.79],[-6.588,5.79],[-6.588,5.792],[-6.59,5.792],[-6.59,5.79]]]}`),
		Overlaps: []VectorOverlap{{LayerID: "wdpa", Name: "Protected areas", Kind: string(geo.ProtectedArea),
			Features: []geo.LayerFeature{{ID: "WDPA-1", Polygons: []geo.Polygon{{ring}}}}}},
	}
}

// The same record gives the same bytes, whatever the clock says, and the
// document is dated at the screening.
func TestPlotReport_Deterministic(t *testing.T) {
	p := samplePlot(t)
	first, err := PlotReport(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	second, err := PlotReport(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("two renders of one record differ (%d and %d bytes)", len(first), len(second))
	}
	if !bytes.HasPrefix(first, []byte("%PDF-")) {
		t.Fatalf("not a PDF: %q", first[:min(len(first), 16)])
	}
	if !bytes.Contains(first, []byte("/CreationDate (D:20250304050607")) {
		t.Errorf("the creation date is not the screening's")
	}
}

// A plot whose geometry cannot be read still gets its report, saying so.
func TestPlotReport_UnreadableGeometry(t *testing.T) {
	p := samplePlot(t)
	p.Geometry = json.RawMessage(`{"type":"LineString","coordinates":[[0,0],[1,1]]}`)
	if _, err := PlotReport(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	p.Evidence = []byte(`{"screenedAt":"yesterday"}`)
	if _, err := PlotReport(context.Background(), p); err == nil {
		t.Fatal("evidence with a malformed screenedAt: no error")
	}
}

// The view fits the plot within plotShare of the map, centred, and its
// projection and its inverse agree.
func TestFitView(t *testing.T) {
	g := geo.Geometry{Type: geo.TypePolygon, Polygons: []geo.Polygon{{{{-6.59, 5.79}, {-6.588, 5.79}, {-6.588, 5.792}, {-6.59, 5.79}}}}}
	v, err := fitView(g)
	if err != nil {
		t.Fatal(err)
	}
	x0, y0 := v.project(geo.Position{-6.59, 5.792})
	x1, y1 := v.project(geo.Position{-6.588, 5.79})
	if w, h := x1-x0, y1-y0; w > plotShare*mapPixels || h > plotShare*mapPixels || w < plotShare*mapPixels/2 {
		t.Errorf("zoom %d: the plot is %.0f x %.0f pixels of %d", v.Zoom, w, h, mapPixels)
	}
	if c := (x0 + x1) / 2; math.Abs(c-mapPixels/2) > 1 {
		t.Errorf("the plot's centre is at x %.1f, not the map's", c)
	}
	lon, lat := v.lonLat(x0, y0)
	if math.Abs(lon+6.59) > 1e-9 || math.Abs(lat-5.792) > 1e-9 {
		t.Errorf("lonLat(project(p)) = %v, %v", lon, lat)
	}
	// At zoom z the equator's pixel is 40075 km / 2^(z+8).
	if got, want := (mapView{Zoom: 17, Y0: worldPixels(17)/2 - mapPixels/2}).metresPerPixel(), 40075016.686/float64(uint64(1)<<25); math.Abs(got-want) > 1e-6 {
		t.Errorf("metres per pixel at the equator, zoom 17: %v, want %v", got, want)
	}
	if _, err := fitView(geo.Geometry{}); err == nil {
		t.Error("a geometry without coordinates: no error")
	}
}
