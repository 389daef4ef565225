package repair

import (
	"fmt"
	"strconv"

	"github.com/eudr/eudr/geo"
)

// rebuild puts a closed geometry that geo.Check refuses on the grid of 6
// decimals and fixes it: holes dropped, repeated positions and spikes
// dropped, rings crossing themselves split into their loops, exterior
// rings turned counter-clockwise, overlapping parts merged. It returns the
// new geometry and the changes made, or why the geometry cannot be
// repaired safely.
func rebuild(g geo.Geometry, maxDecimals int) (geo.Geometry, []Change, *Unrepaired) {
	var changes []Change
	var parts []ring
	moved := 0
	for i, poly := range g.Polygons {
		path := ringPath(g, i, 0)
		sent := poly[0]
		sent = sent[:len(sent)-1] // closed by closeRings
		r := make(ring, 0, len(sent))
		repeats := 0 // repeats as sent
		for k, p := range sent {
			q := pt{geo.MicroDegrees(p[0]), geo.MicroDegrees(p[1])}
			if q.position() != p {
				moved++
			}
			if k > 0 && p == sent[k-1] || k == len(sent)-1 && p == sent[0] {
				repeats++
			}
			r = append(r, q)
		}
		r, n := dropRepeats(r)
		if n > 0 {
			msg := fmt.Sprintf("%d %s repeating the one before %s dropped", n, plural(n, "position"), plural(n, "was", "were"))
			if n > repeats {
				msg += fmt.Sprintf(" (%d of them only once rounded to 6 decimals)", n-repeats)
			}
			changes = append(changes, Change{Code: DuplicatePositionsRemoved, Path: path, Positions: n, Message: msg})
		}
		r, n = dropSpikes(r)
		if n > 0 {
			changes = append(changes, Change{Code: SpikesRemoved, Path: path, Positions: n, Message: fmt.Sprintf(
				"%d %s where the boundary ran out and back along one line %s dropped; a spike encloses no area", n, plural(n, "position"), plural(n, "was", "were"))})
		}
		if degenerate(r) {
			return geo.Geometry{}, nil, &Unrepaired{Reason: geo.ReasonDegenerateRing, Detail: fmt.Sprintf(
				"ring %s encloses no area once its repeated positions and spikes are dropped: there is no plot to repair", path)}
		}
		if len(poly) > 1 {
			area := 0.0
			for _, h := range poly[1:] {
				area += geo.RingArea(h)
			}
			changes = append(changes, Change{Code: HolesRemoved, Path: polygonPath(g, i), Parts: len(poly) - 1, AreaHa: area,
				Message: fmt.Sprintf("%d interior %s holding %s ha %s removed: the EU information system refuses holes, so the plot now covers %s",
					len(poly)-1, plural(len(poly)-1, "ring"), formatHa(area), plural(len(poly)-1, "was", "were"), plural(len(poly)-1, "it", "them"))})
		}
		reason, detail := geo.Check(geo.Feature{Geometry: polygonOf(r), MaxDecimals: geo.MinDecimals})
		switch reason {
		case "":
			if twiceArea(r) < 0 {
				r = reversed(r)
				changes = append(changes, Change{Code: RingRewound, Path: path,
					Message: "the ring ran clockwise; it was reversed to run counter-clockwise as RFC 7946 asks (same shape, same area)"})
			}
			parts = append(parts, r)
		case geo.ReasonSelfIntersection:
			loops, dropped, ok := split(r)
			if !ok {
				return geo.Geometry{}, nil, &Unrepaired{Reason: geo.ReasonGeometryTooComplex, Detail: fmt.Sprintf(
					"ring %s crosses itself and has %d corners, more than the %d a repair splits: %s", path, len(r), maxSplitCorners, detail)}
			}
			if len(loops) == 0 {
				return geo.Geometry{}, nil, &Unrepaired{Reason: geo.ReasonDegenerateRing, Detail: fmt.Sprintf(
					"ring %s crosses itself and none of its loops encloses any area: there is no plot to repair", path)}
			}
			msg := fmt.Sprintf("the ring crossed or touched itself (%s); it was cut where it meets itself into %d %s, each a part of the MultiPolygon",
				detail, len(loops), plural(len(loops), "loop"))
			if dropped > 0 {
				msg += fmt.Sprintf(", and %d %s enclosing no area dropped", dropped, plural(dropped, "loop"))
			}
			changes = append(changes, Change{Code: SelfIntersectionSplit, Path: path, Parts: len(loops), Message: msg})
			for _, l := range loops {
				parts = append(parts, ccw(l))
			}
		default:
			return geo.Geometry{}, nil, &Unrepaired{Reason: reason, Detail: "in ring " + path + ", " + detail}
		}
	}
	if maxDecimals > geo.MinDecimals && moved > 0 {
		changes = append(changes, Change{Code: RoundedTo6Decimals, Path: "geometry.coordinates", Positions: moved, Message: fmt.Sprintf(
			"coordinates were rounded to 6 decimals, as the EU information system keeps them, and checked again: %d %s moved by less than 0.000001°",
			moved, plural(moved, "position"))})
	}
	if len(parts) > 1 {
		mp := geo.Geometry{Type: geo.TypeMultiPolygon}
		for _, p := range parts {
			mp.Polygons = append(mp.Polygons, geo.Polygon{p.positions()})
		}
		if reason, _ := geo.Check(geo.Feature{Geometry: mp, MaxDecimals: geo.MinDecimals}); reason == geo.ReasonOverlappingParts {
			merged, more, un := merge(parts)
			if un != nil {
				return geo.Geometry{}, nil, un
			}
			parts = merged
			changes = append(changes, more...)
		}
	}
	out := geo.Geometry{Type: geo.TypeMultiPolygon}
	if g.Type == geo.TypePolygon && len(parts) == 1 {
		out.Type = geo.TypePolygon
	}
	for _, p := range parts {
		out.Polygons = append(out.Polygons, geo.Polygon{p.positions()})
	}
	return out, changes, nil
}

