package server

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// maxOpenTiles bounds the raster tiles kept open between reads. An open
// tile holds its block tables: 640 KB for a Hansen tile of 40,000 strips.
const maxOpenTiles = 32

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
func (a *App) checkTiles(l *storage.Layer) {
	for _, t := range l.Raster.Tiles {
		st, err := os.Stat(filepath.Join(l.Raster.Dir, t.Name))
		switch {
		case err != nil:
			a.log.Error().Str("layer_id", l.ID).Str("tile", t.Name).Err(pathErrorCause(err)).Msg("raster tile cannot be read")
		case st.Size() != t.Size:
			a.log.Error().Str("layer_id", l.ID).Str("tile", t.Name).Int64("size", st.Size()).Int64("imported_size", t.Size).
				Msg("raster tile has changed since its layer was imported; restore it, or import the corrected folder as a new layer and delete this one")
		}
	}
}

// rasterDir resolves the folder POST /layers names for a raster layer:
// relative to layers.raster_root, or absolute inside it. The API may not
// make the appliance read folders elsewhere; `eudr layers import` may.
// Symbolic links inside the root are followed: the operator made them.
func (a *App) rasterDir(dir string) (string, apierr.Problems) {
	if dir == "" {
		return "", nil // REQUIRED, reported with the rest
	}
	var probs apierr.Problems
	root, err := filepath.Abs(a.cfg.Layers.rasterRoot(a.cfg.DataDir))
	if err != nil {
		probs.Add(apierr.DetailInvalidValue, "raster.directory", "the raster root (layers.raster_root) cannot be resolved")
		return "", probs
	}
	p := dir
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	if rel, err := filepath.Rel(root, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		probs.Add(apierr.DetailInvalidValue, "raster.directory",
			"must be a folder inside the raster root (layers.raster_root), given relative to it; use `eudr layers import --raster DIR` for folders elsewhere")
		return "", probs
	}
	return p, nil
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

// tileFiles opens raster tiles when they are first read and keeps the
// maxOpen most recently used open, sharing one cache of decoded blocks. Its
// methods are safe for concurrent use.
type tileFiles struct {
	cache   *geotiff.Cache
	maxOpen int

	mu   sync.Mutex
	open map[string]*openTile // by path
	lru  list.List            // of *openTile, most recently used first
}

// openTile is an open tile file and how many reads are using it.
type openTile struct {
	path  string
	fh    *os.File
	f     *geotiff.File
	rec   storage.RasterTile // the record it was checked against
	users int
	el    *list.Element
}

func newTileFiles(cacheBytes int64, maxOpen int) *tileFiles {
	return &tileFiles{cache: geotiff.NewCache(cacheBytes), maxOpen: maxOpen, open: map[string]*openTile{}}
}

// acquire returns the open tile at path, opening it if need be and
// checking that it is still the file that was imported (want).
func (tf *tileFiles) acquire(path string, want storage.RasterTile) (*openTile, error) {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	if ot, ok := tf.open[path]; ok {
		// Two layers may name the same file with different records (it
		// changed between their imports): each read checks its own.
		if !sameTile(ot.rec, want) {
			return nil, errChangedTile
		}
		ot.users++
		tf.lru.MoveToFront(ot.el)
		return ot, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open: %w", pathErrorCause(err))
	}
	f, err := tf.check(fh, want)
	if err != nil {
		fh.Close()
		return nil, err
	}
	ot := &openTile{path: path, fh: fh, f: f, rec: want, users: 1}
	ot.el = tf.lru.PushFront(ot)
	tf.open[path] = ot
	tf.evict()
	return ot, nil
}

// check opens the header of fh and refuses a file that is not the one
// imported: another size or another header.
func (tf *tileFiles) check(fh *os.File, want storage.RasterTile) (*geotiff.File, error) {
	st, err := fh.Stat()
	if err != nil {
		return nil, pathErrorCause(err)
	}
	if st.Size() != want.Size {
		return nil, fmt.Errorf("%w (%d bytes, then %d)", errChangedTile, st.Size(), want.Size)
	}
	f, err := geotiff.OpenOptions(fh, st.Size(), geotiff.Options{Cache: tf.cache})
	if err != nil {
		return nil, err
	}
	if !sameTile(describeTile(f, want.Name, st.Size()), want) {
		return nil, fmt.Errorf("%w (its header differs)", errChangedTile)
	}
	return f, nil
}

// errChangedTile: a tile is not the file its layer was imported with.
// Tiles are read in place and must not change; a new release of a dataset
// is a new layer.
var errChangedTile = errors.New("the file has changed since the layer was imported: restore it, or import the corrected folder as a new layer and delete this one")

// evict closes the least recently used idle tiles beyond maxOpen. Tiles
// being read stay open; they are closed by a later eviction.
func (tf *tileFiles) evict() {
	for el := tf.lru.Back(); el != nil && len(tf.open) > tf.maxOpen; {
		ot := el.Value.(*openTile)
		el = el.Prev()
		if ot.users > 0 {
			continue
		}
		tf.lru.Remove(ot.el)
		delete(tf.open, ot.path)
		ot.fh.Close()
	}
}

// release ends a read of ot.
func (tf *tileFiles) release(ot *openTile) {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	ot.users--
	tf.evict()
}

// closeAll closes every open tile; reads after it open them again.
func (tf *tileFiles) closeAll() {
	tf.mu.Lock()
	defer tf.mu.Unlock()
	for _, ot := range tf.open {
		ot.fh.Close()
	}
	clear(tf.open)
	tf.lru.Init()
}

// tileReader reads one tile of a raster layer through tileFiles: it is the
// geo.RasterReader of a geo.RasterTile.
type tileReader struct {
	files *tileFiles
	path  string
	want  storage.RasterTile
}

func (r *tileReader) ReadWindow(ctx context.Context, w geotiff.Window, dst []uint8) error {
	ot, err := r.files.acquire(r.path, r.want)
	if err != nil {
		return err
	}
	defer r.files.release(ot)
	return ot.f.ReadWindow(ctx, w, dst)
}
