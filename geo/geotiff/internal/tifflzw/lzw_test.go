package tifflzw

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"golang.org/x/image/tiff/lzw"
)

// lzwInputs cover the code widths (9 to 12 bits), the table clear at 4094,
// the KwKwK case and the edges of the stream.
func lzwInputs() map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 200_000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	few := make([]byte, 300_000) // a small alphabet: long strings, many clears
	for i := range few {
		few[i] = byte(r.IntN(3))
	}
	runs := make([]byte, 0, 1<<20)
	for len(runs) < 1<<20 {
		runs = append(runs, bytes.Repeat([]byte{byte(r.IntN(24))}, r.IntN(5000))...)
	}
	in := map[string][]byte{
		"empty":    {},
		"one":      {7},
		"two":      {7, 7},
		"abab":     []byte("abababababababababab"),
		"constant": make([]byte, 10<<20),
		"random":   random,
		"few":      few,
		"runs":     runs,
	}
	// Every length around the width changes and the clear.
	for _, n := range []int{253, 254, 255, 256, 509, 510, 511, 512, 1021, 1022, 1023, 2045, 2046, 2047, 3835, 3836, 3837} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i) // all distinct pairs: one code per byte
		}
		in[fmt.Sprintf("distinct-%d", n)] = b
	}
	return in
}

func TestEncode_RoundTrip(t *testing.T) {
	for name, src := range lzwInputs() {
		t.Run(name, func(t *testing.T) {
			enc := Encode(nil, src)
			rd := lzw.NewReader(bytes.NewReader(enc), lzw.MSB, 8)
			got, err := io.ReadAll(rd)
			if err != nil {
				t.Fatalf("decode %d bytes encoded to %d: %v", len(src), len(enc), err)
			}
			if !bytes.Equal(got, src) {
				t.Fatalf("decoded %d bytes, want the %d encoded", len(got), len(src))
			}
		})
	}
}

func TestDecode_RoundTrip(t *testing.T) {
	for name, src := range lzwInputs() {
		t.Run(name, func(t *testing.T) {
			enc := Encode(nil, src)
			got := make([]byte, len(src))
			if err := Decode(got, enc); err != nil {
				t.Fatalf("decode %d bytes encoded to %d: %v", len(src), len(enc), err)
			}
			if !bytes.Equal(got, src) {
				t.Fatalf("decoded bytes differ from the %d encoded", len(src))
			}
			if len(src) > 0 { // a prefix only: stops when dst is full
				got := make([]byte, len(src)/2+1)
				if err := Decode(got, enc); err != nil || !bytes.Equal(got, src[:len(got)]) {
					t.Fatalf("prefix of %d: %v", len(got), err)
				}
			}
			if err := Decode(make([]byte, len(src)+1), enc); err != ErrShort {
				t.Fatalf("one byte more than encoded: got %v, want ErrShort", err)
			}
		})
	}
}

// FuzzDecode checks Decode against golang.org/x/image/tiff/lzw: whatever
// Decode decodes, x/image decodes the same; whatever x/image decodes,
// Decode decodes the same unless it refuses a code whose table entry was
// never defined (x/image reads a stale entry there).
func FuzzDecode(f *testing.F) {
	for _, src := range lzwInputs() {
		if len(src) <= 1<<16 {
			f.Add(Encode(nil, src), uint16(len(src)))
		}
	}
	f.Add([]byte{0x80, 0x00, 0x40, 0x20}, uint16(3))
	f.Fuzz(func(t *testing.T, src []byte, n uint16) {
		got := make([]byte, n)
		err := Decode(got, src)
		want := make([]byte, n)
		_, xerr := io.ReadFull(lzw.NewReader(bytes.NewReader(src), lzw.MSB, 8), want)
		switch {
		case err == nil && xerr != nil:
			t.Fatalf("Decode succeeded, x/image: %v", xerr)
		case err == nil && !bytes.Equal(got, want):
			t.Fatalf("Decode and x/image differ")
		case err != nil && xerr == nil && err != ErrInvalidCode:
			t.Fatalf("Decode: %v, x/image succeeded", err)
		}
	})
}
