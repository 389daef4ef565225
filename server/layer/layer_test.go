package layer_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/storage"
)

var start = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

const (
	lossFeatures = `{"type":"FeatureCollection","features":[{"type":"Feature","id":"loss-1","properties":{},"geometry":{"type":"Polygon","coordinates":[[[-61.9,-10.9],[-61.5,-10.9],[-61.5,-10.5],[-61.9,-10.9]]]}}]}`
	lossCoverage = `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[-62,-11],[-61,-11],[-61,-10],[-62,-10],[-62,-11]]]}}]}`
	// fijiFeatures has a ring crossing the antimeridian: import refuses it.
	fijiFeatures = `{"type":"FeatureCollection","features":[{"type":"Feature","id":"fiji","geometry":{"type":"Polygon","coordinates":[[[179.5,-17],[-179.5,-17],[-179.5,-16],[179.5,-16],[179.5,-17]]]}}]}`
)

// fixture is a service on a bench store; log holds what it logged.
type fixture struct {
	b    *apitest.Bench
	s    *layer.Service
	root string // the raster root
	log  *bytes.Buffer
}

func newFixture(tb testing.TB) *fixture {
	b := apitest.NewBench(tb, start)
	f := &fixture{b: b, root: filepath.Join(tb.TempDir(), "rasters"), log: &bytes.Buffer{}}
	f.s = f.open(tb, 0)
	return f
}

// open makes another service on the same store, as a restart does,
// keeping maxOpen tile files open (0: the default).
func (f *fixture) open(tb testing.TB, maxOpen int) *layer.Service {
	s := layer.New(layer.Options{DB: f.b.DB, Logger: zerolog.New(f.log), RasterRoot: f.root,
		RasterCacheBytes: 1 << 20, MaxOpenTiles: maxOpen})
	tb.Cleanup(s.CloseTiles)
	return s
}

// post imports req as POST /layers does: checked, added in a transaction,
// the index rebuilt once it committed.
func (f *fixture) post(tb testing.TB, req *layer.ImportRequest) (*storage.Layer, error) {
	tb.Helper()
	l, err := f.s.CheckImport(req)
	if err != nil {
		return nil, err
	}
	var rec *storage.Layer
	f.b.Update(tb, func(tx *storage.Tx) error {
		rec, err = f.s.Add(tx, l)
		return err
	})
	f.s.Reload(context.Background())
	return rec, nil
}

func (f *fixture) stored(tb testing.TB) []*storage.Layer {
	tb.Helper()
	var ls []*storage.Layer
	f.b.Update(tb, func(tx *storage.Tx) error {
		var err error
		ls, err = tx.FindLayers()
		return err
	})
	return ls
}

func vectorRequest(kind, features, coverage string) layer.Request {
	r := layer.Request{Name: "Loss", Kind: kind, Version: "1.11", Source: "glad", Features: []byte(features)}
	if coverage != "" {
		r.Coverage = []byte(coverage)
	}
	return r
}

// plotIn is a plot inside lossFeatures' first feature.
var plotIn = geo.Geometry{Type: geo.TypePolygon, Polygons: []geo.Polygon{{{{-61.8, -10.8}, {-61.6, -10.8}, {-61.6, -10.6}, {-61.8, -10.8}}}}}

func TestService_Import(t *testing.T) {
	f := newFixture(t)
	l, err := f.s.Import(t.Context(), vectorRequest(string(geo.DeforestationAfterCutoff), lossFeatures, lossCoverage))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(l.ID, "lyr_") || l.Kind != "deforestation" || l.FeatureCount != 1 || len(l.SHA256) != 64 ||
		!l.ImportedAt.Equal(start) || string(l.Features) != lossFeatures {
		t.Errorf("imported = %+v", l)
	}
	if ls := f.stored(t); len(ls) != 1 || ls[0].ID != l.ID {
		t.Errorf("stored = %+v", ls)
	}
	// Import only stores: the index is rebuilt by Load (at the next start)
	// or Reload (after an API import).
	if n := len(f.s.Index(storage.Production).Layers()); n != 0 {
		t.Fatalf("production index has %d layers right after Import, want none until Load", n)
	}
	f.s.Reload(t.Context())
	ix := f.s.Index(storage.Production)
	if ls := ix.Layers(); len(ls) != 1 || ls[0].ID != l.ID || ls[0].SHA256 != l.SHA256 {
		t.Fatalf("production index = %+v, want the layer imported", ls)
	}
	res, err := ix.Screen(plotIn)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Covered(geo.DeforestationAfterCutoff) || len(res.Layers) != 1 || len(res.Layers[0].FeatureIDs) != 1 || res.Layers[0].FeatureIDs[0] != "loss-1" {
		t.Errorf("plot inside the layer: %+v", res)
	}
	for _, sl := range f.s.Index(storage.Sandbox).Layers() {
		if sl.ID == l.ID {
			t.Error("the sandbox screens against an imported layer")
		}
	}

	// A restart (Load) indexes it again from the store.
	again := f.open(t, 0)
	if n := len(again.Index(storage.Production).Layers()); n != 0 {
		t.Fatalf("a new service has %d production layers before Load", n)
	}
	if err := again.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ls := again.Index(storage.Production).Layers(); len(ls) != 1 || ls[0].ID != l.ID {
		t.Errorf("after Load: %+v", ls)
	}
}

