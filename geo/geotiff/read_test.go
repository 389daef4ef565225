package geotiff_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
)

// TestReadWindow_RoundTrip writes the pattern in every variant and reads
// windows inside one block, across block edges, at the raster's edges, of
// one pixel and of the whole raster, through a cache that keeps blocks and
// through none (streaming every block).
func TestReadWindow_RoundTrip(t *testing.T) {
	const width, height = 301, 203 // neither a multiple of any block size
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			b := geotifftest.MustEncode(t, width, height, pattern, v.opts)
			for _, cache := range []struct {
				name  string
				cache *geotiff.Cache
			}{{"cached", nil}, {"streamed", geotiff.NewCache(0)}} {
				t.Run(cache.name, func(t *testing.T) {
					f := mustOpen(t, b, geotiff.Options{Cache: cache.cache})
					in := f.Info()
					if in.Width != width || in.Height != height || in.Compression != compressionOf(v.opts) {
						t.Fatalf("info %+v, want %d x %d %v", in, width, height, compressionOf(v.opts))
					}
					if in.BigTIFF != v.opts.BigTIFF || in.BigEndian != v.opts.BigEndian {
						t.Fatalf("info BigTIFF %v BigEndian %v, want %v %v", in.BigTIFF, in.BigEndian, v.opts.BigTIFF, v.opts.BigEndian)
					}
					wantPred := geotiff.PredictorNone
					if v.opts.Predictor {
						wantPred = geotiff.PredictorHorizontal
					}
					if in.Predictor != wantPred {
						t.Fatalf("predictor %v, want %v", in.Predictor, wantPred)
					}
					// Inside the first block, one pixel in from its edges where it
					// has room; across the corner of the first four blocks.
					bw, bh := min(in.BlockWidth, width), min(in.BlockHeight, height)
					inside := win(min(1, bw-1), min(1, bh-1), max(bw-2, 1), max(bh-2, 1))
					across := win(max(bw-3, 0), max(bh-2, 0), 7, 5)
					across.Width, across.Height = min(across.Width, width-across.Col), min(across.Height, height-across.Row)
					for _, w := range []geotiff.Window{
						win(0, 0, width, height), // whole
						win(0, 0, 1, 1),          // corners
						win(width-1, 0, 1, 1),
						win(0, height-1, 1, 1),
						win(width-1, height-1, 1, 1),
						inside,
						across,
						win(width-10, height-10, 10, 10), // the last blocks, partial
						win(0, height/2, width, 1),       // a full row
						win(width/2, 0, 1, height),       // a full column
						win(37, 41, 100, 100),            // a plot
					} {
						checkWindow(t, f, w, pattern)
						checkWindow(t, f, w, pattern) // again, from the cache
					}
				})
			}
		})
	}
}

func compressionOf(o geotifftest.Options) geotiff.Compression {
	if o.Compression == 0 {
		return geotiff.CompressionNone
	}
	return o.Compression
}

// TestOpen_Libtiff reads files that libtiff 4.5 compressed
// (testdata/libtiff/make.py), so that decoding is checked against the
// reference implementation and not only against geotifftest.
func TestOpen_Libtiff(t *testing.T) {
	files, _ := filepath.Glob("testdata/libtiff/*.tif")
	if len(files) != 6 {
		t.Fatalf("found %d libtiff fixtures, want 6", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f := mustOpen(t, b, geotiff.Options{})
			in := f.Info()
			if in.Width != 150 || in.Height != 100 || !in.HasNoData || in.NoData != 0 {
				t.Fatalf("info %+v, want 150 x 100 with nodata 0", in)
			}
			if want := (geotiff.Bounds{West: -12, South: 5.9, East: -11.85, North: 6}); !near(in.Georef.Bounds(), want) {
				t.Fatalf("bounds %+v, want %+v", in.Georef.Bounds(), want)
			}
			checkWindow(t, f, win(0, 0, 150, 100), libtiffPixel)
			checkWindow(t, f, win(60, 40, 13, 17), libtiffPixel)
		})
	}
}

// libtiffPixel is pixel() of testdata/libtiff/make.py.
func libtiffPixel(c, r int) uint8 {
	if (c/16+r/16)%3 == 0 {
		return 0
	}
	return uint8((c*7 + r*13 + (c*r)/5) % 256)
}

