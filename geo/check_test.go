package geo_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/geo"
)

// ring writes lon, lat pairs as a JSON ring with 6 decimals, offset to a
// plot in Côte d'Ivoire; units are 0.0001 degree (about 11 m).
func ring(xy ...float64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < len(xy); i += 2 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "[%.6f,%.6f]", -5.5+xy[i]*1e-4, 6.5+xy[i+1]*1e-4)
	}
	b.WriteByte(']')
	return b.String()
}

func TestCheck(t *testing.T) {
	square := ring(0, 0, 4, 0, 4, 4, 0, 4, 0, 0)
	tests := []struct {
		name, typ, coords string
		reason, detail    string // detail: a substring, "" for no reason
	}{
		// Valid.
		{"CounterClockwise", geo.TypePolygon, "[" + square + "]", "", ""},
		{"Clockwise", geo.TypePolygon, "[" + ring(0, 0, 0, 4, 4, 4, 4, 0, 0, 0) + "]", "", ""},
		{"Triangle", geo.TypePolygon, "[" + ring(0, 0, 4, 0, 2, 3, 0, 0) + "]", "", ""},
		{"Concave", geo.TypePolygon, "[" + ring(0, 0, 4, 0, 4, 1, 1, 1, 1, 4, 0, 4, 0, 0) + "]", "", ""},
		{"CornerOnStraightSide", geo.TypePolygon, "[" + ring(0, 0, 2, 0, 4, 0, 4, 4, 0, 4, 0, 2, 0, 0) + "]", "", ""},
		{"NearlyTouching", geo.TypePolygon, "[" + ring(0, 0, 4, 0, 4, 4, 2, 0.01, 0, 4, 0, 0) + "]", "", ""},
		{"MultiPolygon", geo.TypeMultiPolygon, "[[" + square + "],[" + ring(5, 0, 9, 0, 9, 4, 5, 0) + "]]", "", ""},
		{"Point", geo.TypePoint, "[-5.123456,6.123456]", "", ""},
		{"MultiPoint", geo.TypeMultiPoint, "[[-5.123456,6.123456],[-5.123457,6.123456]]", "", ""},
		{"Positions3D", geo.TypePolygon, "[[[1.000000,1.000000,5],[1.001000,1.000000,6],[1.001000,1.001000,7],[1.000000,1.000000,8]]]", "", ""},
		{"EightDecimals", geo.TypePolygon, "[[[1.00000012,1.00000034],[1.00100056,1.00000078],[1.00100012,1.00100034],[1.00000012,1.00000034]]]", "", ""},
		{"Antimeridian", geo.TypePolygon, "[[[179.999000,-16.100000],[180.000000,-16.100000],[180.000000,-16.099000],[179.999000,-16.100000]]]", "", ""},

		// HOLES_NOT_SUPPORTED.
		{"Hole", geo.TypePolygon, "[" + square + "," + ring(1, 1, 2, 1, 2, 2, 1, 1) + "]",
			geo.ReasonHolesNotSupported, "the polygon has 1 interior ring(s)"},
		{"HoleInSecondPolygon", geo.TypeMultiPolygon, "[[" + square + "],[" + ring(5, 0, 9, 0, 9, 4, 5, 0) + "," + ring(6, 1, 7, 1, 7, 2, 6, 1) + "]]",
			geo.ReasonHolesNotSupported, "polygon geometry.coordinates[1] has 1 interior ring(s)"},

		// DEGENERATE_RING.
		{"Collinear", geo.TypePolygon, "[" + ring(0, 0, 1, 1, 2, 2, 0, 0) + "]",
			geo.ReasonDegenerateRing, "all corners of ring geometry.coordinates[0] lie on one straight line"},
		{"CollinearLong", geo.TypePolygon, "[" + ring(0, 0, 1, 0, 3, 0, 2, 0, 5, 0, 0, 0) + "]",
			geo.ReasonDegenerateRing, "lie on one straight line"},
		{"TwoPoints", geo.TypePolygon, "[" + ring(0, 0, 1, 0, 0, 0, 1, 0, 0, 0) + "]",
			geo.ReasonDegenerateRing, "lie on one straight line"},
		{"OnePoint", geo.TypePolygon, "[" + ring(1, 1, 1, 1, 1, 1, 1, 1) + "]",
			geo.ReasonDegenerateRing, "has only 1 distinct corner(s)"},
		{"TwoDistinct", geo.TypePolygon, "[" + ring(1, 1, 2, 2, 2, 2, 1, 1) + "]",
			geo.ReasonDegenerateRing, "has only 2 distinct corner(s)"},

		// SELF_INTERSECTION.
		{"FigureEight", geo.TypePolygon, "[" + ring(0, 0, 2, 2, 2, 0, 0, 2, 0, 0) + "]",
			geo.ReasonSelfIntersection, "in ring geometry.coordinates[0], the side from position 0 to 1 crosses the side from position 2 to 3"},
		{"FigureEightInSecondPolygon", geo.TypeMultiPolygon, "[[" + square + "],[" + ring(5, 0, 7, 2, 7, 0, 5, 2, 5, 0) + "]]",
			geo.ReasonSelfIntersection, "in ring geometry.coordinates[1][0], the side from position 0 to 1 crosses the side from position 2 to 3"},
		{"PinchedAtCorner", geo.TypePolygon, "[" + ring(0, 0, 2, 0, 1, 1, 2, 2, 0, 2, 1, 1, 0, 0) + "]",
			geo.ReasonSelfIntersection, "touches"},
		{"CornerOnSide", geo.TypePolygon, "[" + ring(0, 0, 4, 0, 4, 4, 2, 0, 0, 4, 0, 0) + "]",
			geo.ReasonSelfIntersection, "the side from position 0 to 1 touches the side from position 3 to 4"},
		{"OverlappingCollinearSide", geo.TypePolygon, "[" + ring(0, 0, 4, 0, 4, 2, 3, 2, 3, 0, 1, 0, 1, 2, 0, 2, 0, 0) + "]",
			geo.ReasonSelfIntersection, "the side from position 0 to 1 overlaps the side from position 4 to 5"},
		{"Spike", geo.TypePolygon, "[" + ring(0, 0, 4, 0, 4, 4, 2, 4, 2, 6, 2, 4, 0, 4, 0, 0) + "]",
			geo.ReasonSelfIntersection, "in ring geometry.coordinates[0]"},
		{"SpikeBackPartway", geo.TypePolygon, "[" + ring(0, 0, 4, 0, 4, 4, 2, 4, 2, 6, 2, 5, 0, 4, 0, 0) + "]",
			geo.ReasonSelfIntersection, "the side from position 3 to 4 touches the side from position 5 to 6"},
		{"SpikeAtClosingCorner", geo.TypePolygon, "[" + ring(0, 0, 4, 0, 4, 4, 0, 4, 0, -2, 0, 0) + "]",
			geo.ReasonSelfIntersection, "in ring geometry.coordinates[0]"},
		{"FoldAcrossFirstCorner", geo.TypePolygon, "[" + ring(2, 0, 4, 0, 4, 4, 0, 4, 0, 0, 3, 0, 2, 0) + "]",
			geo.ReasonSelfIntersection, "overlaps"},

		// INSUFFICIENT_PRECISION: judged after the shape.
		{"FiveDecimals", geo.TypePolygon, "[[[1.00001,1.00001],[1.00101,1.00001],[1.00101,1.00101],[1.00001,1.00001]]]",
			geo.ReasonInsufficientPrecision, "no coordinate is written with 6 or more decimals (the most is 5)"},
		{"PointFourDecimals", geo.TypePoint, "[-5.1234,6.1234]", geo.ReasonInsufficientPrecision, "(the most is 4)"},
		{"OneCoordinateIsEnough", geo.TypePoint, "[-5.1,6.100000]", "", ""},
		{"FigureEightBeforePrecision", geo.TypePolygon, "[[[0,0],[2,2],[2,0],[0,2],[0,0]]]", geo.ReasonSelfIntersection, "crosses"},

		// DUPLICATE_VERTICES_AFTER_ROUNDING.
		{"RepeatedCorner", geo.TypePolygon, "[" + ring(0, 0, 4, 0, 4, 0, 4, 4, 0, 0) + "]",
			geo.ReasonDuplicateVerticesAfterRounding, "in ring geometry.coordinates[0], positions 1 and 2 are the same point [-5.4996, 6.5]: drop the repeat"},
		{"RepeatedClosing", geo.TypePolygon, "[" + ring(0, 0, 4, 0, 4, 4, 0, 0, 0, 0) + "]",
			geo.ReasonDuplicateVerticesAfterRounding, "positions 3 and 4 are the same point"},
		// The EU's own example (GeoJSON File Description, common error 7), as [lon, lat].
		{"EUExample", geo.TypePolygon, "[[[144.2567071234,-5.8227391234],[144.2567074567,-5.8227394567],[144.2577,-5.8227],[144.2567,-5.8217],[144.2567071234,-5.8227391234]]]",
			geo.ReasonDuplicateVerticesAfterRounding, "positions 0 and 1 become the same point [144.256707, -5.822739] with coordinates truncated to 6 decimals"},
		{"OnlyWhenRounded", geo.TypePolygon, "[[[10.0000006,5.0],[10.0000014,5.0000001],[10.0001,5.0001],[10.0000006,5.0001],[10.0000006,5.0]]]",
			geo.ReasonDuplicateVerticesAfterRounding, "positions 0 and 1 become the same point [10.000001, 5.000000] with coordinates rounded to 6 decimals"},
		{"TruncationFolds", geo.TypePolygon, "[[[0,0],[0.00001,0],[0.00001,0.00001],[0.000005,0.0000004],[0,0]]]",
			geo.ReasonDuplicateVerticesAfterRounding, "with coordinates truncated to 6 decimals (as the EU information system keeps them), in ring geometry.coordinates[0], the side from position 0 to 1 overlaps the side from position 3 to 4"},
		{"TruncationCollapses", geo.TypePolygon, "[[[0,0],[0.0000029,0],[0.0000019,0.0000009],[0,0]]]",
			geo.ReasonDuplicateVerticesAfterRounding, "lie on one straight line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustParse(t, feature(tt.typ, tt.coords))[0]
			reason, detail := geo.Check(f)
			if reason != tt.reason || !strings.Contains(detail, tt.detail) || (reason == "") != (detail == "") {
				t.Errorf("%s %s:\ngot  %s: %s\nwant %s: ...%s...", tt.typ, tt.coords, reason, detail, tt.reason, tt.detail)
			}
		})
	}
}

