package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// layerImportRequest is the body of POST /layers: the layer's description
// and its GeoJSON FeatureCollections.
type layerImportRequest struct {
	Name     string          `json:"name"`
	Kind     string          `json:"kind"`
	Version  string          `json:"version"`
	Source   string          `json:"source"`
	Features json.RawMessage `json:"features"`
	Coverage json.RawMessage `json:"coverage"`
	Raster   *struct {
		Directory string `json:"directory"`
	} `json:"raster"`
}

// layerResponse is a reference layer as listed (never its features).
type layerResponse struct {
	LayerID      string          `json:"layerId"`
	Name         string          `json:"name"`
	Kind         string          `json:"kind"`
	Version      string          `json:"version"`
	Source       string          `json:"source"`
	SHA256       string          `json:"sha256"`
	FeatureCount int             `json:"featureCount"`
	Coverage     coverageSummary `json:"coverage"`
	Raster       *rasterSummary  `json:"raster"`
	ImportedAt   *string         `json:"importedAt"`
}

// rasterSummary describes a raster layer's tiles: their folder on the
// appliance and each one's header.
type rasterSummary struct {
	Directory string               `json:"directory"`
	TileCount int                  `json:"tileCount"`
	Tiles     []storage.RasterTile `json:"tiles"`
}

// coverageSummary says where a layer has data: how many polygons and their
// bounding box (lon min, lat min, lon max, lat max; empty when none).
type coverageSummary struct {
	PolygonCount int       `json:"polygonCount"`
	BBox         []float64 `json:"bbox"`
}

func summarizeCoverage(cov []geo.Polygon) coverageSummary {
	s := coverageSummary{PolygonCount: len(cov), BBox: []float64{}}
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
	if !math.IsInf(b[0], 1) {
		s.BBox = b[:]
	}
	return s
}

func layerResponseOf(l *storage.Layer) (layerResponse, error) {
	var cov []geo.Polygon
	if err := json.Unmarshal(l.Coverage, &cov); err != nil {
		return layerResponse{}, fmt.Errorf("decode coverage of layer %s: %w", l.ID, err)
	}
	resp := layerResponse{LayerID: l.ID, Name: l.Name, Kind: l.Kind, Version: l.Version, Source: l.Source,
		SHA256: l.SHA256, FeatureCount: l.FeatureCount, Coverage: summarizeCoverage(cov),
		ImportedAt: storage.FormatTimePtr(&l.ImportedAt)}
	if r := l.Raster; r != nil {
		// A raster layer has data inside its tiles.
		for _, t := range r.Tiles {
			b := tileGrid(t).Bounds()
			cov = append(cov, geo.Polygon{geo.Ring{{b.West, b.South}, {b.East, b.South}, {b.East, b.North}, {b.West, b.North}, {b.West, b.South}}})
		}
		resp.Coverage = summarizeCoverage(cov)
		resp.Raster = &rasterSummary{Directory: r.Dir, TileCount: len(r.Tiles), Tiles: r.Tiles}
	}
	return resp, nil
}

// indexFor is the reference index screening uses in env.
func (a *App) indexFor(env storage.Environment) *geo.Index {
	if env == storage.Sandbox {
		return a.sandboxIndex
	}
	return a.prodIndex.Load()
}

