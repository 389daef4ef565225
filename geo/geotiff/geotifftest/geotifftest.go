// Package geotifftest writes single-band uint8 GeoTIFFs for tests: known
// pixels, in every layout and compression package geotiff reads, so that
// tests of readers and of screening can state expected values exactly.
// It is test support, not a production writer: it holds the raster's
// distinct blocks in memory, compressed, and its Tags option writes
// whatever it is given, so a test can craft a header that readers must
// refuse.
package geotifftest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/eudr/eudr/geo/geotiff"
)

// Pixels gives the value of pixel (col, row).
type Pixels func(col, row int) uint8

// Slice returns the Pixels of pix, row-major, width pixels a row.
func Slice(pix []uint8, width int) Pixels {
	return func(col, row int) uint8 { return pix[row*width+col] }
}

// Options say how Write encodes a raster. The zero value writes an
// uncompressed, little-endian, classic TIFF in one strip, placed like the
// Hansen tile 10N_080W (upper-left corner 80 W, 10 N, pixels of 0.00025
// degree), without nodata.
type Options struct {
	// Compression is CompressionNone (or 0), CompressionLZW,
	// CompressionDeflate or CompressionDeflateLegacy.
	Compression geotiff.Compression
	// Predictor writes horizontal differencing (Predictor 2).
	Predictor bool
	// TileWidth and TileHeight, both set, write tiles; otherwise strips of
	// RowsPerStrip rows (0: one strip of the whole raster).
	TileWidth, TileHeight int
	RowsPerStrip          int
	BigEndian             bool
	BigTIFF               bool
	// West and North place the outer upper-left corner of pixel (0, 0);
	// DX and DY are the pixel size in degrees. All zero: the default above.
	West, North, DX, DY float64
	// PixelIsPoint writes RasterPixelIsPoint, with the tie point at the
	// centre of pixel (0, 0) (the area stays the same).
	PixelIsPoint bool
	// NoData is the GDAL_NODATA text, like "0" or "255"; "" writes none.
	NoData string
	// ShareBlocks stores blocks of identical pixels once, their offsets
	// pointing at the same bytes (valid TIFF; libtiff 4.5 reads it): large
	// repetitive rasters then cost little to write and to store.
	ShareBlocks bool
	// Period, when positive, promises that the pixels repeat every Period
	// columns and rows (px(c, r) == px(c%Period, r%Period)): a block at
	// the same place in the pattern as one made before, and of the same
	// size inside the raster, is not generated and compressed again. A
	// raster of 1e10 pixels then costs what one period of it does to
	// make, and, streamed to the file, no more memory. Each block is
	// still stored in its own place, as large as a file of those pixels
	// is, unless ShareBlocks stores it once.
	Period int
	// Sparse leaves out blocks whose pixels are all the NoData value (0
	// without one): offset and byte count 0, as GDAL writes them with
	// SPARSE_OK=TRUE. GDAL and package geotiff read such blocks as nodata;
	// libtiff on its own refuses them.
	Sparse bool
	// Tags replace the tags Write generates with the same ID, or add to
	// them; a Tag with a nil Value removes one.
	Tags []Tag
}

// Tag is a TIFF tag to write as given. Its type follows Value's: []uint8
// BYTE, string ASCII (NUL added), []uint16 SHORT, []uint32 LONG, []uint64
// LONG8 (BigTIFF), []float64 DOUBLE, []float32 FLOAT, []int8 SBYTE
// (standing for a type no reader expects).
type Tag struct {
	ID    uint16
	Value any
}

// TIFF tags Write generates.
const (
	TagImageWidth          = 256
	TagImageLength         = 257
	TagBitsPerSample       = 258
	TagCompression         = 259
	TagPhotometric         = 262
	TagStripOffsets        = 273
	TagSamplesPerPixel     = 277
	TagRowsPerStrip        = 278
	TagStripByteCounts     = 279
	TagPlanarConfiguration = 284
	TagPredictor           = 317
	TagTileWidth           = 322
	TagTileLength          = 323
	TagTileOffsets         = 324
	TagTileByteCounts      = 325
	TagSampleFormat        = 339
	TagModelPixelScale     = 33550
	TagModelTiepoint       = 33922
	TagModelTransformation = 34264
	TagGeoKeyDirectory     = 34735
	TagGDALNoData          = 42113
)

