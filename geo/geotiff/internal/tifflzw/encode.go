// Package tifflzw encodes and decodes LZW as TIFF writes it, for package
// geotiff (Decode) and its test writer (Encode).
//
// The format (TIFF 6.0 section 13, as implemented by libtiff's tif_lzw.c):
// codes MSB first, 9 to 12 bits wide, Clear (256) first and End of
// Information (257) last, and the "early change": codes widen one code
// before standard LZW's would, as soon as the next free code needs the
// wider width (when it reaches 512, 1024, 2048; compress/lzw waits until
// 513, 1025, 2049). Like libtiff, Encode writes a Clear when the next free
// code reaches 4094. golang.org/x/image/tiff/lzw reads this format a byte
// at a time and has no writer; compress/lzw writes standard LZW, which TIFF
// readers misread.
package tifflzw

const (
	lzwClear    = 256
	lzwEOI      = 257
	lzwFirst    = 258
	lzwMaxWidth = 12
	lzwFull     = 1<<lzwMaxWidth - 2 // 4094: clear the table
	// The string table: open addressing over (prefix code, byte) keys.
	lzwTableBits = 14
	lzwTableSize = 1 << lzwTableBits
	lzwTableMask = lzwTableSize - 1
)

type lzwEncoder struct {
	out   []byte
	acc   uint64
	nbits uint
	width uint
	free  uint32
	// table entries are key<<12 | code, key = prefix<<8 | byte (20 bits);
	// 0 is empty, as no stored code is below lzwFirst.
	table [lzwTableSize]uint32
}

// Encode appends the TIFF LZW encoding of src to dst.
func Encode(dst, src []byte) []byte {
	e := &lzwEncoder{out: dst}
	e.reset()
	e.put(lzwClear)
	if len(src) == 0 {
		e.put(lzwEOI)
		return e.flush()
	}
	code := uint32(src[0])
	for _, x := range src[1:] {
		key := code<<8 | uint32(x)
		h := (key>>12 ^ key) & lzwTableMask
		found := false
		for t := e.table[h]; t != 0; t = e.table[h] {
			if t>>12 == key {
				code, found = t&(1<<12-1), true
				break
			}
			h = (h + 1) & lzwTableMask
		}
		if found {
			continue
		}
		e.put(code)
		e.table[h] = key<<12 | e.free // h is the first empty slot on key's probe path
		e.next()
		code = uint32(x)
	}
	e.put(code)
	e.next()
	e.put(lzwEOI)
	return e.flush()
}

// next accounts for the code just written: the reader defines one string
// per code it reads, so the free code advances, widening early or clearing
// the table when it is about to be full.
func (e *lzwEncoder) next() {
	e.free++
	switch {
	case e.free == lzwFull:
		e.put(lzwClear)
		e.reset()
	case e.free == 1<<e.width: // the early change
		e.width++
	}
}

func (e *lzwEncoder) reset() {
	e.table = [lzwTableSize]uint32{}
	e.width = 9
	e.free = lzwFirst
}

func (e *lzwEncoder) put(code uint32) {
	e.acc = e.acc<<e.width | uint64(code)
	e.nbits += e.width
	for e.nbits >= 8 {
		e.nbits -= 8
		e.out = append(e.out, byte(e.acc>>e.nbits))
	}
}

func (e *lzwEncoder) flush() []byte {
	if e.nbits > 0 {
		e.out = append(e.out, byte(e.acc<<(8-e.nbits)))
	}
	return e.out
}
