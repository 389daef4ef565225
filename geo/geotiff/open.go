package geotiff

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
)

// Limits on what Open accepts. They are far above the datasets this package
// is for (a Hansen tile is 40,000 pixels square; a JRC GFC2020 tile about
// 112,000) and keep a hostile header from costing more than its file's size
// in memory.
const (
	// MaxDimension is the largest width or height, in pixels, of a raster
	// or of one of its blocks.
	MaxDimension = 1 << 24
	// MaxBlocks is the largest number of strips or tiles.
	MaxBlocks = 1 << 22
)

// Compression is the TIFF Compression tag's value.
type Compression uint16

// Compressions this package reads.
const (
	CompressionNone          Compression = 1
	CompressionLZW           Compression = 5
	CompressionDeflate       Compression = 8     // "Adobe Deflate", what GDAL writes
	CompressionDeflateLegacy Compression = 32946 // the older code for the same zlib data
)

var compressionNames = map[Compression]string{
	CompressionNone: "none", 2: "CCITT RLE", 3: "CCITT Group 3", 4: "CCITT Group 4",
	CompressionLZW: "LZW", 6: "old-style JPEG", 7: "JPEG", CompressionDeflate: "Deflate",
	32773: "PackBits", CompressionDeflateLegacy: "Deflate", 34712: "JPEG 2000", 34887: "LERC",
	34925: "LZMA", 50000: "ZSTD", 50001: "WebP", 50002: "JPEG XL",
}

// String returns the compression's name and code, like "LZW (5)".
func (c Compression) String() string {
	if s, ok := compressionNames[c]; ok {
		return fmt.Sprintf("%s (%d)", s, uint16(c))
	}
	return fmt.Sprintf("unknown (%d)", uint16(c))
}

// Predictor is the TIFF Predictor tag's value.
type Predictor uint16

// Predictors this package reads.
const (
	PredictorNone       Predictor = 1
	PredictorHorizontal Predictor = 2 // each sample stored as the difference from its left neighbour
)

// String returns the predictor's name and code, like "horizontal (2)".
func (p Predictor) String() string {
	switch p {
	case PredictorNone:
		return "none (1)"
	case PredictorHorizontal:
		return "horizontal (2)"
	case 3:
		return "floating point (3)"
	}
	return fmt.Sprintf("unknown (%d)", uint16(p))
}

// Info describes an open file.
type Info struct {
	// Width and Height are the raster's size in pixels.
	Width, Height int
	// Tiled is true for a tiled file, false for a striped one.
	Tiled bool
	// BlockWidth and BlockHeight are the size of a tile, or of a strip
	// (the raster's width by RowsPerStrip).
	BlockWidth, BlockHeight int
	// BlocksAcross and BlocksDown count the blocks.
	BlocksAcross, BlocksDown int
	Compression              Compression
	// Predictor is PredictorNone for an uncompressed file whatever its tag
	// says (as libtiff, which applies predictors in the codecs only).
	Predictor Predictor
	BigTIFF   bool
	BigEndian bool
	// NoData is the GDAL_NODATA value when HasNoData is true. A GDAL_NODATA
	// that no uint8 can equal (-9999, 0.5, nan) leaves HasNoData false.
	NoData    uint8
	HasNoData bool
	Georef    Georef
}

// Options tune a File.
type Options struct {
	// Cache keeps decoded blocks. Files opened with the same Cache share its
	// byte budget; nil gives the file a cache of its own of
	// DefaultCacheBytes.
	Cache *Cache
}

// File is an open single-band uint8 GeoTIFF. It reads blocks through the
// io.ReaderAt it was opened with, which it does not close. Its methods are
// safe for concurrent use.
type File struct {
	r       io.ReaderAt
	size    int64
	info    Info
	offsets []uint64
	counts  []uint64
	cache   *Cache
	id      uint64 // this file's blocks in the cache
}

var fileIDs atomic.Uint64

// Open reads the header of a GeoTIFF of size bytes and returns a File that
// decodes windows of it on demand. Anything it cannot read correctly is
// refused with an *Error naming what and why; failures of r come back
// wrapped. Open reads only the first image (IFD) and the values of the tags
// it needs; it allocates nothing in proportion to a size field before
// checking that the file holds what that size implies.
func Open(r io.ReaderAt, size int64) (*File, error) {
	return OpenOptions(r, size, Options{})
}

