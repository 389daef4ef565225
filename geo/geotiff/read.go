package geotiff

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"golang.org/x/image/tiff/lzw"

	"github.com/eudr/eudr/geo/geotiff/internal/tifflzw"
)

// Bounds on how far compressed data can expand: Deflate's is 1032:1; one
// 12-bit LZW code expands to at most 4,094 bytes. A block that claims more
// pixels than its bytes could hold is refused by Open before anything is
// allocated for it.
const (
	maxDeflateRatio = 1032
	maxLZWRatio     = 4096
)

// Compressed blocks up to this size are read with one ReadAt; larger ones
// are streamed through a buffer of this size.
const maxInMemoryCompressed = 1 << 20

// ReadWindow decodes the pixels of win into dst, row by row
// (dst[r*win.Width+c] is pixel (win.Col+c, win.Row+r)). It decodes only the
// strips or tiles the window touches, through the file's cache: blocks
// small enough to cache are decoded whole and kept; larger ones (a
// single-strip file, say) are decompressed only up to the window's last
// row, a row at a time, and uncompressed ones are read in place. Sparse
// blocks (offset or byte count 0) read as the nodata value, or 0.
//
// The window must lie inside the raster and dst must hold its pixels: a
// window outside is an error, not a fill. A block whose data does not
// decode is an *Error with Reason CorruptBlock; a failure of the
// io.ReaderAt is returned wrapped; ctx is checked between blocks.
func (f *File) ReadWindow(ctx context.Context, win Window, dst []uint8) error {
	in := &f.info
	if win.Col < 0 || win.Row < 0 || win.Width <= 0 || win.Height <= 0 ||
		win.Width > in.Width-win.Col || win.Height > in.Height-win.Row {
		return fmt.Errorf("geotiff: window %+v is not inside the %d x %d raster", win, in.Width, in.Height)
	}
	if uint64(len(dst)) < uint64(win.Width)*uint64(win.Height) {
		return fmt.Errorf("geotiff: dst holds %d pixels, the %d x %d window needs %d", len(dst), win.Width, win.Height, win.Width*win.Height)
	}
	bw, bh := in.BlockWidth, in.BlockHeight
	for by := win.Row / bh; by <= (win.Row+win.Height-1)/bh; by++ {
		for bx := win.Col / bw; bx <= (win.Col+win.Width-1)/bw; bx++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			// The part of the window in this block, in block coordinates.
			c0, r0 := max(win.Col-bx*bw, 0), max(win.Row-by*bh, 0)
			c1, r1 := min(win.Col+win.Width-bx*bw, bw), min(win.Row+win.Height-by*bh, bh)
			out := dst[(by*bh+r0-win.Row)*win.Width+bx*bw+c0-win.Col:]
			if err := f.readBlock(by*in.BlocksAcross+bx, c0, r0, c1, r1, out, win.Width); err != nil {
				return err
			}
		}
	}
	return nil
}

// readBlock copies columns c0..c1-1 of rows r0..r1-1 of block i to out, a
// row every stride bytes.
func (f *File) readBlock(i, c0, r0, c1, r1 int, out []uint8, stride int) error {
	w, h := f.blockSize(i)
	size := int64(w) * int64(h)
	switch {
	case f.counts[i] == 0:
		for r := range r1 - r0 {
			row := out[r*stride : r*stride+c1-c0]
			for j := range row {
				row[j] = f.info.NoData // 0 without nodata
			}
		}
		return nil
	case f.info.Compression == CompressionNone:
		return f.readRaw(i, w, c0, r0, c1, r1, out, stride)
	case !f.cache.keeps(size):
		return f.stream(i, w, c0, r0, c1, r1, out, stride)
	}
	return f.cache.read(blockKey{f.id, i}, size,
		func(buf []byte) ([]byte, error) { return f.decode(i, w, h, buf) },
		func(data []byte) {
			for r := r0; r < r1; r++ {
				copy(out[(r-r0)*stride:], data[r*w+c0:r*w+c1])
			}
		})
}

