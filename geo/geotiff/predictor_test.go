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
// pixels) of random differences: MB/s is the decoder's ceiling for it.
func BenchmarkUndoHorizontal(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	row := make([]byte, 40000)
	for j := range row {
		row[j] = byte(r.Uint32())
	}
	b.SetBytes(int64(len(row)))
	for b.Loop() {
		undoHorizontal(row)
	}
}
