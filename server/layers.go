package server

import (
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/storage"
)

// layerResponse is a reference layer as listed (never its features).
type layerResponse struct {
	LayerID      string          `json:"layerId"`
	Name         string          `json:"name"`
	Kind         string          `json:"kind"`
	Version      string          `json:"version"`
	Source       string          `json:"source"`
	Environment  string          `json:"environment"`
	SHA256       string          `json:"sha256"`
	FeatureCount int             `json:"featureCount"`
	Coverage     coverageSummary `json:"coverage"`
	Raster       *rasterSummary  `json:"raster"`
	ImportedAt   *string         `json:"importedAt"`
}

// rasterSummary describes a raster layer's tiles: their folder on the
// appliance and each one's header, and the smallest zoom the layer is
// drawn at as map tiles.
type rasterSummary struct {
	Directory string               `json:"directory"`
	TileCount int                  `json:"tileCount"`
	MinZoom   int                  `json:"minZoom"`
	Tiles     []storage.RasterTile `json:"tiles"`
}

// coverageSummary says where a layer has data: how many polygons and their
// bounding box (lon min, lat min, lon max, lat max; empty when none).
type coverageSummary struct {
	PolygonCount int       `json:"polygonCount"`
	BBox         []float64 `json:"bbox"`
}

func summarizeCoverage(cov []geo.Polygon) coverageSummary {
	return coverageSummary{PolygonCount: len(cov), BBox: layer.CoverageBBox(cov)}
}

func layerResponseOf(l *storage.Layer) (layerResponse, error) {
	cov, err := layer.Coverage(l)
	if err != nil {
		return layerResponse{}, err
	}
	resp := layerResponse{LayerID: l.ID, Name: l.Name, Kind: l.Kind, Version: l.Version, Source: l.Source,
		Environment: string(l.Env), SHA256: l.SHA256, FeatureCount: l.FeatureCount, Coverage: summarizeCoverage(cov)}
	if !l.ImportedAt.IsZero() { // a sandbox fixture was never imported
		resp.ImportedAt = storage.FormatTimePtr(&l.ImportedAt)
	}
	if r := l.Raster; r != nil {
		resp.Raster = &rasterSummary{Directory: r.Dir, TileCount: len(r.Tiles), MinZoom: layer.MapTileMinZoom(r.Tiles), Tiles: r.Tiles}
	}
	return resp, nil
}

func (a *App) handleLayersCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req layer.ImportRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	l, err := a.layers.CheckImport(&req)
	if err := apierr.Merge(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		rec, err := a.layers.Add(tx, l)
		if err != nil {
			return reply{}, err
		}
		resp, err := layerResponseOf(rec)
		if err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusOK, body: resp, onCommit: func() { a.layers.Reload(r.Context()) }}, nil
	})
}

// handleLayersDelete stops screening against an imported layer, in the
// environment it was imported for (layer.Delete).
func (a *App) handleLayersDelete(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	if err := a.layers.Delete(r.Context(), ps.ByName("layerId")); err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}

func (a *App) handleLayersList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	ls, err := a.layers.List(r.Context(), tenantFrom(r.Context()).Env)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]layerResponse, 0, len(ls))
	for _, l := range ls {
		resp, err := layerResponseOf(l)
		if err != nil {
			writeError(w, r, err)
			return
		}
		out = append(out, resp)
	}
	writeJSON(w, r, http.StatusOK, out)
}

// handleMapTile serves a raster layer of the caller's environment as a PNG
// map tile (layer.MapTile); the route's "y.png" parameter holds the whole
// last segment, such as "1982.png".
func (a *App) handleMapTile(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	t, err := a.layers.MapTile(r.Context(), tenantFrom(r.Context()).Env, ps.ByName("layerId"),
		ps.ByName("z"), ps.ByName("x"), ps.ByName("y.png"), r.Header.Get("If-None-Match"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("ETag", t.ETag)
	h.Set("Cache-Control", layer.MapTileCacheControl)
	if t.NotModified {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "image/png")
	h.Set("Content-Length", strconv.Itoa(len(t.PNG)))
	w.Write(t.PNG)
}

// handleLayerFeatures answers a vector layer of the caller's environment
// as a GeoJSON FeatureCollection, those in ?bbox= when given, at most
// layer.MaxFeaturesServed (layer.Features).
func (a *App) handleLayerFeatures(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	fc, err := a.layers.Features(r.Context(), tenantFrom(r.Context()).Env, ps.ByName("layerId"), r.URL.Query().Get("bbox"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, fc)
}