// readRaw reads the window's part of an uncompressed block in place: with
// one ReadAt when its rows span at most maxInMemoryCompressed bytes, else
// one per row straight into out.
func (f *File) readRaw(i, w, c0, r0, c1, r1 int, out []uint8, stride int) error {
	base := int64(f.offsets[i])
	first, last := int64(r0*w+c0), int64((r1-1)*w+c1)
	if last-first <= maxInMemoryCompressed {
		buf := make([]byte, last-first)
		if err := readAt(f.r, buf, base+first); err != nil {
			return fmt.Errorf("read block %d at %d: %w", i, base+first, err)
		}
		for r := r0; r < r1; r++ {
			copy(out[(r-r0)*stride:], buf[int64(r*w+c0)-first:][:c1-c0])
		}
		return nil
	}
	for r := r0; r < r1; r++ {
		if err := readAt(f.r, out[(r-r0)*stride:][:c1-c0], base+int64(r*w+c0)); err != nil {
			return fmt.Errorf("read block %d at %d: %w", i, base+int64(r*w+c0), err)
		}
	}
	return nil
}

// decode decompresses block i, w x h pixels, whole, into buf when it holds
// w x h bytes (every one of which it overwrites), else into a new buffer.
func (f *File) decode(i, w, h int, buf []byte) ([]byte, error) {
	if len(buf) != w*h {
		buf = make([]byte, w*h)
	}
	if f.info.Compression == CompressionLZW && f.counts[i] <= maxInMemoryCompressed && len(buf) <= tifflzw.MaxDecode {
		src := compressedScratch.Get().(*[]byte)
		defer compressedScratch.Put(src)
		if err := f.compressedInto(i, src); err != nil {
			return nil, err
		}
		if err := tifflzw.Decode(buf, *src); err != nil {
			return nil, f.corrupt(i, err)
		}
	} else {
		rd, err := f.decompressor(i)
		if err != nil {
			return nil, err
		}
		defer rd.Close()
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, f.corrupt(i, err)
		}
		// Reading on to the end checks zlib's Adler-32 (LZW has no check).
		// Trailing data or a missing end code is tolerated, as by libtiff.
		var one [1]byte
		if _, err := rd.Read(one[:]); errors.Is(err, zlib.ErrChecksum) {
			return nil, f.corrupt(i, err)
		}
	}
	if f.info.Predictor == PredictorHorizontal {
		for r := 0; r < h; r++ {
			undoHorizontal(buf[r*w : (r+1)*w])
		}
	}
	return buf, nil
}

// stream decompresses block i, w pixels wide, only up to row r1, a row at
// a time, keeping nothing: for blocks too large to cache.
func (f *File) stream(i, w, c0, r0, c1, r1 int, out []uint8, stride int) error {
	rd, err := f.decompressor(i)
	if err != nil {
		return err
	}
	defer rd.Close()
	// The horizontal predictor starts again on every row, so rows before
	// the window need no undoing.
	if _, err := io.CopyN(io.Discard, rd, int64(r0)*int64(w)); err != nil {
		return f.corrupt(i, err)
	}
	row := make([]byte, w)
	for r := r0; r < r1; r++ {
		if _, err := io.ReadFull(rd, row); err != nil {
			return f.corrupt(i, err)
		}
		if f.info.Predictor == PredictorHorizontal {
			undoHorizontal(row)
		}
		copy(out[(r-r0)*stride:], row[c0:c1])
	}
	return nil
}

// compressed reads block i's bytes (at most maxInMemoryCompressed), and
// refuses old-style LZW.
func (f *File) compressed(i int) ([]byte, error) {
	var buf []byte
	err := f.compressedInto(i, &buf)
	return buf, err
}

