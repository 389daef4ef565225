package repair

import (
	"fmt"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/borders"
)

// CoordinatesSwapped: every position was sent latitude first. The plot
// lay outside its producerCountry as sent and lies in it with each
// position's two numbers swapped, so they were swapped. Positions: how
// many.
const CoordinatesSwapped = "COORDINATES_SWAPPED"

// swapped returns g with each position's longitude and latitude swapped
// when that moves every part of the plot into its producerCountry (within
// the country check's buffer) from outside it: the mistake the country
// check most often finds, and the only reading of such a plot that fits.
// ok is false when the plot lies in its country as sent, when the swapped
// plot would not, when a longitude cannot be a latitude, and when the
// country has no boundary to check against.
func swapped(g geo.Geometry, country string) (out geo.Geometry, n int, ok bool) {
	c, err := borders.Find(country)
	if err != nil || c == nil {
		return geo.Geometry{}, 0, false
	}
	parts := func(g geo.Geometry) [][][2]float64 {
		var out [][][2]float64
		for _, p := range g.Points {
			out = append(out, [][2]float64{p})
		}
		for _, p := range g.Polygons {
			if len(p) > 0 {
				out = append(out, p[0])
			}
		}
		return out
	}
	inside := true
	for _, part := range parts(g) {
		if !c.Near(part) {
			inside = false
			break
		}
	}
	if inside {
		return geo.Geometry{}, 0, false
	}
	swap := func(p geo.Position) geo.Position { n++; return geo.Position{p[1], p[0]} }
	out = geo.Geometry{Type: g.Type}
	for _, p := range g.Points {
		if p[0] < -90 || p[0] > 90 {
			return geo.Geometry{}, 0, false
		}
		out.Points = append(out.Points, swap(p))
	}
	for _, poly := range g.Polygons {
		sp := make(geo.Polygon, len(poly))
		for j, r := range poly {
			sp[j] = make(geo.Ring, len(r))
			for k, p := range r {
				if p[0] < -90 || p[0] > 90 {
					return geo.Geometry{}, 0, false
				}
				sp[j][k] = swap(p)
			}
		}
		out.Polygons = append(out.Polygons, sp)
	}
	for _, part := range parts(out) {
		if !c.Near(part) {
			return geo.Geometry{}, 0, false
		}
	}
	return out, n, true
}

func swapChange(n int, country string) Change {
	return Change{Code: CoordinatesSwapped, Path: "geometry.coordinates", Positions: n, Message: fmt.Sprintf(
		"the plot lay outside %s, its producerCountry, and lies in it with each position's two numbers swapped: they were sent latitude first, and GeoJSON positions are longitude first", country)}
}
