package geo_test

import (
	"math"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/tidwall/geodesic"
)

// ---------------------------------------------------------------------------
// Reference method, independent of GeographicLib: equal-area projection of
// geodesic edges densified with Vincenty's formulae.
//
// 1. Edges. Each edge is split into pieces of at most refStep metres: the
//    inverse problem gives its length s and azimuth α1, and the direct
//    problem gives the points at s·k/n along it. Both are Vincenty's (T.
//    Vincenty, "Direct and inverse solutions of geodesics on the ellipsoid
//    with application of nested equations", Survey Review 23(176):88-93,
//    1975), a different algorithm from Karney's, good to a fraction of a
//    millimetre away from nearly antipodal points (plot edges are < 30 km).
// 2. Projection. The ellipsoid's cylindrical equal-area projection (Snyder,
//    "Map Projections: A Working Manual", USGS PP 1395, 1987, ch. 10 with
//    ch. 3 p. 16) maps (φ, λ) to x = a·λ, y = a·q(φ)/2, where
//        q(φ) = (1-e²)·[sin φ/(1-e² sin²φ) - 1/(2e)·ln((1-e sin φ)/(1+e sin φ))]
//    (Snyder eq. 3-12), written below with atanh. It is equal-area because
//    a·dy/dφ = (a²/2)·dq/dφ = a²(1-e²)cos φ/(1-e² sin²φ)² = M·N·cos φ, the
//    ellipsoid's area element per radian of latitude and longitude (M, N the
//    meridional and prime-vertical radii). So 2πa²·q(90°) must be the
//    ellipsoid's area: TestReference_EllipsoidArea checks that against
//    GeographicLib's 510065621724088.5093 m².
// 3. Area. The shoelace formula over the projected, densified ring. The
//    only approximation is that each refStep piece is straight in the
//    projection rather than a projected geodesic, an error that falls as
//    1/n²; every use checks it by halving the step (refCheck).
// ---------------------------------------------------------------------------

// WGS84 (NIMA TR8350.2): semi-major axis and flattening.
const (
	wgsA = 6378137.0
	wgsF = 1 / 298.257223563
)

var (
	wgsB  = wgsA * (1 - wgsF)
	wgsE2 = wgsF * (2 - wgsF)
	wgsE  = math.Sqrt(wgsE2)
)

const rad = math.Pi / 180

// authalicQ is Snyder's q(φ) (eq. 3-12) as a function of sin φ.
func authalicQ(sinPhi float64) float64 {
	es := wgsE * sinPhi
	return (1 - wgsE2) * (sinPhi/(1-es*es) + math.Atanh(es)/wgsE)
}

// vincentyInverse returns the geodesic distance in metres and the initial
// azimuth in radians from (lat1, lon1) to (lat2, lon2), in degrees.
func vincentyInverse(lat1, lon1, lat2, lon2 float64) (s, azi1 float64) {
	u1 := math.Atan((1 - wgsF) * math.Tan(lat1*rad))
	u2 := math.Atan((1 - wgsF) * math.Tan(lat2*rad))
	su1, cu1 := math.Sincos(u1)
	su2, cu2 := math.Sincos(u2)
	l := math.Remainder(lon2-lon1, 360) * rad
	lam := l
	var sinSig, cosSig, sig, cos2a, cos2sm, sinLam, cosLam float64
	for i := 0; i < 200; i++ {
		sinLam, cosLam = math.Sincos(lam)
		sinSig = math.Hypot(cu2*sinLam, cu1*su2-su1*cu2*cosLam)
		if sinSig == 0 {
			return 0, 0 // coincident points
		}
		cosSig = su1*su2 + cu1*cu2*cosLam
		sig = math.Atan2(sinSig, cosSig)
		sinA := cu1 * cu2 * sinLam / sinSig
		cos2a = 1 - sinA*sinA
		cos2sm = 0 // both points on the equator
		if cos2a != 0 {
			cos2sm = cosSig - 2*su1*su2/cos2a
		}
		c := wgsF / 16 * cos2a * (4 + wgsF*(4-3*cos2a))
		prev := lam
		lam = l + (1-c)*wgsF*sinA*(sig+c*sinSig*(cos2sm+c*cosSig*(-1+2*cos2sm*cos2sm)))
		if math.Abs(lam-prev) < 1e-14 {
			break
		}
	}
	sinLam, cosLam = math.Sincos(lam)
	uu := cos2a * (wgsA*wgsA - wgsB*wgsB) / (wgsB * wgsB)
	a := 1 + uu/16384*(4096+uu*(-768+uu*(320-175*uu)))
	b := uu / 1024 * (256 + uu*(-128+uu*(74-47*uu)))
	dSig := b * sinSig * (cos2sm + b/4*(cosSig*(-1+2*cos2sm*cos2sm)-
		b/6*cos2sm*(-3+4*sinSig*sinSig)*(-3+4*cos2sm*cos2sm)))
	return wgsB * a * (sig - dSig), math.Atan2(cu2*sinLam, cu1*su2-su1*cu2*cosLam)
}