// Import and CheckImport report every problem with its path: into the file
// for `eudr layers import`, into the body for POST /layers.
func TestService_ImportRefused(t *testing.T) {
	f := newFixture(t)
	badRing := `{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}}]}`
	cases := []struct {
		name  string
		req   layer.Request
		field string // of the first problem, for the CLI
		api   string // and for the API
	}{
		{"deforestation without coverage", vectorRequest("deforestation", lossFeatures, ""), "coverage", "coverage"},
		{"bad kind", vectorRequest("roads", lossFeatures, ""), "kind", "kind"},
		{"no name", layer.Request{Kind: "protected_area", Version: "1", Source: "s", Features: []byte(lossFeatures)}, "name", "name"},
		{"bad ring", vectorRequest("protected_area", badRing, ""), "features[0].geometry.coordinates[0]", "features.features[0].geometry.coordinates[0]"},
		{"not JSON", vectorRequest("protected_area", `{"type":`, ""), "body", "features"},
		{"bad coverage", vectorRequest("deforestation", lossFeatures, `{"type":"FeatureCollection","features":[]}`), "coverage.features", "coverage.features"},
		{"ring across 180", vectorRequest("protected_area", fijiFeatures, ""), "features[0].geometry.coordinates[0]", "features.features[0].geometry.coordinates[0]"},
		{"raster kind, no folder", layer.Request{Name: "x", Kind: "alerts", Version: "1", Source: "s", RasterField: "--raster"}, "--raster", "raster.directory"},
		{"raster kind with features", layer.Request{Name: "x", Kind: "forest-2020", Version: "1", Source: "s", Features: []byte(lossFeatures), RasterDir: "/nowhere"}, "features", "features"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.s.Import(t.Context(), c.req)
			if e := validation(t, err); e.Details[0].Field != c.field {
				t.Errorf("CLI: details = %+v, want %s first", e.Details, c.field)
			}
			req := &layer.ImportRequest{Name: c.req.Name, Kind: c.req.Kind, Version: c.req.Version, Source: c.req.Source,
				Features: c.req.Features, Coverage: c.req.Coverage}
			_, err = f.s.CheckImport(req)
			if e := validation(t, err); e.Details[0].Field != c.api {
				t.Errorf("API: details = %+v, want %s first", e.Details, c.api)
			}
		})
	}
	_, err := f.s.Import(t.Context(), vectorRequest("protected_area", fijiFeatures, ""))
	if e := validation(t, err); e.Details[0].Code != geo.CodeCrossesAntimeridian {
		t.Errorf("ring across 180: %+v, want %s", e.Details, geo.CodeCrossesAntimeridian)
	}
	if ls := f.stored(t); len(ls) != 0 {
		t.Errorf("%d layers stored after refused imports", len(ls))
	}
	if n := len(f.s.Index(storage.Production).Layers()); n != 0 {
		t.Errorf("%d layers indexed after refused imports", n)
	}
}

// validation fails the test unless err is a 400 VALIDATION_FAILED with
// details.
func validation(tb testing.TB, err error) *apierr.Error {
	tb.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != apierr.StatusBadRequest || e.Code != apierr.CodeValidationFailed || len(e.Details) == 0 {
		tb.Fatalf("got %v, want a 400 %s with details", err, apierr.CodeValidationFailed)
	}
	return e
}

