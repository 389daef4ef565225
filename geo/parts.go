package geo

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/tidwall/rtree"
)

// parts holds the exterior rings of a MultiPolygon's polygons on one grid,
// to check them against each other (OVERLAPPING_PARTS). Each ring is
// already known to be simple on that grid.
//
// OGC simple features let the parts of a MultiPolygon touch only at
// finitely many points: their interiors must be disjoint and no stretch
// of side may be shared. Given simple rings, two parts break that rule
// exactly when a side of one crosses a side of the other, two sides
// overlap along a stretch, the area of one reaches into the other's
// where their boundaries meet at a point, or the whole of one lies inside
// the other without their boundaries meeting. The last is decided by one
// corner of the part whose bounding box lies within the other's: once the
// first three are ruled out, a ring's boundary lies either wholly inside
// the other part or wholly out of it, since it can only go in where the
// boundaries meet.
type parts struct {
	pts     []pt   // every part's corners, part after part, as workspace.load leaves them
	idx     []int  // idx[c] is corner c's position index in its ring
	start   []int  // part p's corners are pts[start[p]:start[p+1]]
	closing []int  // closing[p] is the index of part p's closing position
	polygon []int  // polygon[p] is part p's index in the MultiPolygon
	boxes   []side // part p's bounding box
	ccw     []bool // part p's ring turns counter-clockwise
	sides   []side // sides[c] is the box of the side from corner c to the next of its ring
	west    int64  // the westernmost corner's longitude
	// byX holds each part's sides as sort keys, west end (from west) << 24
	// | c, sorted within the part: byX[start[p]:start[p+1]]. reach[p] is
	// the widest of part p's sides: with both, the sides spanning some
	// longitudes are found without going through the whole ring.
	byX     []uint64
	reach   []int64
	order   []uint64 // the sides of two parts being compared, as keys
	earlier []int    // the parts before the one being checked whose boxes meet its own
}

// How two parts of a MultiPolygon break the rule.
const (
	partsCross     = iota + 1 // a side of each cross
	partsShareSide            // two sides overlap along a stretch
	partsMeetInto             // their boundaries meet at a point, where one's area reaches into the other's
	partsInside               // one lies inside the other
)

// partDefect is the first way found in which parts p < q break the rule.
type partDefect struct {
	kind   int
	p, q   int
	a, b   int // partsCross: the sides (their first corners) of p and of q; partsInside: the inner part, the outer
	at, to pt  // partsShareSide: the shared stretch; partsMeetInto: the point
}

// check checks the polygons of g against each other on grid gr, returning
// OVERLAPPING_PARTS or GEOMETRY_TOO_COMPLEX with a sentence, or "", "".
// w is scratch space for loading the rings.
func (ps *parts) check(w *workspace, g Geometry, gr grid) (reason, detail string) {
	if len(g.Polygons) < 2 {
		return "", ""
	}
	ps.load(w, g.Polygons, gr)
	if len(ps.start) < 3 {
		return "", ""
	}
	if len(ps.pts) >= 1<<keyBits {
		return ps.tooComplex()
	}
	d, exhausted := ps.find(checkBudget(len(ps.pts)))
	switch {
	case exhausted:
		return ps.tooComplex()
	case d.kind == 0:
		return "", ""
	}
	return ReasonOverlappingParts, ps.describe(d, g, gr)
}

func (ps *parts) tooComplex() (reason, detail string) {
	return ReasonGeometryTooComplex, fmt.Sprintf(
		"the %d polygons of the MultiPolygon (%d corners in all) span each other too much to check them against each other; simplify them, or send far-apart ones as features of their own",
		len(ps.start)-1, len(ps.pts))
}

