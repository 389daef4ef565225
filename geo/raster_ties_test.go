package geo_test

import (
	"context"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
)

// Plots whose sides run through pixel centres, or along pixel edges of a
// coarser layer, as plots snapped to a survey grid do. The tiles here are
// large (a Hansen tile is 40,000 pixels square) and read through
// funcReader, without a file: the floating-point error that decides a tie
// wrongly grows with a pixel's distance from the tile's origin.

// funcReader reads pixel (col, row) of a tile as its value.
type funcReader func(col, row int) uint8

func (f funcReader) ReadWindow(_ context.Context, w geotiff.Window, dst []uint8) error {
	for y := range w.Height {
		for x := range w.Width {
			dst[y*w.Width+x] = f(w.Col+x, w.Row+y)
		}
	}
	return nil
}

// tieGrid is a tile's grid as decimals, as a header would hold them
// (rounded to float64) and as a surveyor would write positions on it.
type tieGrid struct {
	west, north, dx, dy string
	width, height       int
}

func (g tieGrid) georef() geotiff.Georef {
	f := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			panic(err)
		}
		return v
	}
	return geotiff.Georef{West: f(g.west), North: f(g.north), DX: f(g.dx), DY: f(g.dy), Width: g.width, Height: g.height}
}

func (g tieGrid) tile(name string, pix func(col, row int) uint8) geo.RasterTile {
	return geo.RasterTile{Name: name, Grid: g.georef(), Reader: funcReader(pix)}
}

// decimal returns origin + k*step/2 written exactly, with 9 decimals.
func decimal(origin, step string, k int64) string {
	o, _ := new(big.Rat).SetString(origin)
	s, _ := new(big.Rat).SetString(step)
	return o.Add(o, s.Mul(s, big.NewRat(k, 2))).FloatString(9)
}

// halfPx is a position on a tieGrid in half pixels from its upper-left
// corner, eastward and southward: pixel (col, row) has its centre at
// (2col+1, 2row+1) and its corners at even positions.
type halfPx [2]int64

func centre(col, row int64) halfPx { return halfPx{2*col + 1, 2*row + 1} }

// polygonJSON is the GeoJSON Polygon through positions ps of g, closed,
// with each coordinate the exact decimal.
func (g tieGrid) polygonJSON(ps ...halfPx) string {
	var ring []string
	for _, p := range append(ps, ps[0]) {
		ring = append(ring, "["+decimal(g.west, g.dx, p[0])+","+decimal(g.north, "-"+g.dy, p[1])+"]")
	}
	return `{"type":"Polygon","coordinates":[[` + strings.Join(ring, ",") + `]]}`
}

// covers reports whether q lies inside or on the closed ring r, in exact
// integer arithmetic on half pixels: the documented rule, worked out in
// pixel positions rather than degrees. (Rows run southward, a mirror
// image, which changes no answer.)
func covers(r []halfPx, q halfPx) bool {
	in := false
	for i := range r {
		a, b := r[i], r[(i+1)%len(r)]
		side := (b[0]-a[0])*(q[1]-a[1]) - (b[1]-a[1])*(q[0]-a[0])
		if side == 0 && min(a[0], b[0]) <= q[0] && q[0] <= max(a[0], b[0]) && min(a[1], b[1]) <= q[1] && q[1] <= max(a[1], b[1]) {
			return true
		}
		if (a[1] > q[1]) != (b[1] > q[1]) {
			// The side crosses q's row east of q?
			if east := (b[0]-a[0])*(q[1]-a[1]) - (q[0]-a[0])*(b[1]-a[1]); (east > 0) == (b[1] > a[1]) {
				in = !in
			}
		}
	}
	return in
}

// pattern is a tile whose pixel values tell a pixel's column and row
// apart modulo 16, so that the counts by value of a plot less than 16
// pixels across name the pixels counted.
func pattern(col, row int) uint8 { return uint8(col%16 + 16*(row%16)) }

// wantByValue counts, by pattern value, the pixels whose centre the ring
// covers, over the ring's bounding box.
func wantByValue(r []halfPx) (byValue map[uint8]int, n int) {
	lo, hi := r[0], r[0]
	for _, p := range r {
		lo = halfPx{min(lo[0], p[0]), min(lo[1], p[1])}
		hi = halfPx{max(hi[0], p[0]), max(hi[1], p[1])}
	}
	byValue = map[uint8]int{}
	for row := lo[1] / 2; row <= hi[1]/2; row++ {
		for col := lo[0] / 2; col <= hi[0]/2; col++ {
			if covers(r, centre(col, row)) {
				byValue[pattern(int(col), int(row))]++
				n++
			}
		}
	}
	return byValue, n
}

