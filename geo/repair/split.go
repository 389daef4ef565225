package repair

import (
	"math"
	"slices"
)

// maxSplitCorners bounds the rings split compares side by side (every pair
// of sides): plot boundaries have tens or hundreds of corners.
const maxSplitCorners = 4000

// node is a point where a side meets another, at t along it (0 at its start, 1 at its end).
type node struct {
	t float64
	p pt
}

// split cuts a ring that meets itself (a figure eight, a bowtie, a corner
// landing on another side) into the loops it is made of: it adds a corner
// wherever two sides cross or touch (crossings put on the grid), then walks
// the ring, cutting off a loop each time it comes back to a corner it has
// passed. Loops that enclose no area (a there-and-back stretch) are
// dropped and counted. ok is false for a ring too large to split.
func split(r ring) (loops []ring, dropped int, ok bool) {
	n := len(r)
	if n > maxSplitCorners {
		return nil, 0, false
	}
	extra := make([][]node, n)
	for i := range n {
		a, b := r[i], r[(i+1)%n]
		for j := i + 1; j < n; j++ {
			c, d := r[j], r[(j+1)%n]
			if !boxesMeet(a, b, c, d) {
				continue
			}
			d1, d2 := cross(a, b, c), cross(a, b, d)
			d3, d4 := cross(c, d, a), cross(c, d, b)
			if (d1 > 0 && d2 < 0 || d1 < 0 && d2 > 0) && (d3 > 0 && d4 < 0 || d3 < 0 && d4 > 0) {
				ti := float64(d3) / float64(d3-d4)
				tj := float64(d1) / float64(d1-d2)
				p := pt{a.x + int64(math.Round(ti*float64(b.x-a.x))), a.y + int64(math.Round(ti*float64(b.y-a.y)))}
				extra[i] = append(extra[i], node{ti, p})
				extra[j] = append(extra[j], node{tj, p})
				continue
			}
			// Touches and stretches in common: a corner of one side on
			// the other becomes a corner of that side too.
			for _, e := range [2]pt{c, d} {
				if t, on := along(a, b, e); on {
					extra[i] = append(extra[i], node{t, e})
				}
			}
			for _, e := range [2]pt{a, b} {
				if t, on := along(c, d, e); on {
					extra[j] = append(extra[j], node{t, e})
				}
			}
		}
	}
	noded := make(ring, 0, 2*n)
	for i := range n {
		noded = append(noded, r[i])
		slices.SortFunc(extra[i], func(x, y node) int {
			switch {
			case x.t < y.t:
				return -1
			case x.t > y.t:
				return 1
			}
			return 0
		})
		for _, e := range extra[i] {
			noded = append(noded, e.p)
		}
	}
	noded, _ = dropRepeats(noded)
	for _, l := range walkLoops(noded) {
		l, _ = dropRepeats(l)
		l, _ = dropSpikes(l)
		if degenerate(l) || twiceArea(l) == 0 {
			dropped++
			continue
		}
		loops = append(loops, l)
	}
	return loops, dropped, true
}

// walkLoops walks a noded ring and cuts it into loops at the corners it
// passes twice.
func walkLoops(r ring) []ring {
	var loops []ring
	var path ring
	at := map[pt]int{} // where each corner on the path is
	for _, p := range r {
		if k, seen := at[p]; seen {
			loops = append(loops, slices.Clone(path[k:]))
			for _, q := range path[k+1:] {
				delete(at, q)
			}
			path = path[:k+1]
			continue
		}
		at[p] = len(path)
		path = append(path, p)
	}
	return append(loops, path)
}

// boxesMeet reports whether the bounding boxes of sides ab and cd meet.
func boxesMeet(a, b, c, d pt) bool {
	return max(a.x, b.x) >= min(c.x, d.x) && max(c.x, d.x) >= min(a.x, b.x) &&
		max(a.y, b.y) >= min(c.y, d.y) && max(c.y, d.y) >= min(a.y, b.y)
}

// along reports whether e lies on side ab strictly between its ends, and
// where (0 to 1).
func along(a, b, e pt) (float64, bool) {
	if e == a || e == b || cross(a, b, e) != 0 {
		return 0, false
	}
	if e.x < min(a.x, b.x) || e.x > max(a.x, b.x) || e.y < min(a.y, b.y) || e.y > max(a.y, b.y) {
		return 0, false
	}
	dx, dy := float64(b.x-a.x), float64(b.y-a.y)
	return (float64(e.x-a.x)*dx + float64(e.y-a.y)*dy) / (dx*dx + dy*dy), true
}
