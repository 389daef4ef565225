package plotfile

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// A Shapefile's .prj names its coordinate system in WKT (OGC WKT 1, or
// ESRI's dialect of it). The appliance takes longitude and latitude on
// WGS 84 as they are, and turns transverse Mercator projections on WGS 84
// (UTM zones, north and south) back into longitude and latitude; any
// other system is refused naming it, for the sender to reproject.

// wktNode is one KEYWORD["text", number, CHILD[...], ...] of a WKT.
type wktNode struct {
	key      string
	texts    []string // quoted values, in order
	numbers  []float64
	children []*wktNode
}

// child is n's first child with key (case-insensitive), or nil.
func (n *wktNode) child(key string) *wktNode {
	for _, c := range n.children {
		if strings.EqualFold(c.key, key) {
			return c
		}
	}
	return nil
}

// name is n's first quoted value ("WGS 84 / UTM zone 30N").
func (n *wktNode) name() string {
	if n == nil || len(n.texts) == 0 {
		return ""
	}
	return n.texts[0]
}

// parseWKT reads a WKT, or fails saying where it is not one.
func parseWKT(s string) (*wktNode, error) {
	p := wktParser{s: s}
	n, err := p.node()
	if err != nil {
		return nil, err
	}
	if p.skipSpace(); p.i < len(p.s) {
		return nil, fmt.Errorf("text after the end at character %d", p.i+1)
	}
	return n, nil
}

type wktParser struct {
	s string
	i int
}

func (p *wktParser) skipSpace() {
	for p.i < len(p.s) && unicode.IsSpace(rune(p.s[p.i])) {
		p.i++
	}
}

// maxWKTDepth bounds nesting, so that no .prj can exhaust the stack.
const maxWKTDepth = 16

func (p *wktParser) node() (*wktNode, error) { return p.nodeAt(0) }

func (p *wktParser) nodeAt(depth int) (*wktNode, error) {
	if depth > maxWKTDepth {
		return nil, fmt.Errorf("nested too deep at character %d", p.i+1)
	}
	p.skipSpace()
	start := p.i
	for p.i < len(p.s) && (p.s[p.i] == '_' || unicode.IsLetter(rune(p.s[p.i])) || unicode.IsDigit(rune(p.s[p.i]))) {
		p.i++
	}
	n := &wktNode{key: p.s[start:p.i]}
	if n.key == "" {
		return nil, fmt.Errorf("a keyword expected at character %d", p.i+1)
	}
	p.skipSpace()
	if p.i >= len(p.s) || (p.s[p.i] != '[' && p.s[p.i] != '(') {
		return n, nil // a bare keyword, as in AXIS["x",EAST]
	}
	closing := byte(']')
	if p.s[p.i] == '(' {
		closing = ')'
	}
	p.i++
	for {
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, fmt.Errorf("%s is not closed", n.key)
		}
		switch c := p.s[p.i]; {
		case c == '"':
			end := strings.IndexByte(p.s[p.i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("a quote is not closed at character %d", p.i+1)
			}
			n.texts = append(n.texts, p.s[p.i+1:p.i+1+end])
			p.i += end + 2
		case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
			start := p.i
			for p.i < len(p.s) && strings.IndexByte("+-.0123456789eE", p.s[p.i]) >= 0 {
				p.i++
			}
			f, err := strconv.ParseFloat(p.s[start:p.i], 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not a number", p.s[start:p.i])
			}
			n.numbers = append(n.numbers, f)
		default:
			c, err := p.nodeAt(depth + 1)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, c)
		}
		p.skipSpace()
		if p.i >= len(p.s) {
			return nil, fmt.Errorf("%s is not closed", n.key)
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case closing:
			p.i++
			return n, nil
		default:
			return nil, fmt.Errorf("',' or '%c' expected at character %d", closing, p.i+1)
		}
	}
}

// projection turns a file's x, y into longitude, latitude.
type projection interface {
	lonLat(x, y float64) (lon, lat float64)
}

// geographic is longitude and latitude on WGS 84: nothing to do.
type geographic struct{}

func (geographic) lonLat(x, y float64) (float64, float64) { return x, y }