// JRC's forest map is on a 0.0001 degree grid (10 x 10 degree tiles);
// here a tile of it from lon 24.5, lat 0.5.
var forestTies = tieGrid{west: "24.5", north: "0.5", dx: "0.0001", dy: "0.0001", width: 5000, height: 5000}

// Hansen's lossyear tile 10N_080W: 0.00025 degree from lon -80, lat 10.
var hansenTies = tieGrid{west: "-80", north: "10", dx: "0.00025", dy: "0.00025", width: 40000, height: 40000}

// TestZonalStats_SidesThroughCentres: a pixel whose centre lies on a
// plot's side or corner counts, whatever the rounding of the centre's
// position in floating point would say.
func TestZonalStats_SidesThroughCentres(t *testing.T) {
	// The pixel size as a header computed from the extent may hold it, a
	// float64 above the nearest one to 0.00025: it is still 0.00025.
	hansenNext := hansenTies
	hansenNext.dx = strconv.FormatFloat(math.Nextafter(0.00025, 1), 'g', -1, 64)
	hansenNext.dy = hansenNext.dx

	tests := []struct {
		name string
		g    tieGrid
		ring []halfPx
		want int // pixels, worked out by hand
	}{
		// Lon 24.887950-24.889050 (centres of columns 3879-3890), lat
		// 0.347150-0.349150 (rows 1508-1528): 12 x 21 pixels.
		{"rectangle on centres, 0.0001 grid", forestTies,
			[]halfPx{centre(3879, 1528), centre(3890, 1528), centre(3890, 1508), centre(3879, 1508)}, 252},
		// Columns 8044-8080 and rows 1033-1091: 37 x 59.
		{"rectangle on centres, Hansen grid", hansenTies,
			[]halfPx{centre(8044, 1033), centre(8080, 1033), centre(8080, 1091), centre(8044, 1091)}, 37 * 59},
		{"rectangle on centres, Hansen grid, pixel size a float above", hansenNext,
			[]halfPx{centre(8044, 1033), centre(8080, 1033), centre(8080, 1091), centre(8044, 1091)}, 37 * 59},
		// A parallelogram with corners on centres: its slanted sides (3
		// columns for 2 rows) run through a centre every second row.
		{"parallelogram on centres, Hansen grid", hansenTies,
			[]halfPx{centre(8044, 1033), centre(8080, 1057), centre(8080, 1091), centre(8044, 1067)}, -1},
		// A triangle with corners on pixel corners whose sides (1:1, 3:1
		// and 2:1 in half pixels) cross rows on centres.
		{"triangle through centres, Hansen grid", hansenTies,
			[]halfPx{{2 * 8044, 2 * 1033}, {2*8044 + 30, 2*1033 + 30}, {2*8044 - 60, 2*1033 + 10}}, -1},
		{"triangle through centres, 0.0001 grid", forestTies,
			[]halfPx{{2 * 3879, 2 * 1508}, {2*3879 + 42, 2*1508 + 42}, {2*3879 - 42, 2*1508 + 14}}, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			byValue, n := wantByValue(tt.ring)
			if tt.want >= 0 && n != tt.want {
				t.Fatalf("the rule's own count is %d, worked out by hand %d", n, tt.want)
			}
			g := parseOne(t, tt.g.polygonJSON(tt.ring...), "").Geometry
			s, err := geo.ZonalStats(context.Background(), g, 0, tt.g.tile("t", pattern))
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Total(); got != n {
				t.Errorf("%d pixels, want %d", got, n)
			}
			for v := range s.Pixels {
				if s.Pixels[v] != byValue[uint8(v)] {
					t.Errorf("pixels of column %d, row %d mod 16: %d, want %d", v%16, v/16, s.Pixels[v], byValue[uint8(v)])
				}
			}
		})
	}
}

