package layer

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// readRasterDir reads the header of every GeoTIFF (.tif, .tiff) in dir and
// describes the tiles, sorted by name. A file it cannot read, two tiles
// that overlap, or a folder without tiles is a problem at field, naming
// the file: the layer is imported whole or not at all.
func readRasterDir(dir, field string) ([]storage.RasterTile, apierr.Problems) {
	var p apierr.Problems
	entries, err := os.ReadDir(dir)
	if err != nil {
		p.Add(apierr.DetailInvalidValue, field, fmt.Sprintf("the folder cannot be read: %v", pathErrorCause(err)))
		return nil, p
	}
	var tiles []storage.RasterTile
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if e.IsDir() || (ext != ".tif" && ext != ".tiff") {
			continue
		}
		t, err := readTileHeader(filepath.Join(dir, e.Name()))
		if err != nil {
			p.Add(apierr.DetailInvalidValue, field, fmt.Sprintf("%s: %v", e.Name(), err))
			continue
		}
		tiles = append(tiles, t)
	}
	if len(tiles) == 0 && len(p) == 0 {
		p.Add(apierr.DetailInvalidValue, field, "the folder holds no GeoTIFF tiles (.tif or .tiff files)")
	}
	for i := range tiles {
		for j := i + 1; j < len(tiles); j++ {
			if overlaps(tileGrid(tiles[i]).Bounds(), tileGrid(tiles[j]).Bounds()) {
				p.Add(apierr.DetailInvalidValue, field, fmt.Sprintf("tiles %s and %s overlap: a layer's tiles must not (import each dataset as its own layer)",
					tiles[i].Name, tiles[j].Name))
			}
		}
	}
	if len(p) > 0 {
		return nil, p
	}
	return tiles, nil
}

func overlaps(a, b geotiff.Bounds) bool {
	return a.West < b.East && b.West < a.East && a.South < b.North && b.South < a.North
}

// pathErrorCause drops the path from an *os.PathError: the message names
// the field the path was given in, not the server's folder layout.
func pathErrorCause(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readTileHeader opens a GeoTIFF, reads its header only and describes it.
func readTileHeader(path string) (storage.RasterTile, error) {
	fh, err := os.Open(path)
	if err != nil {
		return storage.RasterTile{}, pathErrorCause(err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return storage.RasterTile{}, pathErrorCause(err)
	}
	f, err := geotiff.Open(fh, st.Size())
	if err != nil {
		return storage.RasterTile{}, err
	}
	return describeTile(f, filepath.Base(path), st.Size()), nil
}

// describeTile is the record of an open tile.
func describeTile(f *geotiff.File, name string, size int64) storage.RasterTile {
	in := f.Info()
	g := in.Georef
	t := storage.RasterTile{Name: name, Size: size, Width: in.Width, Height: in.Height,
		West: g.West, North: g.North, DX: g.DX, DY: g.DY, PixelIsPoint: g.PixelIsPoint,
		Compression: in.Compression.String(), Predictor: in.Predictor.String()}
	if in.HasNoData {
		v := int(in.NoData)
		t.NoData = &v
	}
	if in.Tiled {
		t.Layout = fmt.Sprintf("tiles %dx%d", in.BlockWidth, in.BlockHeight)
	} else {
		t.Layout = fmt.Sprintf("strips of %d rows", in.BlockHeight)
	}
	return t
}

// sameTile reports whether two records describe the same file.
func sameTile(a, b storage.RasterTile) bool {
	na, nb := -1, -1
	if a.NoData != nil {
		na = *a.NoData
	}
	if b.NoData != nil {
		nb = *b.NoData
	}
	a.NoData, b.NoData = nil, nil
	return a == b && na == nb
}

// checkTiles logs the tiles of a raster layer that are missing or changed
// since it was imported: plots that need them are FAILED until the file is
// restored or the layer deleted.
func (s *Service) checkTiles(l *storage.Layer) {
	for _, t := range l.Raster.Tiles {
		st, err := os.Stat(filepath.Join(l.Raster.Dir, t.Name))
		switch {
		case err != nil:
			s.o.Logger.Error().Str("layer_id", l.ID).Str("tile", t.Name).Err(pathErrorCause(err)).Msg("raster tile cannot be read")
		case st.Size() != t.Size:
			s.o.Logger.Error().Str("layer_id", l.ID).Str("tile", t.Name).Int64("size", st.Size()).Int64("imported_size", t.Size).
				Msg("raster tile has changed since its layer was imported; restore it, or import the corrected folder as a new layer and delete this one")
		}
	}
}

// tileGrid is the grid a tile record describes.
func tileGrid(t storage.RasterTile) geotiff.Georef {
	return geotiff.Georef{West: t.West, North: t.North, DX: t.DX, DY: t.DY, Width: t.Width, Height: t.Height,
		PixelIsPoint: t.PixelIsPoint}
}

// rasterSHA256 is the hex SHA-256 of a raster layer's tile list: the names
// and headers it was imported with. The pixels are not hashed: import
// reads headers only, and a tile's size and header are checked again
// whenever it is opened.
func rasterSHA256(tiles []storage.RasterTile) string {
	b, err := json.Marshal(tiles)
	if err != nil {
		panic(fmt.Sprintf("encode tiles: %v", err)) // plain values: cannot fail
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// rasterLayer makes the geo layer of a stored raster layer, its tiles read
// through files.
func rasterLayer(l *storage.Layer, files *tileFiles) *geo.RasterLayer {
	out := &geo.RasterLayer{ID: l.ID, Name: l.Name, Kind: geo.LayerKind(l.Kind), Version: l.Version,
		Source: l.Source, SHA256: l.SHA256}
	for _, t := range l.Raster.Tiles {
		rt := geo.RasterTile{Name: t.Name, Grid: tileGrid(t),
			Reader: &tileReader{files: files, path: filepath.Join(l.Raster.Dir, t.Name), want: t}}
		if t.NoData != nil {
			rt.NoData, rt.HasNoData = uint8(*t.NoData), true
		}
		out.Tiles = append(out.Tiles, rt)
	}
	return out
}
