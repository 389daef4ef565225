package geo

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ParseOptions bounds what ParseFeatureCollection accepts.
type ParseOptions struct {
	// MaxFeatures is the most features a collection may hold; 0 means no limit.
	MaxFeatures int
	// MaxProblems is the most problems listed; 0 means DefaultMaxProblems.
	// Past it one TOO_MANY_PROBLEMS problem says how many were left out.
	MaxProblems int
	// Each, when set, is called with each feature as it is decoded, as long
	// as no problem has been found, instead of the features being collected:
	// ParseFeatureCollection then returns no features, and a large
	// collection is never held decoded all at once. An error from Each stops
	// the parse and is returned as it is.
	Each func(Feature) error
	// DeferAntimeridian leaves a ring crossing the antimeridian to Check,
	// which fails its feature CROSSES_ANTIMERIDIAN, instead of refusing the
	// input: for reading back a request accepted before such rings were
	// refused, whose other features must still be screened.
	DeferAntimeridian bool
	// OpenRings accepts a ring whose last position does not repeat its
	// first, of 3 positions or more, and returns it open, as sent: for
	// reading a plot to repair (geo/repair closes it). Without it such a
	// ring is INVALID_COORDINATE_CLOSURE.
	OpenRings bool
}

// DefaultMaxProblems keeps the answer to a hopeless body (a whole file in a
// projected coordinate system, say) to a readable size.
const DefaultMaxProblems = 1000

// ErrTooManyFeatures is returned (wrapped) by ParseFeatureCollection when the
// collection holds more than ParseOptions.MaxFeatures features.
var ErrTooManyFeatures = errors.New("too many features")

// ParseFeatureCollection decodes and validates a polygon request body: a
// GeoJSON FeatureCollection. It returns every feature, or every problem
// found (as Problems; a single MALFORMED_JSON when the body is not JSON), or
// an error wrapping ErrTooManyFeatures.
func ParseFeatureCollection(body []byte, opts ParseOptions) ([]Feature, error) {
	p := newParser(body, opts)
	feats, err := p.collection()
	if err := p.result(err); err != nil {
		return nil, err
	}
	return feats, nil
}

// ParseFeature decodes and validates one Feature object, such as a stored
// Feature.Raw, as the feature at index of a collection (problem paths start
// with features[index]). It returns the feature or Problems.
func ParseFeature(raw []byte, index int) (Feature, error) {
	p := newParser(raw, ParseOptions{})
	var f Feature
	var err error
	if p.s.atEnd() {
		err = p.s.errorf("the input is empty; a GeoJSON Feature is required")
	} else if f, _, err = p.feature(index); err == nil {
		err = p.s.end()
	}
	if err := p.result(err); err != nil {
		return Feature{}, err
	}
	return f, nil
}

// parser walks a request with a scanner, knowing what each place should hold.
type parser struct {
	s       scanner
	opts    ParseOptions
	top     Problems // problems of the collection's own members
	probs   Problems // problems of its features, in document order
	count   int      // problems found, listed or not
	maxDec  int      // MaxDecimals of the feature being read
	scratch []Position
}

func newParser(data []byte, opts ParseOptions) *parser {
	if opts.MaxProblems <= 0 {
		opts.MaxProblems = DefaultMaxProblems
	}
	return &parser{s: scanner{data: data}, opts: opts}
}

// add records a problem of a feature.
func (p *parser) add(code, path, issue string) {
	p.count++
	if len(p.probs) < p.opts.MaxProblems {
		p.probs = append(p.probs, Problem{Code: code, Path: path, Issue: issue})
	}
}

// addTop records a problem of the collection itself; those are listed first.
func (p *parser) addTop(code, path, issue string) {
	p.count++
	p.top = append(p.top, Problem{Code: code, Path: path, Issue: issue})
}

// keep reports whether decoded geometry is still worth keeping: once any
// problem is found only problems are returned.
func (p *parser) keep() bool { return p.count == 0 }

