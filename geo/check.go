package geo

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Reasons Check gives for a feature that cannot be screened: its polygon
// is FAILED with the reason as failureReason (docs/screening.md).
const (
	// ReasonCrossesAntimeridian: a ring has a side joining longitudes more
	// than 180° apart (CodeCrossesAntimeridian). ParseFeatureCollection
	// refuses such rings unless told to leave them here
	// (ParseOptions.DeferAntimeridian).
	ReasonCrossesAntimeridian = "CROSSES_ANTIMERIDIAN"
	// ReasonHolesNotSupported: a polygon has interior rings. The EU
	// information system ignores holes, so the plot would be declared
	// bigger than it is.
	ReasonHolesNotSupported = "HOLES_NOT_SUPPORTED"
	// ReasonDegenerateRing: a ring has fewer than 3 distinct corners, or all
	// its corners lie on one straight line: it encloses no area ("straight
	// line polygons", "at least 4 non-aligned points" in the EU rules).
	ReasonDegenerateRing = "DEGENERATE_RING"
	// ReasonSelfIntersection: two sides of a ring cross (a figure 8), touch
	// (a corner on another side, a corner visited twice) or overlap (a spike
	// or fold going back along the boundary).
	ReasonSelfIntersection = "SELF_INTERSECTION"
	// ReasonOverlappingParts: two polygons of a MultiPolygon overlap (one
	// may lie inside the other) or share a stretch of side. Their common
	// area would be declared twice; OGC simple features (and GEOS) let
	// the parts of a MultiPolygon touch only at points.
	ReasonOverlappingParts = "OVERLAPPING_PARTS"
	// ReasonInsufficientPrecision: no longitude or latitude of the feature
	// is written with MinDecimals or more decimals.
	ReasonInsufficientPrecision = "INSUFFICIENT_PRECISION"
	// ReasonDuplicateVerticesAfterRounding: at the 6 decimals the EU
	// information system keeps, two consecutive corners of a ring are the
	// same point, or the ring stops being valid (its sides cross, touch or
	// overlap, or it collapses onto a line).
	ReasonDuplicateVerticesAfterRounding = "DUPLICATE_VERTICES_AFTER_ROUNDING"
	// ReasonGeometryTooComplex: a ring, or the parts of a MultiPolygon, so
	// large and convoluted (very many sides, or parts, spanning each
	// other's extent) that checking would take unreasonably long. Plot
	// boundaries never come near.
	ReasonGeometryTooComplex = "GEOMETRY_TOO_COMPLEX"
)

// MinDecimals is the precision the EU requires of geolocation coordinates,
// and the precision its information system keeps.
const MinDecimals = 6

// checkBudget is how many pairs of sides Check may compare in a ring of n
// corners: every pair up to about 5,800 corners, then 64 per corner more.
// The parts of a MultiPolygon of n corners in all get the same.
func checkBudget(n int) int { return 1<<24 + 64*n }

