package layer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// Where problems with POST /layers are reported.
const (
	apiFeaturesField    = "features"
	apiRasterField      = "raster.directory"
	apiEnvironmentField = "environment"
)

// ImportRequest is the body of POST /layers: the layer's description, the
// environment it is for ("": production), and its GeoJSON
// FeatureCollections or the folder of its tiles.
type ImportRequest struct {
	Name        string          `json:"name"`
	Kind        string          `json:"kind"`
	Version     string          `json:"version"`
	Source      string          `json:"source"`
	Environment string          `json:"environment"`
	Features    json.RawMessage `json:"features"`
	Coverage    json.RawMessage `json:"coverage"`
	Raster      *ImportRaster   `json:"raster"`
}

// ImportRaster names the folder of a raster layer's GeoTIFF tiles,
// relative to the raster root.
type ImportRaster struct {
	Directory string `json:"directory"`
}

// Request is a reference layer to import, as `eudr layers import` gives
// it. Coverage nil means none given.
type Request struct {
	Name, Kind, Version, Source string
	Features, Coverage          []byte
	// FeaturesField prefixes the paths of problems in the features
	// collection ("": paths into the file itself).
	FeaturesField string
	// RasterDir is the folder of a raster layer's GeoTIFF tiles, and
	// RasterField where problems with it are reported.
	RasterDir, RasterField string
	// Env is the environment whose screening uses the layer ("":
	// production), as ParseEnvironment reads it.
	Env storage.Environment
}

// ParseEnvironment reads the environment a layer is imported for, as
// `eudr layers import --env` and the field environment of POST /layers
// give it: sandbox or production, spelled so. The error says what is
// wrong, without naming the flag or field. Where the environment may be
// left out, the caller takes production, the only one layers could be
// imported for before.
func ParseEnvironment(s string) (storage.Environment, error) {
	if e := storage.Environment(s); e.Valid() {
		return e, nil
	}
	return "", fmt.Errorf("must be sandbox or production, not %q", s)
}

// CheckImport checks the body of POST /layers and makes the layer's
// record (Add stores it). A raster layer's folder is taken relative to
// the raster root and must lie inside it. It reads the tiles' headers;
// the layer and every tile must be readable, or nothing is imported. It
// returns every problem found as one 400 *apierr.Error, with paths into
// the body.
func (s *Service) CheckImport(req *ImportRequest) (*storage.Layer, error) {
	r := Request{Name: req.Name, Kind: req.Kind, Version: req.Version, Source: req.Source, Features: req.Features,
		FeaturesField: apiFeaturesField, RasterField: apiRasterField}
	if c := bytes.TrimSpace(req.Coverage); len(c) > 0 && string(c) != "null" {
		r.Coverage = c
	}
	if f := bytes.TrimSpace(req.Features); string(f) == "null" {
		r.Features = nil
	}
	// The environment's and the folder's problems, listed first.
	var first apierr.Problems
	if req.Environment != "" { // absent: production
		env, err := ParseEnvironment(req.Environment)
		if err != nil {
			first.Add(apierr.DetailInvalidValue, apiEnvironmentField, err.Error())
		}
		r.Env = env
	}
	if req.Raster != nil {
		var folder apierr.Problems
		r.RasterDir, folder = s.rasterDir(req.Raster.Directory)
		first = append(first, folder...)
		if req.Raster.Directory == "" && !geo.LayerKind(req.Kind).IsRaster() {
			first.Add(apierr.DetailInvalidValue, apiRasterField, "only raster kinds (forest-2020, loss-year, alerts) take a folder of tiles")
		}
	}
	l, err := s.check(r)
	if len(first) == 0 {
		return l, err
	}
	// A REQUIRED at the folder's field, made because the folder was
	// refused, is dropped.
	return nil, apierr.Merge(first, err)
}

// check validates a layer and makes its record, for r.Env.
func (s *Service) check(r Request) (*storage.Layer, error) {
	env := r.Env
	if env == "" {
		env = storage.Production
	}
	if !env.Valid() {
		return nil, fmt.Errorf("layer for unknown environment %q", r.Env) // ParseEnvironment's to refuse
	}
	l, err := s.checkData(r)
	if err != nil {
		return nil, err
	}
	l.Env = env
	return l, nil
}