// result turns what the walk ended with into the error to return: nil,
// the problems, MALFORMED_JSON for a syntax error, or err itself.
func (p *parser) result(err error) error {
	var se *syntaxError
	if errors.As(err, &se) {
		return Problems{{Code: CodeMalformedJSON, Path: "body", Issue: se.issue(p.s.data)}}
	}
	if err != nil {
		return err
	}
	if p.count == 0 {
		return nil
	}
	all := append(p.top, p.probs...)
	if len(all) > p.opts.MaxProblems {
		all = all[:p.opts.MaxProblems]
	}
	if n := p.count - len(all); n > 0 {
		all = append(all, Problem{Code: CodeTooManyProblems, Path: "body",
			Issue: fmt.Sprintf("%d more problems are not listed; fix these and send again", n)})
	}
	return all
}

// dup records that member bit of an object was seen and reports whether it
// had been seen before: a duplicate member, on which JSON readers disagree.
func dup(seen *uint16, bit uint16) bool {
	d := *seen&bit != 0
	*seen |= bit
	return d
}

const dupIssue = "appears more than once"

// text reads a string value. Any other value is consumed and named by kind.
func (p *parser) text() (str, kind string, err error) {
	if p.s.peek() == '"' {
		b, err := p.s.str()
		return intern(b), "", err
	}
	kind = p.s.kind()
	return "", kind, p.s.skip()
}

// intern returns b as a string, without allocating for the type names
// every feature repeats.
func intern(b []byte) string {
	switch string(b) {
	case "Feature":
		return "Feature"
	case "FeatureCollection":
		return "FeatureCollection"
	case TypePolygon:
		return TypePolygon
	case TypeMultiPolygon:
		return TypeMultiPolygon
	case TypePoint:
		return TypePoint
	case TypeMultiPoint:
		return TypeMultiPoint
	}
	for _, c := range commodities {
		if string(b) == c {
			return c
		}
	}
	if len(b) == 2 && IsCountryCode(string(b)) {
		i := strings.Index(countryCodes, string(b))
		return countryCodes[i : i+2]
	}
	return string(b)
}

// member states of a feature's parts.
const (
	absent  = iota // missing or null
	present        // present and of the right JSON type
	invalid        // present and wrong: a problem is recorded
)

