package geo

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

func TestCmpMul(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vals := []int64{0, 1, -1, 1<<31 - 1, -(1<<31 - 1), 1 << 31, -(1 << 31), 1 << 40, -(1 << 40), 360e9, -360e9, 1<<62 - 1, -(1 << 62)}
	check := func(a, b, c, d int64) {
		want := new(big.Int).Sub(new(big.Int).Mul(big.NewInt(a), big.NewInt(b)), new(big.Int).Mul(big.NewInt(c), big.NewInt(d))).Sign()
		if got := cmpMul(a, b, c, d); got != want {
			t.Fatalf("cmpMul(%d, %d, %d, %d) = %d, want %d", a, b, c, d, got, want)
		}
	}
	for _, a := range vals {
		for _, b := range vals {
			for _, c := range vals {
				for _, d := range vals {
					check(a, b, c, d)
				}
			}
		}
	}
	for range 200_000 {
		n := func() int64 {
			switch r.IntN(3) {
			case 0:
				return r.Int64N(1<<32) - 1<<31
			case 1:
				return r.Int64N(1<<40) - 1<<39
			}
			return r.Int64N(1<<62) - 1<<61
		}
		a, b, c := n(), n(), n()
		check(a, b, c, r.Int64N(1<<20)-1<<19)
		check(a, b, a, b) // equal products
		check(a, b, b, a)
	}
}

func TestParseFloat(t *testing.T) {
	texts := []string{"0", "-0", "1", "-1", "0.1", "1.50", "-61.123456", "179.999999999", "123456789012345",
		"1234567890123456", "0.000000000000000000000001", "1e-7", "1.5E+3", "9007199254740993", "-0.0000001",
		"1e400", "-1e400", "1e-400", "4.9e-324", "89.99999999999999999999", "0.30000000000000004"}
	r := rand.New(rand.NewPCG(3, 4))
	for range 100_000 {
		f := (r.Float64()*2 - 1) * math.Pow(10, float64(r.IntN(6)))
		texts = append(texts, strconv.FormatFloat(f, 'f', r.IntN(12), 64), strconv.FormatFloat(f, 'f', -1, 64))
	}
	for _, text := range texts {
		want, _ := strconv.ParseFloat(text, 64)
		if got := parseFloat([]byte(text)); got != want || math.Signbit(got) != math.Signbit(want) {
			t.Fatalf("parseFloat(%s) = %v, want %v", text, got, want)
		}
	}
}

func TestGrid(t *testing.T) {
	tests := []struct {
		v                 float64
		trunc, round, nan int64
	}{
		{1.234567, 1234567, 1234567, 1234567000},
		{-1.234567, -1234567, -1234567, -1234567000},
		{1.2345679, 1234567, 1234568, 1234567900},
		{-1.2345679, -1234567, -1234568, -1234567900},
		{1.2345675, 1234567, 1234568, 1234567500},
		{-5.8227394567, -5822739, -5822739, -5822739457},
		{179.999999999, 179999999, 180000000, 179999999999},
		{0.0000005, 0, 1, 500},
	}
	for _, tt := range tests {
		p := Position{tt.v, -tt.v}
		if got := truncated.of(p); got != (pt{tt.trunc, -tt.trunc}) {
			t.Errorf("truncated %v: got %v, want %d", tt.v, got, tt.trunc)
		}
		if got := rounded.of(p); got != (pt{tt.round, -tt.round}) {
			t.Errorf("rounded %v: got %v, want %d", tt.v, got, tt.round)
		}
		if got := asWritten.of(p); got != (pt{tt.nan, -tt.nan}) {
			t.Errorf("as written %v: got %v, want %d", tt.v, got, tt.nan)
		}
	}
	// Every 6-decimal coordinate lands exactly on the grid.
	for i := int64(-180_000_000); i <= 180_000_000; i += 999_983 {
		v, _ := strconv.ParseFloat(formatMicro(i), 64)
		if got := nano(v); got != i*1000 {
			t.Fatalf("%s: nano %d, want %d", formatMicro(i), got, i*1000)
		}
	}
}