// OpenOptions is Open with options.
func OpenOptions(r io.ReaderAt, size int64, opts Options) (*File, error) {
	d, err := readIFD(r, size)
	if err != nil {
		return nil, err
	}
	f := &File{r: r, size: size, cache: opts.Cache, id: fileIDs.Add(1)}
	f.info.BigTIFF = d.big
	f.info.BigEndian = d.order == binary.BigEndian
	if err := f.readSamples(d); err != nil {
		return nil, err
	}
	if err := f.readLayout(d); err != nil {
		return nil, err
	}
	if f.info.Georef, err = readGeoref(d, f.info.Width, f.info.Height); err != nil {
		return nil, err
	}
	if err := f.readNoData(d); err != nil {
		return nil, err
	}
	if f.cache == nil {
		f.cache = NewCache(DefaultCacheBytes)
	}
	return f, nil
}

// Info describes the file.
func (f *File) Info() Info { return f.info }

// Georef places the file's pixels on longitude and latitude.
func (f *File) Georef() Georef { return f.info.Georef }

// readSamples checks that pixels are single 8-bit unsigned samples that
// this package can decompress.
func (f *File) readSamples(d *ifd) error {
	w, err := d.uint(tagImageWidth, 0)
	if err != nil {
		return err
	}
	h, err := d.uint(tagImageLength, 0)
	if err != nil {
		return err
	}
	if w == 0 || h == 0 {
		return errorf(Malformed, "the image is %d x %d pixels (ImageWidth and ImageLength are required and positive)", w, h)
	}
	if w > MaxDimension || h > MaxDimension {
		return errorf(TooLarge, "the image is %d x %d pixels: at most %d on a side is supported", w, h, MaxDimension)
	}
	f.info.Width, f.info.Height = int(w), int(h)

	spp, err := d.uint(tagSamplesPerPixel, 1)
	if err != nil {
		return err
	}
	if spp != 1 {
		return errorf(UnsupportedSamples, "the image has %d samples (bands) per pixel: only single-band rasters are supported, extract the band first (gdal_translate -b 1)", spp)
	}
	bps, err := d.uint(tagBitsPerSample, 1)
	if err != nil {
		return err
	}
	if bps != 8 {
		return errorf(UnsupportedSamples, "samples are %d-bit: only 8-bit (uint8) rasters are supported", bps)
	}
	switch sf, err := d.uint(tagSampleFormat, 1); {
	case err != nil:
		return err
	case sf == 2:
		return errorf(UnsupportedSamples, "samples are signed integers (SampleFormat 2): only unsigned 8-bit (uint8) rasters are supported")
	case sf == 3:
		return errorf(UnsupportedSamples, "samples are floating point (SampleFormat 3): only unsigned 8-bit (uint8) rasters are supported")
	case sf != 1:
		return errorf(UnsupportedSamples, "SampleFormat is %d: only unsigned 8-bit (uint8) rasters are supported", sf)
	}
	switch pi, err := d.uint(tagPhotometric, 1); {
	case err != nil:
		return err
	case pi > 1 && pi != 3: // 0, 1: grey levels; 3: palette indices. All are the stored values.
		return errorf(UnsupportedLayout, "PhotometricInterpretation is %d: only grey-scale (0, 1) or palette (3) single-band rasters are supported", pi)
	}
	switch fo, err := d.uint(tagFillOrder, 1); {
	case err != nil:
		return err
	case fo != 1:
		return errorf(UnsupportedLayout, "FillOrder is %d: only 1 (most significant bit first) is supported", fo)
	}
	switch pc, err := d.uint(tagPlanarConfiguration, 1); {
	case err != nil:
		return err
	case pc != 1 && pc != 2: // the same layout for one sample
		return errorf(UnsupportedLayout, "PlanarConfiguration is %d, want 1 or 2", pc)
	}

	c, err := d.uint(tagCompression, 1)
	if err != nil {
		return err
	}
	switch c {
	case uint64(CompressionNone), uint64(CompressionLZW), uint64(CompressionDeflate), uint64(CompressionDeflateLegacy):
		f.info.Compression = Compression(c)
	default:
		name := fmt.Sprint(c)
		if c <= math.MaxUint16 {
			name = Compression(c).String()
		}
		return errorf(UnsupportedCompression, "compression %s is not supported: use none, LZW or Deflate (gdal_translate -co COMPRESS=LZW)", name)
	}
	p, err := d.uint(tagPredictor, 1)
	if err != nil {
		return err
	}
	f.info.Predictor = PredictorNone
	if f.info.Compression == CompressionNone {
		return nil // libtiff applies predictors in its codecs only
	}
	switch p {
	case uint64(PredictorNone), uint64(PredictorHorizontal):
		f.info.Predictor = Predictor(p)
	default:
		name := fmt.Sprint(p)
		if p <= math.MaxUint16 {
			name = Predictor(p).String()
		}
		return errorf(UnsupportedPredictor, "predictor %s is not supported: use none or horizontal (gdal_translate -co PREDICTOR=2)", name)
	}
	return nil
}

