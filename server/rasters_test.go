package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/storage"
)

// Test tiles: 400 x 400 pixels of 0.00025 degree (Hansen's grid), the
// first with its upper-left corner at (10 E, 0 N), the second east of it.
// The first holds loss in 2021 in columns and rows 100-199 (lon
// 10.025-10.05, lat -0.05 to -0.025) and loss in 2015 in columns 300-349.
const (
	testTilePx   = 0.00025
	testTileSide = 400
)

func lossPixel(col, row int) uint8 {
	switch {
	case col >= 100 && col < 200 && row >= 100 && row < 200:
		return 21
	case col >= 300 && col < 350:
		return 15
	}
	return 0
}

// writeLossTiles writes the two test tiles to dir, LZW in strips and
// Deflate in tiles, and returns their paths.
func writeLossTiles(tb testing.TB, dir string) []string {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	tiles := []struct {
		name string
		west float64
		opts geotifftest.Options
	}{
		{"Hansen_GFC-2023-v1.11_lossyear_00N_010E.tif", 10, geotifftest.Options{Compression: geotiff.CompressionLZW, RowsPerStrip: 1}},
		{"Hansen_GFC-2023-v1.11_lossyear_00N_010E-east.tif", 10 + testTileSide*testTilePx,
			geotifftest.Options{Compression: geotiff.CompressionDeflate, Predictor: true, TileWidth: 128, TileHeight: 128}},
	}
	var paths []string
	for _, t := range tiles {
		o := t.opts
		o.West, o.North, o.DX, o.DY = t.west, 0, testTilePx, testTilePx
		b := geotifftest.MustEncode(tb, testTileSide, testTileSide, lossPixel, o)
		p := filepath.Join(dir, t.name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			tb.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func rasterBody(kind, dir string) string {
	return `{"name":"Hansen lossyear","kind":"` + kind + `","version":"GFC-2023-v1.11","source":"https://glad.umd.edu","raster":{"directory":"` + dir + `"}}`
}

func (ta *testApp) importRaster(tb testing.TB, idem, body string) *layerResponse {
	tb.Helper()
	w := ta.serve(storage.Production, newRequest("POST", enterprisePrefix+"/layers", body,
		"Authorization", "Bearer "+ta.adminToken(), "Idempotency-Key", idem))
	if w.Code != http.StatusOK {
		tb.Fatalf("import raster layer: %d %s", w.Code, w.Body)
	}
	var l layerResponse
	mustDecode(tb, w, &l)
	return &l
}

func TestRasterLayers_Import(t *testing.T) {
	ta := newTestApp(t)
	writeLossTiles(t, filepath.Join(ta.dir, "rasters", "hansen"))

	l := ta.importRaster(t, "imp-1", rasterBody("loss-year", "hansen"))
	if l.Kind != "loss-year" || l.FeatureCount != 0 || l.Raster == nil || l.Raster.TileCount != 2 || len(l.SHA256) != 64 {
		t.Fatalf("import answer = %+v", l)
	}
	if want := filepath.Join(ta.dir, "rasters", "hansen"); l.Raster.Directory != want {
		t.Errorf("directory = %q, want %q", l.Raster.Directory, want)
	}
	if c := l.Coverage; c.PolygonCount != 2 || !slices.Equal(c.BBox, []float64{10, -0.1, 10.2, 0}) {
		t.Errorf("coverage = %+v, want 2 tiles over 10,-0.1,10.2,0", c)
	}
	first, second := l.Raster.Tiles[1], l.Raster.Tiles[0] // sorted by name: "-east" first
	if first.Compression != "LZW (5)" || first.Layout != "strips of 1 rows" || first.Width != 400 || first.West != 10 ||
		first.DX != testTilePx || first.NoData != nil || first.Predictor != "none (1)" {
		t.Errorf("first tile = %+v", first)
	}
	if second.Compression != "Deflate (8)" || second.Layout != "tiles 128x128" || second.Predictor != "horizontal (2)" {
		t.Errorf("second tile = %+v", second)
	}
	rasters := ta.layers.Index(storage.Production).Rasters()
	if len(rasters) != 1 || rasters[0].ID != l.LayerID || len(rasters[0].Tiles) != 2 {
		t.Fatalf("production rasters = %+v", rasters)
	}
	if len(ta.layers.Index(storage.Sandbox).Rasters()) != 0 {
		t.Error("the sandbox screens against an imported raster layer")
	}
}

// TestRasterLayers_ImportRefused: the answers of POST /layers to raster
// imports it refuses. (Which folders and requests are refused, and that
// their problems do not show the appliance's folders, is layer's tests'.)
func TestRasterLayers_ImportRefused(t *testing.T) {
	ta := newTestApp(t)
	post := func(idem, body string) *httptest.ResponseRecorder {
		return ta.serve(storage.Production, newRequest("POST", enterprisePrefix+"/layers", body,
			"Authorization", "Bearer "+ta.adminToken(), "Idempotency-Key", idem))
	}
	w := post("bad-features", `{"name":"x","kind":"forest-2020","version":"1","source":"s","features":`+testLayerFeatures+`}`)
	e := wantError(t, w, http.StatusBadRequest, apierr.CodeValidationFailed, "")
	if len(e.Details) == 0 || e.Details[0].Field != "features" || !strings.Contains(e.Details[0].Issue, "not GeoJSON features") {
		t.Errorf("a raster kind with features: %+v, want the features refused", e.Details)
	}
	// A folder outside the root is reported with the body's other problems.
	w = post("bad-all", `{"kind":"loss-year","version":"1","source":"s","extra":1,"raster":{"directory":"../.."}}`)
	if got := detailSet(wantError(t, w, http.StatusBadRequest, apierr.CodeValidationFailed, "").Details); len(got) != 3 ||
		!got["UNKNOWN_FIELD extra"] || !got["REQUIRED name"] || !got["INVALID_VALUE raster.directory"] {
		t.Errorf("details = %v, want UNKNOWN_FIELD extra, REQUIRED name and INVALID_VALUE raster.directory", got)
	}
	if strings.Contains(w.Body.String(), ta.dir) {
		t.Errorf("the answer shows the server's folders: %s", w.Body)
	}
}

func TestRasterLayers_Screening(t *testing.T) {
	ta := newTestApp(t)
	paths := writeLossTiles(t, filepath.Join(ta.dir, "rasters", "hansen"))
	l := ta.importRaster(t, "imp-1", rasterBody("loss-year", "hansen"))
	_, key := ta.newKey(storage.Production)
	ta.runQueues()

	plots := []struct {
		name, coordinates, status, reason string
		tiles                             int
	}{
		// 0.01 degree squares (about 124 ha).
		{"over 2021 loss", square(10.0375, -0.0375, 0.005), geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 1},
		{"over 2015 loss only", square(10.08125, -0.07, 0.005), geo.StatusCompliant, "", 1},
		{"across the tile edge", square(10.1, -0.07, 0.005), geo.StatusCompliant, "", 2},
		{"outside the tiles", square(10.3, -0.07, 0.005), geo.StatusFailed, geo.ReasonNoReferenceCoverage, 0},
	}
	var features []string
	for _, p := range plots {
		features = append(features, plot(p.name, p.coordinates))
	}
	acc, w := ta.postPolygonsOn(storage.Production, key, "pol-1", collection(features...))
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST /polygons: %d %s", w.Code, w.Body)
	}
	ta.waitJobOn(storage.Production, key, acc.JobID, storage.JobCompleted)
	for i, p := range plots {
		ev := ta.evidence(storage.Production, key, storage.PolygonID(acc.JobID, i))
		if ev.EUDRStatus != p.status || derefOr(ev.FailureReason) != p.reason {
			t.Errorf("%s: %s %s (%s), want %s %s", p.name, ev.EUDRStatus, derefOr(ev.FailureReason), derefOr(ev.FailureDetail), p.status, p.reason)
		}
		if len(ev.Rasters) != 1 || ev.Rasters[0].LayerID != l.LayerID || len(ev.Rasters[0].Tiles) != p.tiles ||
			ev.Rasters[0].SHA256 != l.SHA256 || ev.Rasters[0].Version != "GFC-2023-v1.11" {
			t.Errorf("%s: evidence rasters = %+v", p.name, ev.Rasters)
		}
		if ev.Rules.LossThresholdPct != 10 || ev.Rules.LossThresholdHa != 0.5 || ev.Rules.Cutoff != "2020-12-31" {
			t.Errorf("%s: evidence rules = %+v", p.name, ev.Rules)
		}
	}

	// The plot over 2021 loss: 40 x 40 of its pixel centres are lost in
	// 2021, all of them (no forest layer: loss counts wherever it is).
	ev := ta.evidence(storage.Production, key, storage.PolygonID(acc.JobID, 0))
	r := ev.Rasters[0]
	if r.Pixels != 40*40 || len(r.LossByYear) != 1 || r.LossByYear[0].Year != 2021 || r.LossByYear[0].Pixels != 40*40 {
		t.Errorf("loss by year = %+v of %d pixels", r.LossByYear, r.Pixels)
	}
	if lf := ev.LossInForest; lf == nil || lf.LossLayerID != l.LayerID || lf.ForestLayerID != nil || lf.Pixels != 1600 ||
		lf.Ha != r.LossByYear[0].Ha || lf.Pct < 99 || ev.Risk == nil || ev.Risk.DeforestedHa != lf.Ha || ev.Risk.RiskScore != 100 {
		t.Errorf("lossInForest = %+v, risk = %+v", ev.LossInForest, ev.Risk)
	}
	// The plot over 2015 loss: none after the cutoff.
	ev = ta.evidence(storage.Production, key, storage.PolygonID(acc.JobID, 1))
	if lf := ev.LossInForest; lf == nil || lf.Pixels != 0 || lf.Ha != 0 {
		t.Errorf("pre-cutoff loss counted: %+v", ev.LossInForest)
	}
	if y := ev.Rasters[0].LossByYear; len(y) != 1 || y[0].Year != 2015 || y[0].Pixels == 0 {
		t.Errorf("2015 loss not recorded: %+v", y)
	}

	// A tile that changes after the import is not read: plots that need it
	// are FAILED SCREENING_ERROR naming it, never judged on other pixels.
	f, err := os.OpenFile(paths[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("appended"))
	f.Close()
	ta.layers.CloseTiles()
	acc, w = ta.postPolygonsOn(storage.Production, key, "pol-2", collection(features[0]))
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST /polygons: %d %s", w.Code, w.Body)
	}
	ta.waitJobOn(storage.Production, key, acc.JobID, storage.JobCompleted)
	ev = ta.evidence(storage.Production, key, storage.PolygonID(acc.JobID, 0))
	if ev.EUDRStatus != geo.StatusFailed || derefOr(ev.FailureReason) != geo.ReasonScreeningError ||
		!strings.Contains(derefOr(ev.FailureDetail), filepath.Base(paths[0])) || !strings.Contains(derefOr(ev.FailureDetail), "changed") {
		t.Errorf("changed tile: %s %s (%s)", ev.EUDRStatus, derefOr(ev.FailureReason), derefOr(ev.FailureDetail))
	}
}

func derefOr(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// evidence answers GET /polygons/{id}/evidence on env.
func (ta *testApp) evidence(env storage.Environment, key, id string) polygon.Evidence {
	ta.tb.Helper()
	w := ta.serve(env, newRequest("GET", eudrPrefix+"/polygons/"+id+"/evidence", "", "X-API-Key", key))
	if w.Code != http.StatusOK {
		ta.tb.Fatalf("GET evidence of %s: %d %s", id, w.Code, w.Body)
	}
	var ev polygon.Evidence
	if err := json.Unmarshal(w.Body.Bytes(), &ev); err != nil {
		ta.tb.Fatal(err)
	}
	return ev
}

// A layer deleted is no longer screened against: the way out for a
// raster layer whose tiles are gone or replaced.
func TestLayers_Delete(t *testing.T) {
	ta := newTestApp(t)
	paths := writeLossTiles(t, filepath.Join(ta.dir, "rasters", "old"))
	old := ta.importRaster(t, "imp-old", rasterBody("loss-year", "old"))
	writeLossTiles(t, filepath.Join(ta.dir, "rasters", "new"))
	current := ta.importRaster(t, "imp-new", rasterBody("loss-year", "new"))
	if err := os.Remove(paths[0]); err != nil {
		t.Fatal(err)
	}
	_, key := ta.newKey(storage.Production)
	ta.runQueues()
	screenOne := func(idem string) polygon.Evidence {
		t.Helper()
		acc, w := ta.postPolygonsOn(storage.Production, key, idem, collection(plot("p", square(10.0375, -0.0375, 0.005))))
		if w.Code != http.StatusAccepted {
			t.Fatalf("POST /polygons: %d %s", w.Code, w.Body)
		}
		ta.waitJobOn(storage.Production, key, acc.JobID, storage.JobCompleted)
		return ta.evidence(storage.Production, key, storage.PolygonID(acc.JobID, 0))
	}
	if ev := screenOne("p1"); derefOr(ev.FailureReason) != geo.ReasonScreeningError {
		t.Fatalf("with a tile of a layer gone: %s %s, want SCREENING_ERROR", ev.EUDRStatus, derefOr(ev.FailureReason))
	}

	del := func(id string) *http.Response {
		w := ta.serve(storage.Production, newRequest("DELETE", enterprisePrefix+"/layers/"+id, "", "Authorization", "Bearer "+ta.adminToken()))
		return w.Result()
	}
	if res := del(old.LayerID); res.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d", res.StatusCode)
	}
	if res := del(old.LayerID); res.StatusCode != http.StatusNotFound {
		t.Errorf("DELETE again: %d, want 404", res.StatusCode)
	}
	w := ta.serve(storage.Production, newRequest("DELETE", enterprisePrefix+"/layers/"+current.LayerID, "", "X-API-Key", key))
	wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, apierr.DetailJWTRequired)

	if r := ta.layers.Index(storage.Production).Rasters(); len(r) != 1 || r[0].ID != current.LayerID {
		t.Fatalf("rasters after delete = %+v", r)
	}
	if ev := screenOne("p2"); ev.EUDRStatus != geo.StatusHighRisk || len(ev.Rasters) != 1 || ev.Rasters[0].LayerID != current.LayerID {
		t.Errorf("after deleting the broken layer: %s %s, rasters %+v", ev.EUDRStatus, derefOr(ev.FailureReason), ev.Rasters)
	}
}
