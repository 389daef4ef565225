package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/storage"
)

// TestOpenAPI_RasterLayers holds the document to raster reference layers:
// the schemas of raster layers and of what screening records of them
// against the Go types, the examples given as maps, and a scenario on a
// real appliance whose every answer is checked against the document.
func TestOpenAPI_RasterLayers(t *testing.T) {
	doc := loadOpenAPI(t)

	t.Run("Structs", func(t *testing.T) {
		for _, c := range []struct {
			typ      reflect.Type
			schema   string
			response bool
		}{
			{reflect.TypeFor[layer.ImportRaster](), "LayerImportRaster", false},
			{reflect.TypeFor[rasterSummary](), "LayerRaster", true},
			{reflect.TypeFor[storage.RasterTile](), "RasterTile", true},
			{reflect.TypeFor[polygon.EvidenceRaster](), "PolygonEvidenceRaster", true},
			{reflect.TypeFor[polygon.EvidenceValue](), "PolygonEvidenceRasterValue", true},
			{reflect.TypeFor[polygon.EvidenceYear](), "PolygonEvidenceLossYear", true},
			{reflect.TypeFor[polygon.EvidenceLoss](), "PolygonEvidenceLoss", true},
		} {
			t.Run(c.schema, func(t *testing.T) { oaCheckStruct(t, doc, c.typ, c.schema, c.response) })
		}
	})

	t.Run("Constraints", func(t *testing.T) {
		kinds := oaAnys(string(geo.DeforestationAfterCutoff), string(geo.ProtectedArea), string(geo.ForestCover2020),
			string(geo.Forest2020), string(geo.LossYear), string(geo.Alerts))
		for _, c := range []struct {
			ptr  string
			want any
		}{
			{"/components/schemas/LayerKind/enum", kinds},
			{"/components/schemas/PolygonEvidenceRules/properties/cutoff/const", fmt.Sprintf("%d-12-31", 2000+geo.LossCutoffValue)},
			{"/components/schemas/PolygonEvidenceLossYear/properties/year/minimum", float64(2001)},
			{"/components/schemas/PolygonEvidenceLossYear/properties/year/maximum", float64(2255)},
			{"/components/schemas/PolygonEvidenceRaster/if/properties/kind/const", string(geo.LossYear)},
			{"/components/schemas/RasterTile/properties/predictor/enum", oaAnys(geotiff.PredictorNone.String(), geotiff.PredictorHorizontal.String())},
		} {
			if got := oaMust(t, doc, c.ptr); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: got %#v, want %#v", c.ptr, got, c.want)
			}
		}
		// Every compression the reader takes is named as the header
		// records it.
		desc := oaMust(t, doc, "/components/schemas/RasterTile/properties/compression/description").(string)
		for _, c := range []geotiff.Compression{geotiff.CompressionNone, geotiff.CompressionLZW, geotiff.CompressionDeflate, geotiff.CompressionDeflateLegacy} {
			if !strings.Contains(desc, "`"+c.String()+"`") {
				t.Errorf("RasterTile.compression does not name %s", c)
			}
		}
	})

	// Media Type Objects may give a map of named examples, which
	// TestOpenAPI_Examples does not read: each value against the schema.
	t.Run("ExampleMaps", func(t *testing.T) {
		sc := oaSchemaChecker{doc: doc}
		n := 0
		oaWalk(doc, "", func(ptr string, v any) {
			m, ok := v.(map[string]any)
			if !ok {
				return
			}
			exs, ok := m["examples"].(map[string]any)
			schema, hasSchema := m["schema"]
			if !ok || !hasSchema {
				return
			}
			for name, ev := range exs {
				value, ok := ev.(map[string]any)["value"]
				if !ok {
					t.Errorf("%s/examples/%s has no value", ptr, name)
					continue
				}
				n++
				for _, e := range sc.check(schema, value, ptr+"/examples/"+name) {
					t.Error(e)
				}
			}
		})
		if n < 4 {
			t.Errorf("checked %d named examples, want at least the 4 of POST /layers", n)
		}
	})

	t.Run("Scenario", func(t *testing.T) {
		if testing.Short() {
			t.Skip("starts an appliance")
		}
		c := &oaConformance{t: t, doc: doc, sc: oaSchemaChecker{doc: doc}}
		c.rasterLayers()
	})
}