// vincentyDirect returns the point s metres from (lat1, lon1) along initial
// azimuth azi1 (radians); the longitude is lon1 plus the change, unwrapped.
func vincentyDirect(lat1, lon1, azi1, s float64) (lat2, lon2 float64) {
	sa1, ca1 := math.Sincos(azi1)
	tu1 := (1 - wgsF) * math.Tan(lat1*rad)
	cu1 := 1 / math.Sqrt(1+tu1*tu1)
	su1 := tu1 * cu1
	sig1 := math.Atan2(tu1, ca1)
	sinA := cu1 * sa1
	cos2a := 1 - sinA*sinA
	uu := cos2a * (wgsA*wgsA - wgsB*wgsB) / (wgsB * wgsB)
	a := 1 + uu/16384*(4096+uu*(-768+uu*(320-175*uu)))
	b := uu / 1024 * (256 + uu*(-128+uu*(74-47*uu)))
	sig := s / (wgsB * a)
	var sinSig, cosSig, cos2sm float64
	for i := 0; i < 200; i++ {
		cos2sm = math.Cos(2*sig1 + sig)
		sinSig, cosSig = math.Sincos(sig)
		dSig := b * sinSig * (cos2sm + b/4*(cosSig*(-1+2*cos2sm*cos2sm)-
			b/6*cos2sm*(-3+4*sinSig*sinSig)*(-3+4*cos2sm*cos2sm)))
		prev := sig
		sig = s/(wgsB*a) + dSig
		if math.Abs(sig-prev) < 1e-14 {
			break
		}
	}
	cos2sm = math.Cos(2*sig1 + sig)
	sinSig, cosSig = math.Sincos(sig)
	t := su1*sinSig - cu1*cosSig*ca1
	phi2 := math.Atan2(su1*cosSig+cu1*sinSig*ca1, (1-wgsF)*math.Hypot(sinA, t))
	lam := math.Atan2(sinSig*sa1, cu1*cosSig-su1*sinSig*ca1)
	c := wgsF / 16 * cos2a * (4 + wgsF*(4-3*cos2a))
	l := lam - (1-c)*wgsF*sinA*(sig+c*sinSig*(cos2sm+c*cosSig*(-1+2*cos2sm*cos2sm)))
	return phi2 / rad, lon1 + l/rad
}

// refArea returns the area in m² of ring (lon, lat; unclosed or closed) by
// the reference method, edges cut into pieces of at most step metres.
func refArea(ring [][2]float64, step float64) float64 {
	n := len(ring)
	if n > 1 && ring[0] == ring[n-1] {
		n--
	}
	lon0, y0 := ring[0][0], wgsA*authalicQ(math.Sin(ring[0][1]*rad))/2
	var sum, px, py float64 // px, py: previous projected point, relative to the first
	prevLon := lon0
	add := func(lat, lon float64) {
		lon = prevLon + math.Remainder(lon-prevLon, 360) // unwrap
		prevLon = lon
		x := wgsA * (lon - lon0) * rad
		y := wgsA*authalicQ(math.Sin(lat*rad))/2 - y0
		sum += px*y - x*py
		px, py = x, y
	}
	for i := 0; i < n; i++ {
		p, q := ring[i], ring[(i+1)%n]
		s, azi := vincentyInverse(p[1], p[0], q[1], q[0])
		k := max(refMinPieces, int(math.Ceil(s/step)))
		for j := 1; j < k; j++ {
			lat, lon := vincentyDirect(p[1], p[0], azi, s*float64(j)/float64(k))
			add(lat, lon)
		}
		add(q[1], q[0])
	}
	return math.Abs(sum) / 2
}

// refStep is the longest piece of an edge in the reference method, in
// metres, and refMinPieces the fewest pieces an edge is cut into.
const (
	refStep      = 10
	refMinPieces = 16
)

// refCheck returns the reference area in m² of ring, after checking that
// halving the step changes it by less than 1e-9 (relative).
func refCheck(tb testing.TB, name string, ring [][2]float64) float64 {
	tb.Helper()
	r1, r2 := refArea(ring, refStep), refArea(ring, refStep/2)
	if d := math.Abs(r1-r2) / r2; d > 1e-9 {
		tb.Fatalf("%s: reference not converged: step %v m gives %.6f m², step %v m gives %.6f m² (%.2g)",
			name, float64(refStep), r1, float64(refStep)/2, r2, d)
	}
	return r2
}