func TestContainsRect(t *testing.T) {
	sq := func(x0, y0, x1, y1 float64) Ring {
		return Ring{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}, {x0, y0}}
	}
	// A U shape: a notch from the top, x 4..6, down to y 2.
	u := Ring{{0, 0}, {10, 0}, {10, 10}, {6, 10}, {6, 2}, {4, 2}, {4, 10}, {0, 10}, {0, 0}}
	tests := []struct {
		name   string
		ps     []Polygon
		lo, hi [2]float64
		want   bool
	}{
		{"inside", []Polygon{{sq(0, 0, 10, 10)}}, [2]float64{2, 2}, [2]float64{3, 3}, true},
		{"crossing a side", []Polygon{{sq(0, 0, 10, 10)}}, [2]float64{9, 2}, [2]float64{11, 3}, false},
		{"touching a side", []Polygon{{sq(0, 0, 10, 10)}}, [2]float64{8, 2}, [2]float64{10, 3}, false},
		{"outside", []Polygon{{sq(0, 0, 10, 10)}}, [2]float64{12, 2}, [2]float64{13, 3}, false},
		{"holding the polygon", []Polygon{{sq(0, 0, 10, 10)}}, [2]float64{-1, -1}, [2]float64{11, 11}, false},
		{"in a hole", []Polygon{{sq(0, 0, 10, 10), sq(2, 2, 8, 8)}}, [2]float64{3, 3}, [2]float64{4, 4}, false},
		{"around a hole", []Polygon{{sq(0, 0, 10, 10), sq(4, 4, 5, 5)}}, [2]float64{3, 3}, [2]float64{6, 6}, false},
		{"beside a hole", []Polygon{{sq(0, 0, 10, 10), sq(4, 4, 5, 5)}}, [2]float64{6, 6}, [2]float64{7, 7}, true},
		{"across the notch, no vertex inside", []Polygon{{u}}, [2]float64{1, 5}, [2]float64{9, 6}, false},
		{"below the notch", []Polygon{{u}}, [2]float64{1, 0.5}, [2]float64{9, 1.5}, true},
		{"in the notch", []Polygon{{u}}, [2]float64{4.5, 5}, [2]float64{5.5, 6}, false},
		{"second part", []Polygon{{sq(0, 0, 1, 1)}, {sq(20, 20, 30, 30)}}, [2]float64{21, 21}, [2]float64{22, 22}, true},
	}
	for _, tt := range tests {
		e, _, _, ok := newIndexed(0, "f", tt.ps)
		if !ok {
			t.Fatalf("%s: not indexed", tt.name)
		}
		if got := e.containsRect(tt.lo, tt.hi); got != tt.want {
			t.Errorf("%s: containsRect = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The candidates of a plot are found part by part: a plot split at 180°
// has a box round the globe, and the features in the band between its
// halves are not candidates.
func TestCandidates_PerPart(t *testing.T) {
	sq := func(x0, y0, x1, y1 float64) Polygon {
		return Polygon{Ring{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}, {x0, y0}}}
	}
	var fs []LayerFeature
	for lon := -180; lon < 180; lon += 10 {
		fs = append(fs, LayerFeature{ID: strconv.Itoa(lon), Polygons: []Polygon{sq(float64(lon)+1, 5, float64(lon)+9, 6)}})
	}
	// One feature holding both halves' boxes, and one holding only one.
	fs = append(fs, LayerFeature{ID: "both", Polygons: []Polygon{sq(-180, 0, -170, 10), sq(170, 0, 180, 10)}},
		LayerFeature{ID: "east", Polygons: []Polygon{sq(170, 0, 180, 10)}})
	ix := NewIndex(&Layer{Features: fs})
	// Two halves and a small third part (off 180 itself, which a box
	// touching a feature's side is not held by).
	boxes := partBoxes([]Polygon{sq(175, 5.2, 179.9, 5.8), sq(-179.9, 5.2, -175, 5.8), sq(175.5, 5.3, 176, 5.4)})
	if len(boxes) != 3 {
		t.Fatalf("boxes = %v", boxes)
	}
	var ids, holding []string
	for _, c := range candidates(&ix.features, boxes) {
		ids = append(ids, c.e.id)
		if c.holdsAll(boxes) {
			holding = append(holding, c.e.id)
		}
	}
	slices.Sort(ids)
	if want := []string{"-180", "170", "both", "east"}; !slices.Equal(ids, want) {
		t.Errorf("candidates = %v, want %v, each once", ids, want)
	}
	if !slices.Equal(holding, []string{"both"}) {
		t.Errorf("holding every part's box: %v, want [both]", holding)
	}
}