func TestReadWindow_SparseBlocks(t *testing.T) {
	for _, nodata := range []string{"", "255"} {
		fill := uint8(0)
		if nodata != "" {
			fill = 255
		}
		// The middle tile of nine is all fill: it is left out of the file.
		px := func(col, row int) uint8 {
			if col/16 == 1 && row/16 == 1 {
				return fill
			}
			return pattern(col, row)
		}
		o := geotifftest.Options{Compression: geotiff.CompressionLZW, TileWidth: 16, TileHeight: 16, NoData: nodata, Sparse: true}
		f := mustOpen(t, geotifftest.MustEncode(t, 48, 48, px, o), geotiff.Options{})
		checkWindow(t, f, win(0, 0, 48, 48), px)
		checkWindow(t, f, win(10, 10, 20, 20), px)
	}
}

func TestReadWindow_Errors(t *testing.T) {
	b := geotifftest.MustEncode(t, 40, 30, pattern, geotifftest.Options{Compression: geotiff.CompressionLZW, RowsPerStrip: 8})
	f := mustOpen(t, b, geotiff.Options{})
	for _, w := range []geotiff.Window{win(-1, 0, 2, 2), win(0, -1, 2, 2), win(39, 0, 2, 1), win(0, 29, 1, 2), win(0, 0, 0, 1), win(0, 0, 1, 0), win(0, 0, 41, 30)} {
		if err := f.ReadWindow(context.Background(), w, make([]uint8, 2000)); err == nil || !strings.Contains(err.Error(), "not inside") {
			t.Errorf("window %+v: got %v, want not inside the raster", w, err)
		}
	}
	if err := f.ReadWindow(context.Background(), win(0, 0, 10, 10), make([]uint8, 99)); err == nil || !strings.Contains(err.Error(), "dst holds 99") {
		t.Errorf("short dst: got %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.ReadWindow(ctx, win(0, 0, 10, 10), make([]uint8, 100)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v, want context.Canceled", err)
	}

	t.Run("ReaderFails", func(t *testing.T) {
		boom := errors.New("disk on fire")
		for _, cache := range []*geotiff.Cache{nil, geotiff.NewCache(0)} {
			r := &failingReader{r: bytes.NewReader(b), after: 1 << 30}
			f, err := geotiff.OpenOptions(r, int64(len(b)), geotiff.Options{Cache: cache})
			if err != nil {
				t.Fatal(err)
			}
			r.after, r.err = 0, boom
			err = f.ReadWindow(context.Background(), win(0, 0, 10, 10), make([]uint8, 100))
			if !errors.Is(err, boom) || reasonOf(err) != 0 {
				t.Errorf("got %v, want the reader's error, not a geotiff.Error", err)
			}
		}
	})
}

// TestReadWindow_CorruptBlocks damages block data (which Open does not
// read) and expects CorruptBlock errors, never a panic.
func TestReadWindow_CorruptBlocks(t *testing.T) {
	for _, c := range []geotiff.Compression{geotiff.CompressionLZW, geotiff.CompressionDeflate} {
		o := geotifftest.Options{Compression: c, TileWidth: 64, TileHeight: 64}
		good := geotifftest.MustEncode(t, 64, 64, pattern, o)
		at, n := blockAt(t, good)
		o.Tags = []geotifftest.Tag{{ID: geotifftest.TagTileByteCounts, Value: []uint32{10}}}
		for name, b := range map[string][]byte{
			"garbage": func() []byte {
				b := bytes.Clone(good)
				for i := at; i < at+n; i++ {
					b[i] = byte(i * 151)
				}
				return b
			}(),
			"old-style-lzw": func() []byte {
				b := bytes.Clone(good)
				b[at], b[at+1] = 0, 1
				return b
			}(),
			"truncated": geotifftest.MustEncode(t, 64, 64, pattern, o),
		} {
			for _, cache := range []*geotiff.Cache{nil, geotiff.NewCache(0)} {
				f := mustOpen(t, b, geotiff.Options{Cache: cache})
				err := f.ReadWindow(context.Background(), win(0, 0, 64, 64), make([]uint8, 64*64))
				if reasonOf(err) != geotiff.CorruptBlock {
					t.Errorf("%v %s: got %v, want a CorruptBlock error", c, name, err)
				}
			}
		}
	}
	t.Run("DeflateChecksum", func(t *testing.T) {
		good := geotifftest.MustEncode(t, 64, 64, pattern, geotifftest.Options{Compression: geotiff.CompressionDeflate})
		at, n := blockAt(t, good)
		b := bytes.Clone(good)
		b[at+n-1] ^= 1 // the Adler-32 checksum's last byte
		f := mustOpen(t, b, geotiff.Options{})
		err := f.ReadWindow(context.Background(), win(0, 0, 1, 1), make([]uint8, 1))
		if reasonOf(err) != geotiff.CorruptBlock || !strings.Contains(err.Error(), "checksum") {
			t.Errorf("got %v, want a CorruptBlock checksum error", err)
		}
	})
}