// oaTile writes a GeoTIFF of width x height pixels of dx degrees whose
// upper-left corner is (west, north), LZW-compressed in strips of 16 rows.
func oaTile(t *testing.T, path string, west, north, dx float64, width, height int, px geotifftest.Pixels) {
	t.Helper()
	b := geotifftest.MustEncode(t, width, height, px, geotifftest.Options{Compression: geotiff.CompressionLZW,
		RowsPerStrip: 16, West: west, North: north, DX: dx, DY: dx})
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// rasterLayers drives POST /layers with raster layers on an appliance of
// its own, and screens plots against them. Tiles are written under the
// data dir's raster root: a Hansen-like loss-year layer of two adjacent
// tiles of 0.1 degree (0.00025 degree pixels, LZW), with loss in 2021 in a
// block of one; a finer forest-2020 layer over the first tile, forest in
// its west part. Refusals: an unreadable file, overlapping tiles, a folder
// outside the root, raster and vector members mixed up. Then production
// plots: one over the loss block (HIGH_RISK, loss in forest on the forest
// grid), one across both tiles away from it (COMPLIANT, no forest map
// covering it), a point and a plot smaller than a pixel in the block; and
// last a plot needing a tile changed since its layer was imported
// (FAILED SCREENING_ERROR). Every evidence document is checked against the
// document.
func (c *oaConformance) rasterLayers() {
	t := c.t
	t.Helper()
	const (
		login     = enterprisePrefix + "/auth/login"
		imp       = enterprisePrefix + "/layers"
		list      = eudrPrefix + "/layers"
		polygons  = eudrPrefix + "/polygons"
		evidence  = eudrPrefix + "/polygons/{polygonId}/evidence"
		cell      = 0.00025 // degrees, as Hansen's
		tileWidth = 400     // pixels: 0.1 degree
	)
	ta := newTestAppAt(t, t.TempDir(), apitest.NewClock(time.Now().UTC()),
		"EUDR_RATE_LIMIT_PER_SECOND=100000", "EUDR_RATE_LIMIT_BURST=100000",
		"EUDR_RATE_LIMIT_IP_PER_SECOND=100000", "EUDR_RATE_LIMIT_IP_BURST=100000")
	c.a = ta.App
	with, idem, problems := oaWith, oaIdem, oaProblems
	jsonCT := []string{"Content-Type", "application/json"}
	production := storage.Tenant{Org: defaultOrg, Env: storage.Production}

	an := c.do(oaCall{method: "POST", target: login, op: login, hdr: jsonCT, want: 200,
		body: `{"username":"` + adminUsername + `","password":"` + testAdminPassword + `"}`})
	jwt := []string{"Authorization", "Bearer " + fmt.Sprint(an.body["token"])}
	_, liveKey := ta.newKey(storage.Production)
	live := []string{"X-API-Key", liveKey}
	post := func(key, body string, want int) oaAnswer {
		t.Helper()
		return c.do(oaCall{env: storage.Production, method: "POST", target: imp, op: imp, body: body, hdr: idem(with(jwt, jsonCT...), key), want: want})
	}

	// The tiles, under the default raster root (data_dir/rasters). The
	// loss block: columns and rows 100-199 of tile a, lon 10.025-10.05,
	// lat 5.05-5.075. Next to them, files that are not tiles.
	root := filepath.Join(ta.dir, "rasters")
	loss := func(col, row int) uint8 {
		if col >= 100 && col < 200 && row >= 100 && row < 200 {
			return 21 // lost in 2021, after the cutoff
		}
		return 0
	}
	oaTile(t, filepath.Join(root, "hansen", "lossyear_a.tif"), 10.0, 5.1, cell, tileWidth, tileWidth, loss)
	oaTile(t, filepath.Join(root, "hansen", "lossyear_b.TIF"), 10.1, 5.1, cell, tileWidth, tileWidth, func(int, int) uint8 { return 0 })
	if err := os.WriteFile(filepath.Join(root, "hansen", "README.txt"), []byte("Hansen GFC lossyear, two tiles"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "hansen", "previous"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Forest of 2020 on a grid twice as fine over tile a: forest west of
	// lon 10.0375, the middle of the loss block.
	oaTile(t, filepath.Join(root, "jrc", "forest.tif"), 10.0, 5.1, cell/2, 2*tileWidth, 2*tileWidth, func(col, _ int) uint8 {
		if col < 300 {
			return 1
		}
		return 0
	})

	// Refusals, nothing imported.
	rasterBody := func(kind, dir string) string {
		return `{"name":"GFC lossyear","kind":"` + kind + `","version":"GFC-2024-v1.12","source":"https://glad.umd.edu","raster":{"directory":"` + dir + `"}}`
	}
	oaTile(t, filepath.Join(root, "broken", "good.tif"), 20.0, 5.1, cell, 16, 16, loss)
	if err := os.WriteFile(filepath.Join(root, "broken", "junk.tif"), []byte("this is not a TIFF at all, only some bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	an = post("lyr-broken", rasterBody("loss-year", "broken"), 400)
	if ds := oaList(an.body["details"]); len(ds) != 1 || !problems(an)[apierr.DetailInvalidValue+" at raster.directory"] ||
		!strings.HasPrefix(fmt.Sprint(ds[0].(map[string]any)["issue"]), "junk.tif: ") {
		t.Errorf("a folder with an unreadable file: %s; want one INVALID_VALUE at raster.directory naming junk.tif", an.rec.Body)
	}
	oaTile(t, filepath.Join(root, "overlap", "one.tif"), 30.0, 5.1, cell, 16, 16, loss)
	oaTile(t, filepath.Join(root, "overlap", "two.tif"), 30.002, 5.1, cell, 16, 16, loss)
	an = post("lyr-overlap", rasterBody("loss-year", "overlap"), 400)
	if !strings.Contains(an.rec.Body.String(), "one.tif and two.tif overlap") {
		t.Errorf("overlapping tiles: %s", an.rec.Body)
	}
	an = post("lyr-outside", rasterBody("loss-year", "../x"), 400)
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailInvalidValue + " at raster.directory": true}) {
		t.Errorf("a folder outside the raster root: %v", slices.Sorted(maps.Keys(got)))
	}
	post("lyr-absolute", rasterBody("loss-year", t.TempDir()), 400)
	an = post("lyr-empty", rasterBody("loss-year", "hansen/previous"), 400)
	if !problems(an)[apierr.DetailInvalidValue+" at raster.directory"] {
		t.Errorf("a folder without tiles: %s", an.rec.Body)
	}
	an = post("lyr-none", `{"name":"x","kind":"alerts","version":"1","source":"s"}`, 400)
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailRequired + " at raster.directory": true}) {
		t.Errorf("a raster kind without raster: %v", slices.Sorted(maps.Keys(got)))
	}
	an = post("lyr-mixed", `{"name":"x","kind":"loss-year","version":"1","source":"s","raster":{"directory":"hansen"},`+
		`"features":{"type":"FeatureCollection","features":[]},"coverage":{"type":"FeatureCollection","features":[]}}`, 400)
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailInvalidValue + " at features": true, apierr.DetailInvalidValue + " at coverage": true}) {
		t.Errorf("a raster layer with features and coverage: %v", slices.Sorted(maps.Keys(got)))
	}
	an = post("lyr-vector", rasterBody("deforestation", "hansen"), 400)
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailInvalidValue + " at kind": true}) {
		t.Errorf("a vector kind with raster: %v", slices.Sorted(maps.Keys(got)))
	}
	an = post("lyr-novector", `{"name":"x","kind":"protected_area","version":"1","source":"s"}`, 400)
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailRequired + " at features": true}) {
		t.Errorf("a vector kind without features: %v", slices.Sorted(maps.Keys(got)))
	}
	c.do(oaCall{env: storage.Production, method: "POST", target: imp, op: imp, body: rasterBody("loss-year", "hansen"),
		hdr: idem(live, "lyr-key"), want: 403})
	an = c.do(oaCall{env: storage.Production, method: "GET", target: list, op: list, hdr: live, want: 200})
	if len(an.list) != 0 {
		t.Fatalf("layers after refusals only: %v", oaShort(an.list))
	}

	// The loss-year layer: two tiles, headers read, files that are not
	// tiles skipped; a replay answers the same.
	an = post("lyr-hansen", rasterBody("loss-year", "hansen"), 200)
	lossID := fmt.Sprint(an.body["layerId"])
	r, _ := an.body["raster"].(map[string]any)
	tiles := oaList(r["tiles"])
	var names []string
	for _, tv := range tiles {
		names = append(names, fmt.Sprint(tv.(map[string]any)["name"]))
	}
	if r["tileCount"] != 2.0 || !slices.Equal(names, []string{"lossyear_a.tif", "lossyear_b.TIF"}) ||
		r["directory"] != filepath.Join(root, "hansen") || an.body["featureCount"] != 0.0 {
		t.Errorf("the loss-year layer: %s", an.rec.Body)
	}
	if tile := tiles[0].(map[string]any); tile["width"] != 400.0 || tile["dx"] != cell || tile["west"] != 10.0 || tile["north"] != 5.1 ||
		tile["compression"] != "LZW (5)" || tile["layout"] != "strips of 16 rows" || tile["noData"] != nil {
		t.Errorf("the first tile: %v", tile)
	}
	if cov, _ := an.body["coverage"].(map[string]any); cov["polygonCount"] != 2.0 || !reflect.DeepEqual(cov["bbox"], []any{10.0, 5.0, 10.2, 5.1}) {
		t.Errorf("the loss-year layer's coverage: %v, want its 2 tiles and their bounds", cov)
	}
	if an.body["sha256"] != tileListSHA256(t, ta.tileRecords(lossID)) {
		t.Errorf("sha256 %v is not that of the tile list", an.body["sha256"])
	}
	an = post("lyr-hansen", rasterBody("loss-year", "hansen"), 200)
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["layerId"] != lossID {
		t.Errorf("replayed import: %s", an.rec.Body)
	}
	an = post("lyr-jrc", `{"name":"JRC GFC2020","kind":"forest-2020","version":"v2","source":"https://forobs.jrc.ec.europa.eu/GFC","raster":{"directory":"`+
		filepath.Join(root, "jrc")+`"},"features":null,"coverage":null}`, 200)
	forestID := fmt.Sprint(an.body["layerId"])
	an = c.do(oaCall{env: storage.Production, method: "GET", target: list, op: list, hdr: live, want: 200})
	if len(an.list) != 2 || an.list[0].(map[string]any)["layerId"] != forestID || an.list[1].(map[string]any)["layerId"] != lossID {
		t.Errorf("production layers: %v, want the forest layer, then the loss-year layer", oaShort(an.list))
	}

	// The plots.
	feature := func(geometry, props string) string {
		return `{"type":"Feature","geometry":` + geometry + `,"properties":{"commodity":"cocoa","producerCountry":"` + countryOf(geometry) + `"` + props + `}}`
	}
	polygon := func(lon, lat, d float64) string {
		return `{"type":"Polygon","coordinates":` + square(lon, lat, d) + `}`
	}
	body := collection(
		feature(polygon(10.0375, 5.0625, 0.01), ""),                                   // over the loss block
		feature(polygon(10.1, 5.02, 0.002), ""),                                       // across both tiles, away from it
		feature(`{"type":"Point","coordinates":[10.030000,5.070000]}`, `,"area":1.5`), // in the block
		feature(polygon(10.03006, 5.07, 0.00005), ""),                                 // in the block, smaller than a pixel
	)
	an = c.do(oaCall{env: storage.Production, method: "POST", target: polygons, op: polygons, body: body, hdr: idem(live, "rst-pol"), want: 202})
	job := fmt.Sprint(an.body["jobId"])
	finished := func(id string) func() bool {
		return func() bool {
			var j *storage.Job
			err := ta.db.View(context.Background(), func(tx *storage.Tx) error {
				var err error
				j, err = tx.FindJob(production, id)
				return err
			})
			return err == nil && (j.Status == storage.JobCompleted || j.Status == storage.JobFailed)
		}
	}
	oaRunUntil(t, ta.jobs, "the raster plots to be screened", finished(job))
	evidenceOf := func(id string) map[string]any {
		t.Helper()
		return c.do(oaCall{env: storage.Production, method: "GET", target: eudrPrefix + "/polygons/" + id + "/evidence", op: evidence, hdr: live, want: 200}).body
	}
	rasterOf := func(ev map[string]any, layerID string) map[string]any {
		for _, rv := range oaList(ev["rasters"]) {
			if rm := rv.(map[string]any); rm["layerId"] == layerID {
				return rm
			}
		}
		t.Errorf("evidence of %v: no raster result of %s", ev["polygonId"], layerID)
		return map[string]any{}
	}
	num := func(v any) float64 { f, _ := v.(float64); return f }

	// Over the loss block: loss in 2021, half of it in forest (counted on
	// the forest layer's finer grid).
	ev := evidenceOf(storage.PolygonID(job, 0))
	lf, _ := ev["lossInForest"].(map[string]any)
	risk, _ := ev["risk"].(map[string]any)
	if ev["eudrStatus"] != geo.StatusHighRisk || ev["failureReason"] != geo.ReasonDeforestationAfterCutoff ||
		num(lf["ha"]) <= 0 || lf["lossLayerId"] != lossID || lf["forestLayerId"] != forestID ||
		math.Abs(num(lf["pct"])-50) > 5 || risk["riskScore"] != 100.0 || risk["deforestedHa"] != lf["ha"] {
		t.Errorf("the plot over the loss block: %s", oaShort(ev))
	}
	lr, fr := rasterOf(ev, lossID), rasterOf(ev, forestID)
	years := oaList(lr["lossByYear"])
	if lr["covered"] != true || !reflect.DeepEqual(lr["tiles"], []any{"lossyear_a.tif"}) || len(years) != 1 ||
		years[0].(map[string]any)["year"] != 2021.0 || math.Abs(num(lr["measuredPct"])-100) > 0.01 || fr["covered"] != true ||
		math.Abs(num(fr["measuredPct"])-50) > 5 || num(lf["pixels"]) <= num(lr["pixels"]) {
		t.Errorf("the rasters of the plot over the loss block: %v, loss in forest %v", ev["rasters"], lf)
	}
	if rules, _ := ev["rules"].(map[string]any); rules["lossThresholdPct"] != 10.0 || rules["lossThresholdHa"] != 0.5 || rules["cutoff"] != "2020-12-31" {
		t.Errorf("rules: %v", rules)
	}

	// Across both tiles, no loss: COMPLIANT, both tiles read; the forest
	// layer does not cover it, so loss would count wherever it is.
	ev = evidenceOf(storage.PolygonID(job, 1))
	lf, _ = ev["lossInForest"].(map[string]any)
	lr, fr = rasterOf(ev, lossID), rasterOf(ev, forestID)
	if ev["eudrStatus"] != geo.StatusCompliant || lf == nil || lf["forestLayerId"] != nil || lf["ha"] != 0.0 ||
		!reflect.DeepEqual(lr["tiles"], []any{"lossyear_a.tif", "lossyear_b.TIF"}) || lr["covered"] != true ||
		len(oaList(lr["lossByYear"])) != 0 || fr["covered"] != false {
		t.Errorf("the plot across both tiles: %s", oaShort(ev))
	}

	// A point: the pixel it falls in, with its declared area.
	ev = evidenceOf(storage.PolygonID(job, 2))
	lr = rasterOf(ev, lossID)
	if ev["eudrStatus"] != geo.StatusHighRisk || lr["pixels"] != 1.0 ||
		!reflect.DeepEqual(lr["values"], []any{map[string]any{"value": 21.0, "pixels": 1.0, "ha": 1.5}}) {
		t.Errorf("the point in the loss block: %s", oaShort(ev))
	}

	// Smaller than a pixel: the pixel under a point inside it, with its
	// area.
	ev = evidenceOf(storage.PolygonID(job, 3))
	lr = rasterOf(ev, lossID)
	if ev["eudrStatus"] != geo.StatusHighRisk || lr["sampled"] != true || lr["pixels"] != 1.0 ||
		math.Abs(num(lr["measuredHa"])-num(ev["areaHa"])) > 1e-6*num(ev["areaHa"]) {
		t.Errorf("the plot smaller than a pixel: %s", oaShort(ev))
	}

	// A tile changed since its layer was imported (and never opened
	// since): the plots that need it are FAILED SCREENING_ERROR.
	oaTile(t, filepath.Join(root, "radd", "alerts.tif"), 10.0, 5.1, cell, tileWidth, tileWidth, func(int, int) uint8 { return 0 })
	post("lyr-radd", `{"name":"RADD alerts","kind":"alerts","version":"2026-11","source":"https://www.wur.nl/radd","raster":{"directory":"radd"}}`, 200)
	f, err := os.OpenFile(filepath.Join(root, "radd", "alerts.tif"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("more")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	an = c.do(oaCall{env: storage.Production, method: "POST", target: polygons, op: polygons, hdr: idem(live, "rst-changed"), want: 202,
		body: collection(feature(polygon(10.07, 5.02, 0.002), ""))})
	job = fmt.Sprint(an.body["jobId"])
	oaRunUntil(t, ta.jobs, "the plot on a changed tile to be screened", finished(job))
	ev = evidenceOf(storage.PolygonID(job, 0))
	if ev["eudrStatus"] != geo.StatusFailed || ev["failureReason"] != geo.ReasonScreeningError ||
		!strings.Contains(fmt.Sprint(ev["failureDetail"]), "alerts.tif") || len(oaList(ev["rasters"])) != 0 || ev["lossInForest"] != nil {
		t.Errorf("a plot on a changed tile: %s", oaShort(ev))
	}
}

// tileRecords returns the tile records of the stored layer id.
func (ta *testApp) tileRecords(id string) []storage.RasterTile {
	ta.tb.Helper()
	var tiles []storage.RasterTile
	ta.view(func(tx *storage.Tx) error {
		l, err := tx.FindLayer(id)
		if err == nil && l.Raster != nil {
			tiles = l.Raster.Tiles
		}
		return err
	})
	return tiles
}

// tileListSHA256 is a raster layer's SHA-256 as the document defines it:
// that of its tile list as JSON.
func tileListSHA256(tb testing.TB, tiles []storage.RasterTile) string {
	tb.Helper()
	b, err := json.Marshal(tiles)
	if err != nil {
		tb.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