func TestReference_EllipsoidArea(t *testing.T) {
	// GeographicLib's WGS84 ellipsoid area, geographiclib 2.0 (Python)
	// geographiclib/test/test_geodesic.py:674 (a0), as in geodtest.c.
	const want = 510065621724088.5093
	got := 2 * math.Pi * wgsA * wgsA * authalicQ(1)
	if d := math.Abs(got-want) / want; d > 1e-14 {
		t.Fatalf("2πa²q(90°): got %.4f m², want %.4f m² (%.2g)", got, want, d)
	}
}

// ---------------------------------------------------------------------------
// Test plots.
// ---------------------------------------------------------------------------

// plot is a test polygon centred at (lon, lat): a w×h metre rectangle, or if
// n > 0 an irregular star-shaped n-gon of nominal area w×h, rotated rot
// degrees anticlockwise, its vertices anticlockwise and the ring unclosed.
type plot struct {
	lon, lat  float64
	w, h, rot float64
	n         int
}

// ring returns the plot's vertices (lon, lat). Local metres become degrees
// through the radii of curvature at the centre; the mapping need not be
// exact, since the polygon is defined by the degrees it yields. Longitudes
// are normalised to [-180, 180).
func (p plot) ring() [][2]float64 {
	var xy [][2]float64
	if p.n == 0 {
		x, y := p.w/2, p.h/2
		xy = [][2]float64{{-x, -y}, {x, -y}, {x, y}, {-x, y}}
	} else {
		// r(θ) = r0·(1 + 0.25 sin 3θ + 0.15 cos(7θ+0.5)); ∮r²/2 = πr0²·1.0425.
		r0 := math.Sqrt(p.w * p.h / (math.Pi * 1.0425))
		for k := 0; k < p.n; k++ {
			th := 2 * math.Pi * float64(k) / float64(p.n)
			r := r0 * (1 + 0.25*math.Sin(3*th) + 0.15*math.Cos(7*th+0.5))
			xy = append(xy, [2]float64{r * math.Cos(th), r * math.Sin(th)})
		}
	}
	sr, cr := math.Sincos(p.rot * rad)
	sp, cp := math.Sincos(p.lat * rad)
	w := math.Sqrt(1 - wgsE2*sp*sp)
	nRad, mRad := wgsA/w, wgsA*(1-wgsE2)/(w*w*w)
	out := make([][2]float64, len(xy))
	for i, v := range xy {
		east, north := v[0]*cr-v[1]*sr, v[0]*sr+v[1]*cr
		lon := p.lon + east/(nRad*cp)/rad
		lat := p.lat + north/mRad/rad
		out[i] = [2]float64{math.Mod(lon+540, 360) - 180, lat}
	}
	return out
}

