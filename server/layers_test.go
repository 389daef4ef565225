package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

const testLayerFeatures = `{"type":"FeatureCollection","features":[{"type":"Feature","id":"loss-1","properties":{},"geometry":{"type":"Polygon","coordinates":[[[-61.9,-10.9],[-61.5,-10.9],[-61.5,-10.5],[-61.9,-10.9]]]}}]}`
const testLayerCoverage = `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[-62,-11],[-61,-11],[-61,-10],[-62,-10],[-62,-11]]]}}]}`

func layerBody(kind, features, coverage string) string {
	b := `{"name":"Loss","kind":"` + kind + `","version":"1.11","source":"glad","features":` + features
	if coverage != "" {
		b += `,"coverage":` + coverage
	}
	return b + "}"
}

func TestLayers_ImportAndList(t *testing.T) {
	ta := newTestApp(t)
	token := ta.adminToken()
	_, prodKey := ta.newKey(storage.Production)

	w := ta.serve(storage.Production, newRequest("POST", enterprisePrefix+"/layers",
		layerBody("deforestation", testLayerFeatures, testLayerCoverage),
		"Authorization", "Bearer "+token, "Idempotency-Key", "imp-1"))
	if w.Code != http.StatusOK {
		t.Fatalf("import: %d %s", w.Code, w.Body)
	}
	var got layerResponse
	mustDecode(t, w, &got)
	if !strings.HasPrefix(got.LayerID, "lyr_") || got.Kind != "deforestation" || got.FeatureCount != 1 ||
		got.Coverage.PolygonCount != 1 || len(got.SHA256) != 64 || got.ImportedAt == nil {
		t.Errorf("import answer = %+v", got)
	}
	if strings.Contains(w.Body.String(), "loss-1") {
		t.Errorf("import answer carries the features: %s", w.Body)
	}
	if ix := ta.layers.Index(storage.Production); len(ix.Layers()) != 1 || ix.Layers()[0].ID != got.LayerID {
		t.Errorf("production index not rebuilt: %v", ix.Layers())
	}

	w = ta.serve(storage.Production, newRequest("GET", eudrPrefix+"/layers", "", "X-API-Key", prodKey))
	if w.Code != http.StatusOK {
		t.Fatalf("list: %d %s", w.Code, w.Body)
	}
	var list []layerResponse
	mustDecode(t, w, &list)
	if len(list) != 1 || list[0].LayerID != got.LayerID || list[0].Name != "Loss" || list[0].Version != "1.11" ||
		list[0].Source != "glad" || list[0].SHA256 != got.SHA256 || list[0].FeatureCount != 1 ||
		len(list[0].Coverage.BBox) != 4 || list[0].Coverage.BBox[0] != -62 {
		t.Errorf("list = %+v", list)
	}
}

func TestLayers_SandboxList(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	w := ta.do("GET", eudrPrefix+"/layers", "", "X-API-Key", key)
	if w.Code != http.StatusOK {
		t.Fatalf("list: %d %s", w.Code, w.Body)
	}
	var list []layerResponse
	mustDecode(t, w, &list)
	fixtures := geo.SandboxLayers()
	if len(list) != len(fixtures) {
		t.Fatalf("list = %+v, want %d fixture layers", list, len(fixtures))
	}
	for i, l := range fixtures {
		g := list[i]
		if g.LayerID != l.ID || g.Kind != string(l.Kind) || g.SHA256 != l.SHA256 || g.Source != geo.SandboxSource ||
			g.FeatureCount != len(l.Features) || g.Coverage.PolygonCount != len(l.Coverage) || g.ImportedAt != nil {
			t.Errorf("layer %d = %+v", i, g)
		}
	}
}