// Loss on Hansen's grid from lon 24, lat 1 over the 0.0001 degree forest
// grid of forestTies: a forest centre's column is a Hansen pixel edge
// when the column is 2 modulo 5, and so is its row.
var lossTies = tieGrid{west: "24", north: "1", dx: "0.00025", dy: "0.00025", width: 4000, height: 4000}

// TestAssess_LossInForestOnCoarseEdges: forest pixels on a plot's side
// that lies on an edge between loss-year pixels take the loss pixel east
// or south of the edge (as a point on an edge between pixels does
// everywhere), on every side, even where that pixel is outside the plot.
func TestAssess_LossInForestOnCoarseEdges(t *testing.T) {
	all := func(v uint8) func(int, int) uint8 { return func(int, int) uint8 { return v } }
	forest := rasterLayer("jrc", geo.Forest2020, forestTies.tile("forest.tif", all(1)))
	loss := rasterLayer("hansen", geo.LossYear, lossTies.tile("loss.tif", all(24)))
	// The same loss as two tiles split at the Hansen column 3197, whose
	// west edge is the centre line of forest column 2992.
	west, east := lossTies, lossTies
	west.width = 3197
	east.west, east.width = "24.79925", 4000-3197
	split := rasterLayer("hansen-split", geo.LossYear, west.tile("loss_w.tif", all(24)), east.tile("loss_e.tif", all(24)))
	// Loss only east of Hansen column 3197 and south of row 2823 (the
	// edge on forest row 2057): none inside the plots below but on those
	// two lines.
	outside := rasterLayer("hansen-outside", geo.LossYear, lossTies.tile("loss_out.tif", func(col, row int) uint8 {
		if col >= 3197 || row >= 2823 {
			return 24
		}
		return 0
	}))

	// Forest columns 2972 and 2992 and rows 2037 and 2057 lie on Hansen
	// pixel edges; 2973, 2991, 2038 and 2056 do not.
	tests := []struct {
		name                   string
		loss                   *geo.RasterLayer
		col0, row0, col1, row1 int64 // the plot's corners: forest centres
		lost                   int
		tiles                  []string // of the loss layer, when they matter
	}{
		{"every side on an edge", loss, 2972, 2037, 2992, 2057, 21 * 21, nil},
		{"east side", loss, 2973, 2038, 2992, 2056, 20 * 19, nil},
		{"south side", loss, 2973, 2038, 2991, 2057, 19 * 20, nil},
		{"south-east corner", loss, 2973, 2038, 2992, 2057, 20 * 20, nil},
		{"north side", loss, 2973, 2037, 2991, 2056, 19 * 20, nil},
		{"west side", loss, 2972, 2038, 2991, 2056, 20 * 19, nil},
		// The tile east of the edge is read for the pixels on it.
		{"east side on the edge between two tiles", split, 2973, 2038, 2992, 2056, 20 * 19, []string{"loss_e.tif", "loss_w.tif"}},
		{"loss east and south of the plot only", outside, 2973, 2038, 2992, 2057, 20 + 20 - 1, nil},
		{"loss east and south of the plot only, sides off the edges", outside, 2973, 2038, 2991, 2056, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plot := forestTies.polygonJSON(centre(tt.col0, tt.row0), centre(tt.col1, tt.row0), centre(tt.col1, tt.row1), centre(tt.col0, tt.row1))
			o := assessRasters(t, parseOne(t, plot, ""), geo.DefaultRules(), tt.loss, forest)
			r := rasterOf(t, o, "jrc")
			pixels := int((tt.col1 - tt.col0 + 1) * (tt.row1 - tt.row0 + 1))
			if !r.Covered || r.Stats.Pixels[1] != pixels {
				t.Fatalf("forest: covered %v, %d px; want covered, %d", r.Covered, r.Stats.Pixels[1], pixels)
			}
			if o.Loss == nil || o.Loss.ForestLayerID != "jrc" {
				t.Fatalf("Loss = %+v, want loss in the forest of jrc", o.Loss)
			}
			if o.Loss.Pixels != tt.lost {
				t.Errorf("loss in forest: %d px, want %d", o.Loss.Pixels, tt.lost)
			}
			if r := rasterOf(t, o, tt.loss.ID); !r.Covered || tt.tiles != nil && !slices.Equal(r.Tiles, tt.tiles) {
				t.Errorf("loss layer: covered %v, tiles %q; want covered, tiles %q", r.Covered, r.Tiles, tt.tiles)
			}
		})
	}
}
