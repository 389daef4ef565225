package geo

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// cpath is the JSON path of a place inside a feature's coordinates
// member, built only when a problem needs it.
type cpath struct {
	feature int
	idx     [3]int
	n       int
}

func (c cpath) child(i int) cpath {
	if c.n < len(c.idx) {
		c.idx[c.n] = i
		c.n++
	}
	return c
}

func (c cpath) String() string {
	b := append([]byte("features["), strconv.Itoa(c.feature)...)
	b = append(b, "].geometry.coordinates"...)
	for _, i := range c.idx[:c.n] {
		b = append(b, '[')
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, ']')
	}
	return string(b)
}

// coordinates reads a coordinates member of an accepted geometry type.
func (p *parser) coordinates(f *featureState, typ string) error {
	s := &p.s
	cp := cpath{feature: f.index}
	f.geometry.Type = typ
	if d := s.nesting(); d > 0 && d != depths[typ] {
		// One mistake in the nesting would repeat at every ring or position.
		p.add(CodeInvalidValue, cp.String(), nestingIssue(typ, d))
		return s.skip()
	}
	switch typ {
	case TypePoint:
		pos, shape, ok, err := p.position(cp)
		if err != nil {
			return err
		}
		if shape != "" {
			p.add(CodeInvalidValue, cp.String(), shape)
		}
		if ok && p.keep() {
			f.geometry.Points = []Position{pos}
		}
		return nil
	case TypeMultiPoint:
		pts, err := p.positions(cp)
		f.geometry.Points = pts
		return err
	case TypePolygon:
		poly, err := p.polygon(cp)
		if poly != nil {
			f.geometry.Polygons = []Polygon{poly}
		}
		return err
	}
	// MultiPolygon
	if s.peek() != '[' {
		p.add(CodeInvalidValue, cp.String(), "must be an array of polygons, not "+s.kind())
		return s.skip()
	}
	n := 0
	err := s.array(func(i int) error {
		n++
		poly, err := p.polygon(cp.child(i))
		if poly != nil {
			f.geometry.Polygons = append(f.geometry.Polygons, poly)
		}
		return err
	})
	if err == nil && n == 0 {
		p.add(CodeInvalidValue, cp.String(), "must hold at least one polygon")
	}
	return err
}

// depths is how many arrays a geometry type's coordinates nest.
var depths = map[string]int{TypePoint: 1, TypeMultiPoint: 2, TypePolygon: 3, TypeMultiPolygon: 4}

func nestingIssue(typ string, got int) string {
	switch {
	case typ == TypePoint:
		return "a Point's coordinates are one position [lon, lat], not an array of positions"
	case typ == TypeMultiPoint && got == 1:
		return "a MultiPoint's coordinates are an array of positions [[lon, lat], ...], not one position: is this a Point?"
	case typ == TypePolygon && got == 2:
		return "a Polygon's coordinates are an array of linear rings [[[lon, lat], ...]]: put the ring inside an array"
	case typ == TypePolygon && got == 4:
		return "a Polygon's coordinates are an array of linear rings [[[lon, lat], ...]]; these nest one array deeper: is this a MultiPolygon?"
	case typ == TypeMultiPolygon && got == 3:
		return "a MultiPolygon's coordinates are an array of polygons [[[[lon, lat], ...]], ...]; these are one polygon: is this a Polygon?"
	}
	return fmt.Sprintf("a %s's coordinates nest %d arrays deep, these %d", typ, depths[typ], got)
}

