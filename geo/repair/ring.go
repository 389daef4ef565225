package repair

import (
	"github.com/eudr/eudr/geo"
)

// pt is a corner in micro-degrees: the grid of 6 decimals the EU
// information system keeps, on which every repaired ring is built and
// written, so that what is checked is what is sent.
type pt struct{ x, y int64 }

// ring is a ring's corners, without the closing repeat.
type ring []pt

func (p pt) position() geo.Position { return geo.Position{float64(p.x) / 1e6, float64(p.y) / 1e6} }

// positions returns r closed, in degrees.
func (r ring) positions() geo.Ring {
	out := make(geo.Ring, 0, len(r)+1)
	for _, p := range r {
		out = append(out, p.position())
	}
	if len(r) > 0 {
		out = append(out, r[0].position())
	}
	return out
}

// cross is the z of (b-a) x (c-a): > 0 when a, b, c turn left. Corners
// within 360e6 of each other keep it inside int64.
func cross(a, b, c pt) int64 {
	return (b.x-a.x)*(c.y-a.y) - (b.y-a.y)*(c.x-a.x)
}

// dropRepeats removes corners equal to the one before them (the last is
// compared with the first), returning how many went.
func dropRepeats(r ring) (ring, int) {
	out := r[:0:0]
	for _, p := range r {
		if len(out) > 0 && out[len(out)-1] == p {
			continue
		}
		out = append(out, p)
	}
	for len(out) > 1 && out[len(out)-1] == out[0] {
		out = out[:len(out)-1]
	}
	return out, len(r) - len(out)
}

// dropSpikes removes every corner whose two sides run out and back along
// one line (the ring goes to it and returns the way it came), and the
// repeats that leaves, until none is left. A spike encloses no area. It
// returns how many corners went.
func dropSpikes(r ring) (ring, int) {
	removed := 0
	for changed := true; changed && len(r) >= 3; {
		changed = false
		for i := 0; i < len(r) && len(r) >= 3; {
			a, b, c := r[(i+len(r)-1)%len(r)], r[i], r[(i+1)%len(r)]
			back := (b.x-a.x)*(c.x-b.x)+(b.y-a.y)*(c.y-b.y) < 0
			if cross(a, b, c) == 0 && back {
				r = append(r[:i:i], r[i+1:]...)
				removed++
				changed = true
				var n int
				r, n = dropRepeats(r)
				removed += n
				continue
			}
			i++
		}
	}
	return r, removed
}

// twiceArea is twice the planar signed area of r in square micro-degrees:
// positive counter-clockwise. Corners are taken relative to the first, so
// that for a plot the products stay small and the sum exact.
func twiceArea(r ring) float64 {
	if len(r) < 3 {
		return 0
	}
	o := r[0]
	var s float64
	for i := 1; i+1 < len(r); i++ {
		s += float64(cross(o, r[i], r[i+1]))
	}
	return s
}

// degenerate reports whether r encloses no area: fewer than 3 corners or
// all on one line.
func degenerate(r ring) bool {
	if len(r) < 3 {
		return true
	}
	for i := 2; i < len(r); i++ {
		if cross(r[0], r[1], r[i]) != 0 {
			return false
		}
	}
	return true
}

// reversed returns r the other way round, from the same first corner.
func reversed(r ring) ring {
	out := make(ring, len(r))
	out[0] = r[0]
	for i := 1; i < len(r); i++ {
		out[i] = r[len(r)-i]
	}
	return out
}
