// Package layer owns the reference layers screening measures plots
// against: importing them (one path for the API and `eudr layers
// import`), vector layers as GeoJSON features and raster layers as a
// folder of GeoTIFF tiles read in place, listing and deleting them, and
// the in-memory index of each environment, rebuilt from the store at start
// and after every import or delete. A layer is imported for one
// environment: production's screening uses the layers imported for it, the
// sandbox's its fixture layers and those imported for it. Raster tiles are
// read through one cache of open files and decoded blocks.
package layer

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// DefaultMaxOpenTiles is the number of raster tiles kept open between
// reads when Options leaves it 0. An open tile holds its block tables:
// 640 KB for a Hansen tile of 40,000 strips.
const DefaultMaxOpenTiles = 32

// Options are what the service needs.
type Options struct {
	DB     *storage.DB
	Logger zerolog.Logger
	// RasterRoot is the folder under which POST /layers may name a raster
	// layer's tiles; `eudr layers import` takes any folder.
	RasterRoot string
	// RasterCacheBytes bounds the decoded raster blocks kept in memory,
	// shared by every tile.
	RasterCacheBytes int64
	// MaxOpenTiles bounds the tile files kept open between reads
	// (0: DefaultMaxOpenTiles).
	MaxOpenTiles int
}

// Service imports, lists and deletes reference layers and holds the index
// screening uses in each environment.
type Service struct {
	o     Options
	tiles *tileFiles

	// prod holds the layers imported for production; sandbox the fixture
	// layers and then those imported for the sandbox. Both are rebuilt
	// after each import or delete.
	prod, sandbox atomic.Pointer[geo.Index]
	// reloading makes rebuilds of the indexes take turns: a rebuild that
	// read the store before another import committed must not replace the
	// index that import's own rebuild made.
	reloading sync.Mutex
	// features keeps the last vector layers a map read (Features).
	features featureCache
}

// New returns the service with the sandbox index holding the fixture
// layers and an empty production one; Load adds the imported layers. Both
// check that plots lie in their producerCountry (geo.Index.WithBorders).
func New(o Options) *Service {
	if o.MaxOpenTiles == 0 {
		o.MaxOpenTiles = DefaultMaxOpenTiles
	}
	s := &Service{o: o, tiles: newTileFiles(o.RasterCacheBytes, o.MaxOpenTiles)}
	s.prod.Store(geo.NewIndex().WithBorders())
	s.sandbox.Store(geo.NewIndex(geo.SandboxLayers()...).WithBorders())
	return s
}

// Index is the reference index screening uses in env: in production the
// layers imported for it; in the sandbox the fixture layers, then those
// imported for the sandbox.
//
// Imported sandbox layers add to the fixtures rather than replace them:
// the fixture boxes are the sandbox's documented outcomes, which a
// client's integration tests rely on, and importing a sample layer must
// not change them. The fixtures' deforestation layer covers the whole
// world but one box, so in the sandbox a plot outside every imported
// layer is still COMPLIANT, never FAILED NO_REFERENCE_COVERAGE (only that
// box is, unless an imported layer covers it).
func (s *Service) Index(env storage.Environment) *geo.Index {
	if env == storage.Sandbox {
		return s.sandbox.Load()
	}
	return s.prod.Load()
}

// Load rebuilds the index of each environment from the store, its layers
// oldest first (in the sandbox after the fixture layers). Stored layers
// load as they were imported: their rings are not checked again, so a
// layer that today's import would refuse still loads. A raster tile
// missing or changed since its import is logged, not refused: plots that
// need it fail screening naming it. It fails when a stored layer cannot
// be decoded, keeping the indexes it had.
func (s *Service) Load(ctx context.Context) error {
	s.reloading.Lock()
	defer s.reloading.Unlock()
	s.features.clear()
	var stored []*storage.Layer
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		list, err := tx.FindLayers()
		if err != nil {
			return err
		}
		for i := len(list) - 1; i >= 0; i-- {
			l, err := tx.FindLayer(list[i].ID)
			if err != nil {
				return err
			}
			stored = append(stored, l)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load layers: %w", err)
	}
	layers := map[storage.Environment][]*geo.Layer{storage.Sandbox: geo.SandboxLayers()}
	rasters := map[storage.Environment][]*geo.RasterLayer{}
	for _, l := range stored {
		if l.Raster != nil {
			s.checkTiles(l)
			rasters[l.Env] = append(rasters[l.Env], rasterLayer(l, s.tiles))
			continue
		}
		feats, err := geo.ParseLayerFeatures(l.Features)
		if err != nil {
			return fmt.Errorf("load layer %s: %w", l.ID, err)
		}
		var cov []geo.Polygon
		if err := json.Unmarshal(l.Coverage, &cov); err != nil {
			return fmt.Errorf("load layer %s coverage: %w", l.ID, err)
		}
		layers[l.Env] = append(layers[l.Env], &geo.Layer{ID: l.ID, Name: l.Name, Kind: geo.LayerKind(l.Kind), Version: l.Version,
			Source: l.Source, SHA256: l.SHA256, Coverage: cov, Features: feats})
	}
	s.prod.Store(geo.NewIndex(layers[storage.Production]...).WithRasters(rasters[storage.Production]...).WithBorders())
	s.sandbox.Store(geo.NewIndex(layers[storage.Sandbox]...).WithRasters(rasters[storage.Sandbox]...).WithBorders())
	// Decoding a large layer makes several times its size in garbage;
	// give it back to the system now rather than keep it resident until
	// the runtime gets round to it.
	layers, stored = nil, nil
	debug.FreeOSMemory()
	return nil
}

