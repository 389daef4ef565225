package layer_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/storage"
)

// Test tiles: 40 x 40 pixels of 0.0025 degree, the first with its
// upper-left corner at (10 E, 0 N), the second east of it. Pixel values
// are the column plus one.
const (
	tilePx   = 0.0025
	tileSide = 40
)

func column(col, row int) uint8 { return uint8(col + 1) }

// writeTiles writes the two test tiles to dir, LZW in strips and Deflate
// in tiles, and returns their paths (sorted by name: the east one first).
func writeTiles(tb testing.TB, dir string) []string {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	tiles := []struct {
		name string
		west float64
		opts geotifftest.Options
	}{
		{"lossyear_00N_010E-east.tif", 10 + tileSide*tilePx,
			geotifftest.Options{Compression: geotiff.CompressionDeflate, Predictor: true, TileWidth: 16, TileHeight: 16}},
		{"lossyear_00N_010E.tif", 10, geotifftest.Options{Compression: geotiff.CompressionLZW, RowsPerStrip: 1}},
	}
	var paths []string
	for _, t := range tiles {
		o := t.opts
		o.West, o.North, o.DX, o.DY = t.west, 0, tilePx, tilePx
		p := filepath.Join(dir, t.name)
		if err := os.WriteFile(p, geotifftest.MustEncode(tb, tileSide, tileSide, column, o), 0o644); err != nil {
			tb.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func rasterRequest(kind, dir string) *layer.ImportRequest {
	return &layer.ImportRequest{Name: "Hansen lossyear", Kind: kind, Version: "GFC-2023-v1.11", Source: "https://glad.umd.edu",
		Raster: &layer.ImportRaster{Directory: dir}}
}

// readPixel reads pixel (col, row) of tile i of the only production raster
// layer.
func readPixel(tb testing.TB, s *layer.Service, i, col, row int) (uint8, error) {
	tb.Helper()
	rs := s.Index(storage.Production).Rasters()
	if len(rs) != 1 {
		tb.Fatalf("production rasters = %+v, want one layer", rs)
	}
	px := make([]uint8, 1)
	err := rs[0].Tiles[i].Reader.ReadWindow(tb.Context(), geotiff.Window{Col: col, Row: row, Width: 1, Height: 1}, px)
	return px[0], err
}

func TestService_ImportRaster(t *testing.T) {
	f := newFixture(t)
	writeTiles(t, filepath.Join(f.root, "hansen"))
	l, err := f.post(t, rasterRequest("loss-year", "hansen"))
	if err != nil {
		t.Fatal(err)
	}
	r := l.Raster
	if l.Kind != "loss-year" || l.FeatureCount != 0 || l.Features != nil || r == nil || r.Dir != filepath.Join(f.root, "hansen") || len(r.Tiles) != 2 {
		t.Fatalf("record = %+v", l)
	}
	east, west := r.Tiles[0], r.Tiles[1]
	if west.Name != "lossyear_00N_010E.tif" || west.Compression != "LZW (5)" || west.Layout != "strips of 1 rows" ||
		west.Width != tileSide || west.West != 10 || west.DX != tilePx || west.NoData != nil || west.Predictor != "none (1)" {
		t.Errorf("west tile = %+v", west)
	}
	if east.Compression != "Deflate (8)" || east.Layout != "tiles 16x16" || east.Predictor != "horizontal (2)" || east.West != 10.1 {
		t.Errorf("east tile = %+v", east)
	}
	b, _ := json.Marshal(r.Tiles)
	if sum := sha256.Sum256(b); l.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("sha256 %s is not that of the tile list", l.SHA256)
	}
	cov, err := layer.Coverage(l)
	if err != nil || len(cov) != 2 || !slices.Equal(cov[1][0], geo.Ring{{10, -0.1}, {10.1, -0.1}, {10.1, 0}, {10, 0}, {10, -0.1}}) {
		t.Errorf("coverage = %v %v, want the two tiles' rectangles", cov, err)
	}

	rs := f.s.Index(storage.Production).Rasters()
	if len(rs) != 1 || rs[0].ID != l.ID || rs[0].SHA256 != l.SHA256 || len(rs[0].Tiles) != 2 {
		t.Fatalf("production rasters = %+v", rs)
	}
	if v, err := readPixel(t, f.s, 1, 7, 3); err != nil || v != 8 {
		t.Errorf("pixel (7, 3) of the west tile = %d %v, want 8", v, err)
	}
	if len(f.s.Index(storage.Sandbox).Rasters()) != 0 {
		t.Error("the sandbox screens against an imported raster layer")
	}

	// `eudr layers import --raster` takes a folder anywhere.
	elsewhere := filepath.Join(t.TempDir(), "jrc")
	writeTiles(t, elsewhere)
	l2, err := f.s.Import(t.Context(), layer.Request{Name: "JRC", Kind: string(geo.Forest2020), Version: "v2", Source: "jrc",
		RasterDir: elsewhere, RasterField: "--raster"})
	if err != nil || l2.Raster == nil || l2.Raster.Dir != elsewhere {
		t.Errorf("CLI import from outside the root: %+v %v", l2, err)
	}
	if err := f.s.Load(t.Context()); err != nil || len(f.s.Index(storage.Production).Rasters()) != 2 {
		t.Errorf("after Load: %v, %d rasters, want both", err, len(f.s.Index(storage.Production).Rasters()))
	}
}

func TestService_ImportRasterRefused(t *testing.T) {
	f := newFixture(t)
	writeTiles(t, filepath.Join(f.root, "good"))
	bad := filepath.Join(f.root, "bad")
	paths := writeTiles(t, bad)
	if err := os.WriteFile(filepath.Join(bad, "junk.tif"), []byte("not a tiff at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	jpeg := geotifftest.MustEncode(t, 8, 8, column, geotifftest.Options{West: 20, North: 0, DX: tilePx, DY: tilePx,
		Tags: []geotifftest.Tag{{ID: geotifftest.TagCompression, Value: []uint16{7}}}})
	if err := os.WriteFile(filepath.Join(bad, "jpeg.tiff"), jpeg, 0o644); err != nil {
		t.Fatal(err)
	}
	overlap := filepath.Join(f.root, "overlap")
	writeTiles(t, overlap)
	b, _ := os.ReadFile(paths[1])
	if err := os.WriteFile(filepath.Join(overlap, "copy.tif"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(f.root, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(f.root, "empty", "readme.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name         string
		req          *layer.ImportRequest
		field, issue string
	}{
		{"unreadable tile", rasterRequest("loss-year", "bad"), "raster.directory", "junk.tif: "},
		{"unsupported compression", rasterRequest("loss-year", "bad"), "raster.directory", "jpeg.tiff: geotiff: compression JPEG (7) is not supported"},
		{"overlapping tiles", rasterRequest("loss-year", "overlap"), "raster.directory", "overlap"},
		{"no tiles", rasterRequest("loss-year", "empty"), "raster.directory", "no GeoTIFF tiles"},
		{"missing folder", rasterRequest("loss-year", "nowhere"), "raster.directory", "cannot be read"},
		{"outside the root", rasterRequest("loss-year", "../.."), "raster.directory", "inside the raster root"},
		{"absolute outside the root", rasterRequest("loss-year", os.TempDir()), "raster.directory", "inside the raster root"},
		{"no directory", &layer.ImportRequest{Name: "x", Kind: "alerts", Version: "1", Source: "s"}, "raster.directory", "is required"},
		{"vector kind with a folder", rasterRequest("deforestation", "good"), "kind", "forest-2020, loss-year or alerts"},
		{"vector kind, empty folder", &layer.ImportRequest{Name: "x", Kind: "protected_area", Version: "1", Source: "s",
			Features: json.RawMessage(lossFeatures), Raster: &layer.ImportRaster{}}, "raster.directory", "only raster kinds"},
		{"raster with coverage", &layer.ImportRequest{Name: "x", Kind: "forest-2020", Version: "1", Source: "s",
			Raster: &layer.ImportRaster{Directory: "good"}, Coverage: json.RawMessage(lossCoverage)}, "coverage", "no coverage"},
		{"no name", &layer.ImportRequest{Kind: "loss-year", Version: "1", Source: "s", Raster: &layer.ImportRaster{Directory: "good"}}, "name", "is required"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.s.CheckImport(c.req)
			e := validation(t, err)
			if strings.Contains(e.Message, f.root) {
				t.Errorf("the message shows the appliance's folders: %s", e.Message)
			}
			found := false
			for _, d := range e.Details {
				found = found || d.Field == c.field && strings.Contains(d.Issue, c.issue)
				if strings.Contains(d.Issue, f.root) {
					t.Errorf("%s: the issue shows the appliance's folders: %s", d.Field, d.Issue)
				}
			}
			if !found {
				t.Errorf("details = %+v, want %s: ...%s...", e.Details, c.field, c.issue)
			}
		})
	}

	// A folder refused before it is read is reported once, not again as
	// missing; the other problems come with it.
	_, err := f.s.CheckImport(&layer.ImportRequest{Kind: "loss-year", Version: "1", Source: "s", Raster: &layer.ImportRaster{Directory: "../.."}})
	e := validation(t, err)
	if len(e.Details) != 2 || e.Details[0].Field != "raster.directory" || !strings.Contains(e.Details[0].Issue, "inside the raster root") ||
		e.Details[1].Field != "name" {
		t.Errorf("details = %+v, want the folder outside the root, then the missing name", e.Details)
	}

	// `eudr layers import` reports the folder's problems at its flag.
	_, err = f.s.Import(t.Context(), layer.Request{Name: "x", Kind: "loss-year", Version: "1", Source: "s", RasterDir: bad, RasterField: "--raster"})
	if e := validation(t, err); e.Details[0].Field != "--raster" || !strings.Contains(e.Details[0].Issue, ".tif") {
		t.Errorf("CLI: details = %+v, want problems at --raster", e.Details)
	}
	if ls := f.stored(t); len(ls) != 0 {
		t.Errorf("%d layers stored after refused imports", len(ls))
	}
}

// A tile is checked when it is opened: one changed since its import is
// not read. Tiles stay open between reads, up to MaxOpenTiles.
func TestService_ChangedTile(t *testing.T) {
	f := newFixture(t)
	paths := writeTiles(t, filepath.Join(f.root, "hansen"))
	if _, err := f.post(t, rasterRequest("loss-year", "hansen")); err != nil {
		t.Fatal(err)
	}
	small := f.open(t, 1)
	if err := small.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*layer.Service{f.s, small} {
		for i := range 2 {
			if _, err := readPixel(t, s, i, 0, 0); err != nil {
				t.Fatalf("read tile %d: %v", i, err)
			}
		}
	}
	// The east tile changes (index 0): the default service keeps it open
	// and reads on; the one keeping a single tile open closed it when it
	// read the west one, and refuses it now.
	fh, err := os.OpenFile(paths[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.Write([]byte("appended"))
	fh.Close()
	if v, err := readPixel(t, f.s, 0, 5, 0); err != nil || v != 6 {
		t.Errorf("the open tile: %d %v, want 6 read from the file opened before the change", v, err)
	}
	st, err := os.Stat(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	sizes := fmt.Sprintf("(%d bytes; %d when imported)", st.Size(), st.Size()-int64(len("appended")))
	if _, err := readPixel(t, small, 0, 5, 0); err == nil || !strings.Contains(err.Error(), "changed") || !strings.Contains(err.Error(), sizes) {
		t.Errorf("the changed tile, reopened: %v, want it refused as changed %s", err, sizes)
	}
	f.s.CloseTiles()
	if _, err := readPixel(t, f.s, 0, 5, 0); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Errorf("the changed tile after CloseTiles: %v, want it refused as changed", err)
	}
	if _, err := readPixel(t, f.s, 1, 5, 0); err != nil {
		t.Errorf("the unchanged tile: %v", err)
	}

	// Loading logs each tile missing or changed, and loads the layer.
	if err := os.Remove(paths[1]); err != nil {
		t.Fatal(err)
	}
	f.log.Reset()
	if err := f.s.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	logged := f.log.String()
	for _, want := range []string{fmt.Sprintf(`"tile":%q`, filepath.Base(paths[0])), "has changed since its layer was imported",
		fmt.Sprintf(`"tile":%q`, filepath.Base(paths[1])), "raster tile cannot be read"} {
		if !strings.Contains(logged, want) {
			t.Errorf("log %s lacks %s", logged, want)
		}
	}
	if len(f.s.Index(storage.Production).Rasters()) != 1 {
		t.Error("a layer with a tile missing was not loaded")
	}
}
