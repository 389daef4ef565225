package geotiff_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
)

// pattern is the test rasters' pixels: every value occurs, neighbours
// differ (so a pixel read from the wrong place shows), and square patches
// are constant (long LZW strings, small predictor differences).
func pattern(col, row int) uint8 {
	if (col/16+row/16)%3 == 0 {
		return 0
	}
	return uint8(col*7 + row*13 + col*row/5)
}

// variant is one way of writing a raster.
type variant struct {
	name string
	opts geotifftest.Options
}

// variants are every compression x predictor x layout, with byte orders
// and BigTIFF spread over them.
func variants() []variant {
	var vs []variant
	comps := []struct {
		name string
		c    geotiff.Compression
		pred bool
	}{
		{"none", geotiff.CompressionNone, false},
		{"lzw", geotiff.CompressionLZW, false},
		{"lzw-predictor", geotiff.CompressionLZW, true},
		{"deflate", geotiff.CompressionDeflate, false},
		{"deflate-predictor", geotiff.CompressionDeflate, true},
		{"deflate-legacy-predictor", geotiff.CompressionDeflateLegacy, true},
	}
	layouts := []struct {
		name               string
		tileW, tileH, rows int
	}{
		{"one-strip", 0, 0, 0},
		{"strips-1", 0, 0, 1},
		{"strips-7", 0, 0, 7},
		{"tiles-16x16", 16, 16, 0},
		{"tiles-32x48", 32, 48, 0},
		{"tiles-256x256", 256, 256, 0},
	}
	i := 0
	for _, c := range comps {
		for _, l := range layouts {
			o := geotifftest.Options{Compression: c.c, Predictor: c.pred, TileWidth: l.tileW, TileHeight: l.tileH, RowsPerStrip: l.rows}
			name := c.name + "/" + l.name
			switch i % 4 {
			case 1:
				o.BigEndian, name = true, name+"/big-endian"
			case 2:
				o.BigTIFF, name = true, name+"/bigtiff"
			case 3:
				o.BigTIFF, o.BigEndian, name = true, true, name+"/bigtiff-big-endian"
			}
			i++
			vs = append(vs, variant{name, o})
		}
	}
	return vs
}

// mustOpen opens an encoded file, failing tb if it does not open.
func mustOpen(tb testing.TB, b []byte, opts geotiff.Options) *geotiff.File {
	tb.Helper()
	f, err := geotiff.OpenOptions(bytes.NewReader(b), int64(len(b)), opts)
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	return f
}

// checkWindow reads win and compares every pixel with want.
func checkWindow(tb testing.TB, f *geotiff.File, win geotiff.Window, want func(col, row int) uint8) {
	tb.Helper()
	dst := make([]uint8, win.Width*win.Height)
	if err := f.ReadWindow(context.Background(), win, dst); err != nil {
		tb.Fatalf("read window %+v: %v", win, err)
	}
	for r := range win.Height {
		for c := range win.Width {
			if got, w := dst[r*win.Width+c], want(win.Col+c, win.Row+r); got != w {
				tb.Fatalf("window %+v: pixel (%d, %d) is %d, want %d", win, win.Col+c, win.Row+r, got, w)
			}
		}
	}
}

// reasonOf returns the Reason of a *geotiff.Error, or 0.
func reasonOf(err error) geotiff.Reason {
	var e *geotiff.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return 0
}

func win(col, row, w, h int) geotiff.Window {
	return geotiff.Window{Col: col, Row: row, Width: w, Height: h}
}

func (v variant) String() string { return fmt.Sprintf("%s %+v", v.name, v.opts) }