// circle is a ring of n corners around (lon, lat), radius r degrees,
// counter-clockwise.
func circle(lon, lat, r float64, n int) geo.Ring {
	ring := make(geo.Ring, 0, n+1)
	for i := range n {
		a := 2 * math.Pi * float64(i) / float64(n)
		ring = append(ring, geo.Position{lon + r*math.Cos(a), lat + r*math.Sin(a)})
	}
	return append(ring, ring[0])
}

func TestCheck_LargeRings(t *testing.T) {
	// A 50,000-corner boundary (a GPS trace, say) is checked in good time.
	f := geo.Feature{Geometry: geo.Geometry{Type: geo.TypePolygon, Polygons: []geo.Polygon{{circle(-61.5, -10.5, 0.5, 50_000)}}}, MaxDecimals: 9}
	start := time.Now()
	if reason, detail := geo.Check(f); reason != "" {
		t.Errorf("circle: %s: %s", reason, detail)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("circle of 50,000 corners took %v", d)
	}
	// A crossing at the far end of one is still found.
	r := f.Geometry.Polygons[0][0]
	r[25_000], r[25_001] = r[25_001], r[25_000]
	if reason, detail := geo.Check(f); reason != geo.ReasonSelfIntersection || !strings.Contains(detail, "position 24999 to 25000 crosses the side from position 25001 to 25002") {
		t.Errorf("circle with a twist: %s: %s", reason, detail)
	}

	// A hostile sawtooth whose every side spans the whole width: too
	// complex to check, and said so quickly rather than after minutes.
	const teeth = 12_000
	saw := geo.Ring{{0, 0}}
	for i := range teeth {
		saw = append(saw, geo.Position{float64(i%2) * 0.01, float64(i+1) * 1e-6})
	}
	saw = append(saw, geo.Position{-0.01, float64(teeth) * 1e-6}, geo.Position{-0.01, 0}, geo.Position{0, 0})
	f = geo.Feature{Geometry: geo.Geometry{Type: geo.TypePolygon, Polygons: []geo.Polygon{{saw}}}, MaxDecimals: 6}
	start = time.Now()
	if reason, detail := geo.Check(f); reason != geo.ReasonGeometryTooComplex {
		t.Errorf("sawtooth: %s: %s, want %s", reason, detail, geo.ReasonGeometryTooComplex)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("sawtooth took %v", d)
	}
}