// errSystem is a coordinate system the appliance cannot reproject; its
// text names it for the sender.
type errSystem struct{ name string }

func (e errSystem) Error() string {
	name := e.name
	if name == "" {
		name = "unnamed"
	}
	return fmt.Sprintf("the coordinate system '%s' is not one the appliance can reproject: reproject to WGS 84 (EPSG:4326), e.g. ogr2ogr -t_srs EPSG:4326", name)
}

// projectionOf is the projection a .prj names: geographic for WGS 84
// longitude and latitude, a transverseMercator for a transverse Mercator
// projection of WGS 84 (a UTM zone), else an errSystem naming it.
func projectionOf(prj string) (projection, error) {
	root, err := parseWKT(strings.TrimSpace(strings.TrimPrefix(prj, "\ufeff")))
	if err != nil {
		return nil, fmt.Errorf("the .prj is not a coordinate system in WKT (%v)", err)
	}
	switch strings.ToUpper(root.key) {
	case "GEOGCS":
		if wgs84(root) {
			return geographic{}, nil
		}
	case "PROJCS":
		if wgs84(root.child("GEOGCS")) {
			if tm, ok := transverseMercatorOf(root); ok {
				return tm, nil
			}
		}
	}
	return nil, errSystem{root.name()}
}

// wgs84 reports whether a GEOGCS is longitude and latitude in degrees on
// the WGS 84 datum from Greenwich, by the datum's name as OGC, ESRI or
// EPSG spell it, or by its EPSG code.
func wgs84(g *wktNode) bool {
	if g == nil {
		return false
	}
	if a := g.child("AUTHORITY"); a != nil && len(a.texts) == 2 && a.texts[0] == "EPSG" && a.texts[1] == "4326" {
		return true
	}
	d := g.child("DATUM")
	switch squash(d.name()) {
	case "wgs1984", "dwgs1984", "worldgeodeticsystem1984":
	default:
		return false
	}
	if pm := g.child("PRIMEM"); pm != nil && len(pm.numbers) > 0 && pm.numbers[0] != 0 {
		return false
	}
	if u := g.child("UNIT"); u != nil && len(u.numbers) > 0 && math.Abs(u.numbers[0]-math.Pi/180) > 1e-12 {
		return false
	}
	return true
}

// utmName is a UTM zone by name: "WGS 84 / UTM zone 30N",
// "WGS_1984_UTM_Zone_30N".
var utmName = regexp.MustCompile(`(?i)utm[ _]zone[ _](\d{1,2})([ns])\b`)

// transverseMercatorOf reads a PROJCS of a transverse Mercator projection
// with its origin on the equator: by its PARAMETERs, or for a UTM zone
// that gives none by its name.
func transverseMercatorOf(p *wktNode) (transverseMercator, bool) {
	tm := transverseMercator{k0: 1, unit: 1}
	if u := p.child("UNIT"); u != nil && len(u.numbers) > 0 {
		if u.numbers[0] <= 0 {
			return tm, false
		}
		tm.unit = u.numbers[0]
	}
	proj := p.child("PROJECTION")
	if proj == nil {
		m := utmName.FindStringSubmatch(p.name())
		if m == nil {
			return tm, false
		}
		zone, _ := strconv.Atoi(m[1])
		if zone < 1 || zone > 60 {
			return tm, false
		}
		tm.lon0 = float64(6*zone - 183)
		tm.k0, tm.e0 = 0.9996, 500000
		if strings.EqualFold(m[2], "s") {
			tm.n0 = 10000000
		}
		return tm, true
	}
	if squash(proj.name()) != "transversemercator" {
		return tm, false
	}
	for _, par := range p.children {
		if !strings.EqualFold(par.key, "PARAMETER") || len(par.numbers) == 0 {
			continue
		}
		v := par.numbers[0]
		switch squash(par.name()) {
		case "latitudeoforigin":
			if v != 0 {
				return tm, false
			}
		case "centralmeridian", "longitudeofcenter":
			tm.lon0 = v
		case "scalefactor":
			tm.k0 = v
		case "falseeasting":
			tm.e0 = v
		case "falsenorthing":
			tm.n0 = v
		default:
			return tm, false // a parameter of another projection
		}
	}
	return tm, tm.k0 > 0
}

