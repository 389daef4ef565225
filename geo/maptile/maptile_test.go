package maptile_test

import (
	"context"
	"errors"
	"image/color"
	"math"
	"sync"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/maptile"
)

// mercatorNorth is the latitude of Web Mercator's north edge.
const mercatorNorth = 85.0511287798066

func TestTile_Bounds(t *testing.T) {
	for _, tc := range []struct {
		tile maptile.Tile
		want geotiff.Bounds
	}{
		{maptile.Tile{Z: 0, X: 0, Y: 0}, geotiff.Bounds{West: -180, South: -mercatorNorth, East: 180, North: mercatorNorth}},
		{maptile.Tile{Z: 1, X: 0, Y: 0}, geotiff.Bounds{West: -180, South: 0, East: 0, North: mercatorNorth}},
		{maptile.Tile{Z: 1, X: 1, Y: 1}, geotiff.Bounds{West: 0, South: -mercatorNorth, East: 180, North: 0}},
		{maptile.Tile{Z: 2, X: 1, Y: 1}, geotiff.Bounds{West: -90, South: 0, East: 0, North: 66.51326044311186}},
		// The z=12 tile over the sample data near Soubré (6.6° W, 5.78° N).
		{maptile.Tile{Z: 12, X: 1972, Y: 1982}, geotiff.Bounds{West: -6.6796875, South: 5.703447982149503, East: -6.591796875, North: 5.7908968128719565}},
	} {
		got := tc.tile.Bounds()
		if math.Abs(got.West-tc.want.West) > 1e-9 || math.Abs(got.East-tc.want.East) > 1e-9 ||
			math.Abs(got.South-tc.want.South) > 1e-9 || math.Abs(got.North-tc.want.North) > 1e-9 {
			t.Errorf("%v: bounds %+v, want %+v", tc.tile, got, tc.want)
		}
	}
}

func TestTile_Check(t *testing.T) {
	for _, tc := range []struct {
		tile  maptile.Tile
		coord []string
	}{
		{maptile.Tile{Z: 0, X: 0, Y: 0}, nil},
		{maptile.Tile{Z: 18, X: 1<<18 - 1, Y: 1<<18 - 1}, nil},
		{maptile.Tile{Z: 19, X: 0, Y: 0}, []string{"z"}},
		{maptile.Tile{Z: -1, X: 0, Y: 0}, []string{"z"}},
		{maptile.Tile{Z: 2, X: 4, Y: 0}, []string{"x"}},
		{maptile.Tile{Z: 2, X: -1, Y: 4}, []string{"x", "y"}},
	} {
		var got []string
		for _, p := range tc.tile.Check() {
			got = append(got, p.Coord)
			if p.Issue == "" {
				t.Errorf("%v: problem at %s without an issue", tc.tile, p.Coord)
			}
		}
		if len(got) != len(tc.coord) || (len(got) > 0 && got[len(got)-1] != tc.coord[len(tc.coord)-1]) {
			t.Errorf("%v: problems at %v, want %v", tc.tile, got, tc.coord)
		}
	}
}

func TestSample_KnownPixels(t *testing.T) {
	// Two source columns per output column at zoom 0: output column i's
	// centre is in source column 2i+1. Rows of half a degree south of the
	// equator: output row 128's centre is at 0.703° S, in source row 1;
	// row 127's at 0.703° N, north of the grid.
	g := geotiff.Georef{West: -180, North: 0, DX: 360.0 / 512, DY: 0.5, Width: 512, Height: 10}
	s := maptile.Sample(maptile.Tile{}, g)
	for _, i := range []int{0, 1, 100, 255} {
		if s.Cols[i] != 2*i+1 {
			t.Errorf("output column %d samples source column %d, want %d", i, s.Cols[i], 2*i+1)
		}
	}
	for j, want := range map[int]int{127: -1, 128: 1, 129: 4, 0: -1, 255: -1} {
		if s.Rows[j] != want {
			t.Errorf("output row %d samples source row %d, want %d", j, s.Rows[j], want)
		}
	}
	if want := (geotiff.Window{Col: 1, Row: 1, Width: 511, Height: 9}); s.Window != want {
		t.Errorf("window %+v, want %+v", s.Window, want)
	}

	// A map tile beside the grid samples nothing.
	if s := maptile.Sample(maptile.Tile{Z: 1, X: 1, Y: 0}, geotiff.Georef{West: -10, North: 10, DX: 1, DY: 1, Width: 5, Height: 5}); !s.Window.Empty() {
		t.Errorf("a tile east of the grid samples window %+v", s.Window)
	}
}

