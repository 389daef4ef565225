package geo

import (
	"math"

	// geodesic is a line-by-line Go port (by Josh Baker, MIT) of the C
	// library of GeographicLib (C. F. F. Karney, geodesic.c 1.52, MIT): the
	// same functions (geod_geninverse_int, geod_polygon_addpoint,
	// geod_polygon_compute, transit, the double-double accumulator) with the
	// same series orders and constants, tested upstream against output of
	// the C library itself (its test.data, made with tidwall/geodesic_cgo).
	// We use it rather than re-derive Karney's algorithm. area_test.go checks
	// it against GeographicLib's own test vectors and Planimeter output,
	// which found one porting slip, undone in RingArea (see transit).
	"github.com/tidwall/geodesic"
)

// m2PerHectare is the number of square metres in a hectare.
const m2PerHectare = 1e4

// RingArea returns the area in hectares enclosed by ring (lon, lat pairs in
// degrees, closed or not, either winding), on the WGS84 ellipsoid, edges
// being geodesics.
//
// The area is computed with Karney's method ("Algorithms for geodesics",
// J. Geodesy 87, 2013, §6), exact but for round-off: GeographicLib gives a
// maximum error of 0.0013 m² for perimeters under 10 km, 1.3e-6 of a
// 0.1 ha plot. A ring divides the ellipsoid in two; since the winding is
// ignored, the smaller part is returned (at most half the ellipsoid, far
// more than any plot). Self-intersecting rings are summed algebraically
// (the loops of a figure eight partly cancel). A ring of fewer than three
// vertices, not counting a closing one, has area 0; a NaN coordinate gives
// NaN. RingArea is safe for concurrent use.
func RingArea(ring [][2]float64) float64 {
	n := len(ring)
	if n > 1 && ring[0] == ring[n-1] {
		n-- // the closing vertex adds an empty edge: skip it
	}
	if n < 3 {
		return 0
	}
	p := geodesic.WGS84.PolygonInit(false)
	crossings := 0
	for i, c := range ring[:n] {
		p.AddPoint(c[1], c[0])
		crossings += transit(c[0], ring[(i+1)%n][0])
	}
	var m2 float64
	// reverse=false, sign=true: counter-clockwise positive, signed, in
	// (-A/2, A/2] where A is the ellipsoid's area.
	p.Compute(false, true, &m2, nil)
	if crossings != 0 && crossings%2 == 0 {
		// The ring winds around a pole an even number of times (never a
		// valid plot). GeographicLib adds half the ellipsoid's area when
		// the winding is odd ("if (crossings & 1)" in areareduceA of
		// geodesic.c); tidwall/geodesic v1.52.4 does so whenever it is
		// nonzero ("if crossings != 0"). Take that half back, modulo A.
		m2 = math.Remainder(m2+ellipsoidM2/2, ellipsoidM2)
	}
	return math.Abs(m2) / m2PerHectare
}

// ellipsoidM2 is the area of the WGS84 ellipsoid in m², 4πc² with c² =
// (a² + b²·atanh(e)/e)/2 as geod_init computes it (510065621724088.5 m²).
var ellipsoidM2 = func() float64 {
	const a, f = 6378137, 1 / 298.257223563
	b, e := a*(1-f), math.Sqrt(f*(2-f))
	return 2 * math.Pi * (a*a + b*b*math.Atanh(e)/e)
}()

// transit returns 1 or -1 if the edge from longitude lon1 to lon2 (degrees)
// crosses the prime meridian eastwards or westwards, else 0: GeographicLib's
// transit (geodesic.c), with its angNormalize and angDiff, operation for
// operation as in tidwall/geodesic, so that its count of crossings and ours
// agree exactly. Their sum over a ring is its winding number about a pole.
func transit(lon1, lon2 float64) int {
	lon1, lon2 = angNormalize(lon1), angNormalize(lon2)
	lon12 := angDiff(lon1, lon2)
	switch {
	case lon1 <= 0 && lon2 > 0 && lon12 > 0:
		return 1
	case lon2 <= 0 && lon1 > 0 && lon12 < 0:
		return -1
	}
	return 0
}

// angNormalize reduces an angle in degrees to (-180, 180].
func angNormalize(x float64) float64 {
	x = math.Remainder(x, 360)
	if x == -180 {
		return 180
	}
	return x
}

// angDiff returns y - x reduced to [-180, 180], computed exactly (only the
// sign matters to transit; 180 for east-going, -180 for west-going).
func angDiff(x, y float64) float64 {
	d, t := twoSum(angNormalize(-x), angNormalize(y))
	d = angNormalize(d)
	if d == 180 && t > 0 {
		d = -180
	}
	s, _ := twoSum(d, t)
	return s
}

// twoSum returns s = u + v rounded and t, the rounding error: u + v = s + t.
func twoSum(u, v float64) (s, t float64) {
	s = u + v
	up := s - v
	vpp := s - up
	up -= u
	vpp -= v
	return s, -(up + vpp)
}

// PolygonArea returns the area in hectares of a polygon given as GeoJSON
// rings (lon, lat pairs in degrees): the outer ring's area minus the holes'.
// It does not check that the holes lie inside the outer ring (validation
// reports that); for such invalid input the result may be wrong or negative.
// No rings give 0.
func PolygonArea(rings [][][2]float64) float64 {
	if len(rings) == 0 {
		return 0
	}
	a := RingArea(rings[0])
	for _, h := range rings[1:] {
		a -= RingArea(h)
	}
	return a
}
