package server

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/maptile"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/storage"
)

// sampleLayer imports a raster layer of the committed sample data
// (examples/data/rasters, docs/layers.md) for env, as `eudr layers import
// --raster` does, and returns its ID.
func sampleLayer(t *testing.T, ta *testApp, env storage.Environment, kind, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("..", "examples", "data", "rasters", dir))
	if err != nil {
		t.Fatal(err)
	}
	l, err := ta.layers.Import(context.Background(), layer.Request{Name: "Sample " + kind + " (synthetic)", Kind: kind,
		Version: "sample-1", Source: "eudr examples/data", RasterDir: abs, RasterField: "raster", Env: env})
	if err != nil {
		t.Fatalf("import %s: %v", dir, err)
	}
	return l.ID
}

// tilePixel is the map tile at zoom z holding lon, lat and the pixel of it
// there, by the usual Web Mercator formulas.
func tilePixel(z int, lon, lat float64) (tile string, px, py int) {
	n := float64(int(1) << z)
	fx := (lon + 180) / 360 * n
	phi := lat * math.Pi / 180
	fy := (1 - math.Log(math.Tan(phi)+1/math.Cos(phi))/math.Pi) / 2 * n
	x, y := math.Floor(fx), math.Floor(fy)
	return fmt.Sprintf("%d/%d/%d", z, int(x), int(y)), int((fx - x) * maptile.Size), int((fy - y) * maptile.Size)
}

func tileURL(layerID, zxy string) string {
	return eudrPrefix + "/layers/" + layerID + "/tiles/" + zxy + ".png"
}