// compressedInto is compressed reading into *buf, grown if it is too
// small.
func (f *File) compressedInto(i int, buf *[]byte) error {
	off, n := int64(f.offsets[i]), int64(f.counts[i])
	if int64(cap(*buf)) < n {
		*buf = make([]byte, n)
	}
	*buf = (*buf)[:n]
	if err := readAt(f.r, *buf, off); err != nil {
		return fmt.Errorf("read block %d at %d: %w", i, off, err)
	}
	return f.checkLZW(i, *buf)
}

// compressedScratch holds buffers of blocks' compressed bytes read to be
// decoded whole: they are not needed once the block is, unlike the block
// itself, which the cache keeps.
var compressedScratch = sync.Pool{New: func() any { return new([]byte) }}

// checkLZW applies libtiff's test for LZW written by its versions before
// 1993 (LSB first, codes widened late), which no current tool writes.
func (f *File) checkLZW(i int, head []byte) error {
	if f.info.Compression == CompressionLZW && len(head) >= 2 && head[0] == 0 && head[1]&1 == 1 {
		return errorf(CorruptBlock, "block %d is in the old-style (pre-1993 libtiff) LZW format, which is not supported: re-encode the file (gdal_translate -co COMPRESS=LZW)", i)
	}
	return nil
}

// decompressor returns a reader of block i's decompressed bytes.
func (f *File) decompressor(i int) (io.ReadCloser, error) {
	var src interface {
		io.Reader
		io.ByteReader
	}
	if n := f.counts[i]; n <= maxInMemoryCompressed {
		buf, err := f.compressed(i)
		if err != nil {
			return nil, err
		}
		src = bytes.NewReader(buf)
	} else {
		off := int64(f.offsets[i])
		br := bufio.NewReaderSize(readErrors{io.NewSectionReader(f.r, off, int64(n)), i, off}, maxInMemoryCompressed)
		head, _ := br.Peek(2)
		if err := f.checkLZW(i, head); err != nil {
			return nil, err
		}
		src = br
	}
	if f.info.Compression == CompressionLZW {
		return lzw.NewReader(src, lzw.MSB, 8), nil
	}
	zr, err := zlib.NewReader(src) // Deflate
	if err != nil {
		return nil, f.corrupt(i, err)
	}
	return zr, nil
}

// corrupt explains a block that does not decode.
func (f *File) corrupt(i int, err error) error {
	var ge *Error
	var re *readError
	switch {
	case errors.As(err, &ge):
		return err
	case errors.As(err, &re):
		return re.err
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, tifflzw.ErrShort):
		return errorf(CorruptBlock, "block %d (%d bytes at offset %d) decompresses to fewer bytes than its pixels: the file is corrupt", i, f.counts[i], f.offsets[i])
	}
	return errorf(CorruptBlock, "block %d (%d bytes at offset %d) does not decode as %v: %v", i, f.counts[i], f.offsets[i], f.info.Compression, err)
}

// readErrors marks the failures of the io.ReaderAt under a decompressor,
// so that they are not taken for corrupt data.
type readErrors struct {
	r     io.Reader
	block int
	off   int64
}

func (r readErrors) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = &readError{fmt.Errorf("read block %d at %d: %w", r.block, r.off, err)}
	}
	return n, err
}

type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }

// undoHorizontal turns differences from the left neighbour back into
// values (TIFF 6.0 section 14), in place, for 8-bit samples (the only
// ones Open accepts). The running value is kept in a local variable:
// written as row[j] += row[j-1], each step waits for the store of the
// one before to be loaded back, which makes it several times slower.
// Eight differences of 0 at once, as most of a loss-year or forest row
// is, are the running value eight times.
func undoHorizontal(row []byte) {
	if len(row) == 0 {
		return
	}
	v := row[0]
	rest := row[1:]
	for len(rest) >= 8 {
		if binary.LittleEndian.Uint64(rest) == 0 {
			binary.LittleEndian.PutUint64(rest, uint64(v)*0x0101010101010101)
		} else {
			for j, d := range rest[:8] {
				v += d
				rest[j] = v
			}
		}
		rest = rest[8:]
	}
	for j, d := range rest {
		v += d
		rest[j] = v
	}
}