// A layer stored as it was imported loads as it is: import's checks are
// not made again, so a ring an earlier version let in (one crossing 180°)
// does not stop the layers, and the appliance, loading.
func TestService_LoadStoredAsIs(t *testing.T) {
	f := newFixture(t)
	f.b.Update(t, func(tx *storage.Tx) error {
		return tx.PutLayer(&storage.Layer{ID: "lyr_fiji", Name: "Fiji", Kind: string(geo.ProtectedArea), Version: "1", Source: "s",
			SHA256: strings.Repeat("ab", 32), FeatureCount: 1, Coverage: []byte("[]"), Features: []byte(fijiFeatures), ImportedAt: start})
	})
	if err := f.s.Load(t.Context()); err != nil {
		t.Fatalf("a stored layer with a ring across 180° stops loading: %v", err)
	}
	ix := f.s.Index(storage.Production)
	if ls := ix.Layers(); len(ls) != 1 || ls[0].ID != "lyr_fiji" {
		t.Fatalf("index = %+v", ls)
	}
	// As stored, in plain longitude, the ring is a band round the globe.
	res, err := ix.Screen(geo.Geometry{Type: geo.TypePolygon, Polygons: []geo.Polygon{{{{0, -16.6}, {0.1, -16.6}, {0.1, -16.4}, {0, -16.6}}}}})
	if err != nil || len(res.Layers) != 1 || len(res.Layers[0].FeatureIDs) != 1 || res.Layers[0].FeatureIDs[0] != "fiji" {
		t.Errorf("a plot in the band: %+v %v, want it on feature fiji", res, err)
	}

	// A record that cannot be decoded at all fails Load, which keeps the
	// index it had.
	f.b.Update(t, func(tx *storage.Tx) error {
		return tx.PutLayer(&storage.Layer{ID: "lyr_zbroken", Name: "B", Kind: string(geo.ProtectedArea), Version: "1", Source: "s",
			Coverage: []byte("[]"), Features: []byte(`{"type":`), ImportedAt: start})
	})
	if err := f.s.Load(t.Context()); err == nil || !strings.Contains(err.Error(), "lyr_zbroken") {
		t.Errorf("Load of a broken record: %v, want an error naming it", err)
	}
	if ls := f.s.Index(storage.Production).Layers(); len(ls) != 1 || ls[0].ID != "lyr_fiji" {
		t.Errorf("index after a failed Load = %+v, want the one before", ls)
	}
}

func TestService_Delete(t *testing.T) {
	f := newFixture(t)
	old, err := f.s.Import(t.Context(), vectorRequest("deforestation", lossFeatures, lossCoverage))
	if err != nil {
		t.Fatal(err)
	}
	f.b.Clock.Advance(time.Second)
	current, err := f.s.Import(t.Context(), vectorRequest("protected_area", lossFeatures, ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Delete(t.Context(), old.ID); err != nil {
		t.Fatal(err)
	}
	if ls := f.s.Index(storage.Production).Layers(); len(ls) != 1 || ls[0].ID != current.ID {
		t.Errorf("index after delete = %+v, want only %s", ls, current.ID)
	}
	if ls := f.stored(t); len(ls) != 1 || ls[0].ID != current.ID {
		t.Errorf("stored after delete = %+v", ls)
	}
	err = f.s.Delete(t.Context(), old.ID)
	var nf apierr.NotFound
	if !errors.As(err, &nf) || nf.Kind != "layer" || nf.ID != old.ID || !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("delete again: %v, want layer %s not found", err, old.ID)
	}
}

func TestService_List(t *testing.T) {
	f := newFixture(t)
	if ls, err := f.s.List(t.Context(), storage.Production); err != nil || len(ls) != 0 {
		t.Fatalf("empty store: %v %v", ls, err)
	}
	first, err := f.s.Import(t.Context(), vectorRequest("deforestation", lossFeatures, lossCoverage))
	if err != nil {
		t.Fatal(err)
	}
	f.b.Clock.Advance(time.Second)
	second, err := f.s.Import(t.Context(), vectorRequest("protected_area", lossFeatures, ""))
	if err != nil {
		t.Fatal(err)
	}
	ls, err := f.s.List(t.Context(), storage.Production)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].ID != second.ID || ls[1].ID != first.ID {
		t.Fatalf("production list = %+v, want newest first", ls)
	}
	if ls[1].Features != nil || ls[1].FeatureCount != 1 || ls[1].SHA256 != first.SHA256 {
		t.Errorf("listed = %+v, want the record without its features", ls[1])
	}
	cov, err := layer.Coverage(ls[1])
	if err != nil || len(cov) != 1 || cov[0][0][0] != (geo.Position{-62, -11}) {
		t.Errorf("coverage of %s = %v %v, want the declared square", ls[1].ID, cov, err)
	}

	sb, err := f.s.List(t.Context(), storage.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	fixtures := geo.SandboxLayers()
	if len(sb) != len(fixtures) {
		t.Fatalf("sandbox list = %d layers, want the %d fixtures", len(sb), len(fixtures))
	}
	for i, l := range fixtures {
		got := sb[i]
		cov, err := layer.Coverage(got)
		if got.ID != l.ID || got.Kind != string(l.Kind) || got.SHA256 != l.SHA256 || got.FeatureCount != len(l.Features) ||
			!got.ImportedAt.IsZero() || err != nil || len(cov) != len(l.Coverage) {
			t.Errorf("sandbox layer %d = %+v (coverage %d, %v)", i, got, len(cov), err)
		}
	}
}
