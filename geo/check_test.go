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

		// OVERLAPPING_PARTS. Valid: parts apart, or touching at points.
		{"PartsTouchAtCorner", geo.TypeMultiPolygon, "[[" + square + "],[" + ring(4, 4, 8, 4, 8, 8, 4, 8, 4, 4) + "]]", "", ""},
		{"PartCornerOnSide", geo.TypeMultiPolygon, "[[" + square + "],[" + ring(4, 2, 8, 0, 8, 4, 4, 2) + "]]", "", ""},
		{"PartInNotchTouchingAtItsFoot", geo.TypeMultiPolygon, "[[" + ring(0, 0, 4, 0, 4, 4, 3, 4, 2, 1, 1, 4, 0, 4, 0, 0) + "],[" + ring(1, 5, 2, 1, 3, 5, 1, 5) + "]]", "", ""},
		{"PartInNotchReachingIn", geo.TypeMultiPolygon, "[[" + ring(0, 0, 4, 0, 4, 4, 3, 4, 2, 1, 1, 4, 0, 4, 0, 0) + "],[" + ring(0, 3, 2, 1, 4, 3, 2, 5, 0, 3) + "]]",
			geo.ReasonOverlappingParts, "overlap next to [-5.4999, 6.5004], where their boundaries meet"},
		{"PartUnderNotchTouchingItsFoot", geo.TypeMultiPolygon, "[[" + ring(0, 0, 4, 0, 4, 4, 3, 4, 2, 1, 1, 4, 0, 4, 0, 0) + "],[" + ring(2, 1, 1.5, 0.5, 2.5, 0.5, 2, 1) + "]]",
			geo.ReasonOverlappingParts, "overlap next to [-5.4998, 6.5001], where their boundaries meet"},
		{"PartFillingNotch", geo.TypeMultiPolygon, "[[" + ring(0, 0, 4, 0, 4, 4, 3, 4, 2, 1, 1, 4, 0, 4, 0, 0) + "],[" + ring(1, 4, 2, 1, 3, 4, 1, 4) + "]]",
			geo.ReasonOverlappingParts, "share a side"},
		{"PartsInNotch", geo.TypeMultiPolygon, "[[" + ring(0, 0, 4, 0, 4, 4, 3, 4, 3, 1, 1, 1, 1, 4, 0, 4, 0, 0) + "],[" + ring(1.5, 2, 2.5, 2, 2.5, 4, 1.5, 4, 1.5, 2) + "]]", "", ""},
		{"PartsAroundEachOther", geo.TypeMultiPolygon, "[[" + ring(0, 0, 4, 0, 4, 4, 3, 4, 3, 1, 1, 1, 1, 4, 0, 4, 0, 0) + "],[" + ring(1, 1, 3, 1, 2, 3, 1, 1) + "]]",
			geo.ReasonOverlappingParts, "share a side from [-5.4999, 6.5001] to [-5.4997, 6.5001]"},
		// The example of two 0.01° squares overlapping by half.
		{"PartsOverlap", geo.TypeMultiPolygon, "[[[[30.000000,7.000000],[30.010000,7.000000],[30.010000,7.010000],[30.000000,7.010000],[30.000000,7.000000]]],[[[30.005000,7.000000],[30.015000,7.000000],[30.015000,7.010000],[30.005000,7.010000],[30.005000,7.000000]]]]",
			geo.ReasonOverlappingParts, "polygons 0 and 1 of the MultiPolygon overlap next to [30.005, 7], where their boundaries meet; their common area would be declared twice"},
		{"PartsCross", geo.TypeMultiPolygon, "[[" + square + "],[" + ring(2, 2, 6, 2, 6, 6, 2, 6, 2, 2) + "]]",
			geo.ReasonOverlappingParts, "polygons 0 and 1 of the MultiPolygon overlap: the side from position 2 to 3 of ring geometry.coordinates[0][0] crosses the side from position 3 to 4 of ring geometry.coordinates[1][0]"},
		{"PartsShareSide", geo.TypeMultiPolygon, "[[" + square + "],[" + ring(4, 0, 8, 0, 8, 4, 4, 4, 4, 0) + "]]",
			geo.ReasonOverlappingParts, "polygons 0 and 1 of the MultiPolygon share a side from [-5.4996, 6.5] to [-5.4996, 6.5004]: parts of a MultiPolygon may touch only at points"},
		{"PartsSharePartOfSide", geo.TypeMultiPolygon, "[[" + square + "],[" + ring(4, 1, 8, 1, 8, 3, 4, 3, 4, 1) + "]]",
			geo.ReasonOverlappingParts, "share a side from [-5.4996, 6.5001] to [-5.4996, 6.5003]"},
		{"PartsShareSideClockwise", geo.TypeMultiPolygon, "[[" + ring(0, 0, 0, 4, 4, 4, 4, 0, 0, 0) + "],[" + ring(4, 1, 4, 3, 8, 3, 8, 1, 4, 1) + "]]",
			geo.ReasonOverlappingParts, "share a side from [-5.4996, 6.5001] to [-5.4996, 6.5003]"},
		{"PartInside", geo.TypeMultiPolygon, "[[" + square + "],[" + ring(1, 1, 2, 1, 2, 2, 1, 2, 1, 1) + "]]",
			geo.ReasonOverlappingParts, "polygons 0 and 1 of the MultiPolygon overlap: polygon 1 lies inside polygon 0"},
		{"PartAroundEarlierOne", geo.TypeMultiPolygon, "[[" + ring(5, 0, 7, 0, 6, 1, 5, 0) + "],[" + ring(1, 1, 2, 1, 2, 2, 1, 2, 1, 1) + "],[" + square + "]]",
			geo.ReasonOverlappingParts, "polygons 1 and 2 of the MultiPolygon overlap: polygon 1 lies inside polygon 2"},
		{"PartInsideTouchingSide", geo.TypeMultiPolygon, "[[" + square + "],[" + ring(0, 1, 2, 1, 2, 2, 0, 2, 0, 1) + "]]",
			geo.ReasonOverlappingParts, "overlap next to [-5.5, 6.5001], where their boundaries meet"},
		{"PartInsideTouchingCorner", geo.TypeMultiPolygon, "[[" + square + "],[" + ring(0, 0, 2, 1, 1, 2, 0, 0) + "]]",
			geo.ReasonOverlappingParts, "overlap next to [-5.5, 6.5], where their boundaries meet"},
		// A corner inside the other part, with sides leaving through its corners.
		{"PartPokingThroughCorners", geo.TypeMultiPolygon, "[[" + square + "],[" + ring(2, 2, 6, 6, -2, 6, 2, 2) + "]]",
			geo.ReasonOverlappingParts, "overlap next to [-5.5, 6.5004], where their boundaries meet"},
		{"SameSquareTwice", geo.TypeMultiPolygon, "[[" + square + "],[" + square + "]]",
			geo.ReasonOverlappingParts, "polygons 0 and 1 of the MultiPolygon share a side"},
		{"PartsApartButThird", geo.TypeMultiPolygon, "[[" + square + "],[" + ring(5, 0, 9, 0, 9, 4, 5, 0) + "],[" + ring(8, 1, 12, 1, 12, 3, 8, 1) + "]]",
			geo.ReasonOverlappingParts, "polygons 1 and 2 of the MultiPolygon overlap"},
		// Apart as written; at 6 decimals (truncated, or only rounded) they share a side.
		{"PartsShareSideWhenTruncated", geo.TypeMultiPolygon, "[[[[1.0,0.0],[1.001,0.0],[1.001,0.001],[1.0,0.0]]],[[[1.0010004,0.0],[1.002,0.0],[1.0010004,0.001000],[1.0010004,0.0]]]]",
			geo.ReasonOverlappingParts, "with coordinates truncated to 6 decimals (as the EU information system keeps them), polygons 0 and 1 of the MultiPolygon share a side from [1.001000, 0.000000] to [1.001000, 0.001000]"},
		{"PartsOverlapWhenRounded", geo.TypeMultiPolygon, "[[[[1.0,0.0],[1.0010009,0.0],[1.0010009,0.001],[1.0,0.0]]],[[[1.0010011,0.0],[1.002,0.0],[1.0010011,0.001],[1.0010011,0.0]]]]",
			geo.ReasonOverlappingParts, "with coordinates rounded to 6 decimals (as the EU information system keeps them), polygons 0 and 1 of the MultiPolygon share a side from [1.001001, 0.000000] to [1.001001, 0.001000]"},
		// A ring's own damage at 6 decimals is reported before the parts'.
		{"RingDamageBeforeParts", geo.TypeMultiPolygon, "[[" + square + "],[" + square + "],[[[0,0],[0.00001,0],[0.00001,0.00001],[0.000005,0.0000004],[0,0]]]]",
			geo.ReasonOverlappingParts, "polygons 0 and 1"},

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