// blockAt returns where the data of a single-block file is.
func blockAt(t *testing.T, b []byte) (at, n int) {
	t.Helper()
	r := &recordingReader{r: bytes.NewReader(b)}
	f, err := geotiff.Open(r, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	r.reads = nil
	if err := f.ReadWindow(context.Background(), win(0, 0, 1, 1), make([]uint8, 1)); err != nil {
		t.Fatal(err)
	}
	return int(r.reads[0][0]), int(r.reads[0][1] - r.reads[0][0])
}

// TestReadWindow_StreamedStrip reads a raster stored as one strip larger
// than the cache keeps: windows decode up to their last row, nothing else.
func TestReadWindow_StreamedStrip(t *testing.T) {
	const n = 1500
	for _, c := range []geotiff.Compression{geotiff.CompressionNone, geotiff.CompressionLZW, geotiff.CompressionDeflate} {
		b := geotifftest.MustEncode(t, n, n, pattern, geotifftest.Options{Compression: c, Predictor: c != geotiff.CompressionNone})
		r := &recordingReader{r: bytes.NewReader(b)}
		f, err := geotiff.OpenOptions(r, int64(len(b)), geotiff.Options{Cache: geotiff.NewCache(8 << 20)}) // keeps blocks up to 1 MiB
		if err != nil {
			t.Fatal(err)
		}
		checkWindow(t, f, win(100, 10, 30, 20), pattern)
		checkWindow(t, f, win(n-30, n-20, 30, 20), pattern)
		checkWindow(t, f, win(0, 0, n, n), pattern)
		if s := f.Info(); s.BlocksDown != 1 {
			t.Fatalf("blocks down %d, want 1", s.BlocksDown)
		}
	}
}

// TestReadWindow_Concurrent reads random windows from many goroutines
// through one small shared cache (run with -race).
func TestReadWindow_Concurrent(t *testing.T) {
	cache := geotiff.NewCache(256 << 10) // some blocks evicted all the time
	var files []*geotiff.File
	for _, o := range []geotifftest.Options{
		{Compression: geotiff.CompressionLZW, TileWidth: 32, TileHeight: 32, Predictor: true},
		{Compression: geotiff.CompressionDeflate, RowsPerStrip: 3},
	} {
		files = append(files, mustOpen(t, geotifftest.MustEncode(t, 500, 400, pattern, o), geotiff.Options{Cache: cache}))
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range 200 {
				w := win(r.IntN(450), r.IntN(350), 1+r.IntN(50), 1+r.IntN(50))
				checkWindow(t, files[r.IntN(len(files))], w, pattern)
			}
		}()
	}
	wg.Wait()
	s := cache.Stats()
	if s.Bytes > 256<<10 || s.Hits == 0 || s.Evictions == 0 {
		t.Fatalf("cache stats %+v: want hits, evictions, and at most 256 KiB held", s)
	}
}

func TestCache_Budget(t *testing.T) {
	b := geotifftest.MustEncode(t, 256, 256, pattern, geotifftest.Options{Compression: geotiff.CompressionLZW, TileWidth: 16, TileHeight: 16})
	cache := geotiff.NewCache(10 * 256) // ten 16 x 16 tiles
	f := mustOpen(t, b, geotiff.Options{Cache: cache})
	checkWindow(t, f, win(0, 0, 256, 256), pattern)
	s := cache.Stats()
	if s.Blocks != 10 || s.Bytes != 2560 || s.Misses != 256 || s.Evictions != 246 {
		t.Fatalf("after reading 256 tiles: %+v, want 10 blocks of 2560 bytes, 256 misses, 246 evictions", s)
	}
	checkWindow(t, f, win(256-16, 256-16, 16, 16), pattern) // the last tile read: a hit
	if s2 := cache.Stats(); s2.Hits != 1 {
		t.Fatalf("hits %d, want 1", s2.Hits)
	}
	checkWindow(t, f, win(0, 0, 16, 16), pattern) // the first: long gone
	if s2 := cache.Stats(); s2.Misses != 257 {
		t.Fatalf("misses %d, want 257", s2.Misses)
	}
}

// failingReader fails every ReadAt after the first after calls.
type failingReader struct {
	r     io.ReaderAt
	after int
	err   error
	mu    sync.Mutex
}