// plotCases are the accuracy table: plots from 0.1 ha to 10,000 ha at
// latitudes from 60S to 79.9N and across the antimeridian. planimeter is the
// area in m² from GeographicLib's own C++ implementation, Planimeter 2.1.2
// (Debian bookworm geographiclib-tools 2.1.2-1), the ring's "lat lon" lines
// piped into `Planimeter -p 12` (its default WGS84, series method; it
// prints areas to five decimals). Each row is also checked against the
// reference method above, computed as the test runs.
var plotCases = []struct {
	name       string
	p          plot
	planimeter float64
}{
	{"square 0.1 ha 60S", plot{lon: -45.2, lat: -60, w: 31.6227766016838, h: 31.6227766016838}, 1000.00000},
	{"square 10000 ha 60S", plot{lon: -45.2, lat: -60, w: 10000, h: 10000}, 99999887.35120},
	{"square 1000 ha turned 37deg 60S", plot{lon: -45.2, lat: -60, w: 3162.27766016838, h: 3162.27766016838, rot: 37}, 9999999.53617},
	{"strip 20 km x 50 m E-W 60S", plot{lon: -45.2, lat: -60, w: 20000, h: 50}, 999995.92499},
	{"strip 20 km x 50 m N-S 60S", plot{lon: -45.2, lat: -60, w: 20000, h: 50, rot: 90}, 999999.56900},
	{"strip 25 km x 200 m at 60deg 60S", plot{lon: -45.2, lat: -60, w: 25000, h: 200, rot: 60}, 4999997.91910},
	{"20-gon 1 ha 60S", plot{lon: -45.2, lat: -60, w: 100, h: 100, n: 20}, 9546.23404},
	{"200-gon 10000 ha 60S", plot{lon: -45.2, lat: -60, w: 10000, h: 10000, n: 200, rot: 10}, 99944358.12269},
	{"57-gon 30 ha 60S", plot{lon: -45.2, lat: -60, w: 547.722557505166, h: 547.722557505166, n: 57}, 297991.53632},
	{"square 0.1 ha 30S", plot{lon: -55.7, lat: -30, w: 31.6227766016838, h: 31.6227766016838}, 1000.00000},
	{"square 10000 ha 30S", plot{lon: -55.7, lat: -30, w: 10000, h: 10000}, 99999996.59339},
	{"square 1000 ha turned 37deg 30S", plot{lon: -55.7, lat: -30, w: 3162.27766016838, h: 3162.27766016838, rot: 37}, 10000000.12627},
	{"strip 20 km x 50 m E-W 30S", plot{lon: -55.7, lat: -30, w: 20000, h: 50}, 1000000.27679},
	{"strip 20 km x 50 m N-S 30S", plot{lon: -55.7, lat: -30, w: 20000, h: 50, rot: 90}, 999999.58698},
	{"strip 25 km x 200 m at 60deg 30S", plot{lon: -55.7, lat: -30, w: 25000, h: 200, rot: 60}, 5000000.15417},
	{"20-gon 1 ha 30S", plot{lon: -55.7, lat: -30, w: 100, h: 100, n: 20}, 9546.23425},
	{"200-gon 10000 ha 30S", plot{lon: -55.7, lat: -30, w: 10000, h: 10000, n: 200, rot: 10}, 99944288.57277},
	{"57-gon 30 ha 30S", plot{lon: -55.7, lat: -30, w: 547.722557505166, h: 547.722557505166, n: 57}, 297991.52372},
	{"square 0.1 ha 0", plot{lon: 23.4, lat: 0, w: 31.6227766016838, h: 31.6227766016838}, 1000.00000},
	{"square 10000 ha 0", plot{lon: 23.4, lat: 0, w: 10000, h: 10000}, 100000010.51980},
	{"square 1000 ha turned 37deg 0", plot{lon: 23.4, lat: 0, w: 3162.27766016838, h: 3162.27766016838, rot: 37}, 10000000.20237},
	{"strip 20 km x 50 m E-W 0", plot{lon: 23.4, lat: 0, w: 20000, h: 50}, 1000000.82491},
	{"strip 20 km x 50 m N-S 0", plot{lon: 23.4, lat: 0, w: 20000, h: 50, rot: 90}, 999999.59584},
	{"strip 25 km x 200 m at 60deg 0", plot{lon: 23.4, lat: 0, w: 25000, h: 200, rot: 60}, 5000000.47647},
	{"20-gon 1 ha 0", plot{lon: 23.4, lat: 0, w: 100, h: 100, n: 20}, 9546.23433},
	{"200-gon 10000 ha 0", plot{lon: 23.4, lat: 0, w: 10000, h: 10000, n: 200, rot: 10}, 99944254.22729},
	{"57-gon 30 ha 0", plot{lon: 23.4, lat: 0, w: 547.722557505166, h: 547.722557505166, n: 57}, 297991.51744},
	{"square 0.1 ha 10N", plot{lon: -84.1, lat: 10, w: 31.6227766016838, h: 31.6227766016838}, 1000.00000},
	{"square 10000 ha 10N", plot{lon: -84.1, lat: 10, w: 10000, h: 10000}, 100000009.21099},
	{"square 1000 ha turned 37deg 10N", plot{lon: -84.1, lat: 10, w: 3162.27766016838, h: 3162.27766016838, rot: 37}, 10000000.19520},
	{"strip 20 km x 50 m E-W 10N", plot{lon: -84.1, lat: 10, w: 20000, h: 50}, 1000000.77363},
	{"strip 20 km x 50 m N-S 10N", plot{lon: -84.1, lat: 10, w: 20000, h: 50, rot: 90}, 999999.59485},
	{"strip 25 km x 200 m at 60deg 10N", plot{lon: -84.1, lat: 10, w: 25000, h: 200, rot: 60}, 5000000.44483},
	{"20-gon 1 ha 10N", plot{lon: -84.1, lat: 10, w: 100, h: 100, n: 20}, 9546.23437},
	{"200-gon 10000 ha 10N", plot{lon: -84.1, lat: 10, w: 10000, h: 10000, n: 200, rot: 10}, 99944243.67020},
	{"57-gon 30 ha 10N", plot{lon: -84.1, lat: 10, w: 547.722557505166, h: 547.722557505166, n: 57}, 297991.51552},
	{"square 0.1 ha 45N", plot{lon: 7.6, lat: 45, w: 31.6227766016838, h: 31.6227766016838}, 1000.00000},
	{"square 10000 ha 45N", plot{lon: 7.6, lat: 45, w: 10000, h: 10000}, 99999969.10221},
	{"square 1000 ha turned 37deg 45N", plot{lon: 7.6, lat: 45, w: 3162.27766016838, h: 3162.27766016838, rot: 37}, 9999999.97719},
	{"strip 20 km x 50 m E-W 45N", plot{lon: 7.6, lat: 45, w: 20000, h: 50}, 999999.18613},
	{"strip 20 km x 50 m N-S 45N", plot{lon: 7.6, lat: 45, w: 20000, h: 50, rot: 90}, 999999.57791},
	{"strip 25 km x 200 m at 60deg 45N", plot{lon: 7.6, lat: 45, w: 25000, h: 200, rot: 60}, 4999999.56683},
	{"20-gon 1 ha 45N", plot{lon: 7.6, lat: 45, w: 100, h: 100, n: 20}, 9546.23449},
	{"200-gon 10000 ha 45N", plot{lon: 7.6, lat: 45, w: 10000, h: 10000, n: 200, rot: 10}, 99944193.52998},
	{"57-gon 30 ha 45N", plot{lon: 7.6, lat: 45, w: 547.722557505166, h: 547.722557505166, n: 57}, 297991.50653},
	{"square 0.1 ha 60N", plot{lon: 101.3, lat: 60, w: 31.6227766016838, h: 31.6227766016838}, 1000.00000},
	{"square 10000 ha 60N", plot{lon: 101.3, lat: 60, w: 10000, h: 10000}, 99999887.35126},
	{"square 1000 ha turned 37deg 60N", plot{lon: 101.3, lat: 60, w: 3162.27766016838, h: 3162.27766016838, rot: 37}, 9999999.53618},
	{"strip 20 km x 50 m E-W 60N", plot{lon: 101.3, lat: 60, w: 20000, h: 50}, 999995.92499},
	{"strip 20 km x 50 m N-S 60N", plot{lon: 101.3, lat: 60, w: 20000, h: 50, rot: 90}, 999999.56900},
	{"strip 25 km x 200 m at 60deg 60N", plot{lon: 101.3, lat: 60, w: 25000, h: 200, rot: 60}, 4999997.91911},
	{"20-gon 1 ha 60N", plot{lon: 101.3, lat: 60, w: 100, h: 100, n: 20}, 9546.23460},
	{"200-gon 10000 ha 60N", plot{lon: 101.3, lat: 60, w: 10000, h: 10000, n: 200, rot: 10}, 99944148.74278},
	{"57-gon 30 ha 60N", plot{lon: 101.3, lat: 60, w: 547.722557505166, h: 547.722557505166, n: 57}, 297991.49849},
	{"square 0.1 ha 79.9N", plot{lon: 16.2, lat: 79.9, w: 31.6227766016838, h: 31.6227766016838}, 1000.00000},
	{"square 10000 ha 79.9N", plot{lon: 16.2, lat: 79.9, w: 10000, h: 10000}, 99998726.54828},
	{"square 1000 ha turned 37deg 79.9N", plot{lon: 16.2, lat: 79.9, w: 3162.27766016838, h: 3162.27766016838, rot: 37}, 9999993.29008},
	{"strip 20 km x 50 m E-W 79.9N", plot{lon: 16.2, lat: 79.9, w: 20000, h: 50}, 999949.50110},
	{"strip 20 km x 50 m N-S 79.9N", plot{lon: 16.2, lat: 79.9, w: 20000, h: 50, rot: 90}, 999999.56095},
	{"strip 25 km x 200 m at 60deg 79.9N", plot{lon: 16.2, lat: 79.9, w: 25000, h: 200, rot: 60}, 4999975.19007},
	{"20-gon 1 ha 79.9N", plot{lon: 16.2, lat: 79.9, w: 100, h: 100, n: 20}, 9546.23520},
	{"200-gon 10000 ha 79.9N", plot{lon: 16.2, lat: 79.9, w: 10000, h: 10000, n: 200, rot: 10}, 99943912.11572},
	{"57-gon 30 ha 79.9N", plot{lon: 16.2, lat: 79.9, w: 547.722557505166, h: 547.722557505166, n: 57}, 297991.45579},
	{"square 10000 ha 17S antimeridian", plot{lon: 180, lat: -17, w: 10000, h: 10000}, 100000006.59238},
	{"strip 20 km x 50 m E-W 17S antimeridian", plot{lon: 180, lat: -17, w: 20000, h: 50}, 1000000.67089},
	{"200-gon 10000 ha 17S antimeridian", plot{lon: 180, lat: -17, w: 10000, h: 10000, n: 200, rot: 10}, 99944272.41046},
	{"square 10000 ha 65N antimeridian", plot{lon: 180, lat: 65, w: 10000, h: 10000}, 99999822.18025},
	{"strip 20 km x 50 m E-W 65N antimeridian", plot{lon: 180, lat: 65, w: 20000, h: 50}, 999993.32074},
	{"200-gon 10000 ha 65N antimeridian", plot{lon: 180, lat: 65, w: 10000, h: 10000, n: 200, rot: 10}, 99944123.55622},
}

