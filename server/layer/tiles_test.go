package layer

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
	"github.com/eudr/eudr/storage"
)

// The cache of open tiles is tested from inside: which files it holds
// open is not visible through the service.

// tileFiles keeps at most maxOpen tiles open, closing the least recently
// used idle one, and never one being read.
func TestTileFiles_Evicts(t *testing.T) {
	dir := t.TempDir()
	var want []storage.RasterTile
	for i := range 3 {
		o := geotifftest.Options{Compression: geotiff.CompressionLZW, West: float64(i), North: 0, DX: 0.00025, DY: 0.00025}
		p := filepath.Join(dir, fmt.Sprintf("t%d.tif", i))
		if err := os.WriteFile(p, geotifftest.MustEncode(t, 16, 16, func(col, row int) uint8 { return uint8(col % 2) }, o), 0o644); err != nil {
			t.Fatal(err)
		}
		rt, err := readTileHeader(p)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, rt)
	}
	tf := newTileFiles(1<<20, 2)
	defer tf.closeAll()
	held, err := tf.acquire(filepath.Join(dir, "t0.tif"), want[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{1, 2, 1, 2} {
		r := &tileReader{files: tf, path: filepath.Join(dir, want[i].Name), want: want[i]}
		px := make([]uint8, 4)
		if err := r.ReadWindow(t.Context(), geotiff.Window{Col: 0, Row: 0, Width: 2, Height: 2}, px); err != nil {
			t.Fatalf("read t%d: %v", i, err)
		}
		if n := len(tf.open); n > 2 || tf.open[held.path] == nil {
			t.Fatalf("after reading t%d: %d open, t0 (in use) open: %v", i, n, tf.open[held.path] != nil)
		}
	}
	px := make([]uint8, 1)
	if err := held.f.ReadWindow(t.Context(), geotiff.Window{Width: 1, Height: 1}, px); err != nil {
		t.Errorf("the tile in use was closed under its reader: %v", err)
	}
	tf.release(held)
	// Idle now, and the least recently used: the next tile opened closes it.
	r := &tileReader{files: tf, path: filepath.Join(dir, want[1].Name), want: want[1]}
	if err := r.ReadWindow(t.Context(), geotiff.Window{Width: 1, Height: 1}, px); err != nil {
		t.Fatal(err)
	}
	if _, ok := tf.open[held.path]; ok || len(tf.open) > 2 {
		t.Errorf("after release and another read: t0 open %v, %d open; want it closed, at most 2", ok, len(tf.open))
	}
}
