package layer

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/storage"
)

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
		return nil, fmt.Errorf("%w (%d bytes; %d when imported)", errChangedTile, st.Size(), want.Size)
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