func TestRingArea_Plots(t *testing.T) {
	var worstPlan, worstRef float64
	var worstPlanName, worstRefName string
	for _, tc := range plotCases {
		t.Run(tc.name, func(t *testing.T) {
			ring := tc.p.ring()
			got := geo.RingArea(ring) * 1e4 // m²
			ref := refCheck(t, tc.name, ring)
			dPlan := math.Abs(got-tc.planimeter) / tc.planimeter
			dRef := math.Abs(got-ref) / ref
			if dPlan >= 1e-4 {
				t.Errorf("RingArea(%+v): got %.6f m², want %.6f m² (Planimeter), relative error %.3g", tc.p, got, tc.planimeter, dPlan)
			}
			if dRef >= 1e-4 {
				t.Errorf("RingArea(%+v): got %.6f m², want %.6f m² (reference), relative error %.3g", tc.p, got, ref, dRef)
			}
			if d := math.Abs(ref-tc.planimeter) / tc.planimeter; d >= 1e-6 {
				t.Errorf("reference %.6f m² and Planimeter %.6f m² disagree for %+v (%.3g)", ref, tc.planimeter, tc.p, d)
			}
			if dPlan > worstPlan {
				worstPlan, worstPlanName = dPlan, tc.name
			}
			if dRef > worstRef {
				worstRef, worstRefName = dRef, tc.name
			}
		})
	}
	t.Logf("%d plots: worst relative error %.3g vs Planimeter (%s), %.3g vs reference (%s)",
		len(plotCases), worstPlan, worstPlanName, worstRef, worstRefName)
}