// TestCheck_DeferredAntimeridian: a ring across the antimeridian, left to
// Check by the parser (a request accepted before such rings were
// refused), fails its feature rather than being screened as a band round
// the globe.
func TestCheck_DeferredAntimeridian(t *testing.T) {
	across := "[[179.995000,0.000000],[-179.995000,0.000000],[-179.995000,0.010000],[179.995000,0.010000],[179.995000,0.000000]]"
	tests := []struct{ typ, coords, detail string }{
		{geo.TypePolygon, "[" + across + "]", "ring geometry.coordinates[0] crosses the antimeridian (180°) on its side from position 0 to 1, [179.995, 0] to [-179.995, 0]: "},
		{geo.TypeMultiPolygon, "[[" + ring(0, 0, 4, 0, 4, 4, 0, 0) + "],[" + across + "]]", "ring geometry.coordinates[1][0] crosses the antimeridian"},
	}
	for _, tt := range tests {
		body := feature(tt.typ, tt.coords)
		if _, err := geo.ParseFeatureCollection([]byte(body), geo.ParseOptions{}); err == nil || !strings.Contains(err.Error(), geo.CodeCrossesAntimeridian) {
			t.Errorf("%s: parsed with %v, want %s", tt.coords, err, geo.CodeCrossesAntimeridian)
		}
		feats, err := geo.ParseFeatureCollection([]byte(body), geo.ParseOptions{DeferAntimeridian: true})
		if err != nil {
			t.Fatalf("%s deferred: %v", tt.coords, err)
		}
		if reason, detail := geo.Check(feats[0]); reason != geo.ReasonCrossesAntimeridian || !strings.Contains(detail, tt.detail) {
			t.Errorf("%s: %s: %s, want %s: ...%s...", tt.coords, reason, detail, geo.ReasonCrossesAntimeridian, tt.detail)
		}
	}
}
