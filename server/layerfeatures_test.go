package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/storage"
)

// importSquares imports a vector layer of n small squares in a row from
// lon 0 eastwards for env, and returns its ID.
func importSquares(t *testing.T, ta *testApp, env storage.Environment, n int) string {
	t.Helper()
	feats := make([]string, n)
	for i := range n {
		x := float64(i) * 0.01
		feats[i] = fmt.Sprintf(`{"type":"Feature","id":"sq-%d","properties":{},"geometry":{"type":"Polygon","coordinates":[[[%g,0],[%g,0],[%g,0.005],[%g,0.005],[%g,0]]]}}`,
			i, x, x+0.005, x+0.005, x, x)
	}
	l, err := ta.layers.Import(context.Background(), layer.Request{Name: "Squares", Kind: "protected_area", Version: "1",
		Source: "test", Features: []byte(`{"type":"FeatureCollection","features":[` + strings.Join(feats, ",") + `]}`), Env: env})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if err := ta.layers.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return l.ID
}

func TestLayerFeatures(t *testing.T) {
	ta := newTestApp(t)
	_, prodKey := ta.newKey(storage.Production)
	_, sandboxKey := ta.newKey(storage.Sandbox)
	squares := importSquares(t, ta, storage.Production, 3)
	get := func(env storage.Environment, key, path string) (*FeatureCollectionAnswer, int, apierr.Error) {
		w := ta.serve(env, newRequest("GET", path, "", "X-API-Key", key))
		if w.Code != http.StatusOK {
			return nil, w.Code, decodeErr(t, w)
		}
		var fc FeatureCollectionAnswer
		mustDecode(t, w, &fc)
		return &fc, w.Code, apierr.Error{}
	}
	url := func(id, bbox string) string {
		u := eudrPrefix + "/layers/" + id + "/features"
		if bbox != "" {
			u += "?bbox=" + bbox
		}
		return u
	}

	fc, code, e := get(storage.Production, prodKey, url(squares, ""))
	if code != http.StatusOK || fc.Type != "FeatureCollection" || len(fc.Features) != 3 || fc.Truncated {
		t.Fatalf("all features: %d %+v %+v", code, fc, e)
	}
	if f := fc.Features[1]; f.Type != "Feature" || f.Properties["id"] != "sq-1" || f.Properties["kind"] != "protected_area" || f.Geometry.Type != "Polygon" {
		t.Errorf("feature 1 = %+v", f)
	}

	// Only the squares meeting the box: the second and the third.
	fc, code, e = get(storage.Production, prodKey, url(squares, "0.012,-1,1,1"))
	if code != http.StatusOK || len(fc.Features) != 2 || fc.Features[0].Properties["id"] != "sq-1" {
		t.Errorf("bbox: %d %+v %+v", code, fc, e)
	}

	for _, bad := range []string{"1,2,3", "a,0,1,1", "1,0,0,1", "0,1,1,0", "0,0,1,NaN"} {
		_, code, e = get(storage.Production, prodKey, url(squares, bad))
		if code != http.StatusBadRequest || e.Code != apierr.CodeValidationFailed || len(e.Details) != 1 || e.Details[0].Field != "query.bbox" {
			t.Errorf("bbox %q: %d %+v, want 400 at query.bbox", bad, code, e)
		}
	}

	// A deleted layer is no longer served, though its features were read.
	gone := importSquares(t, ta, storage.Production, 1)
	if _, code, _ = get(storage.Production, prodKey, url(gone, "")); code != http.StatusOK {
		t.Fatalf("before delete: %d", code)
	}
	if err := ta.layers.Delete(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	if _, code, _ = get(storage.Production, prodKey, url(gone, "")); code != http.StatusNotFound {
		t.Errorf("a deleted layer: %d, want 404", code)
	}

	// Another environment's layer is not found; a raster layer is refused.
	if _, code, _ = get(storage.Sandbox, sandboxKey, url(squares, "")); code != http.StatusNotFound {
		t.Errorf("the production layer from the sandbox: %d, want 404", code)
	}
	loss := sampleLayer(t, ta, storage.Sandbox, string(geo.LossYear), "loss-year")
	if err := ta.layers.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, code, e = get(storage.Sandbox, sandboxKey, url(loss, "")); code != http.StatusBadRequest || len(e.Details) != 1 || e.Details[0].Field != "path.layerId" {
		t.Errorf("a raster layer: %d %+v, want 400 at path.layerId", code, e)
	}
}

// More features than one answer holds: the first MaxFeaturesServed,
// flagged truncated; a smaller box gets the rest.
func TestLayerFeatures_Truncated(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	id := importSquares(t, ta, storage.Sandbox, layer.MaxFeaturesServed+10)
	w := ta.do("GET", eudrPrefix+"/layers/"+id+"/features", "", "X-API-Key", key)
	var fc FeatureCollectionAnswer
	mustDecode(t, w, &fc)
	if w.Code != http.StatusOK || len(fc.Features) != layer.MaxFeaturesServed || !fc.Truncated {
		t.Errorf("%d: %d features, truncated %v; want %d, truncated", w.Code, len(fc.Features), fc.Truncated, layer.MaxFeaturesServed)
	}
	// The last ten squares start at lon 50.00.
	w = ta.do("GET", eudrPrefix+"/layers/"+id+"/features?bbox=49.999,-1,60,1", "", "X-API-Key", key)
	fc = FeatureCollectionAnswer{}
	mustDecode(t, w, &fc)
	if w.Code != http.StatusOK || len(fc.Features) != 10 || fc.Truncated {
		t.Errorf("%d: %d features, truncated %v; want 10, not truncated", w.Code, len(fc.Features), fc.Truncated)
	}
}

// FeatureCollectionAnswer is GET .../features as a client reads it.
type FeatureCollectionAnswer struct {
	Type      string `json:"type"`
	Truncated bool   `json:"truncated"`
	Features  []struct {
		Type       string            `json:"type"`
		Properties map[string]string `json:"properties"`
		Geometry   struct {
			Type string `json:"type"`
		} `json:"geometry"`
	} `json:"features"`
}
