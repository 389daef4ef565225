package layer_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/storage"
)

// A layer away from the sandbox fixture boxes: one loss feature in a
// square of coverage at 20-21 E, 0-1 N.
const (
	awayFeatures = `{"type":"FeatureCollection","features":[{"type":"Feature","id":"away-1","properties":{},"geometry":{"type":"Polygon","coordinates":[[[20.1,0.1],[20.2,0.1],[20.2,0.2],[20.1,0.2],[20.1,0.1]]]}}]}`
	awayCoverage = `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[20,0],[21,0],[21,1],[20,1],[20,0]]]}}]}`
)

// plotAway is a plot inside awayFeatures' feature.
var plotAway = geo.Geometry{Type: geo.TypePolygon, Polygons: []geo.Polygon{{{{20.12, 0.12}, {20.18, 0.12}, {20.18, 0.18}, {20.12, 0.12}}}}}

func TestParseEnvironment(t *testing.T) {
	for _, c := range []struct {
		in   string
		want storage.Environment
	}{
		{"production", storage.Production},
		{"sandbox", storage.Sandbox},
	} {
		if got, err := layer.ParseEnvironment(c.in); err != nil || got != c.want {
			t.Errorf("ParseEnvironment(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for in, msg := range map[string]string{
		"":        `must be sandbox or production, not ""`,
		"Sandbox": `must be sandbox or production, not "Sandbox"`,
		"test":    `must be sandbox or production, not "test"`,
		"live":    `must be sandbox or production, not "live"`,
	} {
		if got, err := layer.ParseEnvironment(in); err == nil || err.Error() != msg {
			t.Errorf("ParseEnvironment(%q) = %q, %v; want the error %q", in, got, err, msg)
		}
	}
}

// ids lists the IDs of an index's vector and raster layers.
func ids(ix *geo.Index) []string {
	var out []string
	for _, l := range ix.Layers() {
		out = append(out, l.ID)
	}
	for _, r := range ix.Rasters() {
		out = append(out, r.ID)
	}
	return out
}

// fixtureIDs are the IDs of the sandbox fixture layers.
func fixtureIDs() []string {
	var out []string
	for _, l := range geo.SandboxLayers() {
		out = append(out, l.ID)
	}
	return out
}

// A layer screens in the environment it was imported for only: in the
// sandbox after the fixture layers, which stay.
func TestService_ImportEnvironment(t *testing.T) {
	f := newFixture(t)
	req := vectorRequest(string(geo.DeforestationAfterCutoff), awayFeatures, awayCoverage)
	req.Env = storage.Sandbox
	sb, err := f.s.Import(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if sb.Env != storage.Sandbox {
		t.Errorf("record environment = %q, want sandbox", sb.Env)
	}
	f.s.Reload(t.Context())
	if got, want := ids(f.s.Index(storage.Sandbox)), append(fixtureIDs(), sb.ID); !slices.Equal(got, want) {
		t.Errorf("sandbox index = %v, want the fixtures then %s", got, sb.ID)
	}
	if got := ids(f.s.Index(storage.Production)); len(got) != 0 {
		t.Errorf("production index = %v after a sandbox import, want none", got)
	}
	res, err := f.s.Index(storage.Sandbox).Screen(plotAway)
	if err != nil {
		t.Fatal(err)
	}
	if lr := res.Layers[len(res.Layers)-1]; lr.LayerID != sb.ID || !slices.Equal(lr.FeatureIDs, []string{"away-1"}) {
		t.Errorf("sandbox screening of a plot on the imported feature: %+v", res.Layers)
	}

	// A production import leaves the sandbox as it was, and the other way
	// round.
	f.b.Clock.Advance(time.Second)
	prodReq := vectorRequest(string(geo.ProtectedArea), awayFeatures, "")
	pr, err := f.s.Import(t.Context(), prodReq) // no Env: production
	if err != nil {
		t.Fatal(err)
	}
	if pr.Env != storage.Production {
		t.Errorf("record environment = %q, want production", pr.Env)
	}
	f.s.Reload(t.Context())
	if got, want := ids(f.s.Index(storage.Sandbox)), append(fixtureIDs(), sb.ID); !slices.Equal(got, want) {
		t.Errorf("sandbox index after a production import = %v, want %v", got, want)
	}
	if got := ids(f.s.Index(storage.Production)); !slices.Equal(got, []string{pr.ID}) {
		t.Errorf("production index = %v, want only %s", got, pr.ID)
	}

	// Lists: each environment's imports, newest first; the sandbox's then
	// its fixtures.
	list := func(env storage.Environment) []string {
		ls, err := f.s.List(t.Context(), env)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range ls {
			if l.Env != env {
				t.Errorf("%s list holds %s of %q", env, l.ID, l.Env)
			}
			out = append(out, l.ID)
		}
		return out
	}
	if got, want := list(storage.Sandbox), append([]string{sb.ID}, fixtureIDs()...); !slices.Equal(got, want) {
		t.Errorf("sandbox list = %v, want %v", got, want)
	}
	if got := list(storage.Production); !slices.Equal(got, []string{pr.ID}) {
		t.Errorf("production list = %v, want only %s", got, pr.ID)
	}

	// A restart sorts them out the same way.
	again := f.open(t, 0)
	if err := again.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got, want := ids(again.Index(storage.Sandbox)), append(fixtureIDs(), sb.ID); !slices.Equal(got, want) {
		t.Errorf("sandbox index after Load = %v, want %v", got, want)
	}
	if got := ids(again.Index(storage.Production)); !slices.Equal(got, []string{pr.ID}) {
		t.Errorf("production index after Load = %v, want only %s", got, pr.ID)
	}

	// Deleting the sandbox layer leaves the fixtures, and production alone.
	if err := f.s.Delete(t.Context(), sb.ID); err != nil {
		t.Fatal(err)
	}
	if got := ids(f.s.Index(storage.Sandbox)); !slices.Equal(got, fixtureIDs()) {
		t.Errorf("sandbox index after deleting its layer = %v, want the fixtures", got)
	}
	if got := ids(f.s.Index(storage.Production)); !slices.Equal(got, []string{pr.ID}) {
		t.Errorf("production index after deleting a sandbox layer = %v, want only %s", got, pr.ID)
	}
}

// POST /layers names the environment in the field environment, production
// when absent; a raster layer too.
func TestService_CheckImportEnvironment(t *testing.T) {
	f := newFixture(t)
	body := func(env string) *layer.ImportRequest {
		return &layer.ImportRequest{Name: "Loss", Kind: string(geo.DeforestationAfterCutoff), Version: "1", Source: "s",
			Environment: env, Features: []byte(awayFeatures), Coverage: []byte(awayCoverage)}
	}
	for env, want := range map[string]storage.Environment{"": storage.Production, "production": storage.Production, "sandbox": storage.Sandbox} {
		l, err := f.s.CheckImport(body(env))
		if err != nil || l.Env != want {
			t.Errorf("environment %q: %+v %v, want a record for %s", env, l, err, want)
		}
	}

	writeTiles(t, filepath.Join(f.root, "hansen"))
	req := rasterRequest(string(geo.LossYear), "hansen")
	req.Environment = "sandbox"
	l, err := f.post(t, req)
	if err != nil {
		t.Fatal(err)
	}
	if rs := f.s.Index(storage.Sandbox).Rasters(); l.Env != storage.Sandbox || len(rs) != 1 || rs[0].ID != l.ID {
		t.Errorf("sandbox raster import: record for %q, sandbox rasters %+v", l.Env, rs)
	}
	if rs := f.s.Index(storage.Production).Rasters(); len(rs) != 0 {
		t.Errorf("production rasters = %+v after a sandbox import", rs)
	}

	// An unknown environment is refused with the body's other problems.
	bad := body("staging")
	bad.Name = ""
	_, err = f.s.CheckImport(bad)
	e := validation(t, err)
	if len(e.Details) != 2 || e.Details[0].Field != "environment" || e.Details[0].Code != apierr.DetailInvalidValue ||
		e.Details[0].Issue != `must be sandbox or production, not "staging"` || e.Details[1].Field != "name" {
		t.Errorf("details = %+v, want environment INVALID_VALUE, then name", e.Details)
	}
	if got := ids(f.s.Index(storage.Sandbox)); len(got) != len(fixtureIDs())+1 {
		t.Errorf("sandbox index = %v after a refused import", got)
	}
}