// collection reads the top-level FeatureCollection.
func (p *parser) collection() ([]Feature, error) {
	s := &p.s
	if s.atEnd() {
		return nil, s.errorf("the body is empty; a GeoJSON FeatureCollection is required")
	}
	if s.peek() != '{' {
		kind := s.kind()
		if err := s.skip(); err != nil {
			return nil, err
		}
		if err := s.end(); err != nil {
			return nil, err
		}
		p.addTop(CodeInvalidValue, "body", "must be a GeoJSON FeatureCollection object, not "+kind)
		return nil, nil
	}
	var (
		feats              []Feature
		typ, typeKind, crs string
		typeSeen           bool
		features, nfeat    = absent, 0
		featuresKind       string
		crsRaw             []byte
		seen               uint16
	)
	err := s.object(func(name []byte) error {
		switch string(name) {
		case "type":
			if dup(&seen, 1) {
				p.addTop(CodeInvalidValue, "type", dupIssue)
				return s.skip()
			}
			typeSeen = true
			var err error
			typ, typeKind, err = p.text()
			return err
		case "features":
			if dup(&seen, 2) {
				p.addTop(CodeInvalidValue, "features", dupIssue)
				return s.skip()
			}
			if s.null() {
				return nil
			}
			if s.peek() != '[' {
				features, featuresKind = invalid, s.kind()
				return s.skip()
			}
			features = present
			return s.array(func(i int) error {
				if p.opts.MaxFeatures > 0 && i >= p.opts.MaxFeatures {
					return fmt.Errorf("more than %d features: %w", p.opts.MaxFeatures, ErrTooManyFeatures)
				}
				nfeat++
				f, ok, err := p.feature(i)
				if err != nil || !ok || !p.keep() {
					return err
				}
				if p.opts.Each != nil {
					return p.opts.Each(f)
				}
				feats = append(feats, f)
				return nil
			})
		case "crs":
			if dup(&seen, 4) {
				p.addTop(CodeInvalidValue, "crs", dupIssue)
				return s.skip()
			}
			var err error
			crsRaw, err = s.value()
			return err
		}
		return s.skip()
	})
	if err != nil {
		return nil, err
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	switch {
	case !typeSeen:
		p.addTop(CodeRequired, "type", `is required: "FeatureCollection"`)
	case typeKind != "":
		p.addTop(CodeInvalidValue, "type", `must be "FeatureCollection", not `+typeKind)
	case typ == "Feature":
		p.addTop(CodeInvalidValue, "type", `must be "FeatureCollection", not "Feature": wrap the feature in a FeatureCollection`)
	case typ != "FeatureCollection":
		p.addTop(CodeInvalidValue, "type", `must be "FeatureCollection", not `+quote(typ))
	}
	switch {
	case features == absent:
		p.addTop(CodeRequired, "features", "is required: an array of one or more Feature objects")
	case features == invalid:
		p.addTop(CodeInvalidValue, "features", "must be an array of Feature objects, not "+featuresKind)
	case nfeat == 0:
		p.addTop(CodeRequired, "features", "must hold at least one Feature")
	}
	if crsRaw != nil {
		crs = p.checkCRS(crsRaw)
		if crs != "" {
			p.addTop(CodeInvalidValue, "crs", crs)
		}
	}
	return feats, nil
}

// checkCRS accepts the (obsolete) crs member only when it names WGS 84
// longitude/latitude, and otherwise says why not.
func (p *parser) checkCRS(raw []byte) string {
	if string(raw) == "null" {
		return ""
	}
	var crs struct {
		Type       string `json:"type"`
		Properties struct {
			Name string `json:"name"`
		} `json:"properties"`
	}
	if json.Unmarshal(raw, &crs) == nil && crs.Type == "name" {
		n := strings.ToUpper(crs.Properties.Name)
		if strings.HasSuffix(n, "CRS84") || strings.HasSuffix(n, "EPSG::4326") || strings.HasSuffix(n, "EPSG:4326") {
			return ""
		}
	}
	return "coordinates must be WGS 84 longitude/latitude in decimal degrees (RFC 7946): convert them and leave crs out"
}

// featureState collects one feature while its members are read (in any order).
type featureState struct {
	index    int
	typ      int // absent, present
	typeText string
	typeKind string // the kind of a type that is not a string
	geom     int    // absent, present or invalid
	geomType string // the declared type when it is one we accept
	geometry Geometry
	props    int // absent, present or invalid
	prop     propState
}

// at returns the JSON path of a member of the feature, such as
// features[3].geometry for ".geometry". Paths are built only for problems.
func (f *featureState) at(member string) string {
	return "features[" + strconv.Itoa(f.index) + "]" + member
}

// feature reads features[index]. ok reports that it had no problem.
func (p *parser) feature(index int) (f Feature, ok bool, err error) {
	s := &p.s
	st := featureState{index: index}
	if s.peek() != '{' {
		kind := s.kind()
		if err := s.skip(); err != nil {
			return f, false, err
		}
		p.add(CodeInvalidValue, st.at(""), "must be a GeoJSON Feature object, not "+kind)
		return f, false, nil
	}
	before := p.count
	start := s.pos
	p.maxDec = 0
	var seen uint16
	err = s.object(func(name []byte) error {
		switch string(name) {
		case "type":
			if dup(&seen, 1) {
				p.add(CodeInvalidValue, st.at(".type"), dupIssue)
				return s.skip()
			}
			st.typ = present
			var err error
			st.typeText, st.typeKind, err = p.text()
			return err
		case "geometry":
			if dup(&seen, 2) {
				p.add(CodeInvalidValue, st.at(".geometry"), dupIssue)
				return s.skip()
			}
			return p.geometry(&st)
		case "properties":
			if dup(&seen, 4) {
				p.add(CodeInvalidValue, st.at(".properties"), dupIssue)
				return s.skip()
			}
			return p.properties(&st)
		}
		return s.skip()
	})
	if err != nil {
		return f, false, err
	}
	switch {
	case st.typ == absent:
		p.add(CodeRequired, st.at(".type"), `is required: "Feature"`)
	case st.typeKind != "":
		p.add(CodeInvalidValue, st.at(".type"), `must be "Feature", not `+st.typeKind)
	case st.typeText != "Feature":
		p.add(CodeInvalidValue, st.at(".type"), `must be "Feature", not `+quote(st.typeText))
	}
	if st.geom == absent {
		p.add(CodeRequired, st.at(".geometry"), "is required: a Polygon, MultiPolygon, Point or MultiPoint")
	}
	p.finishProperties(&st)
	if p.count != before {
		return f, false, nil
	}
	return Feature{
		Index:       index,
		Geometry:    st.geometry,
		Properties:  st.prop.Properties,
		MaxDecimals: p.maxDec,
		Raw:         s.data[start:s.pos],
	}, true, nil
}

// geometry reads a feature's geometry member.
func (p *parser) geometry(f *featureState) error {
	s := &p.s
	if s.null() {
		return nil
	}
	if s.peek() != '{' {
		f.geom = invalid
		p.add(CodeInvalidValue, f.at(".geometry"), "must be a GeoJSON geometry object, not "+s.kind())
		return s.skip()
	}
	f.geom = present
	var (
		typ, typeKind string
		typeSeen      bool
		coords        = absent
		deferred      []byte
		seen          uint16
	)
	err := s.object(func(name []byte) error {
		switch string(name) {
		case "type":
			if dup(&seen, 1) {
				p.add(CodeInvalidValue, f.at(".geometry.type"), dupIssue)
				return s.skip()
			}
			typeSeen = true
			var err error
			typ, typeKind, err = p.text()
			return err
		case "coordinates":
			if dup(&seen, 2) {
				p.add(CodeInvalidValue, f.at(".geometry.coordinates"), dupIssue)
				return s.skip()
			}
			if s.null() {
				return nil
			}
			coords = present
			switch {
			case !typeSeen: // read it once the type is known
				var err error
				deferred, err = s.value()
				return err
			case typeKind == "" && accepted(typ):
				return p.coordinates(f, typ)
			}
		}
		return s.skip()
	})
	if err != nil {
		return err
	}
	switch {
	case !typeSeen:
		p.add(CodeRequired, f.at(".geometry.type"), `is required: "Polygon", "MultiPolygon", "Point" or "MultiPoint"`)
		return nil
	case typeKind != "":
		p.add(CodeInvalidGeometryType, f.at(".geometry.type"), `must be "Polygon", "MultiPolygon", "Point" or "MultiPoint", not `+typeKind)
		return nil
	case !accepted(typ):
		p.add(CodeInvalidGeometryType, f.at(".geometry.type"), geometryTypeIssue(typ))
		return nil
	case coords == absent:
		p.add(CodeRequired, f.at(".geometry.coordinates"), "is required")
		return nil
	}
	f.geomType = typ
	if deferred == nil {
		return nil
	}
	saved := p.s
	p.s = scanner{data: deferred}
	err = p.coordinates(f, typ)
	p.s = saved
	return err
}

func accepted(typ string) bool {
	switch typ {
	case TypePolygon, TypeMultiPolygon, TypePoint, TypeMultiPoint:
		return true
	}
	return false
}

func geometryTypeIssue(typ string) string {
	const want = `send "Polygon", "MultiPolygon", "Point" or "MultiPoint"`
	switch typ {
	case "LineString", "MultiLineString":
		return quote(typ) + " is not accepted: a line does not enclose a plot; " + want
	case "GeometryCollection":
		return `"GeometryCollection" is not accepted: send each geometry as a Feature of its own`
	}
	return quote(typ) + " is not an accepted geometry type: " + want + " (names are case-sensitive)"
}

// quote renders a client's string for an issue, cut short when long.
func quote(s string) string {
	const max = 40
	if r := []rune(s); len(r) > max {
		return strconv.Quote(string(r[:max])) + "…"
	}
	return strconv.Quote(s)
}