// load puts the exterior ring of every polygon on grid g.
func (ps *parts) load(w *workspace, polys []Polygon, g grid) {
	ps.pts, ps.idx = ps.pts[:0], ps.idx[:0]
	ps.start, ps.closing, ps.polygon = append(ps.start[:0], 0), ps.closing[:0], ps.polygon[:0]
	for i, poly := range polys {
		if len(poly) == 0 {
			continue
		}
		w.load(poly[0], g)
		ps.pts = append(ps.pts, w.pts...)
		ps.idx = append(ps.idx, w.idx...)
		ps.start = append(ps.start, len(ps.pts))
		ps.closing = append(ps.closing, w.closing)
		ps.polygon = append(ps.polygon, i)
	}
	n := len(ps.start) - 1
	ps.boxes, ps.ccw, ps.reach = ps.boxes[:0], ps.ccw[:0], ps.reach[:0]
	ps.sides = slices.Grow(ps.sides[:0], len(ps.pts))[:len(ps.pts)]
	ps.byX = slices.Grow(ps.byX[:0], len(ps.pts))[:len(ps.pts)]
	if len(ps.pts) > 0 {
		ps.west = ps.pts[0].x
	}
	for p := range n {
		lo := ps.start[p] // the lowest corner, the westernmost of those
		box := side{ps.pts[lo].x, ps.pts[lo].x, ps.pts[lo].y, ps.pts[lo].y}
		reach := int64(0)
		for c := ps.start[p]; c < ps.start[p+1]; c++ {
			a, b := ps.pts[c], ps.pts[ps.next(p, c)]
			ps.sides[c] = side{min(a.x, b.x), max(a.x, b.x), min(a.y, b.y), max(a.y, b.y)}
			box = side{min(box.minX, a.x), max(box.maxX, a.x), min(box.minY, a.y), max(box.maxY, a.y)}
			reach = max(reach, ps.sides[c].maxX-ps.sides[c].minX)
			if l := ps.pts[lo]; a.y < l.y || a.y == l.y && a.x < l.x {
				lo = c
			}
		}
		ps.boxes = append(ps.boxes, box)
		ps.reach = append(ps.reach, reach)
		ps.west = min(ps.west, box.minX)
		// A simple ring turns at its lowest corner the way it runs.
		ps.ccw = append(ps.ccw, orient(ps.pts[ps.prev(p, lo)], ps.pts[lo], ps.pts[ps.next(p, lo)]) > 0)
	}
	for c, sd := range ps.sides {
		// Grid coordinates span less than 2^39, so the key fits in 63 bits.
		ps.byX[c] = uint64(sd.minX-ps.west)<<keyBits | uint64(c)
	}
	for p := range n {
		slices.Sort(ps.byX[ps.start[p]:ps.start[p+1]])
	}
}

// spanning returns, as keys, the sides of part p whose west end is within
// its widest side's width west of x0, up to x1: among them every side
// spanning some longitude from x0 to x1.
func (ps *parts) spanning(p int, x0, x1 int64) []uint64 {
	keys := ps.byX[ps.start[p]:ps.start[p+1]]
	i, _ := slices.BinarySearch(keys, uint64(max(x0-ps.reach[p]-ps.west, 0))<<keyBits)
	j, _ := slices.BinarySearch(keys, uint64(x1-ps.west+1)<<keyBits)
	return keys[i:j]
}

// next and prev are the corners after and before corner c of part p.
func (ps *parts) next(p, c int) int {
	if c+1 == ps.start[p+1] {
		return ps.start[p]
	}
	return c + 1
}

func (ps *parts) prev(p, c int) int {
	if c == ps.start[p] {
		return ps.start[p+1] - 1
	}
	return c - 1
}

func boxesMeet(a, b side) bool {
	return a.minX <= b.maxX && b.minX <= a.maxX && a.minY <= b.maxY && b.minY <= a.maxY
}

func boxHolds(outer, inner side) bool {
	return outer.minX <= inner.minX && inner.maxX <= outer.maxX && outer.minY <= inner.minY && inner.maxY <= outer.maxY
}

// find looks for the first pair of parts, ordered by the later part then
// the earlier, that breaks the rule. Only parts whose bounding boxes meet
// are compared (found with an R-tree, so that many small parts side by
// side cost about n log n however they are laid out), and of those only
// the sides that reach into both boxes (found with byX). budget bounds
// the work; exhausted reports that it ran out.
func (ps *parts) find(budget int) (d partDefect, exhausted bool) {
	var tr rtree.RTree
	n := len(ps.start) - 1
	corners := func(b side) (lo, hi [2]float64) {
		// Grid coordinates are below 2^39: exact as float64.
		return [2]float64{float64(b.minX), float64(b.minY)}, [2]float64{float64(b.maxX), float64(b.maxY)}
	}
	for q := range n {
		lo, hi := corners(ps.boxes[q])
		ps.earlier = ps.earlier[:0]
		tr.Search(lo, hi, func(_, _ [2]float64, v any) bool {
			ps.earlier = append(ps.earlier, v.(int))
			budget--
			return budget >= 0
		})
		if budget < 0 {
			return d, true
		}
		slices.Sort(ps.earlier)
		for _, p := range ps.earlier {
			if d, exhausted = ps.pair(p, q, &budget); exhausted || d.kind != 0 {
				return d, exhausted
			}
		}
		tr.Insert(lo, hi, q)
	}
	return d, false
}