// Check returns why a feature from ParseFeatureCollection or ParseFeature
// cannot be screened, decided from its geometry alone: a reason code and a
// sentence for the client, or "", "" if nothing is wrong. Of several
// reasons it gives the first of: a ring crossing the antimeridian, holes,
// a degenerate ring, a self-intersection, overlapping parts of a
// MultiPolygon (these judged on the coordinates as written), insufficient
// precision, then duplicates or damage of a ring at 6 decimals, then parts
// that come to overlap at 6 decimals (OVERLAPPING_PARTS, saying so).
// Winding order does not matter. Check is safe for concurrent use.
func Check(f Feature) (reason, detail string) {
	g := f.Geometry
	for i, poly := range g.Polygons {
		for j, r := range poly {
			if k := antimeridianSide(r); k >= 0 {
				return ReasonCrossesAntimeridian, fmt.Sprintf("ring %s %s", ringPath(g, i, j), antimeridianIssue(k, r[k], r[k+1], plotReader, plotAdvice))
			}
		}
	}
	for i, poly := range g.Polygons {
		if len(poly) > 1 {
			return ReasonHolesNotSupported, fmt.Sprintf(
				"%s has %d interior ring(s): the EU information system ignores holes and would declare the whole outline; send the plot as polygons without holes (two halves of a ring, say)",
				polygonName(g, i), len(poly)-1)
		}
	}
	var w workspace
	for i, poly := range g.Polygons {
		if len(poly) == 0 {
			continue
		}
		w.load(poly[0], asWritten)
		if reason, detail := w.shape(ringName(g, i)); reason != "" {
			return reason, detail
		}
	}
	var ps parts
	if reason, detail := ps.check(&w, g, asWritten); reason != "" {
		return reason, detail
	}
	if f.MaxDecimals < MinDecimals {
		return ReasonInsufficientPrecision, fmt.Sprintf(
			"no coordinate is written with %d or more decimals (the most is %d): the EU requires geolocation to at least %d decimals",
			MinDecimals, f.MaxDecimals, MinDecimals)
	}
	grids := []grid{truncated}
	if f.MaxDecimals > MinDecimals {
		// The EU documents both truncating and rounding to 6 decimals; a
		// ring must survive either. With 6 decimals or fewer both are exact.
		grids = append(grids, rounded)
	}
	for i, poly := range g.Polygons {
		if len(poly) == 0 {
			continue
		}
		for _, gr := range grids {
			w.load(poly[0], gr)
			if w.dupA >= 0 {
				return ReasonDuplicateVerticesAfterRounding, w.duplicate(poly[0], ringName(g, i), gr)
			}
			if gr == truncated && f.MaxDecimals <= MinDecimals {
				continue // the same grid as written: already checked
			}
			if _, detail := w.shape(ringName(g, i)); detail != "" {
				return ReasonDuplicateVerticesAfterRounding, atSixDecimals(gr, detail)
			}
		}
	}
	for _, gr := range grids {
		if gr == truncated && f.MaxDecimals <= MinDecimals {
			continue
		}
		if reason, detail := ps.check(&w, g, gr); reason != "" {
			return reason, atSixDecimals(gr, detail)
		}
	}
	return "", ""
}

func atSixDecimals(g grid, detail string) string {
	return fmt.Sprintf("with coordinates %s to 6 decimals (as the EU information system keeps them), %s", g, detail)
}

// grid is where Check puts a ring's corners.
type grid int

const (
	asWritten grid = iota // nano-degrees: exact for up to 9 decimals
	truncated             // micro-degrees, digits past the 6th dropped
	rounded               // micro-degrees, rounded half away from zero
)

func (g grid) String() string {
	if g == rounded {
		return "rounded"
	}
	return "truncated"
}

func (g grid) of(p Position) pt {
	x, y := nano(p[0]), nano(p[1])
	switch g {
	case truncated:
		return pt{x / 1000, y / 1000}
	case rounded:
		return pt{roundMicro(x), roundMicro(y)}
	}
	return pt{x, y}
}

// nano converts degrees to nano-degrees. A float64 parsed from a decimal of
// up to 9 places (and |v| <= 180) lands on the exact integer.
func nano(v float64) int64 { return int64(math.Round(v * 1e9)) }

// MicroDegrees is v on the micro-degree grid the EU information system
// keeps, rounded half away from zero from the nearest nano-degree: the
// grid Check judges a plot rounded to 6 decimals on. Repairs put their
// corners on it with this, so what they write is what Check reads.
func MicroDegrees(v float64) int64 { return roundMicro(nano(v)) }

func roundMicro(v int64) int64 {
	if v < 0 {
		return (v - 500) / 1000
	}
	return (v + 500) / 1000
}

// workspace holds one ring's corners on a grid, reused between rings.
type workspace struct {
	pts     []pt
	idx     []int // idx[k] is the position index in the ring of corner k
	closing int   // index of the ring's closing position
	dupA    int   // the first consecutive repeat: positions dupA and dupB, or -1
	dupB    int
	sweep   sweep
}