// polygon reads an array of linear rings. It returns nil unless every ring
// is valid and the result is still kept.
func (p *parser) polygon(cp cpath) (Polygon, error) {
	s := &p.s
	if s.peek() != '[' {
		p.add(CodeInvalidValue, cp.String(), "must be an array of linear rings, not "+s.kind())
		return nil, s.skip()
	}
	var poly Polygon
	ok := true
	n := 0
	err := s.array(func(i int) error {
		n++
		r, err := p.ring(cp.child(i))
		if r == nil {
			ok = false
		} else if ok {
			poly = append(poly, r)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		p.add(CodeInvalidValue, cp.String(), "must hold at least one linear ring: the plot's boundary")
		return nil, nil
	}
	if !ok || !p.keep() {
		return nil, nil
	}
	return poly, nil
}

// ring reads a linear ring. It returns nil unless the ring is valid and
// the result is still kept.
func (p *parser) ring(cp cpath) (Ring, error) {
	s := &p.s
	if s.peek() != '[' {
		p.add(CodeInvalidValue, cp.String(), "must be a linear ring: an array of positions, not "+s.kind())
		return nil, s.skip()
	}
	p.scratch = p.scratch[:0]
	var (
		n, nBad                 int
		bad                     cpath
		badIssue                string
		allOK                   = true
		first, last             Position
		firstShaped, lastShaped bool
		prev                    Position // the previous position, when usable
		prevOK                  bool
		cross                   = -1 // the first side across the antimeridian starts here
		crossFrom, crossTo      Position
	)
	err := s.array(func(i int) error {
		pos, shape, ok, err := p.position(cp.child(i))
		if err != nil {
			return err
		}
		if ok && prevOK && cross < 0 && crossesAntimeridian(prev, pos) {
			cross, crossFrom, crossTo = i-1, prev, pos
		}
		prev, prevOK = pos, ok
		n++
		if shape != "" {
			if nBad == 0 {
				bad, badIssue = cp.child(i), shape
			}
			nBad++
		}
		if i == 0 {
			first, firstShaped = pos, shape == ""
		}
		last, lastShaped = pos, shape == ""
		if !ok {
			allOK = false
		} else if allOK {
			p.scratch = append(p.scratch, pos)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	p.shapeProblem(bad, badIssue, nBad, "ring")
	valid := allOK
	open := n >= 2 && firstShaped && lastShaped && first != last
	least := 4
	if open && p.opts.OpenRings {
		least = 3 // closed by the reader, it has 4
	}
	if n < least {
		p.add(CodeInvalidRing, cp.String(), fmt.Sprintf("a linear ring needs at least 4 positions (3 corners and the first repeated at the end), not %d", n))
		valid = false
	}
	if open && !p.opts.OpenRings {
		p.add(CodeInvalidCoordinateClosure, cp.String(), fmt.Sprintf(
			"the ring is not closed: its last position %s must repeat its first %s", formatPos(last), formatPos(first)))
		valid = false
	}
	if cross >= 0 && !p.opts.DeferAntimeridian {
		p.add(CodeCrossesAntimeridian, cp.String(), "the ring "+antimeridianIssue(cross, crossFrom, crossTo, plotReader, plotAdvice))
		valid = false
	}
	if !valid || !p.keep() {
		return nil, nil
	}
	return slices.Clone(p.scratch), nil
}

// crossesAntimeridian reports whether the side from a to b joins
// longitudes more than 180° apart: read the short way, as RFC 7946 and the
// geodesic area read it, it crosses 180°. A side along 180° from 180 to
// -180 counts too: in plain longitude it spans the globe.
func crossesAntimeridian(a, b Position) bool {
	d := nano(a[0]) - nano(b[0])
	return d > 180e9 || d < -180e9
}

// antimeridianSide returns the first position of the first side of r that
// crosses the antimeridian, or -1.
func antimeridianSide(r Ring) int {
	for k := 1; k < len(r); k++ {
		if crossesAntimeridian(r[k-1], r[k]) {
			return k - 1
		}
	}
	return -1
}

// antimeridianIssue words a ring's side from position k, a to b, crossing
// the antimeridian, after "the ring" or a ring's name: reader is who reads
// the coordinates as plain longitude and latitude (so that the side runs
// round the globe), advice what to send instead.
func antimeridianIssue(k int, a, b Position, reader, advice string) string {
	return fmt.Sprintf("crosses the antimeridian (180°) on its side from position %d to %d, %s to %s: "+
		"%s reads coordinates as plain longitude and latitude, in which that side runs the long way round the globe; %s",
		k, k+1, formatPos(a), formatPos(b), reader, advice)
}

// What a plot or a layer crossing the antimeridian is told.
const (
	plotReader  = "the EU information system"
	plotAdvice  = "split the plot into two polygons, one on each side of 180°, in a MultiPolygon"
	layerReader = "screening"
	layerAdvice = "split the feature at 180° first, e.g. with ogr2ogr -wrapdateline"
)

// positions reads a MultiPoint's array of positions.
func (p *parser) positions(cp cpath) ([]Position, error) {
	s := &p.s
	if s.peek() != '[' {
		p.add(CodeInvalidValue, cp.String(), "must be an array of positions, not "+s.kind())
		return nil, s.skip()
	}
	var (
		pts      []Position
		n, nBad  int
		bad      cpath
		badIssue string
	)
	err := s.array(func(i int) error {
		pos, shape, ok, err := p.position(cp.child(i))
		if err != nil {
			return err
		}
		n++
		if shape != "" {
			if nBad == 0 {
				bad, badIssue = cp.child(i), shape
			}
			nBad++
		}
		if ok && p.keep() {
			pts = append(pts, pos)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	p.shapeProblem(bad, badIssue, nBad, "MultiPoint")
	if n == 0 {
		p.add(CodeInvalidValue, cp.String(), "must hold at least one position")
	}
	if !p.keep() {
		return nil, nil
	}
	return pts, nil
}

// shapeProblem reports the first malformed position of a ring or MultiPoint,
// counting the others: one mistake repeated need not be listed 200 times.
func (p *parser) shapeProblem(at cpath, issue string, n int, of string) {
	switch {
	case n == 0:
		return
	case n == 2:
		issue += fmt.Sprintf("; 1 more position of this %s is malformed too", of)
	case n > 2:
		issue += fmt.Sprintf("; %d more positions of this %s are malformed too", n-1, of)
	}
	p.add(CodeInvalidValue, at.String(), issue)
}

// position reads one position. shape says why the value is not an array of
// 2 or 3 numbers (the caller reports it); a position outside the WGS 84
// ranges is reported here. ok is true for a usable position.
func (p *parser) position(cp cpath) (pos Position, shape string, ok bool, err error) {
	s := &p.s
	if s.peek() != '[' {
		kind := s.kind()
		return pos, "must be a position [longitude, latitude], not " + kind, false, s.skip()
	}
	empty, err := s.open(']')
	if err != nil {
		return pos, "", false, err
	}
	n := 0
	var dec [2]int
	other := ""
	for !empty {
		if c := s.peek(); c == '-' || c >= '0' && c <= '9' {
			text, d, err := s.number()
			if err != nil {
				return pos, "", false, err
			}
			if n < 2 {
				pos[n], dec[n] = parseFloat(text), d
			}
		} else {
			if other == "" {
				other = s.kind()
			}
			if err := s.skip(); err != nil {
				return pos, "", false, err
			}
		}
		n++
		more, err := s.next(']')
		if err != nil {
			return pos, "", false, err
		}
		empty = !more
	}
	switch {
	case other != "":
		return pos, "must be a position [longitude, latitude] of numbers, not an array holding " + other, false, nil
	case n < 2 || n > 3:
		return pos, fmt.Sprintf("must be a position [longitude, latitude] or [longitude, latitude, altitude], not %d %s", n, plural(n, "number")), false, nil
	}
	p.maxDec = max(p.maxDec, dec[0], dec[1])
	lonOK := pos[0] >= -180 && pos[0] <= 180
	latOK := pos[1] >= -90 && pos[1] <= 90
	if !lonOK || !latOK {
		p.add(CodeInvalidCoordinateRange, cp.String(), rangeIssue(pos, lonOK, latOK))
		return pos, "", false, nil
	}
	return pos, "", true, nil
}

func rangeIssue(pos Position, lonOK, latOK bool) string {
	lon, lat := formatNum(pos[0]), formatNum(pos[1])
	switch {
	case !lonOK && !latOK:
		return fmt.Sprintf("longitude %s is outside -180 to 180 and latitude %s outside -90 to 90: positions must be WGS 84 decimal degrees, not projected coordinates", lon, lat)
	case !latOK && pos[0] >= -90 && pos[0] <= 90:
		return fmt.Sprintf("latitude %s is outside -90 to 90: positions are [longitude, latitude]; are the two swapped?", lat)
	case !latOK:
		return fmt.Sprintf("latitude %s is outside -90 to 90", lat)
	}
	return fmt.Sprintf("longitude %s is outside -180 to 180", lon)
}

// formatNum writes a number for an issue: plainly unless very large or small.
func formatNum(f float64) string {
	if a := math.Abs(f); a == 0 || a >= 1e-9 && a < 1e15 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

func formatPos(p Position) string { return "[" + formatNum(p[0]) + ", " + formatNum(p[1]) + "]" }