// planimeterPlot1m2 are 1 m × 1 m squares (0.0001 ha) turned 20°, with
// their Planimeter 2.1.2 areas (as for plotCases; Planimeter prints five
// decimals).
var planimeterPlot1m2 = []struct {
	lat, planimeter float64
}{
	{-60, 0.99999}, {-30, 0.99999}, {0, 1.00000}, {10, 1.00000}, {45, 1.00001}, {60, 0.99999}, {79.9, 1.00000},
}

func TestRingArea_Tiny(t *testing.T) {
	// GeographicLib documents a maximum area error of 0.0013 m² for
	// perimeters under 10 km (Planimeter(1) man page, ACCURACY): round-off,
	// a relative error of at most 1.3e-6 at 0.1 ha but up to 1.3e-3 at
	// 0.0001 ha. Planimeter itself shows it (0.99999 for 1 m²).
	const tol = 0.0013 // m²
	for _, tc := range planimeterPlot1m2 {
		p := plot{lon: 12.3, lat: tc.lat, w: 1, h: 1, rot: 20}
		ring := p.ring()
		got := geo.RingArea(ring) * 1e4
		ref := refCheck(t, "tiny", ring)
		if math.Abs(got-ref) > tol || math.Abs(got-tc.planimeter) > tol {
			t.Errorf("RingArea(%+v): got %.6f m², want %.6f m² (reference), %.5f m² (Planimeter) ± %v m²", p, got, ref, tc.planimeter, tol)
		}
	}
}

// geographicLibVectors are GeographicLib's own polygon-area tests: the
// Planimeter* functions of tests/geodtest.c in geographiclib/geographiclib-c
// (commit 20cc01598cee14dce82dca91a9aa5e358864b4f6), whose cases, expected
// values and tolerances are repeated in geographiclib 2.0 (Python, Debian
// python3-geographiclib 2.0-2) geographiclib/test/test_geodesic.py at the
// lines given. Points there are (lat, lon) and areas signed,
// Compute(reverse=false, sign=true); here (lon, lat) and unsigned.
var geographicLibVectors = []struct {
	name   string
	latLon [][2]float64
	m2     float64 // area
	tol    float64 // tolerance of the original test
}{
	{"Planimeter0 north pole, py:599-602", [][2]float64{{89, 0}, {89, 90}, {89, 180}, {89, 270}}, 24952305678.0, 1},
	{"Planimeter0 south pole, py:603-606 (-24952305678)", [][2]float64{{-89, 0}, {-89, 90}, {-89, 180}, {-89, 270}}, 24952305678.0, 1},
	{"Planimeter0 diamond, py:608-611", [][2]float64{{0, -1}, {-1, 0}, {0, 1}, {1, 0}}, 24619419146.0, 1},
	{"Planimeter0 octant, py:613-616", [][2]float64{{90, 0}, {0, 0}, {0, 90}}, 63758202715511.0, 1},
	{"Planimeter5, py:623-626", [][2]float64{{89, 0.1}, {89, 90.1}, {89, -179.9}}, 12476152838.5, 1},
	{"Planimeter6a, py:630-633", [][2]float64{{9, -0.00000000000001}, {9, 180}, {9, 0}}, 0, 1},
	{"Planimeter6b, py:634-637", [][2]float64{{9, 0.00000000000001}, {9, 0}, {9, 180}}, 0, 1},
	{"Planimeter6c, py:638-641", [][2]float64{{9, 0.00000000000001}, {9, 180}, {9, 0}}, 0, 1},
	{"Planimeter6d, py:642-645", [][2]float64{{9, -0.00000000000001}, {9, 0}, {9, 180}}, 0, 1},
	{"Planimeter12, py:649-652", [][2]float64{{66.562222222, 0}, {66.562222222, 180}, {66.562222222, 360}}, 0, 1},
	{"Planimeter12r, py:656-659", [][2]float64{{66.562222222, -0}, {66.562222222, -180}, {66.562222222, -360}}, 0, 1},
	{"Planimeter13, py:663-666", [][2]float64{{89, -360}, {89, -240}, {89, -120}, {89, 0}, {89, 120}, {89, 240}}, 32415230256.0, 1},
	{"Planimeter15, py:671-673,697-699", [][2]float64{{2, 1}, {1, 2}, {3, 3}}, 18454562325.45119, 0.5},
	{"Planimeter21 three circuits, py:740-776", [][2]float64{{45, 60}, {45, 180}, {45, -60}, {45, 60}, {45, 180}, {45, -60}, {45, 60}, {45, 180}, {45, -60}}, 3 * 39433884866571.4277, 0.5},
	{"Planimeter21 four circuits, py:740-776", [][2]float64{{45, 60}, {45, 180}, {45, -60}, {45, 60}, {45, 180}, {45, -60}, {45, 60}, {45, 180}, {45, -60}, {45, 60}, {45, 180}, {45, -60}}, 4 * 39433884866571.4277, 0.5},
}

