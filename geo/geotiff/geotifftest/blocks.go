package geotifftest

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"hash/maphash"
	"slices"

	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/internal/tifflzw"
)

// encodeBlocks returns the encoded blocks and, for each block in TIFF
// order, which of them holds its data (with share, identical blocks are
// encoded once), or -1 for a block left out because all its pixels are
// sparse (when sparse >= 0).
func encodeBlocks(width, height, bw, bh int, tiled bool, px Pixels, comp geotiff.Compression, predictor, share bool, period, sparse int) ([][]byte, []int, error) {
	across, down := (width+bw-1)/bw, (height+bh-1)/bh
	var blocks [][]byte
	index := make([]int, 0, across*down)
	type seen struct {
		raw []byte
		k   int
	}
	var seed maphash.Seed
	if share {
		seed = maphash.MakeSeed()
	}
	known := map[uint64][]seen{}
	// The blocks written, by their place in the pattern of Period and
	// their size inside the raster.
	type place struct{ col, row, w, h int }
	periodic := map[place]int{}
	raw := make([]byte, bw*bh)
	for by := range down {
		for bx := range across {
			h := bh
			if !tiled {
				h = min(bh, height-by*bh)
			}
			at := place{-1, -1, 0, 0}
			if period > 0 {
				at = place{bx * bw % period, by * bh % period, min(bw, width-bx*bw), min(h, height-by*bh)}
				if k, ok := periodic[at]; ok {
					index = append(index, k)
					continue
				}
			}
			buf := raw[:bw*h]
			for r := range h {
				row := buf[r*bw : (r+1)*bw]
				for c := range row {
					col, y := bx*bw+c, by*bh+r
					if col < width && y < height {
						row[c] = px(col, y)
					} else {
						row[c] = 0 // tile padding
					}
				}
			}
			if sparse >= 0 && !slices.ContainsFunc(buf, func(v byte) bool { return int(v) != sparse }) {
				index = append(index, -1)
				if period > 0 {
					periodic[at] = -1
				}
				continue
			}
			var key uint64
			if share {
				key = maphash.Bytes(seed, buf)
				if k := slices.IndexFunc(known[key], func(s seen) bool { return bytes.Equal(s.raw, buf) }); k >= 0 {
					index = append(index, known[key][k].k)
					if period > 0 {
						periodic[at] = known[key][k].k
					}
					continue
				}
				known[key] = append(known[key], seen{bytes.Clone(buf), len(blocks)})
			}
			enc, err := encodeBlock(buf, bw, comp, predictor)
			if err != nil {
				return nil, nil, err
			}
			if period > 0 {
				periodic[at] = len(blocks)
			}
			index = append(index, len(blocks))
			blocks = append(blocks, enc)
		}
	}
	return blocks, index, nil
}

// encodeBlock compresses one block of rows w pixels wide.
func encodeBlock(raw []byte, w int, comp geotiff.Compression, predictor bool) ([]byte, error) {
	data := raw
	if predictor {
		data = bytes.Clone(raw)
		for r := 0; r < len(data); r += w {
			row := data[r : r+w]
			for j := len(row) - 1; j > 0; j-- {
				row[j] -= row[j-1]
			}
		}
	}
	switch comp {
	case geotiff.CompressionNone:
		return bytes.Clone(data), nil
	case geotiff.CompressionLZW:
		return tifflzw.Encode(nil, data), nil
	case geotiff.CompressionDeflate, geotiff.CompressionDeflateLegacy:
		var b bytes.Buffer
		zw := zlib.NewWriter(&b)
		if _, err := zw.Write(data); err != nil {
			return nil, err
		}
		if err := zw.Close(); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	return nil, fmt.Errorf("geotifftest: cannot write compression %v", comp)
}
