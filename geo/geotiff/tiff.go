package geotiff

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// TIFF tags this package reads (TIFF 6.0 section 8 and appendix A; GeoTIFF
// 1.1 section 7.1; GDAL for GDAL_NODATA).
const (
	tagImageWidth          = 256
	tagImageLength         = 257
	tagBitsPerSample       = 258
	tagCompression         = 259
	tagPhotometric         = 262
	tagFillOrder           = 266
	tagStripOffsets        = 273
	tagSamplesPerPixel     = 277
	tagRowsPerStrip        = 278
	tagStripByteCounts     = 279
	tagPlanarConfiguration = 284
	tagPredictor           = 317
	tagTileWidth           = 322
	tagTileLength          = 323
	tagTileOffsets         = 324
	tagTileByteCounts      = 325
	tagSampleFormat        = 339
	tagModelPixelScale     = 33550
	tagModelTiepoint       = 33922
	tagModelTransformation = 34264
	tagGeoKeyDirectory     = 34735
	tagGeoDoubleParams     = 34736
	tagGDALNoData          = 42113
)

var tagNames = map[uint16]string{
	tagImageWidth: "ImageWidth", tagImageLength: "ImageLength", tagBitsPerSample: "BitsPerSample",
	tagCompression: "Compression", tagPhotometric: "PhotometricInterpretation", tagFillOrder: "FillOrder",
	tagStripOffsets: "StripOffsets", tagSamplesPerPixel: "SamplesPerPixel", tagRowsPerStrip: "RowsPerStrip",
	tagStripByteCounts: "StripByteCounts", tagPlanarConfiguration: "PlanarConfiguration",
	tagPredictor: "Predictor", tagTileWidth: "TileWidth", tagTileLength: "TileLength",
	tagTileOffsets: "TileOffsets", tagTileByteCounts: "TileByteCounts", tagSampleFormat: "SampleFormat",
	tagModelPixelScale: "ModelPixelScale", tagModelTiepoint: "ModelTiepoint",
	tagModelTransformation: "ModelTransformation", tagGeoKeyDirectory: "GeoKeyDirectory",
	tagGeoDoubleParams: "GeoDoubleParams", tagGDALNoData: "GDAL_NODATA",
}

func tagName(t uint16) string {
	if s, ok := tagNames[t]; ok {
		return fmt.Sprintf("%s (%d)", s, t)
	}
	return fmt.Sprintf("tag %d", t)
}

// TIFF field types (TIFF 6.0 section 2; BigTIFF adds 16-18).
const (
	typeByte      = 1
	typeASCII     = 2
	typeShort     = 3
	typeLong      = 4
	typeRational  = 5
	typeSByte     = 6
	typeUndefined = 7
	typeSShort    = 8
	typeSLong     = 9
	typeSRational = 10
	typeFloat     = 11
	typeDouble    = 12
	typeIFD       = 13
	typeLong8     = 16
	typeSLong8    = 17
	typeIFD8      = 18
)

var typeSizes = map[uint16]uint64{
	typeByte: 1, typeASCII: 1, typeShort: 2, typeLong: 4, typeRational: 8, typeSByte: 1,
	typeUndefined: 1, typeSShort: 2, typeSLong: 4, typeSRational: 8, typeFloat: 4, typeDouble: 8,
	typeIFD: 4, typeLong8: 8, typeSLong8: 8, typeIFD8: 8,
}

// maxEntries bounds the tags of one IFD (classic TIFF cannot have more).
const maxEntries = 1<<16 - 1

// entry is one IFD entry: its value field is kept raw (4 bytes in classic
// TIFF, 8 in BigTIFF) and read by the value methods of ifd.
type entry struct {
	tag, typ uint16
	count    uint64
	field    [8]byte
}

// ifd is the first image file directory of a file, with what is needed to
// read the values of its entries.
type ifd struct {
	r       io.ReaderAt
	size    int64
	order   binary.ByteOrder
	big     bool
	entries map[uint16]entry
}