// Reload rebuilds the indexes after an import or delete
// committed. The change is stored either way, so a failure is logged, not
// returned.
func (s *Service) Reload(ctx context.Context) {
	if err := s.Load(context.WithoutCancel(ctx)); err != nil {
		s.o.Logger.Error().Err(err).Msg("reload reference layers")
	}
}

// Add gives a checked layer (CheckImport) its ID and import time and
// writes it in the caller's transaction, returning the record written; l
// is left as it was, so the transaction may run again. The caller calls
// Reload once the transaction committed. It fails only when the store
// does.
func (s *Service) Add(tx *storage.Tx, l *storage.Layer) (*storage.Layer, error) {
	rec := *l
	rec.ID, rec.ImportedAt = storage.NewID("lyr", tx.Now()), tx.Now()
	return &rec, tx.PutLayer(&rec)
}

// Import checks a layer and stores it: `eudr layers import` on a stopped
// data dir, which the appliance indexes when it next starts (Load); the
// index is not rebuilt here, so an import reads no other layer. It
// returns the record stored, or a 400 *apierr.Error listing every
// problem, with paths into the file (r.FeaturesField "") or
// r.RasterField.
func (s *Service) Import(ctx context.Context, r Request) (*storage.Layer, error) {
	l, err := s.check(r)
	if err != nil {
		return nil, err
	}
	var rec *storage.Layer
	err = s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		rec, err = s.Add(tx, l)
		return err
	})
	if err != nil {
		return nil, err
	}
	return rec, nil
}

// Delete removes an imported layer, of either environment, and rebuilds
// the indexes without it: screening stops using an outdated release, or a
// raster layer whose tiles are gone. Evidence already recorded keeps the
// layer's name, version and SHA-256. It returns apierr.NotFound for an
// unknown layer (a sandbox fixture layer included).
func (s *Service) Delete(ctx context.Context, id string) error {
	err := s.o.DB.Update(ctx, func(tx *storage.Tx) error { return tx.DeleteLayer(id) })
	if err != nil {
		return apierr.Named(err, "layer", id)
	}
	s.Reload(ctx)
	return nil
}

// List returns the layers screening uses in env, without their features:
// those imported for env, newest first, and in the sandbox then the
// fixture layers, which have no import time (zero ImportedAt). It fails
// only when the store does.
func (s *Service) List(ctx context.Context, env storage.Environment) ([]*storage.Layer, error) {
	var out []*storage.Layer
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		all, err := tx.FindLayers()
		for _, l := range all {
			if l.Env == env {
				out = append(out, l)
			}
		}
		return err
	})
	if err != nil || env != storage.Sandbox {
		return out, err
	}
	for _, l := range geo.SandboxLayers() {
		cov, err := json.Marshal(nonNilPolygons(l.Coverage))
		if err != nil {
			return nil, fmt.Errorf("encode coverage of layer %s: %w", l.ID, err)
		}
		out = append(out, &storage.Layer{ID: l.ID, Name: l.Name, Kind: string(l.Kind), Version: l.Version,
			Source: l.Source, SHA256: l.SHA256, FeatureCount: len(l.Features), Coverage: cov, Env: storage.Sandbox})
	}
	return out, nil
}

// Coverage is where a layer has data: its coverage polygons, and for a
// raster layer the rectangle of each tile. It fails when the stored
// coverage cannot be decoded.
func Coverage(l *storage.Layer) ([]geo.Polygon, error) {
	var cov []geo.Polygon
	if err := json.Unmarshal(l.Coverage, &cov); err != nil {
		return nil, fmt.Errorf("decode coverage of layer %s: %w", l.ID, err)
	}
	if r := l.Raster; r != nil {
		for _, t := range r.Tiles {
			b := tileGrid(t).Bounds()
			cov = append(cov, geo.Polygon{geo.Ring{{b.West, b.South}, {b.East, b.South}, {b.East, b.North}, {b.West, b.North}, {b.West, b.South}}})
		}
	}
	return cov, nil
}

// CoverageBBox is the bounding box of coverage polygons (lon min, lat
// min, lon max, lat max), empty when there are none.
func CoverageBBox(cov []geo.Polygon) []float64 {
	b := [4]float64{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, p := range cov {
		if len(p) == 0 {
			continue
		}
		for _, c := range p[0] {
			b[0], b[1] = min(b[0], c[0]), min(b[1], c[1])
			b[2], b[3] = max(b[2], c[0]), max(b[3], c[1])
		}
	}
	if math.IsInf(b[0], 1) {
		return []float64{}
	}
	return b[:]
}

// CloseTiles closes every open raster tile file; reads after it open them
// again, checking each against its record. The appliance calls it when it
// stops.
func (s *Service) CloseTiles() { s.tiles.closeAll() }

func nonNilPolygons(ps []geo.Polygon) []geo.Polygon {
	if ps == nil {
		return []geo.Polygon{}
	}
	return ps
}
