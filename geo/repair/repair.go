// Package repair fixes what is wrong with a plot's geometry where the fix
// is certain, and says what it changed: a ring left open, positions
// repeated, a spike, a ring crossing itself (split into its loops), parts
// of a MultiPolygon that overlap (merged), holes (removed, with the area
// they held), and coordinates that collapse at 6 decimals. What it cannot
// fix safely (a ring that encloses nothing, a ring across the
// antimeridian, too few decimals) is reported and the geometry left as
// sent. A repaired feature always passes geo.Check. A plot that lies
// outside its producerCountry as sent and inside it with latitude and
// longitude swapped is swapped (geo/borders, the country check's
// boundaries).
//
// A plot geo.Check accepts is left exactly as sent (apart from closing an
// open ring), whatever its winding or its number of decimals. A plot it
// refuses is rebuilt on the grid of 6 decimals the EU information system
// keeps, every exterior ring counter-clockwise as RFC 7946 asks. The
// package does no I/O.
package repair

import (
	"fmt"

	"github.com/eudr/eudr/geo"
)

// Codes of the changes a repair makes.
const (
	// RingClosed: the ring's last position did not repeat its first; the
	// first was added at the end. Positions: 1.
	RingClosed = "RING_CLOSED"
	// DuplicatePositionsRemoved: positions equal to the one before them,
	// as sent or once rounded to 6 decimals, were dropped. Positions: how many.
	DuplicatePositionsRemoved = "DUPLICATE_POSITIONS_REMOVED"
	// RoundedTo6Decimals: the plot's coordinates were rounded to 6
	// decimals (half away from zero), as the EU information system keeps
	// them. Positions: how many moved.
	RoundedTo6Decimals = "ROUNDED_TO_6_DECIMALS"
	// SpikesRemoved: corners where the boundary ran out and back along one
	// line were dropped; a spike encloses no area. Positions: how many.
	SpikesRemoved = "SPIKES_REMOVED"
	// SelfIntersectionSplit: a ring crossing or touching itself was cut
	// where it meets itself into the loops it is made of, each a part of a
	// MultiPolygon; loops enclosing no area were dropped. Parts: how many
	// loops were kept.
	SelfIntersectionSplit = "SELF_INTERSECTION_SPLIT"
	// OverlappingPartsMerged: parts of the MultiPolygon that overlap were
	// replaced by their union. Parts: how many are left; AreaHa: the area
	// that was counted more than once.
	OverlappingPartsMerged = "OVERLAPPING_PARTS_MERGED"
	// HolesRemoved: a polygon's interior rings were dropped (the EU
	// information system refuses holes), so the plot now covers them.
	// Parts: how many; AreaHa: the area they held, added to the plot.
	HolesRemoved = "HOLES_REMOVED"
	// RingRewound: the exterior ring ran clockwise and was reversed to
	// run counter-clockwise (RFC 7946). It changes neither the shape nor
	// the area; it is listed so that every difference between the
	// coordinates sent and the repaired ones is accounted for.
	RingRewound = "RING_REWOUND"
)

// Change is one change made to a feature's geometry.
type Change struct {
	Code string `json:"code"`
	// Path is the ring or polygon changed, in the feature as sent:
	// geometry.coordinates[0] (a Polygon's exterior ring),
	// geometry.coordinates[2][0] (a MultiPolygon's third polygon's), or
	// geometry.coordinates for the whole geometry.
	Path    string `json:"path"`
	Message string `json:"message"`
	// Positions, Parts and AreaHa are the figures of the change, where
	// it has them (see each code).
	Positions int     `json:"positions,omitempty"`
	Parts     int     `json:"parts,omitempty"`
	AreaHa    float64 `json:"areaHa,omitempty"`
}

// Unrepaired is why a feature could not be repaired safely: a reason of
// geo.Check and a sentence.
type Unrepaired struct {
	Reason string `json:"reason"`
	Detail string `json:"detail"`
}