func TestRingArea_GeographicLibVectors(t *testing.T) {
	for _, tc := range geographicLibVectors {
		t.Run(tc.name, func(t *testing.T) {
			ring := make([][2]float64, len(tc.latLon))
			for i, c := range tc.latLon {
				ring[i] = [2]float64{c[1], c[0]}
			}
			if got := geo.RingArea(ring) * 1e4; math.Abs(got-tc.m2) > tc.tol {
				t.Errorf("RingArea(%v): got %.4f m², want %.4f ± %v m²", ring, got, tc.m2, tc.tol)
			}
		})
	}
	t.Run("GeodSolve74 short edge S12, py:442-454", func(t *testing.T) {
		// "Check fix for inaccurate areas": the area under a 40 m edge, the
		// term RingArea sums. Also geodtest.c GeodSolve74.
		var s12, s12Area float64
		geodesic.WGS84.GenInverse(54.1589, 15.3872, 54.1591, 15.3877, &s12, nil, nil, nil, nil, nil, &s12Area)
		if math.Abs(s12-39.527686385) > 5e-9 || math.Abs(s12Area-286698586.30197) > 5e-4 {
			t.Errorf("GenInverse: got s12 %.9f m, S12 %.5f m², want 39.527686385 m, 286698586.30197 m²", s12, s12Area)
		}
	})
}

// reversed returns ring in the opposite order.
func reversed(ring [][2]float64) [][2]float64 {
	r := make([][2]float64, len(ring))
	for i, c := range ring {
		r[len(ring)-1-i] = c
	}
	return r
}

func TestRingArea_Winding(t *testing.T) {
	for _, tc := range plotCases {
		ring := tc.p.ring()
		ccw, cw := geo.RingArea(ring), geo.RingArea(reversed(ring))
		if math.Abs(ccw-cw) > 1e-12*ccw {
			t.Errorf("%s: anticlockwise %.12f ha, clockwise %.12f ha", tc.name, ccw, cw)
		}
	}
}

func TestRingArea_Closed(t *testing.T) {
	for _, tc := range plotCases {
		ring := tc.p.ring()
		open := geo.RingArea(ring)
		if got := geo.RingArea(append(ring, ring[0])); got != open {
			t.Errorf("%s: closed ring %.12f ha, unclosed %.12f ha", tc.name, got, open)
		}
		// Closed by the same point written 360° further east: the extra
		// edge has length 0 and adds nothing.
		c := [2]float64{ring[0][0] + 360, ring[0][1]}
		if got := geo.RingArea(append(ring, c)); math.Abs(got-open) > 1e-12*open {
			t.Errorf("%s: closed with lon+360 %.12f ha, unclosed %.12f ha", tc.name, got, open)
		}
	}
}