func TestLayers_ImportRefused(t *testing.T) {
	ta := newTestApp(t)
	token := ta.adminToken()
	_, key := ta.newKey(storage.Sandbox)

	w := ta.do("POST", enterprisePrefix+"/layers", layerBody("protected_area", testLayerFeatures, ""),
		"X-API-Key", key, "Idempotency-Key", "k1")
	wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, apierr.DetailJWTRequired)

	w = ta.do("POST", enterprisePrefix+"/layers", layerBody("protected_area", testLayerFeatures, ""),
		"Authorization", "Bearer "+token)
	wantError(t, w, http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailIdempotencyKeyMissing)

	// (Which layers are refused, and where, is layer's tests'.)
	cases := []struct {
		name, body, field string
	}{
		{"no features", `{"name":"x","kind":"forest_cover_2020","version":"1","source":"s"}`, "features"},
		{"unknown member", `{"name":"x","kind":"forest_cover_2020","version":"1","source":"s","extra":1,"features":` + testLayerFeatures + `}`, "extra"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := ta.do("POST", enterprisePrefix+"/layers", c.body, "Authorization", "Bearer "+token,
				"Idempotency-Key", "bad-"+string(rune('a'+i)))
			e := wantError(t, w, http.StatusBadRequest, apierr.CodeValidationFailed, "")
			if len(e.Details) == 0 || e.Details[0].Field != c.field {
				t.Errorf("details = %+v, want field %s first", e.Details, c.field)
			}
		})
	}

	// Decoder and validator problems come in one answer.
	w = ta.do("POST", enterprisePrefix+"/layers", `{"name":"x","kind":"roads","version":"1","source":"s","extra":1,"features":`+testLayerFeatures+`}`,
		"Authorization", "Bearer "+token, "Idempotency-Key", "bad-all")
	if got := detailSet(wantError(t, w, http.StatusBadRequest, apierr.CodeValidationFailed, "").Details); !got["UNKNOWN_FIELD extra"] || !got["INVALID_VALUE kind"] {
		t.Errorf("details = %v, want UNKNOWN_FIELD extra and INVALID_VALUE kind together", got)
	}
}

// POST /layers imports for the environment its body names (production when
// it names none), whichever listener it came in on; GET /layers lists each
// environment's own.
func TestLayers_ImportEnvironment(t *testing.T) {
	ta := newTestApp(t)
	token := ta.adminToken()
	_, prodKey := ta.newKey(storage.Production)
	_, sandboxKey := ta.newKey(storage.Sandbox)
	body := func(env string) string {
		return `{"name":"Loss","kind":"deforestation","version":"1.11","source":"glad","environment":"` + env +
			`","features":` + testLayerFeatures + `,"coverage":` + testLayerCoverage + `}`
	}

	w := ta.serve(storage.Production, newRequest("POST", enterprisePrefix+"/layers", body("sandbox"),
		"Authorization", "Bearer "+token, "Idempotency-Key", "imp-sandbox"))
	if w.Code != http.StatusOK {
		t.Fatalf("import: %d %s", w.Code, w.Body)
	}
	var got layerResponse
	mustDecode(t, w, &got)
	if got.Environment != "sandbox" {
		t.Errorf("import answer environment = %q, want sandbox", got.Environment)
	}
	if ls := ta.layers.Index(storage.Production).Layers(); len(ls) != 0 {
		t.Errorf("production index = %v after a sandbox import", ls)
	}
	fixtures := geo.SandboxLayers()
	if ls := ta.layers.Index(storage.Sandbox).Layers(); len(ls) != len(fixtures)+1 || ls[len(fixtures)].ID != got.LayerID {
		t.Errorf("sandbox index = %v, want the fixtures then %s", ls, got.LayerID)
	}

	list := func(env storage.Environment, key string) []layerResponse {
		w := ta.serve(env, newRequest("GET", eudrPrefix+"/layers", "", "X-API-Key", key))
		if w.Code != http.StatusOK {
			t.Fatalf("list %s: %d %s", env, w.Code, w.Body)
		}
		var list []layerResponse
		mustDecode(t, w, &list)
		for _, l := range list {
			if l.Environment != string(env) {
				t.Errorf("%s list holds %s of environment %q", env, l.LayerID, l.Environment)
			}
		}
		return list
	}
	if sb := list(storage.Sandbox, sandboxKey); len(sb) != len(fixtures)+1 || sb[0].LayerID != got.LayerID || sb[1].LayerID != fixtures[0].ID {
		t.Errorf("sandbox list = %+v, want the imported layer, then the fixtures", sb)
	}
	if pr := list(storage.Production, prodKey); len(pr) != 0 {
		t.Errorf("production list = %+v after a sandbox import, want none", pr)
	}

	w = ta.serve(storage.Sandbox, newRequest("POST", enterprisePrefix+"/layers", body("live"),
		"Authorization", "Bearer "+token, "Idempotency-Key", "imp-live"))
	e := wantError(t, w, http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	if e.Details[0].Field != "environment" || !strings.Contains(e.Details[0].Issue, `not "live"`) {
		t.Errorf("details = %+v, want environment first", e.Details)
	}
}