// loadLayers rebuilds the production index from the store. Layers are
// indexed oldest first.
func (a *App) loadLayers(ctx context.Context) error {
	var stored []*storage.Layer
	err := a.db.View(ctx, func(tx *storage.Tx) error {
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
	layers := make([]*geo.Layer, 0, len(stored))
	var rasters []*geo.RasterLayer
	for _, s := range stored {
		if s.Raster != nil {
			a.checkTiles(s)
			rasters = append(rasters, rasterLayer(s, a.tiles))
			continue
		}
		feats, err := geo.ParseLayerFeatures(s.Features)
		if err != nil {
			return fmt.Errorf("load layer %s: %w", s.ID, err)
		}
		var cov []geo.Polygon
		if err := json.Unmarshal(s.Coverage, &cov); err != nil {
			return fmt.Errorf("load layer %s coverage: %w", s.ID, err)
		}
		layers = append(layers, &geo.Layer{ID: s.ID, Name: s.Name, Kind: geo.LayerKind(s.Kind), Version: s.Version,
			Source: s.Source, SHA256: s.SHA256, Coverage: cov, Features: feats})
	}
	a.prodIndex.Store(geo.NewIndex(layers...).WithRasters(rasters...))
	// Decoding a large layer makes several times its size in garbage;
	// give it back to the system now rather than keep it resident until
	// the runtime gets round to it.
	layers, stored = nil, nil
	debug.FreeOSMemory()
	return nil
}

// LayerRequest is a reference layer to import, as the API and `eudr layers
// import` take it. Coverage nil means none given.
type LayerRequest struct {
	Name, Kind, Version, Source string
	Features, Coverage          []byte
	// RasterDir is the folder of a raster layer's GeoTIFF tiles, and
	// RasterField where problems with it are reported.
	RasterDir, RasterField string
}

// parseLayerRequest validates a layer and makes its record. Problem paths
// are prefixed with prefix for those of the features collection.
func parseLayerRequest(lr LayerRequest, featuresPrefix string) (*storage.Layer, error) {
	if geo.LayerKind(lr.Kind).IsRaster() || lr.RasterDir != "" {
		return parseRasterRequest(lr, featuresPrefix)
	}
	l, err := geo.ParseLayerWithCoverage(lr.Name, geo.LayerKind(lr.Kind), lr.Version, lr.Source, lr.Features, lr.Coverage)
	if probs, ok := err.(geo.Problems); ok {
		return nil, layerProblems(probs, featuresPrefix)
	}
	if err != nil {
		return nil, err
	}
	cov, err := json.Marshal(nonNilPolygons(l.Coverage))
	if err != nil {
		return nil, fmt.Errorf("encode coverage: %w", err)
	}
	return &storage.Layer{Name: l.Name, Kind: string(l.Kind), Version: l.Version, Source: l.Source, SHA256: l.SHA256,
		FeatureCount: len(l.Features), Coverage: cov, Features: bytes.Clone(lr.Features)}, nil
}

// parseRasterRequest validates a raster layer and reads its tiles'
// headers: the layer and every tile must be readable, or nothing is
// imported.
func parseRasterRequest(lr LayerRequest, featuresPrefix string) (*storage.Layer, error) {
	err := geo.CheckRasterLayer(lr.Name, geo.LayerKind(lr.Kind), lr.Version, lr.Source)
	var probs apierr.Problems
	if ps, ok := err.(geo.Problems); ok {
		probs = apierr.FromGeo(ps, nil).Details
	}
	if lr.Features != nil {
		field := featuresPrefix
		if field == "" {
			field = "features"
		}
		probs.Add(apierr.DetailInvalidValue, field, "a raster layer is a folder of GeoTIFF tiles, not GeoJSON features")
	}
	if lr.Coverage != nil {
		probs.Add(apierr.DetailInvalidValue, "coverage", "a raster layer has data where its tiles are; it takes no coverage")
	}
	var tiles []storage.RasterTile
	if lr.RasterDir == "" {
		probs.Add(apierr.DetailRequired, lr.RasterField, "is required for a raster layer: the folder of its GeoTIFF tiles")
	} else {
		var tp apierr.Problems
		tiles, tp = readRasterDir(lr.RasterDir, lr.RasterField)
		probs = append(probs, tp...)
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	return &storage.Layer{Name: lr.Name, Kind: lr.Kind, Version: lr.Version, Source: lr.Source,
		SHA256: rasterSHA256(tiles), Coverage: json.RawMessage("[]"),
		Raster: &storage.RasterTiles{Dir: lr.RasterDir, Tiles: tiles}}, nil
}

func nonNilPolygons(ps []geo.Polygon) []geo.Polygon {
	if ps == nil {
		return []geo.Polygon{}
	}
	return ps
}

// layerProblems maps geo problems to the 400 envelope: paths into the
// features collection get featuresPrefix ("features" for the API body).
func layerProblems(probs geo.Problems, featuresPrefix string) error {
	return apierr.FromGeo(probs, func(field string) string {
		switch {
		case field == "name" || field == "kind" || field == "version" || field == "source" ||
			field == "coverage" || strings.HasPrefix(field, "coverage."):
		case featuresPrefix == "":
		case field == "body":
			field = featuresPrefix
		default:
			field = featuresPrefix + "." + field
		}
		return field
	})
}

// ImportLayer stores a reference layer and reloads the production index.
// `eudr layers import` uses it on a stopped data dir; problems come back
// as a 400 *apierr.Error with paths into the file.
func (a *App) ImportLayer(ctx context.Context, lr LayerRequest) (*storage.Layer, error) {
	l, err := parseLayerRequest(lr, "")
	if err != nil {
		return nil, err
	}
	var stored *storage.Layer
	err = a.db.Update(ctx, func(tx *storage.Tx) error {
		stored, err = storeLayer(tx, *l)
		return err
	})
	if err != nil {
		return nil, err
	}
	a.reloadLayers(ctx)
	return stored, nil
}

// reloadLayers rebuilds the production index after an import committed;
// the layer is stored either way, so a failure is logged, not returned.
func (a *App) reloadLayers(ctx context.Context) {
	if err := a.loadLayers(context.WithoutCancel(ctx)); err != nil {
		a.log.Error().Err(err).Msg("reload reference layers")
	}
}

// storeLayer gives a validated layer its ID and import time and writes it.
func storeLayer(tx *storage.Tx, l storage.Layer) (*storage.Layer, error) {
	l.ID, l.ImportedAt = storage.NewID("lyr", tx.Now()), tx.Now()
	return &l, tx.PutLayer(&l)
}

func (a *App) handleLayersCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req layerImportRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}

	lr := LayerRequest{Name: req.Name, Kind: req.Kind, Version: req.Version, Source: req.Source, Features: req.Features}
	if c := bytes.TrimSpace(req.Coverage); len(c) > 0 && string(c) != "null" {
		lr.Coverage = c
	}
	if f := bytes.TrimSpace(req.Features); string(f) == "null" {
		lr.Features = nil
	}
	lr.RasterField = "raster.directory"
	if req.Raster != nil {
		var probs apierr.Problems
		lr.RasterDir, probs = a.rasterDir(req.Raster.Directory)
		if req.Raster.Directory == "" && !geo.LayerKind(req.Kind).IsRaster() {
			probs.Add(apierr.DetailInvalidValue, "raster.directory", "only raster kinds (forest-2020, loss-year, alerts) take a folder of tiles")
		}
		// These come first, so a REQUIRED for the same field is dropped.
		decoded = append(decoded, probs...)
	}
	l, err := parseLayerRequest(lr, "features")
	if err := mergeProblems(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		rec, err := storeLayer(tx, *l)
		if err != nil {
			return reply{}, err
		}
		resp, err := layerResponseOf(rec)
		if err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusOK, body: resp, onCommit: func() { a.reloadLayers(r.Context()) }}, nil
	})
}

// handleLayersDelete stops production screening against a layer: an
// outdated release, or a raster layer whose tiles are gone. Plots already
// screened keep their evidence, which names the layer's version and
// SHA-256.
func (a *App) handleLayersDelete(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	id := ps.ByName("layerId")
	err := a.db.Update(r.Context(), func(tx *storage.Tx) error { return tx.DeleteLayer(id) })
	err = apierr.Named(err, "layer", id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	a.reloadLayers(r.Context())
	writeNoContent(w)
}

func (a *App) handleLayersList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	out := []layerResponse{}
	if tenantFrom(r.Context()).Env == storage.Sandbox {
		for _, l := range geo.SandboxLayers() {
			out = append(out, layerResponse{LayerID: l.ID, Name: l.Name, Kind: string(l.Kind), Version: l.Version,
				Source: l.Source, SHA256: l.SHA256, FeatureCount: len(l.Features), Coverage: summarizeCoverage(l.Coverage)})
		}
		writeJSON(w, r, http.StatusOK, out)
		return
	}
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		ls, err := tx.FindLayers()
		if err != nil {
			return err
		}
		for _, l := range ls {
			resp, err := layerResponseOf(l)
			if err != nil {
				return err
			}
			out = append(out, resp)
		}
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, out)
}
