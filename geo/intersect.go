package geo

import (
	"cmp"
	"math/bits"
	"slices"
)

// pt is a position on an integer grid (nano- or micro-degrees), where the
// predicates below are exact.
type pt struct{ x, y int64 }

// cmpMul returns the sign of a*b - c*d, exactly: with int64 arithmetic when
// the factors are small, with 128-bit products otherwise.
func cmpMul(a, b, c, d int64) int {
	const lim = 1 << 31
	if a > -lim && a < lim && b > -lim && b < lim && c > -lim && c < lim && d > -lim && d < lim {
		return cmp.Compare(a*b, c*d)
	}
	h1, l1 := mul128(a, b)
	h2, l2 := mul128(c, d)
	if h1 != h2 {
		return cmp.Compare(h1, h2)
	}
	return cmp.Compare(l1, l2)
}

// mul128 returns the 128-bit two's complement product of a and b.
func mul128(a, b int64) (hi int64, lo uint64) {
	h, l := bits.Mul64(uint64(a), uint64(b))
	hi = int64(h)
	if a < 0 {
		hi -= b
	}
	if b < 0 {
		hi -= a
	}
	return hi, l
}

// orient is the sign of the cross product (b-a)×(c-a): 1 when a, b, c turn
// counter-clockwise, -1 clockwise, 0 when they are collinear. Exact while
// coordinate differences fit in 63 bits (grid coordinates are below 2^38).
func orient(a, b, c pt) int {
	return cmpMul(b.x-a.x, c.y-a.y, b.y-a.y, c.x-a.x)
}

// within reports whether c lies in the bounding box of a and b; for c
// collinear with them, whether c lies on the segment ab.
func within(a, b, c pt) bool {
	return min(a.x, b.x) <= c.x && c.x <= max(a.x, b.x) && min(a.y, b.y) <= c.y && c.y <= max(a.y, b.y)
}

// How two sides of a ring meet.
const (
	apart    = iota
	crosses  // proper crossing: a figure 8
	touches  // a corner on another side, or a corner repeated
	overlaps // collinear sides sharing a stretch: a fold or spike
)

// meet tells how two sides a1a2 and b1b2 that share no corner meet.
func meet(a1, a2, b1, b2 pt) int {
	d1, d2 := orient(b1, b2, a1), orient(b1, b2, a2)
	d3, d4 := orient(a1, a2, b1), orient(a1, a2, b2)
	switch {
	case d1*d2 < 0 && d3*d4 < 0:
		return crosses
	case d1 == 0 && d2 == 0: // collinear
		if !within(a1, a2, b1) && !within(a1, a2, b2) && !within(b1, b2, a1) && !within(b1, b2, a2) {
			return apart
		}
		// Compare the stretches along the axis the sides vary on.
		alo, ahi, blo, bhi := a1.x, a2.x, b1.x, b2.x
		if a1.x == a2.x && b1.x == b2.x {
			alo, ahi, blo, bhi = a1.y, a2.y, b1.y, b2.y
		}
		if alo > ahi {
			alo, ahi = ahi, alo
		}
		if blo > bhi {
			blo, bhi = bhi, blo
		}
		if min(ahi, bhi) > max(alo, blo) {
			return overlaps
		}
		return touches
	case d1 == 0 && within(b1, b2, a1), d2 == 0 && within(b1, b2, a2),
		d3 == 0 && within(a1, a2, b1), d4 == 0 && within(a1, a2, b2):
		return touches
	}
	return apart
}

// folds tells whether consecutive sides uv and vw overlap: the boundary
// goes back along itself at v (a spike).
func folds(u, v, w pt) int {
	if orient(u, v, w) != 0 {
		return apart
	}
	// Collinear and both non-zero: overlapping when w lies on v's u side.
	if dx := cmp.Compare(u.x, v.x); dx != 0 {
		if dx == cmp.Compare(w.x, v.x) {
			return overlaps
		}
		return apart
	}
	if cmp.Compare(u.y, v.y) == cmp.Compare(w.y, v.y) {
		return overlaps
	}
	return apart
}

// side is a side of a ring with its bounding box.
type side struct{ minX, maxX, minY, maxY int64 }

// sweep is findDefect's scratch space, reused between rings.
type sweep struct {
	sides []side   // sides[k] runs from corner k to the next
	order []uint64 // west end (from the ring's west end) << 24 | k, sorted
}

// keyBits is how many low bits of an order key hold the side's index:
// findDefect takes rings of fewer than 1<<keyBits corners.
const keyBits = 24

// findDefect looks for two sides of a ring that cross, touch or overlap.
// pts are the ring's corners without the closing one and without
// consecutive repeats (the last differs from the first);
// 3 <= len(pts) < 1<<keyBits.
// Sides are swept in order of their west end, and only pairs whose
// bounding boxes overlap are tested: about O(n log n) for plot boundaries.
// budget bounds the pairs looked at; exhausted reports that it ran out.
func (sw *sweep) findDefect(pts []pt, budget int) (a, b, kind int, exhausted bool) {
	n := len(pts)
	sw.sides = slices.Grow(sw.sides[:0], n)[:n]
	sw.order = slices.Grow(sw.order[:0], n)[:n]
	west := pts[0].x
	for _, p := range pts {
		west = min(west, p.x)
	}
	for k := range n {
		p, q := pts[k], pts[(k+1)%n]
		sw.sides[k] = side{min(p.x, q.x), max(p.x, q.x), min(p.y, q.y), max(p.y, q.y)}
		// Grid coordinates span less than 2^39, so the key fits in 63 bits.
		sw.order[k] = uint64(sw.sides[k].minX-west)<<keyBits | uint64(k)
	}
	slices.Sort(sw.order)
	for i, oi := range sw.order {
		ki := int(oi & (1<<keyBits - 1))
		si := &sw.sides[ki]
		for _, oj := range sw.order[i+1:] {
			kj := int(oj & (1<<keyBits - 1))
			sj := &sw.sides[kj]
			if sj.minX > si.maxX {
				break
			}
			if budget--; budget < 0 {
				return 0, 0, apart, true
			}
			if sj.maxY < si.minY || sj.minY > si.maxY {
				continue
			}
			ka, kb := min(ki, kj), max(ki, kj)
			var kind int
			switch {
			case kb == ka+1:
				kind = folds(pts[ka], pts[kb], pts[(kb+1)%n])
			case ka == 0 && kb == n-1:
				kind = folds(pts[kb], pts[0], pts[1])
			default:
				kind = meet(pts[ka], pts[ka+1], pts[kb], pts[(kb+1)%n])
			}
			if kind != apart {
				return ka, kb, kind, false
			}
		}
	}
	return 0, 0, apart, false
}

// collinear reports whether all corners lie on one line (pts[0] != pts[1]).
func collinear(pts []pt) bool {
	for _, c := range pts[2:] {
		if orient(pts[0], pts[1], c) != 0 {
			return false
		}
	}
	return true
}