// pair checks parts p < q, whose boxes meet.
func (ps *parts) pair(p, q int, budget *int) (d partDefect, exhausted bool) {
	bp, bq := ps.boxes[p], ps.boxes[q]
	both := side{max(bp.minX, bq.minX), min(bp.maxX, bq.maxX), max(bp.minY, bq.minY), min(bp.maxY, bq.maxY)}
	ps.order = ps.order[:0]
	for _, r := range [2]int{p, q} {
		keys := ps.spanning(r, both.minX, both.maxX)
		if *budget -= len(keys); *budget < 0 {
			return d, true
		}
		for _, k := range keys {
			if boxesMeet(ps.sides[k&(1<<keyBits-1)], both) {
				ps.order = append(ps.order, k)
			}
		}
	}
	// Sides swept by their west end, as findDefect does, each of p
	// against each of q whose box meets its own. A shared stretch of side
	// is kept while the rest is searched for an overlap, which says more.
	var shared partDefect
	slices.Sort(ps.order)
	for i, oi := range ps.order {
		ci := int(oi & (1<<keyBits - 1))
		si := ps.sides[ci]
		for _, oj := range ps.order[i+1:] {
			cj := int(oj & (1<<keyBits - 1))
			sj := ps.sides[cj]
			if sj.minX > si.maxX {
				break
			}
			if *budget--; *budget < 0 {
				return d, true
			}
			if (ci < ps.start[q]) == (cj < ps.start[q]) || sj.maxY < si.minY || sj.minY > si.maxY {
				continue
			}
			switch d = ps.sidesMeet(p, q, min(ci, cj), max(ci, cj)); d.kind {
			case 0:
			case partsShareSide:
				if shared.kind == 0 {
					shared = d
				}
			default:
				return d, false
			}
		}
	}
	// No boundaries crossing or going into each other: one part is
	// inside the other only if a corner of it is.
	for _, io := range [2][2]int{{q, p}, {p, q}} {
		in, out := io[0], io[1]
		if !boxHolds(ps.boxes[out], ps.boxes[in]) {
			continue
		}
		c := ps.pts[ps.start[in]]
		keys := ps.spanning(out, c.x, c.x)
		if *budget -= len(keys); *budget < 0 {
			return d, true
		}
		if ps.locate(out, keys, c) > 0 {
			return partDefect{kind: partsInside, p: p, q: q, a: in, b: out}, false
		}
	}
	return shared, false
}

// sidesMeet tells how side a of part p and side b of part q break the
// rule, if they do.
func (ps *parts) sidesMeet(p, q, a, b int) partDefect {
	a1, a2 := ps.pts[a], ps.pts[ps.next(p, a)]
	b1, b2 := ps.pts[b], ps.pts[ps.next(q, b)]
	switch meet(a1, a2, b1, b2) {
	case crosses:
		return partDefect{kind: partsCross, p: p, q: q, a: a, b: b}
	case overlaps:
		from, to := sharedStretch(a1, a2, b1, b2)
		return partDefect{kind: partsShareSide, p: p, q: q, at: from, to: to}
	case touches:
		// Where they touch, a corner of one lies on the other side.
		for _, t := range [4]pt{a1, a2, b1, b2} {
			if orient(a1, a2, t) == 0 && within(a1, a2, t) && orient(b1, b2, t) == 0 && within(b1, b2, t) &&
				ps.reachesInto(p, a, q, b, t) {
				return partDefect{kind: partsMeetInto, p: p, q: q, at: t}
			}
		}
	}
	return partDefect{}
}

// reachesInto tells whether, at point t where side a of part p and side b
// of part q meet, a side of either leaves t into the other's area.
func (ps *parts) reachesInto(p, a, q, b int, t pt) bool {
	pa, na := ps.around(p, a, t)
	pb, nb := ps.around(q, b, t)
	ua, va := ps.interior(p, pa, na, t)
	ub, vb := ps.interior(q, pb, nb, t)
	return inSector(ua, va, minus(pb, t)) || inSector(ua, va, minus(nb, t)) ||
		inSector(ub, vb, minus(pa, t)) || inSector(ub, vb, minus(na, t))
}

// around returns the corners before and after point t, on side c of part
// p, going along the ring: t may be a corner or inside the side.
func (ps *parts) around(p, c int, t pt) (before, after pt) {
	n := ps.next(p, c)
	switch t {
	case ps.pts[c]:
		return ps.pts[ps.prev(p, c)], ps.pts[n]
	case ps.pts[n]:
		return ps.pts[c], ps.pts[ps.next(p, n)]
	}
	return ps.pts[c], ps.pts[n]
}

