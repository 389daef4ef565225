package geo

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/eudr/eudr/geo/geotiff"
)

// scanRow is a row of a window whose pixel centres lie, some of them,
// inside or on a plot's polygons.
type scanRow struct {
	y   int     // the row in the window
	lat int64   // its centres' latitude
	ha  float64 // the area of each of its cells
	// runs holds the columns of the window inside, as pairs [x0, x1),
	// ascending and apart.
	runs []int
}

// scanRows calls fn for each row of the window w of grid whose pixel
// centres lie inside or on the polygons ps, with the runs of columns
// inside, in exact arithmetic on fixed positions (fixedGrid). xs are the
// columns' centre longitudes. Each polygon's sides are sorted once by
// latitude, so a row crosses only the sides it meets: the cost is the
// crossings plus the pixels, not rows x sides.
func scanRows(ps []fixedPolygon, grid geotiff.Georef, cells cellAreas, w geotiff.Window, fn func(xs []int64, r scanRow)) {
	sc := scanPool.Get().(*scanScratch)
	defer scanPool.Put(sc)
	fg := fixedGrid{grid}
	xs := slices.Grow(sc.xs[:0], w.Width)[:w.Width] // the columns' centre longitudes
	for x := range xs {
		xs[x] = fg.lon(2*(w.Col+x) + 1)
	}
	sides := slices.Grow(sc.sides[:0], len(ps))[:len(ps)]
	for i, p := range ps {
		sides[i].reset(p)
	}
	in := slices.Grow(sc.in[:0], w.Width)[:w.Width]
	clear(in)
	starts, runs := sc.starts[:0], sc.runs[:0]
	for y := range w.Height {
		row := w.Row + y
		lat := fg.lat(2*row + 1)
		lo, hi := w.Width, 0 // the columns marked are within [lo, hi)
		for i := range sides {
			var l, h int
			starts, l, h = sides[i].markRow(xs, lat, in, starts[:0])
			lo, hi = min(lo, l), max(hi, h)
		}
		runs = runs[:0]
		for x := lo; x < hi; x++ {
			if !in[x] {
				continue
			}
			x0 := x
			for x < hi && in[x] {
				in[x] = false
				x++
			}
			runs = append(runs, x0, x)
		}
		if len(runs) > 0 {
			fn(xs, scanRow{y: y, lat: lat, ha: cells.at(row), runs: runs})
		}
	}
	sc.xs, sc.in, sc.sides, sc.starts, sc.runs = xs, in, sides, starts, runs
}

// scanScratch is the space scanRows works in, kept for the next scan:
// a job scans each plot's windows three times.
type scanScratch struct {
	xs           []int64
	in           []bool
	sides        []sideTable
	starts, runs []int
}

var scanPool = sync.Pool{New: func() any { return new(scanScratch) }}

// ringSide is a side of a ring, a south of b (a.y <= b.y).
type ringSide struct{ a, b pt }

// sideTable holds a polygon's sides sorted from north to south by their
// north ends, and those a row of centres meets (active), as rows are
// scanned from north to south.
type sideTable struct {
	sides  []ringSide
	next   int        // sides[next:] start south of the rows scanned so far
	active []ringSide // sides that may meet the next row
	lastY  int64      // the row last marked, if next > 0
}

// reset makes t the table of polygon p's sides, reusing its space.
func (t *sideTable) reset(p fixedPolygon) {
	t.sides, t.next, t.active = t.sides[:0], 0, t.active[:0]
	for _, r := range p {
		for i, j := 0, len(r)-1; i < len(r); j, i = i, i+1 {
			a, b := r[j], r[i]
			if a.y > b.y {
				a, b = b, a
			}
			t.sides = append(t.sides, ringSide{a, b})
		}
	}
	slices.SortFunc(t.sides, func(s, u ringSide) int { return cmp.Compare(u.b.y, s.b.y) })
}

// markRow sets in[x] for the centres (xs[x], y) of a row that lie inside
// or on the polygon: inside its rings by the even-odd rule (the exterior
// ring minus its holes), or on one of them. Rows must come from north to
// south (y not increasing); xs must be ascending; starts is scratch
// space, returned for reuse with the columns marked, all within [lo, hi).
//
// A centre on a side is found where the side crosses the row. Any other
// centre is inside when an odd number of sides cross the row west of it,
// counting a side that crosses from its south end up to, but not
// including, its north end (half-open, so a row through a vertex counts
// the two sides meeting there once or not at all, as it should). Each
// such crossing turns the parity for the centres east of it: sorted, the
// crossings' first centres east of them pair up into runs of centres
// inside.
func (t *sideTable) markRow(xs []int64, y int64, in []bool, starts []int) (_ []int, lo, hi int) {
	n := len(xs)
	lo, hi = n, 0
	mark := func(x0, x1 int) {
		for x := x0; x < x1; x++ {
			in[x] = true
		}
		if x0 < x1 {
			lo, hi = min(lo, x0), max(hi, x1)
		}
	}
	if t.next > 0 && y > t.lastY { // a row north of the last: start again
		t.next, t.active = 0, t.active[:0]
	}
	t.lastY = y
	for t.next < len(t.sides) && t.sides[t.next].b.y >= y {
		t.active = append(t.active, t.sides[t.next])
		t.next++
	}
	kept := t.active[:0]
	for _, s := range t.active {
		a, b := s.a, s.b
		if y < a.y { // south of the side, as are the rows after
			continue
		}
		kept = append(kept, s)
		if a.y == b.y { // a side along the row: its centres are on it
			x := firstCentre(xs, min(a.x, b.x))
			end := x
			for end < n && xs[end] <= max(a.x, b.x) {
				end++
			}
			mark(x, end)
			continue
		}
		x := firstEastOf(xs, a, b, y)
		if x < n && crossing(a, b, xs[x], y) == 0 {
			mark(x, x+1) // on the side
			x++
		}
		if y < b.y {
			starts = append(starts, x)
		}
	}
	t.active = kept
	slices.Sort(starts)
	for i := 0; i+1 < len(starts); i += 2 {
		mark(starts[i], starts[i+1])
	}
	return starts, lo, hi
}

// firstEastOf returns the first x with (xs[x], y) at or east of where side
// a-b (a.y < b.y, a.y <= y <= b.y) crosses latitude y, len(xs) if none:
// guessed in floating point from the centres' spacing, then found
// exactly from there, a step or two.
func firstEastOf(xs []int64, a, b pt, y int64) int {
	n := len(xs)
	east := func(x int) bool { return crossing(a, b, xs[x], y) >= 0 }
	x := 0
	if n > 1 {
		lon := float64(a.x) + float64(y-a.y)*float64(b.x-a.x)/float64(b.y-a.y)
		g := math.Ceil((lon - float64(xs[0])) * float64(n-1) / float64(xs[n-1]-xs[0]))
		switch {
		case g >= float64(n):
			x = n
		case g > 0:
			x = int(g)
		}
	}
	for x > 0 && east(x-1) {
		x--
	}
	for x < n && !east(x) {
		x++
	}
	return x
}

// crossing is the sign of x minus the longitude where side a-b (a south
// of b) crosses latitude y: 0 when (x, y) lies on the side's line.
func crossing(a, b pt, x, y int64) int {
	return cmpMul(x-a.x, b.y-a.y, y-a.y, b.x-a.x)
}

// firstCentre returns the first x with xs[x] >= lon, len(xs) if none.
func firstCentre(xs []int64, lon int64) int {
	return sort.Search(len(xs), func(x int) bool { return xs[x] >= lon })
}