// checkData validates a layer's description and data and makes its record.
func (s *Service) checkData(r Request) (*storage.Layer, error) {
	if geo.LayerKind(r.Kind).IsRaster() || r.RasterDir != "" {
		return checkRaster(r)
	}
	l, err := geo.ParseLayerWithCoverage(r.Name, geo.LayerKind(r.Kind), r.Version, r.Source, r.Features, r.Coverage)
	if probs, ok := err.(geo.Problems); ok {
		return nil, layerProblems(probs, r.FeaturesField)
	}
	if err != nil {
		return nil, err
	}
	cov, err := json.Marshal(nonNilPolygons(l.Coverage))
	if err != nil {
		return nil, fmt.Errorf("encode coverage: %w", err)
	}
	return &storage.Layer{Name: l.Name, Kind: string(l.Kind), Version: l.Version, Source: l.Source, SHA256: l.SHA256,
		FeatureCount: len(l.Features), Coverage: cov, Features: bytes.Clone(r.Features)}, nil
}

// checkRaster validates a raster layer and reads its tiles' headers: the
// layer and every tile must be readable, or nothing is imported.
func checkRaster(r Request) (*storage.Layer, error) {
	err := geo.CheckRasterLayer(r.Name, geo.LayerKind(r.Kind), r.Version, r.Source)
	var probs apierr.Problems
	if ps, ok := err.(geo.Problems); ok {
		probs = apierr.FromGeo(ps, nil).Details
	}
	if r.Features != nil {
		field := r.FeaturesField
		if field == "" {
			field = "features"
		}
		probs.Add(apierr.DetailInvalidValue, field, "a raster layer is a folder of GeoTIFF tiles, not GeoJSON features")
	}
	if r.Coverage != nil {
		probs.Add(apierr.DetailInvalidValue, "coverage", "a raster layer has data where its tiles are; it takes no coverage")
	}
	var tiles []storage.RasterTile
	if r.RasterDir == "" {
		probs.Add(apierr.DetailRequired, r.RasterField, "is required for a raster layer: the folder of its GeoTIFF tiles")
	} else {
		var tp apierr.Problems
		tiles, tp = readRasterDir(r.RasterDir, r.RasterField)
		probs = append(probs, tp...)
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	return &storage.Layer{Name: r.Name, Kind: r.Kind, Version: r.Version, Source: r.Source,
		SHA256: rasterSHA256(tiles), Coverage: json.RawMessage("[]"),
		Raster: &storage.RasterTiles{Dir: r.RasterDir, Tiles: tiles}}, nil
}

// layerProblems maps geo problems to the 400 envelope: paths into the
// features collection get featuresField ("features" for the API body).
func layerProblems(probs geo.Problems, featuresField string) error {
	return apierr.FromGeo(probs, func(field string) string {
		switch {
		case field == "name" || field == "kind" || field == "version" || field == "source" ||
			field == "coverage" || strings.HasPrefix(field, "coverage."):
		case featuresField == "":
		case field == "body":
			field = featuresField
		default:
			field = featuresField + "." + field
		}
		return field
	})
}

// rasterDir resolves the folder POST /layers names for a raster layer:
// relative to the raster root, or absolute inside it. The API may not
// make the appliance read folders elsewhere; `eudr layers import` may.
// Symbolic links inside the root are followed: the operator made them.
func (s *Service) rasterDir(dir string) (string, apierr.Problems) {
	if dir == "" {
		return "", nil // REQUIRED, reported with the rest
	}
	var probs apierr.Problems
	root, err := filepath.Abs(s.o.RasterRoot)
	if err != nil {
		probs.Add(apierr.DetailInvalidValue, apiRasterField, "the raster root (layers.raster_root) cannot be resolved")
		return "", probs
	}
	p := dir
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	if rel, err := filepath.Rel(root, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		probs.Add(apierr.DetailInvalidValue, apiRasterField,
			"must be a folder inside the raster root (layers.raster_root), given relative to it; use `eudr layers import --raster DIR` for folders elsewhere")
		return "", probs
	}
	return p, nil
}