// readIFD reads the header and the first IFD's entries (not their values).
func readIFD(r io.ReaderAt, size int64) (*ifd, error) {
	if size < 8 {
		return nil, errorf(NotTIFF, "the file is %d bytes: too short for a TIFF header", size)
	}
	var h [16]byte
	n := 16
	if size < 16 {
		n = 8
	}
	if err := readAt(r, h[:n], 0); err != nil {
		return nil, fmt.Errorf("read header: %w", err)
	}
	d := &ifd{r: r, size: size}
	switch string(h[:2]) {
	case "II":
		d.order = binary.LittleEndian
	case "MM":
		d.order = binary.BigEndian
	default:
		return nil, errorf(NotTIFF, "the file starts with %q, not II or MM: it is not a TIFF file", h[:2])
	}
	var off uint64
	switch v := d.order.Uint16(h[2:]); v {
	case 42:
		off = uint64(d.order.Uint32(h[4:]))
	case 43:
		if n < 16 || d.order.Uint16(h[4:]) != 8 || d.order.Uint16(h[6:]) != 0 {
			return nil, errorf(Malformed, "BigTIFF header is malformed (offset size %d, want 8)", d.order.Uint16(h[4:]))
		}
		d.big = true
		off = d.order.Uint64(h[8:])
	default:
		return nil, errorf(NotTIFF, "TIFF version %d: not TIFF (42) or BigTIFF (43)", v)
	}
	if off == 0 {
		return nil, errorf(Malformed, "the file has no image directory (first IFD offset is 0)")
	}

	countSize, entrySize := uint64(2), uint64(12)
	if d.big {
		countSize, entrySize = 8, 20
	}
	if !d.fits(off, countSize) {
		return nil, errorf(Malformed, "the first image directory at offset %d is outside the file (size %d): the file is truncated", off, size)
	}
	var cb [8]byte
	if err := readAt(r, cb[:countSize], int64(off)); err != nil {
		return nil, fmt.Errorf("read IFD at %d: %w", off, err)
	}
	var count uint64
	if d.big {
		count = d.order.Uint64(cb[:])
	} else {
		count = uint64(d.order.Uint16(cb[:]))
	}
	if count == 0 || count > maxEntries {
		return nil, errorf(Malformed, "the first image directory has %d entries", count)
	}
	if !d.fits(off+countSize, count*entrySize) {
		return nil, errorf(Malformed, "the first image directory (%d entries at offset %d) extends past the end of the file (size %d): the file is truncated", count, off, size)
	}
	buf := make([]byte, count*entrySize)
	if err := readAt(r, buf, int64(off+countSize)); err != nil {
		return nil, fmt.Errorf("read IFD at %d: %w", off, err)
	}
	d.entries = make(map[uint16]entry, count)
	for i := uint64(0); i < count; i++ {
		b := buf[i*entrySize:]
		e := entry{tag: d.order.Uint16(b), typ: d.order.Uint16(b[2:])}
		if d.big {
			e.count = d.order.Uint64(b[4:])
			copy(e.field[:], b[12:20])
		} else {
			e.count = uint64(d.order.Uint32(b[4:]))
			copy(e.field[:], b[8:12])
		}
		if _, dup := d.entries[e.tag]; !dup { // the first one wins, as in libtiff
			d.entries[e.tag] = e
		}
	}
	return d, nil
}

// fits reports whether n bytes at off lie inside the file, without overflow.
func (d *ifd) fits(off, n uint64) bool {
	s := uint64(d.size)
	return off <= s && n <= s-off
}

func (d *ifd) has(tag uint16) bool {
	_, ok := d.entries[tag]
	return ok
}

// data returns the bytes of the first n values of e, after checking that
// they lie inside the file (before allocating anything).
func (d *ifd) data(e entry, n uint64) ([]byte, error) {
	size := typeSizes[e.typ]
	if size == 0 {
		return nil, errorf(Malformed, "%s has unknown field type %d", tagName(e.tag), e.typ)
	}
	if n > e.count {
		n = e.count
	}
	inline := uint64(4)
	if d.big {
		inline = 8
	}
	if e.count <= inline/size { // the whole value fits in the entry
		return e.field[:n*size], nil
	}
	var off uint64
	if d.big {
		off = d.order.Uint64(e.field[:])
	} else {
		off = uint64(d.order.Uint32(e.field[:]))
	}
	if n > uint64(d.size)/size || !d.fits(off, n*size) { // the first test keeps n*size from overflowing
		return nil, errorf(Malformed, "%s: %d values at offset %d extend past the end of the file (size %d): the file is truncated or corrupt", tagName(e.tag), e.count, off, d.size)
	}
	buf := make([]byte, n*size)
	if err := readAt(d.r, buf, int64(off)); err != nil {
		return nil, fmt.Errorf("read %s at %d: %w", tagName(e.tag), off, err)
	}
	return buf, nil
}

