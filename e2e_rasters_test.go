package main_test

// End-to-end test of raster reference layers against the real binary:
// GeoTIFF tiles written with geotifftest, imported with `eudr layers import
// --raster` on the stopped appliance (refused while it runs, and refused
// whole when a tile is corrupt), listed by GET /layers, then production
// plots screened against them: forest of 2020 (forest-2020) lost after the
// cutoff (loss-year), measured pixel by pixel on the finer grid, with the
// evidence document's rasters[], lossInForest and rules.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
	"github.com/eudr/eudr/server/apitest"
)

// The test tiles.
//
// Loss-year, like a Hansen lossyear tile: 800 x 800 pixels of 0.00025
// degree, upper-left corner at 20 E, 0 N (lon 20 to 20.2, lat -0.2 to 0),
// LZW in strips of one row, no nodata. Values (k = loss in 2000+k):
//
//	22 in columns and rows 400-479: lon 20.10 to 20.12, lat -0.12 to -0.10
//	10 in columns and rows 640-719: lon 20.16 to 20.18, lat -0.18 to -0.16
//	22 in columns 720-759, rows 160-199: lon 20.18 to 20.19, lat -0.05 to -0.04
//
// Forest-2020, like a JRC GFC2020 tile but on a finer grid: 1500 x 1500
// pixels of 0.0001 degree from 20 E, 0 N (lon 20 to 20.15, lat -0.15 to 0),
// Deflate in tiles of 256 x 256 (the last row and column of tiles padded),
// nodata 255 (never used): forest (1) in columns 1000-1099 and rows
// 1000-1199 only, the west half of the first 2022 block (lon 20.10 to
// 20.11, lat -0.12 to -0.10). The 2010 block and the second 2022 block are
// outside this tile.
//
// Every plot edge below is a multiple of 0.0001 degree: on a forest pixel
// edge, so forest pixel centres are 0.00005 degree from any edge, and loss
// pixel centres (20.000125 + k x 0.00025) at least 0.000025 degree from it.
// No pixel centre is on a plot's boundary, and the block edges (multiples of
// 0.0005) hold no forest pixel centre.
const (
	rasLossPx     = 0.00025
	rasForestPx   = 0.0001
	rasLossTile   = "Hansen_GFC-2023-v1.11_lossyear_00N_020E.tif"
	rasForestTile = "JRC_GFC2020_V2_N0_E20.tif"
)

func rasLossPixel(col, row int) uint8 {
	switch {
	case col >= 400 && col < 480 && row >= 400 && row < 480:
		return 22
	case col >= 640 && col < 720 && row >= 640 && row < 720:
		return 10
	case col >= 720 && col < 760 && row >= 160 && row < 200:
		return 22
	}
	return 0
}

func rasForestPixel(col, row int) uint8 {
	if col >= 1000 && col < 1100 && row >= 1000 && row < 1200 {
		return 1
	}
	return 0
}

// rasWriteTile writes a tile to dir/name, making dir, and returns its bytes.
func rasWriteTile(t *testing.T, dir, name string, side int, px geotifftest.Pixels, o geotifftest.Options) []byte {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := geotifftest.MustEncode(t, side, side, px, o)
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}

// --- evidence views ---

type rasValue struct {
	Value  int     `json:"value"`
	Pixels int     `json:"pixels"`
	Ha     float64 `json:"ha"`
}

type rasYear struct {
	Year   int     `json:"year"`
	Pixels int     `json:"pixels"`
	Ha     float64 `json:"ha"`
}

type rasRaster struct {
	LayerID      string     `json:"layerId"`
	Name         string     `json:"name"`
	Kind         string     `json:"kind"`
	Version      string     `json:"version"`
	Source       string     `json:"source"`
	SHA256       string     `json:"sha256"`
	Covered      bool       `json:"covered"`
	Tiles        []string   `json:"tiles"`
	Pixels       int        `json:"pixels"`
	NoDataPixels int        `json:"noDataPixels"`
	Values       []rasValue `json:"values"`
	Sampled      bool       `json:"sampled"`
	MeasuredHa   float64    `json:"measuredHa"`
	MeasuredPct  float64    `json:"measuredPct"`
	LossByYear   []rasYear  `json:"lossByYear"`
}

