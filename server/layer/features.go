package layer

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// MaxFeaturesServed is the most features one GET .../features answers. A
// layer may hold 100,000 polygons, too many for one response to a
// browser; a map asks for those of its view (bbox) and, when the answer
// is truncated, shows that it is.
const MaxFeaturesServed = 5000

// FeatureCollection is a vector layer's features as GeoJSON: each a
// Polygon or MultiPolygon with the properties id (the feature's ID in the
// layer, "" when it has none) and kind (the layer's). Truncated is true
// when more features matched than MaxFeaturesServed: those served are the
// first in the layer's order.
type FeatureCollection struct {
	Type      string           `json:"type"`
	Features  []featureGeoJSON `json:"features"`
	Truncated bool             `json:"truncated"`
}

type featureGeoJSON struct {
	Type       string            `json:"type"`
	Properties map[string]string `json:"properties"`
	Geometry   geometryGeoJSON   `json:"geometry"`
}

type geometryGeoJSON struct {
	Type        string `json:"type"`
	Coordinates any    `json:"coordinates"`
}

// Features returns the features of vector layer id of env whose bounding
// box meets bbox ("minLon,minLat,maxLon,maxLat"; "" for all), at most
// MaxFeaturesServed of them. The screening index keeps no features, so
// they are read from the store and decoded, and the last layers read are
// kept (featureCache): a map asks for one layer again after each move. It refuses with 400 a malformed bbox
// and a raster layer (drawn as map tiles), with 404 a layer that env does
// not screen against.
func (s *Service) Features(ctx context.Context, env storage.Environment, id, bbox string) (*FeatureCollection, error) {
	box, err := parseBBox(bbox)
	if err != nil {
		return nil, err
	}
	l, err := s.vectorLayer(ctx, env, id)
	if err != nil {
		return nil, err
	}
	out := &FeatureCollection{Type: "FeatureCollection", Features: []featureGeoJSON{}}
	for _, f := range l.Features {
		if len(f.Polygons) == 0 || !meets(f.Polygons, box) {
			continue
		}
		if len(out.Features) == MaxFeaturesServed {
			out.Truncated = true
			break
		}
		g := geometryGeoJSON{Type: "Polygon", Coordinates: f.Polygons[0]}
		if len(f.Polygons) > 1 {
			g = geometryGeoJSON{Type: "MultiPolygon", Coordinates: f.Polygons}
		}
		out.Features = append(out.Features, featureGeoJSON{Type: "Feature",
			Properties: map[string]string{"id": f.ID, "kind": string(l.Kind)}, Geometry: g})
	}
	return out, nil
}

// vectorLayer is vector layer id of env with its features: a sandbox
// fixture layer, or one imported for env.
func (s *Service) vectorLayer(ctx context.Context, env storage.Environment, id string) (*geo.Layer, error) {
	if env == storage.Sandbox {
		for _, l := range geo.SandboxLayers() {
			if l.ID == id {
				return l, nil
			}
		}
	}
	// Only a layer env screens against now: the cache may still hold one
	// deleted while a read of it was under way.
	if !slices.ContainsFunc(s.Index(env).Layers(), func(l *geo.Layer) bool { return l.ID == id }) &&
		!slices.ContainsFunc(s.Index(env).Rasters(), func(l *geo.RasterLayer) bool { return l.ID == id }) {
		return nil, apierr.NotFound{Kind: "layer", ID: id}
	}
	if l := s.features.get(env, id); l != nil {
		return l, nil
	}
	var rec *storage.Layer
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		rec, err = tx.FindLayer(id)
		return err
	})
	if err != nil {
		return nil, apierr.Named(err, "layer", id)
	}
	if rec.Env != env {
		return nil, apierr.NotFound{Kind: "layer", ID: id}
	}
	if rec.Raster != nil {
		return nil, apierr.Invalid("path.layerId", fmt.Sprintf("layer %s is a raster layer: draw it as map tiles (.../layers/%s/tiles/{z}/{x}/{y}.png)", id, id))
	}
	feats, err := geo.ParseLayerFeatures(rec.Features)
	if err != nil {
		return nil, fmt.Errorf("decode layer %s: %w", id, err)
	}
	l := &geo.Layer{ID: rec.ID, Kind: geo.LayerKind(rec.Kind), Features: feats}
	s.features.put(env, l)
	return l, nil
}

// featuresCached is how many decoded vector layers featureCache keeps: a
// layer of 100,000 polygons takes some 20 MB decoded, and a second of
// decoding.
const featuresCached = 2

// featureCache keeps the features of the vector layers read last, most
// recent first. Its methods are safe for concurrent use.
type featureCache struct {
	mu     sync.Mutex
	layers []cachedFeatures
}

type cachedFeatures struct {
	env storage.Environment
	l   *geo.Layer
}

func (c *featureCache) get(env storage.Environment, id string) *geo.Layer {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, e := range c.layers {
		if e.env == env && e.l.ID == id {
			copy(c.layers[1:i+1], c.layers[:i])
			c.layers[0] = e
			return e.l
		}
	}
	return nil
}

func (c *featureCache) put(env storage.Environment, l *geo.Layer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.layers = append([]cachedFeatures{{env, l}}, c.layers...)
	if len(c.layers) > featuresCached {
		c.layers = c.layers[:featuresCached]
	}
}

// clear forgets every layer: one may have been deleted.
func (c *featureCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.layers = nil
}

// parseBBox reads "minLon,minLat,maxLon,maxLat"; "" is the whole world.
func parseBBox(s string) ([4]float64, error) {
	if s == "" {
		return [4]float64{-180, -90, 180, 90}, nil
	}
	parts := strings.Split(s, ",")
	var b [4]float64
	bad := len(parts) != 4
	for i := 0; !bad && i < 4; i++ {
		v, err := strconv.ParseFloat(strings.TrimSpace(parts[i]), 64)
		bad = err != nil || math.IsNaN(v) || math.IsInf(v, 0)
		b[i] = v
	}
	if bad || b[0] > b[2] || b[1] > b[3] {
		return b, apierr.Invalid("query.bbox", fmt.Sprintf("%q is not a box: want minLon,minLat,maxLon,maxLat, four numbers with min <= max", s))
	}
	return b, nil
}

// meets reports whether the bounding box of the polygons' exterior rings
// meets box.
func meets(ps []geo.Polygon, box [4]float64) bool {
	w, s, e, n := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range ps {
		if len(p) == 0 {
			continue
		}
		for _, c := range p[0] {
			w, s, e, n = min(w, c[0]), min(s, c[1]), max(e, c[0]), max(n, c[1])
		}
	}
	return w <= box[2] && e >= box[0] && s <= box[3] && n >= box[1]
}

// FeaturesNamed returns the features of vector layer id of env whose IDs
// are in ids, in the layer's order (a plot's report draws those its
// evidence lists as overlapped). It refuses as Features does.
func (s *Service) FeaturesNamed(ctx context.Context, env storage.Environment, id string, ids []string) ([]geo.LayerFeature, error) {
	l, err := s.vectorLayer(ctx, env, id)
	if err != nil {
		return nil, err
	}
	want := make(map[string]bool, len(ids))
	for _, fid := range ids {
		want[fid] = true
	}
	var out []geo.LayerFeature
	for _, f := range l.Features {
		if want[f.ID] {
			out = append(out, f)
		}
	}
	return out, nil
}