// uints returns up to max values of an unsigned integer tag (BYTE, SHORT,
// LONG, LONG8, IFD, IFD8), or nil if the tag is absent.
func (d *ifd) uints(tag uint16, max uint64) ([]uint64, error) {
	e, ok := d.entries[tag]
	if !ok {
		return nil, nil
	}
	switch e.typ {
	case typeByte, typeShort, typeLong, typeLong8, typeIFD, typeIFD8:
	default:
		return nil, errorf(Malformed, "%s has field type %d, want an unsigned integer", tagName(tag), e.typ)
	}
	if e.count == 0 {
		return nil, errorf(Malformed, "%s has no values", tagName(tag))
	}
	b, err := d.data(e, max)
	if err != nil {
		return nil, err
	}
	size := typeSizes[e.typ]
	v := make([]uint64, len(b)/int(size))
	for i := range v {
		switch size {
		case 1:
			v[i] = uint64(b[i])
		case 2:
			v[i] = uint64(d.order.Uint16(b[2*i:]))
		case 4:
			v[i] = uint64(d.order.Uint32(b[4*i:]))
		default:
			v[i] = d.order.Uint64(b[8*i:])
		}
	}
	return v, nil
}

// uint returns the single value of an unsigned integer tag, or def if the
// tag is absent. Of a tag with several values (BitsPerSample has one per
// sample) every value must be the same.
func (d *ifd) uint(tag uint16, def uint64) (uint64, error) {
	v, err := d.uints(tag, 16)
	if err != nil || v == nil {
		return def, err
	}
	for _, x := range v[1:] {
		if x != v[0] {
			return 0, errorf(Malformed, "%s has different values (%d, %d) where one is expected", tagName(tag), v[0], x)
		}
	}
	return v[0], nil
}

// floats returns up to max values of a DOUBLE (or FLOAT) tag, or nil if the
// tag is absent.
func (d *ifd) floats(tag uint16, max uint64) ([]float64, error) {
	e, ok := d.entries[tag]
	if !ok {
		return nil, nil
	}
	if e.typ != typeDouble && e.typ != typeFloat {
		return nil, errorf(Malformed, "%s has field type %d, want DOUBLE", tagName(tag), e.typ)
	}
	b, err := d.data(e, max)
	if err != nil {
		return nil, err
	}
	if e.typ == typeFloat {
		v := make([]float64, len(b)/4)
		for i := range v {
			v[i] = float64(math.Float32frombits(d.order.Uint32(b[4*i:])))
		}
		return v, nil
	}
	v := make([]float64, len(b)/8)
	for i := range v {
		v[i] = math.Float64frombits(d.order.Uint64(b[8*i:]))
	}
	return v, nil
}

// ascii returns an ASCII tag's text up to its first NUL, or "", false if the
// tag is absent.
func (d *ifd) ascii(tag uint16, max uint64) (string, bool, error) {
	e, ok := d.entries[tag]
	if !ok {
		return "", false, nil
	}
	if e.typ != typeASCII {
		return "", false, errorf(Malformed, "%s has field type %d, want ASCII", tagName(tag), e.typ)
	}
	if e.count > max {
		return "", false, errorf(Malformed, "%s is %d characters long (at most %d expected)", tagName(tag), e.count, max)
	}
	b, err := d.data(e, max)
	if err != nil {
		return "", false, err
	}
	for i, c := range b {
		if c == 0 {
			b = b[:i]
			break
		}
	}
	return string(b), true, nil
}

// readAt fills p from r at off. A ReaderAt may answer a read that ends at
// the end of its data with io.EOF as well as the bytes: that is success.
func readAt(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}