// transverseMercator is a transverse Mercator projection of WGS 84 with
// its origin on the equator at longitude lon0 (degrees), scale k0 there,
// false easting e0 and northing n0; x, y, e0 and n0 in units of unit
// metres.
type transverseMercator struct {
	lon0, k0, e0, n0, unit float64
}

// WGS 84 and the constants of Krüger's series for it (C. F. F. Karney,
// "Transverse Mercator with an accuracy of a few nanometers", J. Geodesy
// 85, 2011, eqs. 9, 14 and 36, to the sixth order in n as GeographicLib
// takes them: nanometres within 4,000 km of the central meridian).
var (
	wgs84A  = 6378137.0
	wgs84F  = 1 / 298.257223563
	wgs84E2 = wgs84F * (2 - wgs84F)
	tmN     = wgs84F / (2 - wgs84F)
	// tmA is the radius of the rectifying sphere, A in Karney (14).
	tmA = wgs84A / (1 + tmN) * (1 + tmN*tmN/4 + math.Pow(tmN, 4)/64 + math.Pow(tmN, 6)/256)
	// tmBeta are Karney's β_1..β_6 (36), of the inverse series.
	tmBeta = func(n float64) [6]float64 {
		n2, n3 := n*n, n*n*n
		n4, n5, n6 := n2*n2, n2*n3, n3*n3
		return [6]float64{
			n/2 - 2*n2/3 + 37*n3/96 - n4/360 - 81*n5/512 + 96199*n6/604800,
			n2/48 + n3/15 - 437*n4/1440 + 46*n5/105 - 1118711*n6/3870720,
			17*n3/480 - 37*n4/840 - 209*n5/4480 + 5569*n6/90720,
			4397*n4/161280 - 11*n5/504 - 830251*n6/7257600,
			4583*n5/161280 - 108847*n6/3991680,
			20648693 * n6 / 638668800,
		}
	}(tmN)
)

// lonLat is the inverse projection: Krüger's series from the projected
// point to the conformal sphere (Karney eqs. 11 and 15), then the
// conformal latitude back to the geodetic one by Newton's method on
// tan φ (Karney eqs. 7, 19 and 20), exact to round-off.
func (tm transverseMercator) lonLat(x, y float64) (lon, lat float64) {
	xi := (y - tm.n0) * tm.unit / (tm.k0 * tmA)
	eta := (x - tm.e0) * tm.unit / (tm.k0 * tmA)
	xi1, eta1 := xi, eta
	for j, b := range tmBeta {
		k := 2 * float64(j+1)
		xi1 -= b * math.Sin(k*xi) * math.Cosh(k*eta)
		eta1 -= b * math.Cos(k*xi) * math.Sinh(k*eta)
	}
	// The conformal latitude χ and the longitude from the central
	// meridian on the sphere.
	sinhEta, sinXi, cosXi := math.Sinh(eta1), math.Sin(xi1), math.Cos(xi1)
	tauPrime := sinXi / math.Hypot(sinhEta, cosXi) // tan χ
	lambda := math.Atan2(sinhEta, cosXi)
	lat = math.Atan(tauOf(tauPrime)) * 180 / math.Pi
	lon = tm.lon0 + lambda*180/math.Pi
	if lon > 180 {
		lon -= 360
	} else if lon < -180 {
		lon += 360
	}
	return lon, lat
}

// tauOf is tan φ of the geodetic latitude whose conformal latitude has
// tangent tauPrime (Karney 2011, eqs. 7 and 19-20).
func tauOf(tauPrime float64) float64 {
	e := math.Sqrt(wgs84E2)
	tau := tauPrime
	for range 8 {
		sigma := math.Sinh(e * math.Atanh(e*tau/math.Hypot(1, tau)))
		tp := tau*math.Hypot(1, sigma) - sigma*math.Hypot(1, tau)
		d := (tauPrime - tp) * (1 + (1-wgs84E2)*tau*tau) /
			((1 - wgs84E2) * math.Hypot(1, tp) * math.Hypot(1, tau))
		tau += d
		if math.Abs(d) < 1e-15*math.Max(1, math.Abs(tau)) {
			break
		}
	}
	return tau
}