// decodeTile checks that w is a 256 x 256 PNG map tile and decodes it.
func decodeTile(t *testing.T, w *httptest.ResponseRecorder) image.Image {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "image/png" {
		t.Fatalf("Content-Type %q, want image/png", ct)
	}
	img, err := png.Decode(bytes.NewReader(w.Body.Bytes()))
	if err != nil {
		t.Fatalf("decode PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != maptile.Size || b.Dy() != maptile.Size {
		t.Fatalf("tile of %v, want 256 x 256", b)
	}
	return img
}

func nrgba(c color.Color) color.NRGBA { return color.NRGBAModel.Convert(c).(color.NRGBA) }

func TestMapTiles(t *testing.T) {
	ta := newTestApp(t)
	loss := sampleLayer(t, ta, storage.Sandbox, string(geo.LossYear), "loss-year")
	forest := sampleLayer(t, ta, storage.Sandbox, string(geo.Forest2020), "forest-2020")
	prodLoss := sampleLayer(t, ta, storage.Production, string(geo.LossYear), "loss-year")
	ta.layers.Reload(context.Background())
	_, sandboxKey := ta.newKey(storage.Sandbox)
	_, prodKey := ta.newKey(storage.Production)
	get := func(env storage.Environment, url string, hdr ...string) *httptest.ResponseRecorder {
		key := sandboxKey
		if env == storage.Production {
			key = prodKey
		}
		return ta.serve(env, newRequest("GET", url, "", append([]string{"X-API-Key", key}, hdr...)...))
	}
	tiles := map[string]image.Image{}
	// at returns the colour of the map tile's pixel at lon, lat at zoom
	// 16, where an output pixel (about 0.00002°) is finer than the sample
	// rasters' (0.00025° and 0.0001°).
	at := func(layerID string, lon, lat float64) color.NRGBA {
		t.Helper()
		zxy, px, py := tilePixel(16, lon, lat)
		img, ok := tiles[layerID+zxy]
		if !ok {
			img = decodeTile(t, get(storage.Sandbox, tileURL(layerID, zxy)))
			tiles[layerID+zxy] = img
		}
		return nrgba(img.At(px, py))
	}
	lossColours := maptile.PaletteOf(geo.LossYear)
	transparent := color.NRGBA{}

	t.Run("LossYear", func(t *testing.T) {
		// Points well inside the patches of examples/data/README.md.
		for _, c := range []struct {
			what     string
			lon, lat float64
			want     color.NRGBA
		}{
			{"loss in 2022 (red)", -6.589, 5.7945, lossColours[22]},
			{"loss in 2023 (darker red)", -6.587, 5.7685, lossColours[23]},
			{"loss in 2015 (before the cutoff, orange)", -6.597, 5.7725, lossColours[15]},
			{"forest without loss", -6.61, 5.785, transparent},
			{"farmland without loss", -6.59, 5.775, transparent},
		} {
			if got := at(loss, c.lon, c.lat); got != c.want {
				t.Errorf("%s at %g, %g: %v, want %v", c.what, c.lon, c.lat, got, c.want)
			}
		}
		if r := lossColours[22]; r.R < 200 || r.G > 120 || r.A < 200 {
			t.Errorf("loss after the cutoff is %v: want an opaque red", r)
		}
	})

	t.Run("Forest2020", func(t *testing.T) {
		green := maptile.PaletteOf(geo.Forest2020)[1]
		if got := at(forest, -6.61, 5.79); got != green || green.G <= green.R {
			t.Errorf("forest at -6.61, 5.79: %v, want green %v", got, green)
		}
		if got := at(forest, -6.59, 5.77); got != transparent {
			t.Errorf("no forest at -6.59, 5.77: %v, want transparent", got)
		}
	})

	t.Run("OutsideCoverage", func(t *testing.T) {
		zxy, _, _ := tilePixel(12, 10, 10)
		img := decodeTile(t, get(storage.Sandbox, tileURL(loss, zxy))).(*image.NRGBA)
		for i := 3; i < len(img.Pix); i += 4 {
			if img.Pix[i] != 0 {
				t.Fatalf("pixel %d of a tile outside the layer is not transparent", i/4)
			}
		}
	})

	t.Run("Cache", func(t *testing.T) {
		zxy, _, _ := tilePixel(14, -6.6, 5.78)
		w := get(storage.Sandbox, tileURL(loss, zxy))
		decodeTile(t, w)
		etag := w.Header().Get("ETag")
		if !strings.HasPrefix(etag, `"`) || !strings.Contains(etag, layerSHA(t, ta, storage.Sandbox, loss)) {
			t.Errorf("ETag %q, want the layer's SHA-256 quoted", etag)
		}
		if cc := w.Header().Get("Cache-Control"); !strings.Contains(cc, "max-age=31536000") {
			t.Errorf("Cache-Control %q, want a year", cc)
		}
		for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag} {
			w = get(storage.Sandbox, tileURL(loss, zxy), "If-None-Match", inm)
			if w.Code != http.StatusNotModified || w.Body.Len() != 0 || w.Header().Get("ETag") != etag {
				t.Errorf("If-None-Match %s: status %d, %d bytes, ETag %q; want 304, empty, the ETag", inm, w.Code, w.Body.Len(), w.Header().Get("ETag"))
			}
		}
		if w = get(storage.Sandbox, tileURL(loss, zxy), "If-None-Match", `"other"`); w.Code != http.StatusOK {
			t.Errorf("another ETag: status %d, want 200", w.Code)
		}
	})

	t.Run("Environments", func(t *testing.T) {
		zxy, _, _ := tilePixel(14, -6.6, 5.78)
		// Each listener draws its own environment's layers only.
		decodeTile(t, get(storage.Production, tileURL(prodLoss, zxy)))
		for _, c := range []struct {
			env storage.Environment
			id  string
		}{{storage.Sandbox, prodLoss}, {storage.Production, loss}, {storage.Sandbox, "lyr_nosuchlayer"}} {
			w := get(c.env, tileURL(c.id, zxy))
			if e := decodeErr(t, w); w.Code != http.StatusNotFound || e.Code != apierr.CodeNotFound {
				t.Errorf("%s layer %s: %d %s, want 404 NOT_FOUND", c.env, c.id, w.Code, e.Code)
			}
		}
	})

	t.Run("Refused", func(t *testing.T) {
		vector := geo.SandboxLayers()[0].ID
		for _, c := range []struct {
			id, zxy, field string
		}{
			{loss, "19/0/0", "path.z"},
			{loss, "-1/0/0", "path.z"},
			{loss, "8/0/0", "path.z"}, // below the layer's minimum zoom, 9
			{loss, "x/0/0", "path.z"},
			{loss, "10/1024/0", "path.x"},
			{loss, "10/0/1024", "path.y"},
			{loss, "10/+1/0", "path.x"},
			{vector, "10/0/0", "path.layerId"},
		} {
			w := get(storage.Sandbox, tileURL(c.id, c.zxy))
			e := decodeErr(t, w)
			if w.Code != http.StatusBadRequest || e.Code != apierr.CodeValidationFailed || len(e.Details) == 0 || e.Details[0].Field != c.field {
				t.Errorf("%s: %d %+v, want 400 at %s", c.zxy, w.Code, e, c.field)
			}
		}
		// The row must be followed by .png.
		w := get(storage.Sandbox, eudrPrefix+"/layers/"+loss+"/tiles/10/0/0.jpg")
		if e := decodeErr(t, w); w.Code != http.StatusBadRequest || len(e.Details) != 1 || e.Details[0].Field != "path.y" {
			t.Errorf("0.jpg: %d %+v, want 400 at path.y", w.Code, e)
		}
	})

	t.Run("MinZoomListed", func(t *testing.T) {
		w := get(storage.Sandbox, eudrPrefix+"/layers")
		var ls []layerResponse
		mustDecode(t, w, &ls)
		want := map[string]int{loss: 9, forest: 10}
		for _, l := range ls {
			if z, ok := want[l.LayerID]; ok {
				if l.Raster == nil || l.Raster.MinZoom != z {
					t.Errorf("layer %s (%s): raster %+v, want minZoom %d", l.LayerID, l.Kind, l.Raster, z)
				}
				delete(want, l.LayerID)
			}
		}
		if len(want) > 0 {
			t.Errorf("layers %v not listed", want)
		}
	})
}