type rasLoss struct {
	LossLayerID   string  `json:"lossLayerId"`
	ForestLayerID *string `json:"forestLayerId"`
	Pixels        int     `json:"pixels"`
	Ha            float64 `json:"ha"`
	Pct           float64 `json:"pct"`
}

// rasEvidence is the part of GET /polygons/{id}/evidence this test reads.
type rasEvidence struct {
	PolygonID     string   `json:"polygonId"`
	EUDRStatus    string   `json:"eudrStatus"`
	FailureReason *string  `json:"failureReason"`
	AreaHa        float64  `json:"areaHa"`
	Risk          *polRisk `json:"risk"`
	Rules         struct {
		LossThresholdPct float64 `json:"lossThresholdPct"`
		LossThresholdHa  float64 `json:"lossThresholdHa"`
		Cutoff           string  `json:"cutoff"`
	} `json:"rules"`
	Layers       []json.RawMessage `json:"layers"`
	Rasters      []rasRaster       `json:"rasters"`
	LossInForest *rasLoss          `json:"lossInForest"`
}

// rasLayer is the part of a GET /layers item this test reads.
type rasLayer struct {
	LayerID      string `json:"layerId"`
	Name         string `json:"name"`
	Kind         string `json:"kind"`
	Version      string `json:"version"`
	Source       string `json:"source"`
	SHA256       string `json:"sha256"`
	FeatureCount int    `json:"featureCount"`
	Raster       *struct {
		Directory string `json:"directory"`
		TileCount int    `json:"tileCount"`
		Tiles     []struct {
			Name        string  `json:"name"`
			Size        int64   `json:"size"`
			Width       int     `json:"width"`
			Height      int     `json:"height"`
			West        float64 `json:"west"`
			North       float64 `json:"north"`
			DX          float64 `json:"dx"`
			DY          float64 `json:"dy"`
			NoData      *int    `json:"noData"`
			Compression string  `json:"compression"`
			Layout      string  `json:"layout"`
		} `json:"tiles"`
	} `json:"raster"`
}

// rasImport runs `eudr layers import --raster dir` and returns the layer ID
// from its "lyr_... 1 tile" line.
func rasImport(t *testing.T, dataDir, name, kind, version, source, dir string) string {
	t.Helper()
	res := runCLI(t, dataDir, nil, "layers", "import", "--name", name, "--kind", kind, "--version", version,
		"--source", source, "--raster", dir)
	f := strings.Fields(res.Stdout)
	if res.Code != 0 || len(f) != 3 || !strings.HasPrefix(f[0], "lyr_") || f[1] != "1" || f[2] != "tile" {
		t.Fatalf("layers import --kind %s --raster %s: exit %d, stdout %q, stderr %q; want 0 and \"lyr_... 1 tiles\"",
			kind, dir, res.Code, res.Stdout, res.Stderr)
	}
	return f[0]
}

// rasCellHa is the area in hectares of a pixel of d degrees at latitude lat.
func rasCellHa(d, lat float64) float64 { return polBoxHa(20, lat-d/2, 20+d, lat+d/2) }