// interior returns the directions bounding part p's area at t, whose
// neighbours along the ring are before and after: the area is swept
// counter-clockwise from u to v. (A ring's area lies on its left when it
// runs counter-clockwise.)
func (ps *parts) interior(p int, before, after, t pt) (u, v pt) {
	if ps.ccw[p] {
		return minus(after, t), minus(before, t)
	}
	return minus(before, t), minus(after, t)
}

func minus(a, b pt) pt { return pt{a.x - b.x, a.y - b.y} }

// cross is the sign of the cross product u×v.
func cross(u, v pt) int { return cmpMul(u.x, v.y, u.y, v.x) }

// inSector reports whether direction d lies strictly inside the angle
// swept counter-clockwise from direction u to direction v (u ≠ v).
func inSector(u, v, d pt) bool {
	switch c := cross(u, v); {
	case c > 0: // less than a half turn
		return cross(u, d) > 0 && cross(d, v) > 0
	case c < 0: // more than a half turn: outside the angle from v to u
		return !(cross(v, d) >= 0 && cross(d, u) >= 0)
	}
	return cross(u, d) > 0 // a half turn: a straight boundary
}

// sharedStretch returns the ends of the stretch two overlapping collinear
// sides share, west to east (south to north for a north-south line).
func sharedStretch(a1, a2, b1, b2 pt) (from, to pt) {
	ends := [4]pt{a1, a2, b1, b2}
	slices.SortFunc(ends[:], func(m, n pt) int {
		return cmp.Or(cmp.Compare(m.x, n.x), cmp.Compare(m.y, n.y))
	})
	return ends[1], ends[2]
}

// locate tells where c lies for part p: 1 inside, 0 on its boundary, -1
// outside. keys are the part's sides spanning c's longitude (and maybe
// others). Exact: it counts the sides crossing the ray north of c, each
// with its west end closed and its east end open.
func (ps *parts) locate(p int, keys []uint64, c pt) int {
	in := false
	for _, k := range keys {
		s := int(k & (1<<keyBits - 1))
		a, b := ps.pts[s], ps.pts[ps.next(p, s)]
		o := orient(a, b, c)
		if o == 0 && within(a, b, c) {
			return 0
		}
		// Going east, the side passes north of c when c is on its right.
		if (a.x > c.x) != (b.x > c.x) && (b.x > a.x) == (o < 0) {
			in = !in
		}
	}
	if in {
		return 1
	}
	return -1
}

// describe words d for the client.
func (ps *parts) describe(d partDefect, g Geometry, gr grid) string {
	i, j := ps.polygon[d.p], ps.polygon[d.q]
	pair := fmt.Sprintf("polygons %d and %d of the MultiPolygon", i, j)
	const twice = "their common area would be declared twice: merge them into one polygon or take the overlap out of one"
	switch d.kind {
	case partsCross:
		return fmt.Sprintf("%s overlap: the side from position %s of ring %s crosses the side from position %s of ring %s; %s",
			pair, ps.sideName(d.p, d.a), ringName(g, i), ps.sideName(d.q, d.b), ringName(g, j), twice)
	case partsShareSide:
		return fmt.Sprintf("%s share a side from %s to %s: parts of a MultiPolygon may touch only at points; merge them into one polygon",
			pair, gr.format(d.at), gr.format(d.to))
	case partsMeetInto:
		return fmt.Sprintf("%s overlap next to %s, where their boundaries meet; %s", pair, gr.format(d.at), twice)
	}
	return fmt.Sprintf("%s overlap: polygon %d lies inside polygon %d; %s", pair, ps.polygon[d.a], ps.polygon[d.b], twice)
}

// sideName is "i to j", the positions in its ring of side c of part p.
func (ps *parts) sideName(p, c int) string {
	to := ps.closing[p]
	if c+1 < ps.start[p+1] {
		to = ps.idx[c+1]
	}
	return strconv.Itoa(ps.idx[c]) + " to " + strconv.Itoa(to)
}

// format writes a point of grid g as [lon, lat].
func (g grid) format(p pt) string {
	if g == asWritten {
		return formatPos(Position{float64(p.x) / 1e9, float64(p.y) / 1e9})
	}
	return "[" + formatMicro(p.x) + ", " + formatMicro(p.y) + "]"
}
