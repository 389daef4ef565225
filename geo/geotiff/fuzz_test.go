package geotiff_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
)

// FuzzOpen checks that no input panics Open or ReadWindow, that every
// refusal is an *Error with a reason and a message, and that what opens is
// sane: positive sizes inside the limits, finite north-up georeferencing,
// windows that read or fail with CorruptBlock. Seeds: every variant of the
// writer (small), every refusal of TestOpen_Refusals, the libtiff files.
func FuzzOpen(f *testing.F) {
	small := func(col, row int) uint8 { return pattern(col*5, row*3) }
	for _, v := range variants() {
		if v.opts.TileWidth > 32 {
			continue
		}
		f.Add(geotifftest.MustEncode(f, 23, 17, small, v.opts))
	}
	f.Add(geotifftest.MustEncode(f, 23, 17, small, geotifftest.Options{Compression: geotiff.CompressionLZW, TileWidth: 16, TileHeight: 16, NoData: "7", Sparse: true}))
	f.Add(geotifftest.MustEncode(f, 23, 17, small, geotifftest.Options{Compression: geotiff.CompressionDeflate, PixelIsPoint: true, ShareBlocks: true, RowsPerStrip: 2}))
	for _, c := range refusals() {
		f.Add(c.file(f))
	}
	files, _ := filepath.Glob("testdata/libtiff/*.tif")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		file, err := geotiff.OpenOptions(bytes.NewReader(b), int64(len(b)), geotiff.Options{Cache: geotiff.NewCache(1 << 20)})
		if err != nil {
			var e *geotiff.Error
			if !errors.As(err, &e) || e.Reason < geotiff.NotTIFF || e.Reason > geotiff.CorruptBlock || e.Message == "" {
				t.Fatalf("Open: %v (%T), want an *Error with a reason", err, err)
			}
			return
		}
		in := file.Info()
		g := in.Georef
		if in.Width <= 0 || in.Height <= 0 || in.Width > geotiff.MaxDimension || in.Height > geotiff.MaxDimension ||
			in.BlockWidth <= 0 || in.BlockHeight <= 0 || g.Width != in.Width || g.Height != in.Height {
			t.Fatalf("info %+v", in)
		}
		bd := g.Bounds()
		for _, v := range []float64{g.DX, g.DY, bd.West, bd.South, bd.East, bd.North} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("georef %+v", g)
			}
		}
		if !(g.DX > 0 && g.DY > 0) {
			t.Fatalf("georef %+v", g)
		}
		windows := []geotiff.Window{
			win(0, 0, 1, 1),
			win(in.Width-1, in.Height-1, 1, 1),
			win(in.Width/2, in.Height/2, min(in.Width-in.Width/2, 40), min(in.Height-in.Height/2, 40)),
		}
		if in.Width*in.Height <= 1<<16 {
			windows = append(windows, win(0, 0, in.Width, in.Height))
		}
		for _, w := range windows {
			err := file.ReadWindow(context.Background(), w, make([]uint8, w.Width*w.Height))
			if err != nil && reasonOf(err) != geotiff.CorruptBlock {
				t.Fatalf("ReadWindow %+v: %v, want nil or a CorruptBlock error", w, err)
			}
		}
	})
}