// layerSHA is the SHA-256 of layer id as listed in env.
func layerSHA(t *testing.T, ta *testApp, env storage.Environment, id string) string {
	t.Helper()
	ls, err := ta.layers.List(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.ID == id {
			return l.SHA256
		}
	}
	t.Fatalf("layer %s not listed in %s", id, env)
	return ""
}

// decodeErr decodes an error envelope (the zero one when w is not JSON).
func decodeErr(t *testing.T, w *httptest.ResponseRecorder) apierr.Error {
	t.Helper()
	var e apierr.Error
	if strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		mustDecode(t, w, &e)
	}
	return e
}

// A raster layer's file gone from the disk is the operator's to restore:
// its map tiles answer 503 naming the file, not a 500.
func TestMapTiles_FileMissing(t *testing.T) {
	ta := newTestApp(t)
	dir := filepath.Join(t.TempDir(), "loss-year")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "examples", "data", "rasters", "loss-year"))); err != nil {
		t.Fatal(err)
	}
	l, err := ta.layers.Import(context.Background(), layer.Request{Name: "Loss year (copy)", Kind: string(geo.LossYear),
		Version: "sample-1", Source: "eudr examples/data", RasterDir: dir, RasterField: "raster", Env: storage.Sandbox})
	if err != nil {
		t.Fatal(err)
	}
	ta.layers.Reload(context.Background())
	tifs, err := filepath.Glob(filepath.Join(dir, "*.tif"))
	if err != nil || len(tifs) == 0 {
		t.Fatalf("no GeoTIFF in %s (%v)", dir, err)
	}
	for _, f := range tifs {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	_, key := ta.newKey(storage.Sandbox)
	zxy, _, _ := tilePixel(16, -6.589, 5.7945) // loss in 2022, inside the layer
	w := ta.serve(storage.Sandbox, newRequest("GET", tileURL(l.ID, zxy), "", "X-API-Key", key))
	e := decodeErr(t, w)
	if w.Code != http.StatusServiceUnavailable || e.Code != apierr.CodeServiceUnavailable ||
		!strings.Contains(e.Message, filepath.Base(tifs[0])) || !strings.Contains(e.Message, "restore the file") {
		t.Errorf("a tile of a layer whose file is gone: %d %+v, want 503 naming %s", w.Code, e, filepath.Base(tifs[0]))
	}
}
