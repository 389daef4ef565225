package geo

import (
	"math"
	"testing"
)

// Assess hands ScreenArea the area it has computed for a single polygon
// (plotArea) rather than have it computed again: the two must be the same
// number to the bit, for rings closed or not, with repeated vertices and
// with holes, or a plot's hectares would depend on the path taken.
func TestScreenAreaKnownPolygonArea(t *testing.T) {
	ring := func(lon, lat, d float64, closed bool) Ring {
		r := Ring{{lon, lat}, {lon + d, lat}, {lon + d, lat}, {lon + d, lat + d*0.7}, {lon + d*0.3, lat + d*1.1}}
		if closed {
			r = append(r, r[0])
		}
		return r
	}
	plots := map[string]Geometry{
		"closed":          {Type: "Polygon", Polygons: []Polygon{{ring(-75.3, 5.1, 0.004, true)}}},
		"open":            {Type: "Polygon", Polygons: []Polygon{{ring(-75.3, 5.1, 0.004, false)}}},
		"hole":            {Type: "Polygon", Polygons: []Polygon{{ring(10.123456789, -3.3, 0.01, true), ring(10.125, -3.298, 0.002, true)}}},
		"clockwise":       {Type: "Polygon", Polygons: []Polygon{{{{20, 40}, {20, 40.01}, {20.013, 40.01}, {20.013, 40}, {20, 40}}}}},
		"across-meridian": {Type: "Polygon", Polygons: []Polygon{{{{-0.002, 51.4}, {0.003, 51.4}, {0.003, 51.405}, {-0.002, 51.405}, {-0.002, 51.4}}}}},
	}
	ix := NewIndex()
	for name, g := range plots {
		t.Run(name, func(t *testing.T) {
			want, err := ix.ScreenArea(g, 0)
			if err != nil {
				t.Fatal(err)
			}
			known := plotArea(g, 0)
			got, err := ix.screenArea(g, 0, known)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(known) != math.Float64bits(want.PlotHa) || math.Float64bits(got.PlotHa) != math.Float64bits(want.PlotHa) {
				t.Fatalf("plot area %v given, %v computed by ScreenArea, %v from screenArea: want all the same", known, want.PlotHa, got.PlotHa)
			}
			if want.PlotHa <= 0 {
				t.Fatalf("plot area %v: want a positive area", want.PlotHa)
			}
		})
	}
}