func TestPaletteOf(t *testing.T) {
	loss := maptile.PaletteOf(geo.LossYear)
	if loss[0].A != 0 {
		t.Errorf("loss-year 0 (no loss) is %v, want transparent", loss[0])
	}
	before, after := loss[15], loss[21]
	if before.A == 0 || after.A == 0 || after.R < 200 || after.G > 120 || after.B > 100 {
		t.Errorf("loss 2015 %v, loss 2021 %v: want visible, 2021 red", before, after)
	}
	if before.A >= after.A || before != loss[20] || before != loss[1] {
		t.Errorf("loss before the cutoff %v should be one muted colour, fainter than after it %v", before, after)
	}
	// The red ramp darkens year by year, then holds.
	for v := 22; v <= 30; v++ {
		if loss[v].R >= loss[v-1].R {
			t.Errorf("loss-year %d %v is not darker than %d %v", v, loss[v], v-1, loss[v-1])
		}
	}
	if loss[40] != loss[30] {
		t.Errorf("loss-year 40 %v, want the end of the ramp %v", loss[40], loss[30])
	}
	if nd := loss.WithNoData(22); nd[22].A != 0 || loss[22].A == 0 {
		t.Errorf("WithNoData: nodata %v (want transparent), original %v (want unchanged)", nd[22], loss[22])
	}

	forest := maptile.PaletteOf(geo.Forest2020)
	if forest[0].A != 0 || forest[1].A == 0 || forest[1].G <= forest[1].R || forest[100] != forest[1] {
		t.Errorf("forest-2020: 0 %v, 1 %v, 100 %v: want transparent then one green", forest[0], forest[1], forest[100])
	}
}

// gridReader is a raster of Width x Height pixels whose value is f(col,
// row); it records the windows read.
type gridReader struct {
	g     geotiff.Georef
	f     func(col, row int) uint8
	mu    sync.Mutex
	reads []geotiff.Window
	err   error
}

func (r *gridReader) ReadWindow(_ context.Context, w geotiff.Window, dst []uint8) error {
	r.mu.Lock()
	r.reads = append(r.reads, w)
	r.mu.Unlock()
	if r.err != nil {
		return r.err
	}
	if w.Col < 0 || w.Row < 0 || w.Col+w.Width > r.g.Width || w.Row+w.Height > r.g.Height || len(dst) < w.Width*w.Height {
		return errors.New("window outside the raster")
	}
	for y := range w.Height {
		for x := range w.Width {
			dst[y*w.Width+x] = r.f(w.Col+x, w.Row+y)
		}
	}
	return nil
}

func layerOf(kind geo.LayerKind, tiles ...geo.RasterTile) *geo.RasterLayer {
	return &geo.RasterLayer{ID: "lyr_test", Kind: kind, Tiles: tiles}
}

