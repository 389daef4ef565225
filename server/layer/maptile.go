package layer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"io/fs"
	"strconv"
	"strings"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/maptile"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// MapTileCacheControl is how long a browser may keep a map tile without
// asking again: a year, since a layer's tiles never change (a new release
// of a dataset is a new layer, with another ID).
const MapTileCacheControl = "private, max-age=31536000, immutable"

// mapTileRenderer names the way map tiles are drawn (sampling and
// palettes). It is part of their ETag: a release that draws them
// otherwise must change it, or browsers keep the old tiles.
const mapTileRenderer = "r1"

// MapTile is a map tile of a raster layer to send: its PNG, unless the
// client holds it already (NotModified), and its ETag.
type MapTile struct {
	PNG         []byte
	ETag        string
	NotModified bool
}

// MapTile draws map tile z/x/y of raster layer id of env as a 256 x 256
// PNG (maptile.Render), transparent where the layer has nothing to show;
// z and x are the path's decimal numbers, yFile the row and ".png". When
// ifNoneMatch (the request's If-None-Match) names the tile's ETag, it is
// NotModified and not drawn. It refuses with 400 a tile address out of
// range or malformed, a zoom below the layer's minimum
// (maptile.MinZoom) and a vector layer (a map draws those from their
// features); with 404 a layer that env does not screen against (another
// environment's included); with 503 when a file it needs is missing or
// has changed since its import, naming it. It fails when a file cannot be
// read otherwise.
func (s *Service) MapTile(ctx context.Context, env storage.Environment, id, z, x, yFile, ifNoneMatch string) (*MapTile, error) {
	t, err := parseMapTile(z, x, yFile)
	if err != nil {
		return nil, err
	}
	l, err := s.mapTileLayer(env, id, t)
	if err != nil {
		return nil, err
	}
	out := &MapTile{ETag: `"` + l.SHA256 + "-" + mapTileRenderer + `"`}
	if out.NotModified = etagMatches(ifNoneMatch, out.ETag); out.NotModified {
		return out, nil
	}
	img, err := maptile.Render(ctx, l, t)
	if missing := errors.Is(err, fs.ErrNotExist); missing || errors.Is(err, errChangedTile) {
		// The operator's to mend, not a fault of the appliance: say which
		// file, and how (errChangedTile says how itself).
		msg := fmt.Sprintf("layer %s cannot draw this map tile: %v", l.ID, err)
		if missing {
			msg += ": restore the file, or import the layer again"
		}
		return nil, &apierr.Error{Status: apierr.StatusServiceUnavailable, Code: apierr.CodeServiceUnavailable, Message: msg, Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("map tile %v of layer %s: %w", t, l.ID, err)
	}
	var buf bytes.Buffer
	// Speed over size: a tile is mostly transparent or flat colour, which
	// the fastest level compresses nearly as well.
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode map tile %v of layer %s: %w", t, l.ID, err)
	}
	out.PNG = buf.Bytes()
	return out, nil
}

// parseMapTile reads a map tile's address from the path, every problem
// at once.
func parseMapTile(z, x, yFile string) (maptile.Tile, error) {
	var probs apierr.Problems
	t := maptile.Tile{Z: tileCoord(&probs, "path.z", z), X: tileCoord(&probs, "path.x", x), Y: -1}
	if y, ok := strings.CutSuffix(yFile, ".png"); ok {
		t.Y = tileCoord(&probs, "path.y", y)
	} else {
		probs.Add(apierr.DetailInvalidValue, "path.y", "must be the tile row followed by .png, such as 1982.png")
	}
	if len(probs) == 0 {
		for _, p := range t.Check() {
			probs.Add(apierr.DetailInvalidValue, "path."+p.Coord, p.Issue)
		}
	}
	return t, probs.Err()
}

// tileCoord reads a map tile coordinate: decimal digits only (its range
// is checked with the tile); -1 when it is not that.
func tileCoord(probs *apierr.Problems, field, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strings.TrimLeft(s, "0123456789") != "" {
		probs.Add(apierr.DetailInvalidValue, field, "must be a non-negative integer")
		return -1
	}
	return n
}

// mapTileLayer returns the raster layer of env that map tile t of layer
// id is drawn from.
func (s *Service) mapTileLayer(env storage.Environment, id string, t maptile.Tile) (*geo.RasterLayer, error) {
	ix := s.Index(env)
	for _, l := range ix.Rasters() {
		if l.ID != id {
			continue
		}
		if min := maptile.LayerMinZoom(l); t.Z < min {
			return nil, apierr.Invalid("path.z", fmt.Sprintf("layer %s is drawn from zoom %d on (at zoom %d a tile would span too many of its pixels to read): set the map source's minzoom to %d", id, min, t.Z, min))
		}
		return l, nil
	}
	for _, l := range ix.Layers() {
		if l.ID == id {
			return nil, apierr.Invalid("path.layerId", fmt.Sprintf("layer %s is a vector layer (%s): only raster layers are drawn as map tiles", id, l.Kind))
		}
	}
	return nil, apierr.NotFound{Kind: "layer", ID: id}
}

// etagMatches reports whether an If-None-Match header names etag (or is
// "*"), by weak comparison as RFC 9110 asks for it.
func etagMatches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == etag {
			return true
		}
	}
	return false
}

// MapTileMinZoom is the smallest zoom at which a raster layer of tiles is
// drawn as map tiles: maptile.MinZoom of its finest tile.
func MapTileMinZoom(tiles []storage.RasterTile) int {
	z := 0
	for _, t := range tiles {
		z = max(z, maptile.MinZoom(t.DX))
	}
	return z
}
