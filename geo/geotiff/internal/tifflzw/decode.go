package tifflzw

import (
	"errors"
	"math"
)

// Errors of Decode. Both mean the data is corrupt.
var (
	// ErrShort: the codes end (End of Information, or the data runs out)
	// before dst is full.
	ErrShort = errors.New("lzw: data ends before the block is full")
	// ErrInvalidCode: a code that is not in the table.
	ErrInvalidCode = errors.New("lzw: invalid code")
)

// MaxDecode is the largest dst Decode takes (positions are 32-bit).
const MaxDecode = math.MaxUint32

// Decode fills dst with the decoding of src and stops there: what follows
// (normally the End of Information code) is not read. It returns ErrShort
// if src ends first, ErrInvalidCode on a code not in the table.
//
// It follows golang.org/x/image/tiff/lzw's state machine code for code,
// but finds a code's string where it was last written in dst rather than
// walking a chain of prefixes a byte at a time: every string in the table
// is the string of the previous code followed by one byte, and both sit
// in dst already. A long string is then one copy, which makes the
// mostly-constant rasters of forest masks several times faster to decode.
// Unlike x/image, it refuses codes whose table entry was never defined in
// the current table (as libtiff does) instead of reading stale entries.
func Decode(dst, src []byte) error {
	if len(dst) > MaxDecode {
		return errors.New("lzw: block too large")
	}
	var (
		start  [1 << lzwMaxWidth]uint32 // where entry k's string was written
		length [1 << lzwMaxWidth]uint16 // and how long it is (at most 4,096)
		acc    uint64                   // bits read, not yet used
		nbits  uint
		in     int
		width  uint   = 9
		hi     uint32 = lzwEOI // as x/image: the entry the next code defines
		over   uint32 = 1 << 9
		last          = -1 // the previous code, -1 after a Clear or a full table
		lastAt uint32      // where the previous code's string starts in dst
		lastN  uint32      // and its length
		pos    uint32
	)
	n := uint32(len(dst))
	for pos < n {
		for nbits < width {
			if in == len(src) {
				return ErrShort
			}
			acc = acc<<8 | uint64(src[in])
			in++
			nbits += 8
		}
		nbits -= width
		code := uint32(acc>>nbits) & (1<<width - 1)

		var at, size uint32 // the code's string: dst[at:at+size]
		switch {
		case code < lzwClear:
			dst[pos] = byte(code)
			at, size = pos, 1
		case code == lzwClear:
			width, hi, over, last = 9, lzwEOI, 1<<9, -1
			continue
		case code == lzwEOI:
			return ErrShort
		case code < hi && code < 1<<lzwMaxWidth-1:
			at, size = start[code], uint32(length[code])
		case code == hi && last >= 0:
			// The entry this code defines: the previous string and its own
			// first byte, which is about to be written at pos.
			at, size = lastAt, lastN+1
		default:
			return ErrInvalidCode
		}
		if code >= lzwFirst {
			k := min(size, n-pos)
			if at+k <= pos {
				copy(dst[pos:pos+k], dst[at:at+k])
			} else {
				// Overlapping (code == hi): the string repeats dst[at:pos],
				// so copy what is already there, doubling each time.
				for done := uint32(0); done < k; {
					done += uint32(copy(dst[pos+done:pos+k], dst[at:pos+done]))
				}
			}
			at = pos
		}
		if last >= 0 {
			// Entry hi is the previous string plus this string's first byte,
			// as written: at lastAt, one byte longer.
			start[hi], length[hi] = lastAt, uint16(lastN+1)
		}
		last, lastAt, lastN = int(code), at, size
		pos += min(size, n-pos)
		hi++
		if hi+1 >= over { // the early change
			if width == lzwMaxWidth {
				last = -1
			} else {
				width++
				over <<= 1
			}
		}
	}
	return nil
}