// readLayout reads the strip or tile layout and checks every block against
// the file.
func (f *File) readLayout(d *ifd) error {
	in := &f.info
	offTag, cntTag := uint16(tagStripOffsets), uint16(tagStripByteCounts)
	if d.has(tagTileWidth) || d.has(tagTileLength) {
		in.Tiled = true
		offTag, cntTag = tagTileOffsets, tagTileByteCounts
		tw, err := d.uint(tagTileWidth, 0)
		if err != nil {
			return err
		}
		tl, err := d.uint(tagTileLength, 0)
		if err != nil {
			return err
		}
		if tw == 0 || tl == 0 {
			return errorf(Malformed, "the tiles are %d x %d pixels (TileWidth and TileLength are required and positive)", tw, tl)
		}
		if tw > MaxDimension || tl > MaxDimension {
			return errorf(TooLarge, "the tiles are %d x %d pixels: at most %d on a side is supported", tw, tl, MaxDimension)
		}
		in.BlockWidth, in.BlockHeight = int(tw), int(tl)
	} else {
		rps, err := d.uint(tagRowsPerStrip, math.MaxUint32)
		if err != nil {
			return err
		}
		if rps == 0 {
			return errorf(Malformed, "RowsPerStrip (278) is 0")
		}
		in.BlockWidth, in.BlockHeight = in.Width, int(min(rps, uint64(in.Height)))
	}
	in.BlocksAcross = (in.Width + in.BlockWidth - 1) / in.BlockWidth
	in.BlocksDown = (in.Height + in.BlockHeight - 1) / in.BlockHeight
	n := uint64(in.BlocksAcross) * uint64(in.BlocksDown)
	if n > MaxBlocks {
		return errorf(TooLarge, "the image has %d blocks: at most %d are supported, re-tile it with larger blocks (gdal_translate -co TILED=YES)", n, MaxBlocks)
	}
	for _, t := range []uint16{offTag, cntTag} {
		e, ok := d.entries[t]
		if !ok {
			return errorf(Malformed, "%s is missing", tagName(t))
		}
		if e.count < n {
			return errorf(Malformed, "%s has %d values for %d blocks", tagName(t), e.count, n)
		}
	}
	var err error
	if f.offsets, err = d.uints(offTag, n); err != nil {
		return err
	}
	if f.counts, err = d.uints(cntTag, n); err != nil {
		return err
	}
	maxRatio := map[Compression]uint64{CompressionNone: 1, CompressionLZW: maxLZWRatio,
		CompressionDeflate: maxDeflateRatio, CompressionDeflateLegacy: maxDeflateRatio}[in.Compression]
	for i := range f.offsets {
		off, cnt := f.offsets[i], f.counts[i]
		if cnt == 0 || off == 0 { // sparse (GDAL's SPARSE_OK): read as nodata, or 0
			f.counts[i] = 0
			continue
		}
		if !d.fits(off, cnt) {
			return errorf(Malformed, "block %d (%d bytes at offset %d) extends past the end of the file (size %d): the file is truncated", i, cnt, off, f.size)
		}
		_, h := f.blockSize(i)
		need := uint64(in.BlockWidth) * uint64(h)
		if in.Compression == CompressionNone && cnt < need {
			return errorf(Malformed, "block %d holds %d bytes, but its pixels need %d: the file is truncated or corrupt", i, cnt, need)
		}
		if need/maxRatio > cnt {
			return errorf(Malformed, "block %d holds %d compressed bytes, too few for its %d pixels: the file is corrupt", i, cnt, need)
		}
	}
	return nil
}

// blockSize returns the stored size of block i: tiles are whole even at the
// raster's edges, the last strip has only the rows left.
func (f *File) blockSize(i int) (w, h int) {
	in := &f.info
	if in.Tiled {
		return in.BlockWidth, in.BlockHeight
	}
	return in.BlockWidth, min(in.BlockHeight, in.Height-i*in.BlockHeight)
}

// readNoData parses GDAL_NODATA, the text of a number.
func (f *File) readNoData(d *ifd) error {
	s, ok, err := d.ascii(tagGDALNoData, 256)
	if err != nil || !ok {
		return err
	}
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errorf(Malformed, "GDAL_NODATA (42113) is %q, not a number", s)
	}
	if v >= 0 && v <= 255 && v == math.Trunc(v) {
		f.info.NoData, f.info.HasNoData = uint8(v), true
	}
	return nil
}