// merge replaces overlapping parts by their union, dropping the holes the
// union leaves (spaces the parts enclose without covering).
func merge(parts []ring) ([]ring, []Change, *Unrepaired) {
	before := 0.0
	for _, p := range parts {
		before += geo.RingArea(p.positions())
	}
	polys, err := union(parts)
	if err != nil {
		return nil, nil, &Unrepaired{Reason: geo.ReasonOverlappingParts, Detail: "parts of the MultiPolygon overlap and could not be merged: " + err.Error()}
	}
	var out []ring
	var changes []Change
	after, holes, holeArea := 0.0, 0, 0.0
	for _, poly := range polys {
		ext, _ := dropSpikes(poly[0])
		if degenerate(ext) {
			continue
		}
		out = append(out, ccw(ext))
		after += geo.RingArea(ext.positions())
		for _, h := range poly[1:] {
			holes++
			a := geo.RingArea(h.positions())
			holeArea += a
			after -= a
		}
	}
	if len(out) == 0 {
		return nil, nil, &Unrepaired{Reason: geo.ReasonOverlappingParts, Detail: "parts of the MultiPolygon overlap and their union encloses no area"}
	}
	overlap := max(before-after, 0)
	changes = append(changes, Change{Code: OverlappingPartsMerged, Path: "geometry.coordinates", Parts: len(out), AreaHa: overlap,
		Message: fmt.Sprintf("%d parts overlapped, %s ha being counted more than once; they were replaced by their union, %d %s",
			len(parts), formatHa(overlap), len(out), plural(len(out), "part"))})
	if holes > 0 {
		changes = append(changes, Change{Code: HolesRemoved, Path: "geometry.coordinates", Parts: holes, AreaHa: holeArea,
			Message: fmt.Sprintf("the merged parts enclosed %d %s they did not cover, holding %s ha; the EU information system refuses holes, so the plot now covers %s",
				holes, plural(holes, "space"), formatHa(holeArea), plural(holes, "it", "them"))})
	}
	return out, changes, nil
}

func polygonOf(r ring) geo.Geometry {
	return geo.Geometry{Type: geo.TypePolygon, Polygons: []geo.Polygon{{r.positions()}}}
}

// ccw returns r running counter-clockwise.
func ccw(r ring) ring {
	if twiceArea(r) < 0 {
		return reversed(r)
	}
	return r
}

// plural is one when n is 1, else many (one with an s when not given).
func plural(n int, one string, many ...string) string {
	switch {
	case n == 1:
		return one
	case len(many) > 0:
		return many[0]
	}
	return one + "s"
}

func formatHa(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