// GeoKeys returns a GeoKeyDirectory value declaring a geographic CRS with
// the given EPSG code (4326 for WGS 84) and PixelIsArea (or PixelIsPoint).
func GeoKeys(epsg uint16, pixelIsPoint bool) []uint16 {
	raster := uint16(1)
	if pixelIsPoint {
		raster = 2
	}
	return []uint16{
		1, 1, 0, 4, // version 1.1.0, 4 keys
		1024, 0, 1, 2, // GTModelTypeGeoKey: geographic
		1025, 0, 1, raster, // GTRasterTypeGeoKey
		2048, 0, 1, epsg, // GeographicTypeGeoKey
		2054, 0, 1, 9102, // GeogAngularUnitsGeoKey: degree
	}
}

// Encode returns the GeoTIFF Write would write.
func Encode(width, height int, px Pixels, o Options) ([]byte, error) {
	var b bytes.Buffer
	if err := Write(&b, width, height, px, o); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// MustEncode is Encode for tests: it fails tb on error.
func MustEncode(tb interface {
	Helper()
	Fatalf(string, ...any)
}, width, height int, px Pixels, o Options) []byte {
	tb.Helper()
	b, err := Encode(width, height, px, o)
	if err != nil {
		tb.Fatalf("geotifftest: encode %d x %d %+v: %v", width, height, o, err)
	}
	return b
}

// WriteFile writes the GeoTIFF to a new file at path.
func WriteFile(path string, width, height int, px Pixels, o Options) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := errors.Join(Write(bw, width, height, px, o), bw.Flush()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Write writes a width x height GeoTIFF of the given pixels to w.
func Write(w io.Writer, width, height int, px Pixels, o Options) error {
	if width <= 0 || height <= 0 {
		return fmt.Errorf("geotifftest: size %d x %d", width, height)
	}
	tiled := o.TileWidth > 0 && o.TileHeight > 0
	bw, bh := width, o.RowsPerStrip
	if tiled {
		bw, bh = o.TileWidth, o.TileHeight
	} else if bh <= 0 || bh > height {
		bh = height
	}
	if o.West == 0 && o.North == 0 && o.DX == 0 && o.DY == 0 {
		o.West, o.North, o.DX, o.DY = -80, 10, 0.00025, 0.00025
	}
	comp := o.Compression
	if comp == 0 {
		comp = geotiff.CompressionNone
	}

	sparse := -1
	if o.Sparse {
		sparse = 0
		if v, err := strconv.Atoi(o.NoData); err == nil && v >= 0 && v <= 255 {
			sparse = v
		}
	}
	blocks, index, err := encodeBlocks(width, height, bw, bh, tiled, px, comp, o.Predictor, o.ShareBlocks, o.Period, sparse)
	if err != nil {
		return err
	}
	t := &tiff{order: binary.LittleEndian, big: o.BigTIFF}
	if o.BigEndian {
		t.order = binary.BigEndian
	}
	offsetTag, countTag := uint16(TagStripOffsets), uint16(TagStripByteCounts)
	if tiled {
		offsetTag, countTag = TagTileOffsets, TagTileByteCounts
	}
	tie := []float64{0, 0, 0, o.West, o.North, 0}
	if o.PixelIsPoint {
		tie[3], tie[4] = o.West+o.DX/2, o.North-o.DY/2
	}
	tags := map[uint16]any{
		TagImageWidth:          []uint32{uint32(width)},
		TagImageLength:         []uint32{uint32(height)},
		TagBitsPerSample:       []uint16{8},
		TagCompression:         []uint16{uint16(comp)},
		TagPhotometric:         []uint16{1},
		TagSamplesPerPixel:     []uint16{1},
		TagPlanarConfiguration: []uint16{1},
		TagSampleFormat:        []uint16{1},
		TagModelPixelScale:     []float64{o.DX, o.DY, 0},
		TagModelTiepoint:       tie,
		TagGeoKeyDirectory:     GeoKeys(4326, o.PixelIsPoint),
		offsetTag:              placeholder{},
		countTag:               placeholder{},
	}
	if o.Predictor {
		tags[TagPredictor] = []uint16{2} // horizontal
	}
	if tiled {
		tags[TagTileWidth] = []uint32{uint32(bw)}
		tags[TagTileLength] = []uint32{uint32(bh)}
	} else {
		tags[TagRowsPerStrip] = []uint32{uint32(bh)}
	}
	if o.NoData != "" {
		tags[TagGDALNoData] = o.NoData
	}
	for _, tg := range o.Tags {
		if tg.Value == nil {
			delete(tags, tg.ID)
		} else {
			tags[tg.ID] = tg.Value
		}
	}

	// Block offsets and counts depend on where the data starts, which
	// depends on the size of the directory they are in: their size is
	// known first (a value per block), their values once laid out.
	n := len(index)
	blockTable := func() any {
		if o.BigTIFF {
			return make([]uint64, n)
		}
		return make([]uint32, n)
	}
	for _, id := range []uint16{offsetTag, countTag} {
		if _, ok := tags[id].(placeholder); ok {
			tags[id] = blockTable()
		}
	}
	generated := func(id uint16) bool {
		for _, tg := range o.Tags {
			if tg.ID == id {
				return false
			}
		}
		return true
	}
	dataStart, err := t.layout(tags)
	if err != nil {
		return err
	}
	// The blocks in the order stored: each once, or with a Period and
	// without ShareBlocks each block of the raster in its own place.
	// slot[i] is where block i of the raster is stored, -1 if sparse.
	var stored []int
	slot := make([]int, len(index))
	for i, k := range index {
		switch {
		case k < 0:
			slot[i] = -1
		case o.Period > 0 && !o.ShareBlocks:
			slot[i] = len(stored)
			stored = append(stored, k)
		default:
			slot[i] = k
		}
	}
	if o.Period <= 0 || o.ShareBlocks {
		stored = make([]int, len(blocks))
		for k := range stored {
			stored[k] = k
		}
	}
	offsets := make([]uint64, len(stored))
	pos := dataStart
	for j, k := range stored {
		offsets[j] = pos
		pos += uint64(len(blocks[k]))
		pos += pos & 1 // word-aligned, as TIFF 6.0 asks
	}
	if !o.BigTIFF && pos > math.MaxUint32 {
		return errors.New("geotifftest: the file exceeds 4 GiB: use BigTIFF")
	}
	for i, j := range slot {
		var off, cnt uint64 // a sparse block
		if j >= 0 {
			off, cnt = offsets[j], uint64(len(blocks[stored[j]]))
		}
		if generated(offsetTag) {
			setUint(tags[offsetTag], i, off)
		}
		if generated(countTag) {
			setUint(tags[countTag], i, cnt)
		}
	}
	if err := t.write(w, tags); err != nil {
		return err
	}
	var pad [1]byte
	for _, k := range stored {
		b := blocks[k]
		if _, err := w.Write(b); err != nil {
			return err
		}
		if len(b)&1 == 1 {
			if _, err := w.Write(pad[:]); err != nil {
				return err
			}
		}
	}
	return nil
}

type placeholder struct{}

func setUint(v any, i int, x uint64) {
	switch v := v.(type) {
	case []uint32:
		v[i] = uint32(x)
	case []uint64:
		v[i] = x
	}
}

// tiff lays out and writes a header and one IFD: header, directory, the
// values that do not fit in their entries, then (by the caller) the blocks.
type tiff struct {
	order interface {
		binary.ByteOrder
		binary.AppendByteOrder
	}
	big bool
}

type field struct {
	typ   uint16
	count uint64
	bytes []byte
}

func (t *tiff) field(v any) (field, error) {
	var f field
	o := t.order
	switch v := v.(type) {
	case []uint8:
		f = field{1, uint64(len(v)), slices.Clone(v)}
	case []int8:
		f = field{6, uint64(len(v)), nil}
		for _, x := range v {
			f.bytes = append(f.bytes, byte(x))
		}
	case string:
		f = field{2, uint64(len(v) + 1), append([]byte(v), 0)}
	case []uint16:
		f = field{3, uint64(len(v)), nil}
		for _, x := range v {
			f.bytes = o.AppendUint16(f.bytes, x)
		}
	case []uint32:
		f = field{4, uint64(len(v)), nil}
		for _, x := range v {
			f.bytes = o.AppendUint32(f.bytes, x)
		}
	case []uint64:
		f = field{16, uint64(len(v)), nil}
		for _, x := range v {
			f.bytes = o.AppendUint64(f.bytes, x)
		}
	case []float32:
		f = field{11, uint64(len(v)), nil}
		for _, x := range v {
			f.bytes = o.AppendUint32(f.bytes, math.Float32bits(x))
		}
	case []float64:
		f = field{12, uint64(len(v)), nil}
		for _, x := range v {
			f.bytes = o.AppendUint64(f.bytes, math.Float64bits(x))
		}
	default:
		return f, fmt.Errorf("geotifftest: cannot write a tag of %T", v)
	}
	return f, nil
}

func (t *tiff) sizes() (header, count, entry, inline, next uint64) {
	if t.big {
		return 16, 8, 20, 8, 8
	}
	return 8, 2, 12, 4, 4
}

// layout returns where the blocks start after the directory for tags.
func (t *tiff) layout(tags map[uint16]any) (uint64, error) {
	header, count, entry, inline, next := t.sizes()
	pos := header + count + uint64(len(tags))*entry + next
	for _, v := range tags {
		f, err := t.field(v)
		if err != nil {
			return 0, err
		}
		if n := uint64(len(f.bytes)); n > inline {
			pos += n + n&1
		}
	}
	return pos, nil
}

func (t *tiff) write(w io.Writer, tags map[uint16]any) error {
	header, _, entry, inline, next := t.sizes()
	o := t.order
	var b []byte
	if o == binary.BigEndian {
		b = append(b, "MM"...)
	} else {
		b = append(b, "II"...)
	}
	if t.big {
		b = o.AppendUint16(b, 43)
		b = o.AppendUint16(b, 8)
		b = o.AppendUint16(b, 0)
		b = o.AppendUint64(b, header)
		b = o.AppendUint64(b, uint64(len(tags)))
	} else {
		b = o.AppendUint16(b, 42)
		b = o.AppendUint32(b, uint32(header))
		b = o.AppendUint16(b, uint16(len(tags)))
	}
	ids := make([]uint16, 0, len(tags))
	for id := range tags {
		ids = append(ids, id)
	}
	slices.Sort(ids) // TIFF 6.0: entries in ascending order of tag
	valuesAt := uint64(len(b)) + uint64(len(ids))*entry + next
	var values []byte
	for _, id := range ids {
		f, err := t.field(tags[id])
		if err != nil {
			return err
		}
		b = o.AppendUint16(b, id)
		b = o.AppendUint16(b, f.typ)
		if t.big {
			b = o.AppendUint64(b, f.count)
		} else {
			b = o.AppendUint32(b, uint32(f.count))
		}
		var val [8]byte
		if uint64(len(f.bytes)) <= inline {
			copy(val[:], f.bytes)
		} else {
			at := valuesAt + uint64(len(values))
			if t.big {
				o.PutUint64(val[:], at)
			} else {
				o.PutUint32(val[:], uint32(at))
			}
			values = append(values, f.bytes...)
			if len(f.bytes)&1 == 1 {
				values = append(values, 0)
			}
		}
		b = append(b, val[:inline]...)
	}
	b = append(b, make([]byte, next)...) // no next IFD
	b = append(b, values...)
	_, err := w.Write(b)
	return err
}