func TestRender_KnownPixels(t *testing.T) {
	// 10° pixels from the equator to 40° N, 0 to 180° E, each holding its
	// column plus 10 times its row as a loss year: (1, 1) is 11 (2011),
	// (1, 2) is 21 (2021), (2, 2) is 22 (2022); (3, 2) is nodata.
	g := geotiff.Georef{West: 0, North: 40, DX: 10, DY: 10, Width: 18, Height: 4}
	r := &gridReader{g: g, f: func(c, r int) uint8 { return uint8(c + 10*r) }}
	l := layerOf(geo.LossYear, geo.RasterTile{Name: "a.tif", Grid: g, Reader: r, NoData: 23, HasNoData: true})
	img, err := maptile.Render(context.Background(), l, maptile.Tile{Z: 1, X: 1, Y: 0})
	if err != nil {
		t.Fatal(err)
	}
	p := maptile.PaletteOf(geo.LossYear)
	// In tile 1/1/0 output column i is centred on (i+0.5)*180/256° E and
	// output row 219 on 24.85° N (Web Mercator: lat 25° is at row 219.26),
	// row 238 on 12.2° N, row 250 on 3.9° N, row 30 on 82.8° N.
	for _, tc := range []struct {
		x, y int
		want color.NRGBA
	}{
		{21, 219, p[11]},         // 15.1° E, 24.85° N: source (1, 1), loss in 2011
		{21, 238, p[21]},         // 15.1° E, 12.2° N: source (1, 2), 2021
		{35, 238, p[22]},         // 24.9° E: source (2, 2), 2022
		{50, 238, color.NRGBA{}}, // 35.5° E: source (3, 2), nodata
		{0, 250, p[30]},          // 0.35° E, 3.9° N: source (0, 3)
		{255, 238, p[37]},        // 179.6° E: source (17, 2)
		{21, 30, color.NRGBA{}},  // 82.8° N: north of the grid
	} {
		if got := img.NRGBAAt(tc.x, tc.y); got != tc.want {
			t.Errorf("pixel (%d, %d) is %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
	if len(r.reads) != 1 {
		t.Errorf("read %d windows, want the sampled window in one piece: %v", len(r.reads), r.reads)
	}

	// A map tile where the layer has no GeoTIFF is transparent, and
	// reads nothing.
	r.reads = nil
	img, err = maptile.Render(context.Background(), l, maptile.Tile{Z: 1, X: 0, Y: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 3; i < len(img.Pix); i += 4 {
		if img.Pix[i] != 0 {
			t.Fatalf("tile outside the layer has an opaque pixel at byte %d", i)
		}
	}
	if len(r.reads) != 0 {
		t.Errorf("tile outside the layer read %v", r.reads)
	}
}

// TestRender_BoundedReads checks that a map tile spanning far more source
// pixels than it has reads only the sampled rows, each once, and draws
// the same pixels as the samples say.
func TestRender_BoundedReads(t *testing.T) {
	// A 4,000 x 4,000 pixel grid (16 Mi pixels) under one zoom-3 tile.
	g := geotiff.Georef{West: 0, North: 40, DX: 0.01, DY: 0.01, Width: 4000, Height: 4000}
	f := func(c, r int) uint8 { return uint8((c/7 + r/5) % 30) }
	r := &gridReader{g: g, f: f}
	tile := maptile.Tile{Z: 3, X: 4, Y: 3} // 0-45° E, 41.0° N to the equator
	img, err := maptile.Render(context.Background(), layerOf(geo.LossYear, geo.RasterTile{Name: "big.tif", Grid: g, Reader: r}), tile)
	if err != nil {
		t.Fatal(err)
	}
	s := maptile.Sample(tile, g)
	rows := map[int]bool{}
	for _, w := range r.reads {
		if w.Height != 1 || rows[w.Row] {
			t.Fatalf("read %+v: want each sampled row once, one row at a time", w)
		}
		rows[w.Row] = true
	}
	if len(rows) == 0 || len(rows) > maptile.Size {
		t.Errorf("read %d rows, want 1 to %d", len(rows), maptile.Size)
	}
	p := maptile.PaletteOf(geo.LossYear)
	drawn := 0
	for j, row := range s.Rows {
		for i, col := range s.Cols {
			want := color.NRGBA{}
			if row >= 0 && col >= 0 {
				want = p[f(col, row)]
			}
			if got := img.NRGBAAt(i, j); got != want {
				t.Fatalf("pixel (%d, %d) is %v, want source (%d, %d)'s %v", i, j, got, col, row, want)
			}
			if want.A != 0 {
				drawn++
			}
		}
	}
	if drawn == 0 {
		t.Error("nothing drawn")
	}
}

func TestRender_ReadError(t *testing.T) {
	g := geotiff.Georef{West: 0, North: 40, DX: 10, DY: 10, Width: 18, Height: 4}
	r := &gridReader{g: g, err: errors.New("disk on fire")}
	_, err := maptile.Render(context.Background(), layerOf(geo.LossYear, geo.RasterTile{Name: "a.tif", Grid: g, Reader: r}), maptile.Tile{Z: 1, X: 1, Y: 0})
	if err == nil || !errors.Is(err, r.err) {
		t.Fatalf("error %v, want the reader's, naming the tile", err)
	}
}

func TestMinZoom(t *testing.T) {
	for _, tc := range []struct {
		dx   float64
		want int
	}{
		{0.00025, 9},                // Hansen: 0.70° tiles of 2,812 pixels, 11 per output pixel
		{8.983152841195215e-05, 10}, // 10 m: 0.35° tiles, 15.3 per output pixel
		{0.0001, 10},
		{1, 0},
		{1e-9, maptile.MaxZoom},
	} {
		if got := maptile.MinZoom(tc.dx); got != tc.want {
			t.Errorf("MinZoom(%g) = %d, want %d", tc.dx, got, tc.want)
		}
	}
	l := layerOf(geo.LossYear,
		geo.RasterTile{Grid: geotiff.Georef{DX: 0.00025}}, geo.RasterTile{Grid: geotiff.Georef{DX: 0.0001}})
	if got := maptile.LayerMinZoom(l); got != 10 {
		t.Errorf("LayerMinZoom = %d, want 10, the finest tile's", got)
	}
}