func (r *failingReader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.after <= 0 {
		return 0, r.err
	}
	r.after--
	return r.r.ReadAt(p, off)
}

// recordingReader records the byte ranges read.
type recordingReader struct {
	r     io.ReaderAt
	mu    sync.Mutex
	reads [][2]int64
}

func (r *recordingReader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	r.reads = append(r.reads, [2]int64{off, off + int64(len(p))})
	r.mu.Unlock()
	return r.r.ReadAt(p, off)
}

// TestReadWindow_LargeCompressedBlock reads a block of noise whose
// compressed bytes exceed 1 MiB, so they are streamed from the reader
// rather than read at once, both when the block is kept and when not, and
// a reader failing under the decompressor.
func TestReadWindow_LargeCompressedBlock(t *testing.T) {
	const width, height = 1200, 1000
	noise := make([]uint8, width*height)
	r := rand.New(rand.NewPCG(9, 9))
	for i := range noise {
		noise[i] = uint8(r.Uint32())
	}
	want := func(col, row int) uint8 { return noise[row*width+col] }
	for _, c := range []geotiff.Compression{geotiff.CompressionLZW, geotiff.CompressionDeflate} {
		b := geotifftest.MustEncode(t, width, height, geotifftest.Slice(noise, width), geotifftest.Options{Compression: c})
		if len(b) < 1<<20 {
			t.Fatalf("%v: %d bytes, want over 1 MiB", c, len(b))
		}
		for _, cache := range []*geotiff.Cache{nil, geotiff.NewCache(0)} {
			f := mustOpen(t, b, geotiff.Options{Cache: cache})
			checkWindow(t, f, win(500, 900, 100, 100), want)
			checkWindow(t, f, win(0, 0, width, height), want)

			boom := errors.New("disk on fire")
			fr := &failingReader{r: bytes.NewReader(b), after: 1 << 30}
			f, err := geotiff.OpenOptions(fr, int64(len(b)), geotiff.Options{Cache: cache})
			if err != nil {
				t.Fatal(err)
			}
			fr.mu.Lock()
			fr.after, fr.err = 1, boom // the first 1 MiB read succeeds
			fr.mu.Unlock()
			err = f.ReadWindow(context.Background(), win(0, height-1, 1, 1), make([]uint8, 1))
			if !errors.Is(err, boom) || reasonOf(err) != 0 {
				t.Errorf("%v: got %v, want the reader's error, not a geotiff.Error", c, err)
			}
		}
	}
}

// TestCache_ReusesEvictedBlocks reads a raster through a cache that holds
// half its tiles, so that every tile read is decoded again: the buffer of
// the block evicted for it is reused, not a new one allocated per block
// (what made a screening job allocate some 300 MB), and the pixels stay
// right.
func TestCache_ReusesEvictedBlocks(t *testing.T) {
	const tile = 64 * 64
	b := geotifftest.MustEncode(t, 256, 256, pattern, geotifftest.Options{Compression: geotiff.CompressionLZW, Predictor: true, TileWidth: 64, TileHeight: 64})
	cache := geotiff.NewCache(8 * tile) // eight of the sixteen tiles
	f := mustOpen(t, b, geotiff.Options{Cache: cache})
	dst := make([]uint8, tile)
	read := func() {
		for i := range 16 {
			w := win(64*(i%4), 64*(i/4), 64, 64)
			if err := f.ReadWindow(context.Background(), w, dst); err != nil {
				t.Fatal(err)
			}
			for j, v := range dst {
				if want := pattern(w.Col+j%64, w.Row+j/64); v != want {
					t.Fatalf("window %+v pixel %d: %d, want %d", w, j, v, want)
				}
			}
		}
	}
	read() // fills the cache and its spare buffers
	misses := cache.Stats().Misses
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	read()
	runtime.ReadMemStats(&after)
	decoded := cache.Stats().Misses - misses
	if decoded != 16 {
		t.Fatalf("%d tiles decoded on the second pass, want all 16", decoded)
	}
	// A block decoded into a new buffer allocates the whole tile; what is
	// left is the compressed bytes' scratch, from a sync.Pool, which the
	// race detector empties at random (about 1 KB a tile then): half a
	// tile tells the two apart either way.
	if perBlock := (after.TotalAlloc - before.TotalAlloc) / decoded; perBlock > tile/2 {
		t.Fatalf("%d bytes allocated per %d-byte tile decoded: want evicted tiles' buffers reused", perBlock, tile)
	}
}