// Result is a feature repaired, or left as it was sent.
type Result struct {
	// Geometry is the repaired geometry; when Unrepaired is set, the
	// geometry as sent with its open rings closed (and its coordinates
	// swapped, when that change was made).
	Geometry geo.Geometry
	// Decimals is how many decimals WriteGeometry writes coordinates with:
	// 6 when the plot was rebuilt, else as many as the most sent, so that
	// its precision reads the same.
	Decimals int
	// Changes lists every change made, in the order made; empty when the
	// geometry is as sent.
	Changes []Change
	// Unrepaired is set when something is wrong that the repair cannot
	// fix safely: the plot will fail screening with that reason.
	Unrepaired *Unrepaired
}

// Feature repairs one feature as ParseFeatureCollection reads it with
// OpenRings (and DeferAntimeridian). It is safe for concurrent use.
func Feature(f geo.Feature) Result {
	g := f.Geometry
	res := Result{Geometry: g, Decimals: f.MaxDecimals, Changes: []Change{}}
	if sw, n, ok := swapped(g, f.Properties.ProducerCountry); ok {
		g, f.Geometry, res.Geometry = sw, sw, sw
		res.Changes = append(res.Changes, swapChange(n, f.Properties.ProducerCountry))
	}
	if g.IsPoint() {
		if reason, detail := geo.Check(f); reason != "" {
			res.Unrepaired = &Unrepaired{Reason: reason, Detail: detail}
		}
		return res
	}
	res.Geometry = closeRings(g, &res.Changes)
	sent := geo.Feature{Geometry: res.Geometry, MaxDecimals: f.MaxDecimals}
	reason, detail := geo.Check(sent)
	switch reason {
	case "":
		return res
	case geo.ReasonCrossesAntimeridian, geo.ReasonInsufficientPrecision, geo.ReasonGeometryTooComplex:
		res.Unrepaired = &Unrepaired{Reason: reason, Detail: detail}
		return res
	}
	if f.MaxDecimals < geo.MinDecimals {
		// Rebuilt, it would be written with 6 decimals it never had.
		res.Unrepaired = &Unrepaired{Reason: geo.ReasonInsufficientPrecision, Detail: fmt.Sprintf(
			"coordinates are written with at most %d decimals and the EU requires %d: a repair cannot add precision that was not measured (the plot also fails %s: %s)",
			f.MaxDecimals, geo.MinDecimals, reason, detail)}
		return res
	}
	fixed, changes, un := rebuild(res.Geometry, f.MaxDecimals)
	if un == nil {
		if reason, detail := geo.Check(geo.Feature{Geometry: fixed, MaxDecimals: geo.MinDecimals}); reason != "" {
			un = &Unrepaired{Reason: reason, Detail: "repaired as far as it safely could be, the plot still fails: " + detail}
		}
	}
	if un != nil {
		res.Unrepaired = un
		return res
	}
	res.Geometry, res.Decimals = fixed, geo.MinDecimals
	res.Changes = append(res.Changes, changes...)
	return res
}

// closeRings returns g with every open ring closed, noting each.
func closeRings(g geo.Geometry, changes *[]Change) geo.Geometry {
	out := g
	out.Polygons = make([]geo.Polygon, len(g.Polygons))
	for i, poly := range g.Polygons {
		out.Polygons[i] = make(geo.Polygon, len(poly))
		for j, r := range poly {
			if len(r) > 0 && r[0] != r[len(r)-1] {
				r = append(r[:len(r):len(r)], r[0])
				*changes = append(*changes, Change{Code: RingClosed, Path: ringPath(g, i, j), Positions: 1,
					Message: fmt.Sprintf("the ring was not closed: its first position %s was repeated at its end", formatPos(r[0]))})
			}
			out.Polygons[i][j] = r
		}
	}
	return out
}

// ringPath is the JSON path of polygon i's ring j inside the feature.
func ringPath(g geo.Geometry, i, j int) string {
	if g.Type == geo.TypeMultiPolygon {
		return fmt.Sprintf("geometry.coordinates[%d][%d]", i, j)
	}
	return fmt.Sprintf("geometry.coordinates[%d]", j)
}

func polygonPath(g geo.Geometry, i int) string {
	if g.Type == geo.TypeMultiPolygon {
		return fmt.Sprintf("geometry.coordinates[%d]", i)
	}
	return "geometry.coordinates"
}

func formatPos(p geo.Position) string {
	return fmt.Sprintf("[%s, %s]", formatFloat(p[0]), formatFloat(p[1]))
}
