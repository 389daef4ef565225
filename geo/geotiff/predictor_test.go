package geotiff

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// undoHorizontalReference is TIFF 6.0 section 14 as written there.
func undoHorizontalReference(row []byte) {
	for j := 1; j < len(row); j++ {
		row[j] += row[j-1]
	}
}

// TestUndoHorizontal checks undoHorizontal against the specification's
// loop on rows of every length up to 70 (the tails after whole words) and
// a Hansen row, of random differences (which wrap round 256) and of runs.
func TestUndoHorizontal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range append([]int{40000, 40001}, func() (ns []int) {
		for n := range 71 {
			ns = append(ns, n)
		}
		return ns
	}()...) {
		for _, fill := range []func(int) byte{
			func(int) byte { return byte(r.Uint32()) },
			func(j int) byte { return byte(j / 7 % 3) },
			func(int) byte { return 255 },
			func(j int) byte { return byte(j % 29 / 28 * j) }, // mostly 0
		} {
			row := make([]byte, n)
			for j := range row {
				row[j] = fill(j)
			}
			want := bytes.Clone(row)
			undoHorizontalReference(want)
			undoHorizontal(row)
			if !bytes.Equal(row, want) {
				t.Fatalf("%d bytes: got %v, want %v", n, row[:min(n, 24)], want[:min(n, 24)])
			}
		}
	}
}

// BenchmarkUndoHorizontal undoes the predictor on a Hansen row (40,000
// pixels): MB/s is the decoder's ceiling for it. random is differences
// of random values; lossyear a row of 64-pixel patches, one in seven of
// a loss year and speckled with 0, the rest 0 (as geo's benchmarks
// generate, and mostly as Hansen's rows are).
func BenchmarkUndoHorizontal(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 40000)
	for j := range random {
		random[j] = byte(r.Uint32())
	}
	lossyear := make([]byte, 40000)
	for x := range lossyear {
		if h := uint32(x>>6) * 73856093; h%7 == 0 && (x*31)%5 != 0 {
			lossyear[x] = uint8(1 + h%23)
		}
	}
	// As written with the predictor: differences from the left.
	for x := len(lossyear) - 1; x > 0; x-- {
		lossyear[x] -= lossyear[x-1]
	}
	for _, c := range []struct {
		name string
		row  []byte
	}{{"random", random}, {"lossyear", lossyear}} {
		b.Run(c.name, func(b *testing.B) {
			row := make([]byte, len(c.row))
			b.SetBytes(int64(len(row)))
			for b.Loop() {
				copy(row, c.row)
				undoHorizontal(row)
			}
		})
	}
}