func TestPolygonArea(t *testing.T) {
	outer := plot{lon: -55.7, lat: -30, w: 10000, h: 10000}.ring()
	hole := plot{lon: -55.7, lat: -30, w: 3162.27766016838, h: 3162.27766016838, rot: 37}.ring()
	hole2 := plot{lon: -55.69, lat: -30.02, w: 100, h: 100, n: 20}.ring()
	want := refCheck(t, "outer", outer) - refCheck(t, "hole", hole) - refCheck(t, "hole2", hole2)
	for _, tc := range []struct {
		name  string
		rings [][][2]float64
	}{
		{"holes clockwise", [][][2]float64{outer, reversed(hole), reversed(hole2)}},
		{"holes anticlockwise", [][][2]float64{outer, hole, hole2}},
		{"all clockwise and closed", [][][2]float64{append(reversed(outer), outer[len(outer)-1]), reversed(append(hole, hole[0])), reversed(hole2)}},
	} {
		got := geo.PolygonArea(tc.rings) * 1e4
		if d := math.Abs(got-want) / want; d >= 1e-4 {
			t.Errorf("PolygonArea(%s): got %.6f m², want %.6f m² (reference), relative error %.3g", tc.name, got, want, d)
		}
	}
	if got, want := geo.PolygonArea([][][2]float64{outer}), geo.RingArea(outer); got != want {
		t.Errorf("PolygonArea(outer only): got %v ha, want RingArea %v ha", got, want)
	}
	if got := geo.PolygonArea(nil); got != 0 {
		t.Errorf("PolygonArea(nil): got %v ha, want 0", got)
	}
}

func TestRingArea_Degenerate(t *testing.T) {
	a, b, c := [2]float64{7.6, 45.3}, [2]float64{7.61, 45.3}, [2]float64{7.61, 45.31}
	// Three points on one general geodesic (not a meridian or the equator).
	var onGeodesic [][2]float64
	for _, s := range []float64{0, 400, 1000} {
		lat, lon := vincentyDirect(45.3, 7.6, 63*rad, s)
		onGeodesic = append(onGeodesic, [2]float64{lon, lat})
	}
	for _, tc := range []struct {
		name string
		ring [][2]float64
		tol  float64 // ha
	}{
		{"nil", nil, 0},
		{"one point", [][2]float64{a}, 0},
		{"two points", [][2]float64{a, b}, 0},
		{"two points closed", [][2]float64{a, b, a}, 0},
		{"one point repeated", [][2]float64{a, a, a, a}, 0},
		{"there and back", [][2]float64{a, b, c, b}, 1e-7},
		{"collinear on a meridian", [][2]float64{{10, 0}, {10, 0.5}, {10, 1}}, 1e-7},
		{"collinear on the equator", [][2]float64{{0, 0}, {0.5, 0}, {1, 0}}, 1e-7},
		{"collinear on a geodesic", onGeodesic, 1e-7}, // 0.001 m²
	} {
		if got := geo.RingArea(tc.ring); got < 0 || got > tc.tol {
			t.Errorf("RingArea(%s %v): got %g ha, want 0 (± %g)", tc.name, tc.ring, got, tc.tol)
		}
	}
	if got := geo.RingArea([][2]float64{a, b, {math.NaN(), 45}}); !math.IsNaN(got) {
		t.Errorf("RingArea with a NaN longitude: got %v, want NaN", got)
	}
}

func TestRingArea_Antimeridian(t *testing.T) {
	// The ellipsoid is symmetric about its axis, so moving a ring by a
	// fixed longitude leaves its area unchanged. plotCases also holds
	// antimeridian plots with Planimeter's areas.
	for _, p := range []plot{
		{lon: 180, lat: -17, w: 10000, h: 10000, n: 200, rot: 10},
		{lon: 180, lat: 65, w: 20000, h: 50},
		{lon: -179.9999, lat: 0.5, w: 316.227766016838, h: 316.227766016838, rot: 45},
	} {
		ring := p.ring()
		crosses := false
		shifted := make([][2]float64, len(ring))   // centred near lon 0
		unwrapped := make([][2]float64, len(ring)) // lon in [0, 360)
		for i, c := range ring {
			crosses = crosses || c[0] < 0 != (ring[0][0] < 0)
			shifted[i] = [2]float64{math.Remainder(c[0]-180, 360), c[1]}
			unwrapped[i] = [2]float64{math.Mod(c[0]+360, 360), c[1]}
		}
		if !crosses {
			t.Fatalf("plot %+v does not cross the antimeridian", p)
		}
		got := geo.RingArea(ring)
		for name, r := range map[string][][2]float64{"shifted by 180°": shifted, "lon in [0, 360)": unwrapped} {
			if want := geo.RingArea(r); math.Abs(got-want) > 1e-9*want {
				t.Errorf("RingArea(%+v): got %.9f ha, %s %.9f ha", p, got, name, want)
			}
		}
		if ref := refCheck(t, "antimeridian", ring) / 1e4; math.Abs(got-ref) >= 1e-4*ref {
			t.Errorf("RingArea(%+v): got %.9f ha, want %.9f ha (reference)", p, got, ref)
		}
	}
}

func BenchmarkRingArea(b *testing.B) {
	ring := plot{lon: 7.6, lat: 45, w: 10000, h: 10000, n: 200, rot: 10}.ring()
	b.ReportAllocs()
	for b.Loop() {
		geo.RingArea(ring)
	}
}