// load puts ring r on grid g, without its closing position and with
// consecutive repeats dropped (the first is noted in dupA, dupB).
func (w *workspace) load(r Ring, g grid) {
	n := len(r)
	w.pts, w.idx, w.dupA, w.dupB = slices.Grow(w.pts[:0], n), slices.Grow(w.idx[:0], n), -1, -1
	w.closing = n - 1
	if n > 1 && r[0] == r[n-1] {
		n--
	}
	for i := range n {
		q := g.of(r[i])
		if m := len(w.pts); m > 0 && w.pts[m-1] == q {
			if w.dupA < 0 {
				w.dupA, w.dupB = w.idx[m-1], i
			}
			continue
		}
		w.pts = append(w.pts, q)
		w.idx = append(w.idx, i)
	}
	for len(w.pts) > 1 && w.pts[len(w.pts)-1] == w.pts[0] {
		last := len(w.pts) - 1
		if w.dupA < 0 {
			w.dupA, w.dupB = w.idx[last], w.closing
		}
		w.pts, w.idx = w.pts[:last], w.idx[:last]
	}
}

// shape checks the loaded ring for DEGENERATE_RING, SELF_INTERSECTION and
// GEOMETRY_TOO_COMPLEX.
func (w *workspace) shape(name string) (reason, detail string) {
	if len(w.pts) < 3 {
		return ReasonDegenerateRing, fmt.Sprintf("ring %s has only %d distinct corner(s): it encloses no area", name, len(w.pts))
	}
	if collinear(w.pts) {
		return ReasonDegenerateRing, fmt.Sprintf("all corners of ring %s lie on one straight line: it encloses no area", name)
	}
	exhausted := len(w.pts) >= 1<<keyBits
	var a, b, kind int
	if !exhausted {
		a, b, kind, exhausted = w.sweep.findDefect(w.pts, checkBudget(len(w.pts)))
	}
	if exhausted {
		return ReasonGeometryTooComplex, fmt.Sprintf("ring %s has %d corners whose sides span each other too much to check; simplify the boundary", name, len(w.pts))
	}
	verb := ""
	switch kind {
	case apart:
		return "", ""
	case crosses:
		verb = "crosses"
	case touches:
		verb = "touches"
	case overlaps:
		verb = "overlaps"
	}
	return ReasonSelfIntersection, fmt.Sprintf("in ring %s, the side from position %s %s the side from position %s", name, w.sideName(a), verb, w.sideName(b))
}

func (w *workspace) sideName(k int) string {
	to := w.closing
	if k+1 < len(w.idx) {
		to = w.idx[k+1]
	}
	return strconv.Itoa(w.idx[k]) + " to " + strconv.Itoa(to)
}

// duplicate words the repeat load found on grid g.
func (w *workspace) duplicate(r Ring, name string, g grid) string {
	a, b := r[w.dupA], r[w.dupB]
	if asWritten.of(a) == asWritten.of(b) {
		return fmt.Sprintf("in ring %s, positions %d and %d are the same point %s: drop the repeat", name, w.dupA, w.dupB, formatPos(b))
	}
	q := g.of(b)
	return fmt.Sprintf("in ring %s, positions %d and %d become the same point [%s, %s] with coordinates %s to 6 decimals, as the EU information system keeps them: drop one or move them apart",
		name, w.dupA, w.dupB, formatMicro(q.x), formatMicro(q.y), g)
}

func formatMicro(v int64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%06d", sign, v/1e6, v%1e6)
}

// ringName is the JSON path of polygon i's exterior ring inside the feature.
func ringName(g Geometry, i int) string { return ringPath(g, i, 0) }

// ringPath is the JSON path of polygon i's ring j inside the feature.
func ringPath(g Geometry, i, j int) string {
	if g.Type == TypeMultiPolygon {
		return fmt.Sprintf("geometry.coordinates[%d][%d]", i, j)
	}
	return fmt.Sprintf("geometry.coordinates[%d]", j)
}

func polygonName(g Geometry, i int) string {
	if g.Type == TypeMultiPolygon {
		return fmt.Sprintf("polygon geometry.coordinates[%d]", i)
	}
	return "the polygon"
}
