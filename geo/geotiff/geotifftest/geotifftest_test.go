package geotifftest_test

import (
	"bytes"
	"fmt"
	"image"
	"testing"

	"golang.org/x/image/tiff"

	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
)

// TestWrite_XImageTIFF decodes Write's classic TIFFs with
// golang.org/x/image/tiff, a reader independent of package geotiff
// (testdata/libtiff/make.py did the same once with libtiff, BigTIFF
// included).
func TestWrite_XImageTIFF(t *testing.T) {
	px := func(col, row int) uint8 {
		if (col/16+row/16)%3 == 0 {
			return 0
		}
		return uint8(col*7 + row*13 + col*row/5)
	}
	const width, height = 301, 203
	for _, c := range []struct {
		comp geotiff.Compression
		pred bool
	}{
		{geotiff.CompressionNone, false},
		{geotiff.CompressionLZW, false},
		{geotiff.CompressionLZW, true},
		{geotiff.CompressionDeflate, false},
		{geotiff.CompressionDeflate, true},
	} {
		for _, l := range []geotifftest.Options{{}, {RowsPerStrip: 7}, {TileWidth: 32, TileHeight: 48}} {
			for _, bigEndian := range []bool{false, true} {
				o := l
				o.Compression, o.Predictor, o.BigEndian = c.comp, c.pred, bigEndian
				t.Run(fmt.Sprintf("%v/predictor=%v/rows=%d/tile=%dx%d/bigendian=%v", c.comp, c.pred, o.RowsPerStrip, o.TileWidth, o.TileHeight, bigEndian), func(t *testing.T) {
					b := geotifftest.MustEncode(t, width, height, px, o)
					img, err := tiff.Decode(bytes.NewReader(b))
					if err != nil {
						t.Fatal(err)
					}
					g, ok := img.(*image.Gray)
					if !ok || g.Bounds() != image.Rect(0, 0, width, height) {
						t.Fatalf("decoded %T %v, want a %d x %d *image.Gray", img, img.Bounds(), width, height)
					}
					for row := range height {
						for col := range width {
							if got, want := g.GrayAt(col, row).Y, px(col, row); got != want {
								t.Fatalf("pixel (%d, %d) is %d, want %d", col, row, got, want)
							}
						}
					}
				})
			}
		}
	}
}

func TestWrite_ShareBlocks(t *testing.T) {
	px := func(col, row int) uint8 { return uint8(col % 16) } // every 16 x 16 tile alike
	plain := geotifftest.MustEncode(t, 256, 256, px, geotifftest.Options{Compression: geotiff.CompressionDeflate, TileWidth: 16, TileHeight: 16})
	shared := geotifftest.MustEncode(t, 256, 256, px, geotifftest.Options{Compression: geotiff.CompressionDeflate, TileWidth: 16, TileHeight: 16, ShareBlocks: true})
	if len(shared) >= len(plain)/4 {
		t.Fatalf("shared blocks: %d bytes, plain %d: want far fewer", len(shared), len(plain))
	}
	img, err := tiff.Decode(bytes.NewReader(shared))
	if err != nil {
		t.Fatal(err)
	}
	if got := img.(*image.Gray).GrayAt(255, 255).Y; got != 15 {
		t.Fatalf("pixel (255, 255) is %d, want 15", got)
	}
}

// TestWrite_Period checks that a periodic raster is written with its
// blocks generated once per place in the pattern, and decodes to the same
// pixels as one written pixel by pixel: tiles and strips, edge blocks
// cut by the raster's size, and a period that is not a multiple of the
// blocks.
func TestWrite_Period(t *testing.T) {
	const width, height = 203, 150
	for _, c := range []struct {
		period int
		o      geotifftest.Options
	}{
		{32, geotifftest.Options{TileWidth: 16, TileHeight: 16}},
		{32, geotifftest.Options{RowsPerStrip: 1}},
		{48, geotifftest.Options{TileWidth: 32, TileHeight: 32, Sparse: true}},
	} {
		calls := 0
		px := func(col, row int) uint8 {
			calls++
			col, row = col%c.period, row%c.period
			if col < 8 {
				return 0
			}
			return uint8(col*7 + row*13)
		}
		c.o.Compression, c.o.Predictor = geotiff.CompressionLZW, true
		plain := geotifftest.MustEncode(t, width, height, px, c.o)
		plainCalls := calls
		calls = 0
		c.o.Period = c.period
		periodic := geotifftest.MustEncode(t, width, height, px, c.o)
		if calls*2 > plainCalls {
			t.Errorf("period %d, %+v: %d pixels generated, %d without Period: want far fewer", c.period, c.o, calls, plainCalls)
		}
		want, err := tiff.Decode(bytes.NewReader(plain))
		if err != nil {
			t.Fatal(err)
		}
		got, err := tiff.Decode(bytes.NewReader(periodic))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.(*image.Gray).Pix, want.(*image.Gray).Pix) {
			t.Errorf("period %d, %+v: the pixels differ from those written without Period", c.period, c.o)
		}
	}
}
