package geotiff_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
)

type tag = geotifftest.Tag

// refusal is a file Open must refuse, and how.
type refusal struct {
	name   string
	file   func(t testing.TB) []byte
	reason geotiff.Reason
	want   string // in the message
}

// withTags is a small LZW file in strips of 4 rows with tags replaced.
func withTags(tags ...tag) func(t testing.TB) []byte {
	return withOptions(geotifftest.Options{Compression: geotiff.CompressionLZW, RowsPerStrip: 4, Tags: tags})
}

func withOptions(o geotifftest.Options) func(t testing.TB) []byte {
	return func(t testing.TB) []byte { return geotifftest.MustEncode(t, 20, 10, pattern, o) }
}

func raw(b []byte) func(t testing.TB) []byte { return func(testing.TB) []byte { return b } }

// patched is a valid classic little-endian file with bytes changed.
func patched(change func(b []byte) []byte) func(t testing.TB) []byte {
	return func(t testing.TB) []byte {
		return change(geotifftest.MustEncode(t, 20, 10, pattern, geotifftest.Options{RowsPerStrip: 4}))
	}
}

func refusals() []refusal {
	le := binary.LittleEndian
	return []refusal{
		// Not TIFF, or a broken one.
		{"empty", raw(nil), geotiff.NotTIFF, "too short"},
		{"seven-bytes", raw([]byte("II*\x00\x08\x00\x00")), geotiff.NotTIFF, "too short"},
		{"gif", raw([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00")), geotiff.NotTIFF, "not a TIFF file"},
		{"png", raw([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR")), geotiff.NotTIFF, "not a TIFF file"},
		{"version-41", raw([]byte("II\x29\x00\x08\x00\x00\x00")), geotiff.NotTIFF, "TIFF version 41"},
		{"bigtiff-offset-size-4", raw([]byte("II\x2b\x00\x04\x00\x00\x00\x10\x00\x00\x00\x00\x00\x00\x00")), geotiff.Malformed, "BigTIFF header"},
		{"bigtiff-truncated-header", raw([]byte("II\x2b\x00\x08\x00\x00\x00\x10\x00")), geotiff.Malformed, "BigTIFF header"},
		{"no-ifd", raw([]byte("II*\x00\x00\x00\x00\x00")), geotiff.Malformed, "no image directory"},
		{"ifd-outside", raw([]byte("II*\x00\xff\xff\x00\x00")), geotiff.Malformed, "outside the file"},
		{"ifd-empty", raw([]byte("II*\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00")), geotiff.Malformed, "0 entries"},
		{"ifd-truncated", patched(func(b []byte) []byte { return b[:40] }), geotiff.Malformed, "extends past the end of the file"},
		{"tag-values-truncated", patched(func(b []byte) []byte {
			n := le.Uint16(b[8:])
			return b[:10+12*int(n)+4+8] // the directory, and 8 bytes of its out-of-line values
		}), geotiff.Malformed, "extend past the end of the file"},
		{"ifd-offset-overflows", raw([]byte("II\x2b\x00\x08\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff")), geotiff.Malformed, "outside the file"},

		// Sizes and structure.
		{"no-width", withTags(tag{ID: geotifftest.TagImageWidth}), geotiff.Malformed, "ImageWidth and ImageLength are required"},
		{"zero-height", withTags(tag{ID: geotifftest.TagImageLength, Value: []uint32{0}}), geotiff.Malformed, "20 x 0 pixels"},
		{"width-as-double", withTags(tag{ID: geotifftest.TagImageWidth, Value: []float64{20}}), geotiff.Malformed, "ImageWidth (256) has field type 12"},
		{"width-signed", withTags(tag{ID: geotifftest.TagImageWidth, Value: []int8{20}}), geotiff.Malformed, "want an unsigned integer"},
		{"huge-width", withTags(tag{ID: geotifftest.TagImageWidth, Value: []uint32{1<<24 + 1}}), geotiff.TooLarge, "at most 16777216 on a side"},
		{"huge-tiles", withOptions(geotifftest.Options{TileWidth: 16, TileHeight: 16, Tags: []tag{{ID: geotifftest.TagTileWidth, Value: []uint32{1 << 30}}}}), geotiff.TooLarge, "tiles are 1073741824 x 16"},
		{"too-many-blocks", withOptions(geotifftest.Options{TileWidth: 16, TileHeight: 16, Tags: []tag{
			{ID: geotifftest.TagImageWidth, Value: []uint32{1 << 24}}, {ID: geotifftest.TagImageLength, Value: []uint32{1 << 24}}}}), geotiff.TooLarge, "1099511627776 blocks"},
		{"rows-per-strip-0", withTags(tag{ID: geotifftest.TagRowsPerStrip, Value: []uint32{0}}), geotiff.Malformed, "RowsPerStrip (278) is 0"},
		{"tile-length-0", withOptions(geotifftest.Options{TileWidth: 16, TileHeight: 16, Tags: []tag{{ID: geotifftest.TagTileLength, Value: []uint32{0}}}}), geotiff.Malformed, "tiles are 16 x 0"},
		{"tile-length-missing", withOptions(geotifftest.Options{TileWidth: 16, TileHeight: 16, Tags: []tag{{ID: geotifftest.TagTileLength}}}), geotiff.Malformed, "tiles are 16 x 0"},
		{"no-strip-offsets", withTags(tag{ID: geotifftest.TagStripOffsets}), geotiff.Malformed, "StripOffsets (273) is missing"},
		{"no-byte-counts", withTags(tag{ID: geotifftest.TagStripByteCounts}), geotiff.Malformed, "StripByteCounts (279) is missing"},
		{"too-few-offsets", withTags(tag{ID: geotifftest.TagStripOffsets, Value: []uint32{8, 8}}), geotiff.Malformed, "2 values for 3 blocks"},
		{"offset-outside", withTags(tag{ID: geotifftest.TagStripOffsets, Value: []uint32{8, 1 << 30, 8}}), geotiff.Malformed, "bytes at offset 1073741824) extends past the end of the file (size"},
		{"count-outside", withTags(tag{ID: geotifftest.TagStripByteCounts, Value: []uint32{1, 1 << 31, 1}}), geotiff.Malformed, "extends past the end of the file"},
		{"uncompressed-block-short", withOptions(geotifftest.Options{RowsPerStrip: 4, Tags: []tag{{ID: geotifftest.TagStripByteCounts, Value: []uint32{80, 79, 40}}}}), geotiff.Malformed, "block 1 holds 79 bytes, but its pixels need 80"},
		{"compressed-block-impossible", withOptions(geotifftest.Options{Compression: geotiff.CompressionDeflate, TileWidth: 4096, TileHeight: 4096,
			Tags: []tag{{ID: geotifftest.TagTileByteCounts, Value: []uint32{100}}}}), geotiff.Malformed, "block 0 holds 100 compressed bytes, too few for its 16777216 pixels"},

		// Samples.
		{"rgb", withTags(tag{ID: geotifftest.TagSamplesPerPixel, Value: []uint16{3}}), geotiff.UnsupportedSamples, "3 samples (bands) per pixel"},
		{"uint16", withTags(tag{ID: geotifftest.TagBitsPerSample, Value: []uint16{16}}), geotiff.UnsupportedSamples, "16-bit"},
		{"bilevel-by-default", withTags(tag{ID: geotifftest.TagBitsPerSample}), geotiff.UnsupportedSamples, "1-bit"},
		{"int8", withTags(tag{ID: geotifftest.TagSampleFormat, Value: []uint16{2}}), geotiff.UnsupportedSamples, "signed integers"},
		{"float", withTags(tag{ID: geotifftest.TagSampleFormat, Value: []uint16{3}}), geotiff.UnsupportedSamples, "floating point"},
		{"sample-format-5", withTags(tag{ID: geotifftest.TagSampleFormat, Value: []uint16{5}}), geotiff.UnsupportedSamples, "SampleFormat is 5"},
		{"photometric-rgb", withTags(tag{ID: geotifftest.TagPhotometric, Value: []uint16{2}}), geotiff.UnsupportedLayout, "PhotometricInterpretation is 2"},
		{"fill-order-2", withTags(tag{ID: 266, Value: []uint16{2}}), geotiff.UnsupportedLayout, "FillOrder is 2"},
		{"planar-3", withTags(tag{ID: geotifftest.TagPlanarConfiguration, Value: []uint16{3}}), geotiff.UnsupportedLayout, "PlanarConfiguration is 3"},

		// Compression and predictor.
		{"jpeg", withTags(tag{ID: geotifftest.TagCompression, Value: []uint16{7}}), geotiff.UnsupportedCompression, "compression JPEG (7) is not supported: use none, LZW or Deflate"},
		{"zstd", withTags(tag{ID: geotifftest.TagCompression, Value: []uint16{50000}}), geotiff.UnsupportedCompression, "compression ZSTD (50000) is not supported"},
		{"packbits", withTags(tag{ID: geotifftest.TagCompression, Value: []uint16{32773}}), geotiff.UnsupportedCompression, "PackBits (32773)"},
		{"compression-unknown", withTags(tag{ID: geotifftest.TagCompression, Value: []uint16{12345}}), geotiff.UnsupportedCompression, "compression unknown (12345)"},
		{"compression-beyond-uint16", withTags(tag{ID: geotifftest.TagCompression, Value: []uint32{1<<16 + 5}}), geotiff.UnsupportedCompression, "compression 65541 is not supported"},
		{"predictor-float", withTags(tag{ID: geotifftest.TagPredictor, Value: []uint16{3}}), geotiff.UnsupportedPredictor, "predictor floating point (3) is not supported: use none or horizontal"},
		{"predictor-beyond-uint16", withTags(tag{ID: geotifftest.TagPredictor, Value: []uint32{1<<16 + 2}}), geotiff.UnsupportedPredictor, "predictor 65538"},

		// Georeferencing.
		{"plain-tiff", withTags(tag{ID: geotifftest.TagModelPixelScale}, tag{ID: geotifftest.TagModelTiepoint}), geotiff.Georeferencing, "not georeferenced"},
		{"no-scale", withTags(tag{ID: geotifftest.TagModelPixelScale}), geotiff.Georeferencing, "ModelPixelScale (33550) is missing"},
		{"no-tiepoint", withTags(tag{ID: geotifftest.TagModelTiepoint}), geotiff.Georeferencing, "ModelTiepoint (33922) is missing"},
		{"gcps", withTags(tag{ID: geotifftest.TagModelTiepoint, Value: []float64{0, 0, 0, -80, 10, 0, 20, 10, 0, -79.995, 9.9975, 0}}), geotiff.Georeferencing, "several tie points"},
		{"scale-one-value", withTags(tag{ID: geotifftest.TagModelPixelScale, Value: []float64{0.1}}), geotiff.Malformed, "ModelPixelScale (33550) has 1 values"},
		{"tiepoint-short", withTags(tag{ID: geotifftest.TagModelTiepoint, Value: []float64{0, 0, 0, 1}}), geotiff.Malformed, "ModelTiepoint (33922) has 4 values"},
		{"scale-as-short", withTags(tag{ID: geotifftest.TagModelPixelScale, Value: []uint16{1, 1, 0}}), geotiff.Malformed, "want DOUBLE"},
		{"rotated", withTags(tag{ID: geotifftest.TagModelTransformation, Value: []float64{0.00025, 0.0001, 0, -80, 0.0001, -0.00025, 0, 10, 0, 0, 0, 0, 0, 0, 0, 1}}), geotiff.Georeferencing, "rotated or sheared"},
		{"transformation-short", withTags(tag{ID: geotifftest.TagModelTransformation, Value: []float64{1, 0, 0, 0}}), geotiff.Malformed, "ModelTransformation (34264) has 4 values, want 16"},
		{"south-up", withTags(tag{ID: geotifftest.TagModelPixelScale, Value: []float64{0.00025, -0.00025, 0}}), geotiff.Georeferencing, "only north-up rasters"},
		{"zero-scale", withTags(tag{ID: geotifftest.TagModelPixelScale, Value: []float64{0, 0.00025, 0}}), geotiff.Georeferencing, "only north-up rasters"},
		{"nan-scale", withOptions(geotifftest.Options{DX: math.NaN(), DY: 1, West: 1, North: 1}), geotiff.Georeferencing, "holds NaN"},
		{"metres", withOptions(geotifftest.Options{West: 500000, North: 4000000, DX: 30, DY: 30}), geotiff.Georeferencing, "not longitudes and latitudes"},
		{"raster-type-3", withTags(tag{ID: geotifftest.TagGeoKeyDirectory, Value: []uint16{1, 1, 0, 2, 1025, 0, 1, 3, 2048, 0, 1, 4326}}), geotiff.Georeferencing, "GTRasterTypeGeoKey is 3"},

		// CRS.
		{"no-geokeys", withTags(tag{ID: geotifftest.TagGeoKeyDirectory}), geotiff.UnsupportedCRS, "GeoKeyDirectory (34735) is missing"},
		{"etrs89", withTags(tag{ID: geotifftest.TagGeoKeyDirectory, Value: geotifftest.GeoKeys(4258, false)}), geotiff.UnsupportedCRS, "the CRS is EPSG:4258: only EPSG:4326"},
		{"utm", withTags(tag{ID: geotifftest.TagGeoKeyDirectory, Value: []uint16{1, 1, 0, 2, 1024, 0, 1, 1, 3072, 0, 1, 32633}}), geotiff.UnsupportedCRS, "projected (EPSG:32633)"},
		{"projected-model", withTags(tag{ID: geotifftest.TagGeoKeyDirectory, Value: []uint16{1, 1, 0, 1, 1024, 0, 1, 1}}), geotiff.UnsupportedCRS, "the CRS is projected (GTModelTypeGeoKey 1)"},
		{"geocentric", withTags(tag{ID: geotifftest.TagGeoKeyDirectory, Value: []uint16{1, 1, 0, 1, 1024, 0, 1, 3}}), geotiff.UnsupportedCRS, "geocentric"},
		{"model-type-9", withTags(tag{ID: geotifftest.TagGeoKeyDirectory, Value: []uint16{1, 1, 0, 1, 1024, 0, 1, 9}}), geotiff.UnsupportedCRS, "GTModelTypeGeoKey is 9"},
		{"radians", withTags(tag{ID: geotifftest.TagGeoKeyDirectory, Value: []uint16{1, 1, 0, 2, 2048, 0, 1, 4326, 2054, 0, 1, 9101}}), geotiff.UnsupportedCRS, "angular unit is EPSG:9101"},
		{"paris", withTags(tag{ID: geotifftest.TagGeoKeyDirectory, Value: []uint16{1, 1, 0, 2, 2048, 0, 1, 32767, 2051, 0, 1, 8903}}), geotiff.UnsupportedCRS, "prime meridian is EPSG:8903"},
		{"user-defined", withTags(tag{ID: geotifftest.TagGeoKeyDirectory, Value: []uint16{1, 1, 0, 2, 1024, 0, 1, 2, 2048, 0, 1, 32767}}), geotiff.UnsupportedCRS, "name no geographic CRS"},
		{"no-crs-key", withTags(tag{ID: geotifftest.TagGeoKeyDirectory, Value: []uint16{1, 1, 0, 1, 1024, 0, 1, 2}}), geotiff.UnsupportedCRS, "name no geographic CRS"},
		{"geokeys-version-2", withTags(tag{ID: geotifftest.TagGeoKeyDirectory, Value: []uint16{2, 1, 0, 1, 2048, 0, 1, 4326}}), geotiff.Malformed, "no valid header"},
		{"geokeys-too-many", withTags(tag{ID: geotifftest.TagGeoKeyDirectory, Value: []uint16{1, 1, 0, 5, 2048, 0, 1, 4326}}), geotiff.Malformed, "declares 5 keys but holds 1"},
		{"geokeys-short", withTags(tag{ID: geotifftest.TagGeoKeyDirectory, Value: []uint16{1, 1}}), geotiff.Malformed, "no valid header"},

		// Nodata.
		{"nodata-text", withOptions(geotifftest.Options{NoData: "none"}), geotiff.Malformed, `GDAL_NODATA (42113) is "none", not a number`},
		{"nodata-long", withOptions(geotifftest.Options{NoData: strings.Repeat("9", 300)}), geotiff.Malformed, "characters long"},
		{"nodata-not-ascii", withTags(tag{ID: geotifftest.TagGDALNoData, Value: []uint16{0}}), geotiff.Malformed, "want ASCII"},
	}
}

func TestOpen_Refusals(t *testing.T) {
	for _, c := range refusals() {
		t.Run(c.name, func(t *testing.T) {
			b := c.file(t)
			f, err := geotiff.Open(bytes.NewReader(b), int64(len(b)))
			if err == nil {
				t.Fatalf("opened %+v, want a %v error", f.Info(), c.reason)
			}
			if reasonOf(err) != c.reason || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v (%v), want a %v error containing %q", err, reasonOf(err), c.reason, c.want)
			}
			if !strings.HasPrefix(err.Error(), "geotiff: ") {
				t.Fatalf("got %q, want the geotiff: prefix", err)
			}
		})
	}
}

// TestOpen_Accepts covers what is read though unusual.
func TestOpen_Accepts(t *testing.T) {
	for _, c := range []struct {
		name  string
		opts  geotifftest.Options
		check func(geotiff.Info) bool
	}{
		{"nodata-255", geotifftest.Options{NoData: " 255 "}, func(in geotiff.Info) bool { return in.HasNoData && in.NoData == 255 }},
		{"nodata-0.0", geotifftest.Options{NoData: "0.0"}, func(in geotiff.Info) bool { return in.HasNoData && in.NoData == 0 }},
		{"nodata-outside-uint8", geotifftest.Options{NoData: "-9999"}, func(in geotiff.Info) bool { return !in.HasNoData }},
		{"nodata-fraction", geotifftest.Options{NoData: "0.5"}, func(in geotiff.Info) bool { return !in.HasNoData }},
		{"nodata-nan", geotifftest.Options{NoData: "nan"}, func(in geotiff.Info) bool { return !in.HasNoData }},
		{"no-nodata", geotifftest.Options{}, func(in geotiff.Info) bool { return !in.HasNoData }},
		{"predictor-without-compression", geotifftest.Options{Tags: []tag{{ID: geotifftest.TagPredictor, Value: []uint16{2}}}},
			func(in geotiff.Info) bool { return in.Predictor == geotiff.PredictorNone }},
		{"palette", geotifftest.Options{Tags: []tag{{ID: geotifftest.TagPhotometric, Value: []uint16{3}}}}, func(geotiff.Info) bool { return true }},
		{"white-is-zero", geotifftest.Options{Tags: []tag{{ID: geotifftest.TagPhotometric, Value: []uint16{0}}}}, func(geotiff.Info) bool { return true }},
		{"planar-2", geotifftest.Options{Tags: []tag{{ID: geotifftest.TagPlanarConfiguration, Value: []uint16{2}}}}, func(geotiff.Info) bool { return true }},
		{"no-optional-tags", geotifftest.Options{Compression: geotiff.CompressionLZW, Tags: []tag{{ID: geotifftest.TagSampleFormat}, {ID: geotifftest.TagPhotometric},
			{ID: geotifftest.TagPlanarConfiguration}, {ID: geotifftest.TagSamplesPerPixel}, {ID: geotifftest.TagRowsPerStrip}}},
			func(in geotiff.Info) bool { return in.BlocksDown == 1 && in.BlockHeight == 10 }},
		{"rows-per-strip-beyond-height", geotifftest.Options{Tags: []tag{{ID: geotifftest.TagRowsPerStrip, Value: []uint32{1<<32 - 1}}}},
			func(in geotiff.Info) bool { return in.BlocksDown == 1 && in.BlockHeight == 10 }},
		{"short-dimensions", geotifftest.Options{Tags: []tag{{ID: geotifftest.TagImageWidth, Value: []uint16{20}}, {ID: geotifftest.TagImageLength, Value: []uint16{10}}}},
			func(in geotiff.Info) bool { return in.Width == 20 }},
		{"bits-per-sample-8-8", geotifftest.Options{Tags: []tag{{ID: geotifftest.TagBitsPerSample, Value: []uint16{8, 8}}}}, func(geotiff.Info) bool { return true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := geotifftest.MustEncode(t, 20, 10, pattern, c.opts)
			f := mustOpen(t, b, geotiff.Options{})
			if !c.check(f.Info()) {
				t.Fatalf("info %+v", f.Info())
			}
			checkWindow(t, f, win(0, 0, 20, 10), pattern)
		})
	}
}

// TestOpen_ReadsOnlyTheHeader opens a file whose block data is absent:
// Open must not touch it.
func TestOpen_ReadsOnlyTheHeader(t *testing.T) {
	b := geotifftest.MustEncode(t, 200, 200, pattern, geotifftest.Options{Compression: geotiff.CompressionLZW, TileWidth: 32, TileHeight: 32})
	r := &recordingReader{r: bytes.NewReader(b)}
	f, err := geotiff.Open(r, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var read int64
	for _, rg := range r.reads {
		read += rg[1] - rg[0]
	}
	if read > 1024 {
		t.Fatalf("Open read %d bytes of %d (%v): want the header only", read, len(b), r.reads)
	}
	_ = f
}