func rasValues(vs []rasValue) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("%d:%d", v.Value, v.Pixels))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func TestRaster_LossInForest(t *testing.T) {
	t.Parallel()
	requireE2E(t)
	dir := t.TempDir()
	lossDir, forestDir, badDir := filepath.Join(dir, "hansen"), filepath.Join(dir, "jrc"), filepath.Join(dir, "bad")
	lossBytes := rasWriteTile(t, lossDir, rasLossTile, 800, rasLossPixel, geotifftest.Options{
		Compression: geotiff.CompressionLZW, RowsPerStrip: 1, West: 20, North: 0, DX: rasLossPx, DY: rasLossPx})
	rasWriteTile(t, forestDir, rasForestTile, 1500, rasForestPixel, geotifftest.Options{
		Compression: geotiff.CompressionDeflate, TileWidth: 256, TileHeight: 256, West: 20, North: 0,
		DX: rasForestPx, DY: rasForestPx, NoData: "255"})
	// A folder with a good tile, a file of junk bytes and a tile cut short:
	// refused whole.
	rasWriteTile(t, badDir, "good.tif", 800, rasLossPixel, geotifftest.Options{
		Compression: geotiff.CompressionLZW, RowsPerStrip: 1, West: 20, North: 0, DX: rasLossPx, DY: rasLossPx})
	if err := os.WriteFile(filepath.Join(badDir, "junk.tif"), []byte("these bytes are not a GeoTIFF at all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(badDir, "cut.tiff"), lossBytes[:200], 0o644); err != nil {
		t.Fatal(err)
	}

	p := startServer(t)
	res := runCLI(t, p.DataDir, nil, "layers", "import", "--name", "x", "--kind", "loss-year", "--version", "1",
		"--source", "s", "--raster", lossDir)
	if res.Code == 0 || !strings.Contains(res.Stderr, "in use") {
		t.Errorf("layers import --raster on a running appliance: exit %d, stdout %q, stderr %q; want non-zero and \"in use\"",
			res.Code, res.Stdout, res.Stderr)
	}
	p.Stop(t)

	lossID := rasImport(t, p.DataDir, "Hansen GFC loss year", "loss-year", "GFC-2023-v1.11", "https://glad.umd.edu", lossDir)
	forestID := rasImport(t, p.DataDir, "JRC GFC2020", "forest-2020", "V2", "https://forobs.jrc.ec.europa.eu", forestDir)

	res = runCLI(t, p.DataDir, nil, "layers", "import", "--name", "bad", "--kind", "loss-year", "--version", "1",
		"--source", "s", "--raster", badDir)
	t.Logf("import of the corrupt folder: exit %d, stderr:\n%s", res.Code, res.Stderr)
	if res.Code != 1 || res.Stdout != "" || !strings.Contains(res.Stderr, "--raster") ||
		!strings.Contains(res.Stderr, "junk.tif: ") || !strings.Contains(res.Stderr, "not a TIFF") ||
		!strings.Contains(res.Stderr, "cut.tiff: ") || strings.Contains(res.Stderr, "good.tif") {
		t.Errorf("layers import of a folder with a junk and a truncated tile: exit %d, stdout %q, stderr %q; "+
			"want 1, nothing on stdout, and stderr naming junk.tif (not a TIFF) and cut.tiff, not good.tif", res.Code, res.Stdout, res.Stderr)
	}

	// The layers, as production lists them: the refused folder is not one.
	p = p.Restart(t)
	key := p.createKey(t, production)
	var layers []rasLayer
	p.mustDo(t, "GET", p.ProductionURL+eudrAPI+"/layers", apitest.WithKey(key), nil, http.StatusOK).Decode(t, &layers)
	if len(layers) != 2 {
		t.Fatalf("production lists %d layers, want the 2 imported: %+v", len(layers), layers)
	}
	byID := map[string]rasLayer{}
	for _, l := range layers {
		byID[l.LayerID] = l
	}
	nodata255 := 255
	for _, c := range []struct {
		id, kind, name, version, dirPath, tile, compression, layout string
		side                                                        int
		px                                                          float64
		noData                                                      *int
	}{
		{lossID, "loss-year", "Hansen GFC loss year", "GFC-2023-v1.11", lossDir, rasLossTile, "LZW (5)", "strips of 1 rows", 800, rasLossPx, nil},
		{forestID, "forest-2020", "JRC GFC2020", "V2", forestDir, rasForestTile, "Deflate (8)", "tiles 256x256", 1500, rasForestPx, &nodata255},
	} {
		l, ok := byID[c.id]
		if !ok {
			t.Errorf("layer %s (%s) is not listed: %+v", c.id, c.kind, layers)
			continue
		}
		if l.Kind != c.kind || l.Name != c.name || l.Version != c.version || l.FeatureCount != 0 || len(l.SHA256) != 64 ||
			l.Raster == nil || l.Raster.TileCount != 1 || len(l.Raster.Tiles) != 1 || l.Raster.Directory != c.dirPath {
			t.Errorf("layer %s: %+v (raster %+v), want kind %s, name %q, version %s, 1 tile in %s", c.id, l, l.Raster, c.kind, c.name, c.version, c.dirPath)
			continue
		}
		tl := l.Raster.Tiles[0]
		if tl.Name != c.tile || tl.Width != c.side || tl.Height != c.side || tl.West != 20 || tl.North != 0 ||
			tl.DX != c.px || tl.DY != c.px || tl.Compression != c.compression || tl.Layout != c.layout ||
			(tl.NoData == nil) != (c.noData == nil) || (tl.NoData != nil && *tl.NoData != *c.noData) {
			t.Errorf("layer %s tile %+v, want %s %dx%d at 20E 0N of %v degree, %s, %s, nodata %v", c.id, tl, c.tile, c.side, c.side,
				c.px, c.compression, c.layout, c.noData)
		}
	}
	lossLayer, forestLayer := byID[lossID], byID[forestID]

	// The plots. lossValues and forestValues count the pixels of each layer
	// whose centre is in the plot, by value, worked out from the geometry:
	//
	//  a  lon 20.104-20.112, lat -0.115 to -0.110, in the first 2022
	//     block, across the forest's east edge at 20.11. Forest grid:
	//     columns 1040-1119 (80) x rows 1100-1149 (50) = 4000 pixels, of
	//     which columns 1040-1099 (60 x 50 = 3000) are forest: 3000 pixels
	//     of forest lost in 2022, 75 % of the plot. Loss grid: centres
	//     20.000125 + k x 0.00025 in 20.104-20.112 are k = 416-447 (32),
	//     rows 440-459 (20): 640 pixels of 22.
	//  b  lon 20.113-20.118, lat -0.115 to -0.110: the same block, east of
	//     the forest. Forest columns 1130-1179 x rows 1100-1149: 2500
	//     pixels of 0; loss columns 452-471 x rows 440-459: 400 of 22. Lost
	//     in 2022 but not forest in 2020: COMPLIANT.
	//  c  lon 20.165-20.170, lat -0.175 to -0.170: the 2010 block, outside
	//     the forest tile, so loss after the cutoff would count wherever it
	//     is. Loss columns 660-679 x rows 680-699: 400 of 10, none after 2020.
	//  d  lon 20.250-20.255, lat -0.100 to -0.095: outside both tiles.
	//  e  a Point at 20.10537, -0.11337 declaring 2 ha: forest pixel
	//     (1053, 1133) is 1, loss pixel (421, 453) is 22: 2 ha lost, over
	//     the 0.5 ha threshold.
	//  f  lon 20.182-20.186, lat -0.048 to -0.044: the second 2022 block,
	//     outside the forest tile: loss columns 728-743 x rows 176-191, 256
	//     of 22, counted on the loss grid without a forest map.
	//  g  lon 20.198-20.202, lat -0.030 to -0.026: across the loss tile's
	//     east edge, so not covered: loss columns 792-799 x rows 104-119,
	//     128 of 0, inside the tile.
	//  h  a Point at 20.11537, -0.11337 declaring 0.3 ha: loss 22, forest 0.
	//  i  lon 20.1098-20.1148, lat -0.115 to -0.110: forest columns
	//     1098-1147 x rows 1100-1149, 2500 pixels of which columns
	//     1098-1099 (2 x 50 = 100) are forest: 4 % of the plot, under 10 %,
	//     but about 1.23 ha, over 0.5 ha. Loss columns 439-458 x rows
	//     440-459: 400 of 22.
	//  j  lon 20.1098-20.1148, lat -0.112 to -0.110: forest rows 1100-1119,
	//     1000 pixels of which 2 x 20 = 40 forest: 4 % and about 0.49 ha,
	//     under both thresholds: COMPLIANT. Loss rows 440-447: 160 of 22.
	//  k  a Point at 20.10737, -0.11137 declaring 0.3 ha, in lost forest:
	//     under 0.5 ha, but 100 % of the plot.
	props := func(area float64) map[string]any {
		m := map[string]any{"commodity": "cocoa", "producerCountry": "CD"}
		if area > 0 {
			m["area"] = area
		}
		return m
	}
	point := func(lon, lat float64) string {
		return fmt.Sprintf(`{"type":"Point","coordinates":[%.6f,%.6f]}`, lon, lat)
	}
	type box struct{ lon0, lat0, lon1, lat1 float64 }
	type inForest struct {
		forest bool    // forestLayerId is the forest layer (else null)
		pixels int     // of the grid it is counted on
		cell   float64 // that grid's pixel size
		pct    float64
	}
	plots := []struct {
		name           string
		box            box     // a polygon plot
		lon, lat, area float64 // or a point plot
		status, reason string
		lossCovered    bool
		lossTiles      []string
		lossValues     []rasValue
		forestCovered  bool
		forestTiles    []string
		forestValues   []rasValue
		loss           *inForest // nil: lossInForest null
	}{
		{name: "a: 2022 loss, three quarters in 2020 forest", box: box{20.104, -0.115, 20.112, -0.110},
			status: "HIGH_RISK", reason: "DEFORESTATION_AFTER_CUTOFF",
			lossCovered: true, lossTiles: []string{rasLossTile}, lossValues: []rasValue{{Value: 22, Pixels: 640}},
			forestCovered: true, forestTiles: []string{rasForestTile}, forestValues: []rasValue{{Value: 0, Pixels: 1000}, {Value: 1, Pixels: 3000}},
			loss: &inForest{forest: true, pixels: 3000, cell: rasForestPx, pct: 75}},
		{name: "b: 2022 loss outside 2020 forest", box: box{20.113, -0.115, 20.118, -0.110},
			status:      "COMPLIANT",
			lossCovered: true, lossTiles: []string{rasLossTile}, lossValues: []rasValue{{Value: 22, Pixels: 400}},
			forestCovered: true, forestTiles: []string{rasForestTile}, forestValues: []rasValue{{Value: 0, Pixels: 2500}},
			loss: &inForest{forest: true, pixels: 0, cell: rasForestPx, pct: 0}},
		{name: "c: 2010 loss, no forest map", box: box{20.165, -0.175, 20.170, -0.170},
			status:      "COMPLIANT",
			lossCovered: true, lossTiles: []string{rasLossTile}, lossValues: []rasValue{{Value: 10, Pixels: 400}},
			forestTiles: []string{}, forestValues: []rasValue{},
			loss: &inForest{pixels: 0, cell: rasLossPx, pct: 0}},
		{name: "d: outside the tiles", box: box{20.250, -0.100, 20.255, -0.095},
			status: "FAILED", reason: "NO_REFERENCE_COVERAGE",
			lossTiles: []string{}, lossValues: []rasValue{}, forestTiles: []string{}, forestValues: []rasValue{}},
		{name: "e: point of 2 ha in lost 2020 forest", lon: 20.10537, lat: -0.11337, area: 2,
			status: "HIGH_RISK", reason: "DEFORESTATION_AFTER_CUTOFF",
			lossCovered: true, lossTiles: []string{rasLossTile}, lossValues: []rasValue{{Value: 22, Pixels: 1}},
			forestCovered: true, forestTiles: []string{rasForestTile}, forestValues: []rasValue{{Value: 1, Pixels: 1}},
			loss: &inForest{forest: true, pixels: 1, pct: 100}},
		{name: "f: 2022 loss, no forest map", box: box{20.182, -0.048, 20.186, -0.044},
			status: "HIGH_RISK", reason: "DEFORESTATION_AFTER_CUTOFF",
			lossCovered: true, lossTiles: []string{rasLossTile}, lossValues: []rasValue{{Value: 22, Pixels: 256}},
			forestTiles: []string{}, forestValues: []rasValue{},
			loss: &inForest{pixels: 256, cell: rasLossPx, pct: 100}},
		{name: "g: across the loss tile's edge", box: box{20.198, -0.030, 20.202, -0.026},
			status: "FAILED", reason: "NO_REFERENCE_COVERAGE",
			lossTiles: []string{rasLossTile}, lossValues: []rasValue{{Value: 0, Pixels: 128}},
			forestTiles: []string{}, forestValues: []rasValue{}},
		{name: "h: point of 0.3 ha in 2022 loss outside 2020 forest", lon: 20.11537, lat: -0.11337, area: 0.3,
			status:      "COMPLIANT",
			lossCovered: true, lossTiles: []string{rasLossTile}, lossValues: []rasValue{{Value: 22, Pixels: 1}},
			forestCovered: true, forestTiles: []string{rasForestTile}, forestValues: []rasValue{{Value: 0, Pixels: 1}},
			loss: &inForest{forest: true, pixels: 0, pct: 0}},
		{name: "i: 4 % of the plot but over 0.5 ha lost in forest", box: box{20.1098, -0.115, 20.1148, -0.110},
			status: "HIGH_RISK", reason: "DEFORESTATION_AFTER_CUTOFF",
			lossCovered: true, lossTiles: []string{rasLossTile}, lossValues: []rasValue{{Value: 22, Pixels: 400}},
			forestCovered: true, forestTiles: []string{rasForestTile}, forestValues: []rasValue{{Value: 0, Pixels: 2400}, {Value: 1, Pixels: 100}},
			loss: &inForest{forest: true, pixels: 100, cell: rasForestPx, pct: 4}},
		{name: "j: 4 % and under 0.5 ha lost in forest", box: box{20.1098, -0.112, 20.1148, -0.110},
			status:      "COMPLIANT",
			lossCovered: true, lossTiles: []string{rasLossTile}, lossValues: []rasValue{{Value: 22, Pixels: 160}},
			forestCovered: true, forestTiles: []string{rasForestTile}, forestValues: []rasValue{{Value: 0, Pixels: 960}, {Value: 1, Pixels: 40}},
			loss: &inForest{forest: true, pixels: 40, cell: rasForestPx, pct: 4}},
		{name: "k: point of 0.3 ha in lost 2020 forest", lon: 20.10737, lat: -0.11137, area: 0.3,
			status: "HIGH_RISK", reason: "DEFORESTATION_AFTER_CUTOFF",
			lossCovered: true, lossTiles: []string{rasLossTile}, lossValues: []rasValue{{Value: 22, Pixels: 1}},
			forestCovered: true, forestTiles: []string{rasForestTile}, forestValues: []rasValue{{Value: 1, Pixels: 1}},
			loss: &inForest{forest: true, pixels: 1, pct: 100}},
	}
	var feats []string
	for _, pl := range plots {
		if pl.area > 0 {
			feats = append(feats, polFeature(point(pl.lon, pl.lat), props(pl.area)))
		} else {
			feats = append(feats, polFeature(polBoxGeometry(pl.box.lon0, pl.box.lat0, pl.box.lon1, pl.box.lat1, 6), props(0)))
		}
	}
	start := time.Now()
	job := polMustPost(t, p.ProductionURL, key, polCollection(feats...), len(feats))
	j := polWaitJob(t, p.ProductionURL, key, job, 20*time.Second)
	t.Logf("screened %d plots in %s", len(feats), time.Since(start))

	for i, pl := range plots {
		id := polIDOf(job, i)
		if i < len(j.Results) && (j.Results[i].EUDRStatus != pl.status || (pl.reason != "" && polStr(j.Results[i].FailureReason) != pl.reason)) {
			t.Errorf("plot %s: job result %s %s, want %s %s", pl.name, j.Results[i].EUDRStatus, polStr(j.Results[i].FailureReason), pl.status, pl.reason)
		}
		var ev rasEvidence
		apitest.Do(t, "GET", polItemURL(p.ProductionURL, id)+"/evidence", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &ev)
		wantReason := "<null>"
		if pl.reason != "" {
			wantReason = pl.reason
		}
		if ev.PolygonID != id || ev.EUDRStatus != pl.status || polStr(ev.FailureReason) != wantReason {
			t.Errorf("plot %s: evidence %s %s %s, want %s %s", pl.name, ev.PolygonID, ev.EUDRStatus, polStr(ev.FailureReason), pl.status, wantReason)
		}
		if ev.Rules.LossThresholdPct != 10 || ev.Rules.LossThresholdHa != 0.5 || ev.Rules.Cutoff != "2020-12-31" {
			t.Errorf("plot %s: rules %+v, want lossThresholdPct 10, lossThresholdHa 0.5, cutoff 2020-12-31", pl.name, ev.Rules)
		}
		if len(ev.Layers) != 0 {
			t.Errorf("plot %s: evidence layers %s, want none (no vector layer)", pl.name, ev.Layers)
		}

		// The plot's area, and each layer's pixel area there.
		plotHa, lossCell, forestCell := pl.area, 0.0, 0.0
		if pl.area == 0 {
			plotHa = polBoxHa(pl.box.lon0, pl.box.lat0, pl.box.lon1, pl.box.lat1)
			mid := (pl.box.lat0 + pl.box.lat1) / 2
			lossCell, forestCell = rasCellHa(rasLossPx, mid), rasCellHa(rasForestPx, mid)
		}
		if !polNear(ev.AreaHa, plotHa, plotHa/1000) {
			t.Errorf("plot %s: areaHa %v, want about %.4f", pl.name, ev.AreaHa, plotHa)
		}

		// rasters[]: the loss-year layer then the forest-2020 layer, in the
		// order they were imported.
		if len(ev.Rasters) != 2 {
			t.Errorf("plot %s: %d rasters in the evidence, want 2: %+v", pl.name, len(ev.Rasters), ev.Rasters)
			continue
		}
		for k, c := range []struct {
			layer   rasLayer
			covered bool
			tiles   []string
			values  []rasValue
			cell    float64
			from    int // the values measuredHa counts: from this one up
		}{
			{lossLayer, pl.lossCovered, pl.lossTiles, pl.lossValues, lossCell, 21},
			{forestLayer, pl.forestCovered, pl.forestTiles, pl.forestValues, forestCell, 1},
		} {
			r := ev.Rasters[k]
			what := fmt.Sprintf("plot %s: rasters[%d] (%s)", pl.name, k, c.layer.Kind)
			if r.LayerID != c.layer.LayerID || r.Name != c.layer.Name || r.Kind != c.layer.Kind || r.Version != c.layer.Version ||
				r.Source != c.layer.Source || r.SHA256 != c.layer.SHA256 {
				t.Errorf("%s: layer %s %q %s %s %s %s, want %s %q %s %s %s %s", what, r.LayerID, r.Name, r.Kind, r.Version, r.Source, r.SHA256,
					c.layer.LayerID, c.layer.Name, c.layer.Kind, c.layer.Version, c.layer.Source, c.layer.SHA256)
			}
			if r.Covered != c.covered || !slices.Equal(r.Tiles, c.tiles) || r.Sampled || r.NoDataPixels != 0 {
				t.Errorf("%s: covered %v, tiles %q, sampled %v, noDataPixels %d; want covered %v, tiles %q, not sampled, no nodata",
					what, r.Covered, r.Tiles, r.Sampled, r.NoDataPixels, c.covered, c.tiles)
			}
			gotPx, wantPx, measured := 0, 0, 0
			for _, v := range c.values {
				wantPx += v.Pixels
				if v.Value >= c.from {
					measured += v.Pixels
				}
			}
			same := len(r.Values) == len(c.values)
			for n, v := range r.Values {
				gotPx += v.Pixels
				if same && (v.Value != c.values[n].Value || v.Pixels != c.values[n].Pixels) {
					same = false
				}
			}
			if !same || r.Pixels != wantPx || gotPx != wantPx {
				t.Errorf("%s: %d pixels, values %s; want %d pixels, values %s", what, r.Pixels, rasValues(r.Values), wantPx, rasValues(c.values))
			}
			wantHa := float64(measured) * c.cell
			if pl.area > 0 {
				wantHa = float64(measured) * pl.area
			}
			if !polNear(r.MeasuredHa, wantHa, wantHa/200+1e-9) || !polNear(r.MeasuredPct, 100*wantHa/plotHa, 0.5) {
				t.Errorf("%s: measuredHa %v, measuredPct %v; want about %.4f ha, %.2f %%", what, r.MeasuredHa, r.MeasuredPct, wantHa, 100*wantHa/plotHa)
			}
			if k == 0 {
				var years []string
				for _, y := range r.LossByYear {
					years = append(years, fmt.Sprintf("%d:%d", y.Year, y.Pixels))
				}
				var want []string
				for _, v := range c.values {
					if v.Value > 0 {
						want = append(want, fmt.Sprintf("%d:%d", 2000+v.Value, v.Pixels))
					}
				}
				if !slices.Equal(years, want) {
					t.Errorf("%s: lossByYear %q, want %q", what, years, want)
				}
			}
		}

		// lossInForest.
		l, w := ev.LossInForest, pl.loss
		switch {
		case w == nil && l != nil:
			t.Errorf("plot %s: lossInForest %+v, want null (no loss-year layer covers it)", pl.name, *l)
		case w != nil && l == nil:
			t.Errorf("plot %s: lossInForest null, want %+v", pl.name, *w)
		case w != nil:
			wantForest := "<null>"
			if w.forest {
				wantForest = forestID
			}
			wantHa := float64(w.pixels) * rasCellHa(w.cell, (pl.box.lat0+pl.box.lat1)/2)
			if pl.area > 0 {
				wantHa = float64(w.pixels) * pl.area
			}
			if l.LossLayerID != lossID || polStr(l.ForestLayerID) != wantForest || l.Pixels != w.pixels ||
				!polNear(l.Ha, wantHa, wantHa/200+1e-9) || !polNear(l.Pct, w.pct, 0.5) || !polNear(l.Pct, 100*l.Ha/ev.AreaHa, 0.01) {
				t.Errorf("plot %s: lossInForest {lossLayerId %s forestLayerId %s pixels %d ha %v pct %v}; want {%s %s %d about %.4f ha, %.1f %%}",
					pl.name, l.LossLayerID, polStr(l.ForestLayerID), l.Pixels, l.Ha, l.Pct, lossID, wantForest, w.pixels, wantHa, w.pct)
			}
		}

		// risk: none when FAILED; riskScore 100 and the loss as
		// deforestation when HIGH_RISK.
		switch {
		case pl.status == "FAILED":
			if ev.Risk != nil {
				t.Errorf("plot %s: FAILED with risk %v, want null", pl.name, ev.Risk)
			}
		case ev.Risk == nil:
			t.Errorf("plot %s: %s without risk", pl.name, pl.status)
		case pl.status == "HIGH_RISK":
			if ev.Risk.RiskScore != 100 || ev.LossInForest == nil || ev.Risk.DeforestedPct != ev.LossInForest.Pct ||
				ev.Risk.DeforestedHa != ev.LossInForest.Ha {
				t.Errorf("plot %s: risk %v, want riskScore 100 and the loss in forest as deforestation", pl.name, ev.Risk)
			}
		case pl.status == "COMPLIANT":
			// The loss in forest under the thresholds is the deforestation.
			var lossPct, lossHa float64
			if ev.LossInForest != nil {
				lossPct, lossHa = ev.LossInForest.Pct, ev.LossInForest.Ha
			}
			if ev.Risk.DeforestedPct != lossPct || ev.Risk.DeforestedHa != lossHa || ev.Risk.RiskScore > 50 {
				t.Errorf("plot %s: risk %v, want deforestation %v %% %v ha (the loss in forest) and riskScore at most 50", pl.name, ev.Risk, lossPct, lossHa)
			}
		}
		if s := polGetStatus(t, p.ProductionURL, key, id); s.EUDRStatus != pl.status || polStr(s.FailureReason) != wantReason {
			t.Errorf("plot %s: status %s %s, want %s %s", pl.name, s.EUDRStatus, polStr(s.FailureReason), pl.status, wantReason)
		}
	}
	if t.Failed() {
		b := apitest.Do(t, "GET", polItemURL(p.ProductionURL, polIDOf(job, 0))+"/evidence", apitest.WithKey(key), nil).Body
		t.Logf("evidence of plot a: %s", b)
	}
	p.Stop(t)
}
