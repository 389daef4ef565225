package geo

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"unicode/utf8"
)

// Bounds of the properties.
const (
	// MinPointArea and MaxPointArea bound the area in hectares of a plot
	// given as a point (EU information system: 0.0001 to 4 ha).
	MinPointArea = 0.0001
	MaxPointArea = 4.0
	// MaxNameLen bounds producerName and productionPlace, in characters (the
	// EU information system takes a producer name of up to 500).
	MaxNameLen = 500
	// MaxExternalIDLen bounds externalId, in characters.
	MaxExternalIDLen = 128
	// maxSupplierIDLen bounds supplierId: an ERP vendor ID as the supplier
	// mappings take it (1-64 of A-Z a-z 0-9 . _ -, starting alphanumeric).
	maxSupplierIDLen = 64
)

// propState collects a feature's properties while they are read.
type propState struct {
	Properties
	commodity, country, area int // absent, present or invalid
	areaValue                float64
	areaName                 string   // the name area came under: "area", or the EU's "Area"
	euNames                  []string // EU file property names not read, seen (Commodity)
	// names are the names the string properties came under, by bit: ours,
	// or the EU's spelling.
	names [propBits]string
}

// stringOf is the value recorded for a string property, by bit.
func (pr *propState) stringOf(bit uint16) string {
	switch bit {
	case propCountry:
		return pr.ProducerCountry
	case propProducerName:
		return pr.ProducerName
	case propProductionPlace:
		return pr.ProductionPlace
	}
	return ""
}

// Property bits for duplicate members.
const (
	propCommodity = 1 << iota
	propCountry
	propArea
	propProducerName
	propProductionPlace
	propExternalID
	propSupplierID
	propBits = iota // how many bits there are
)

// properties reads a feature's properties member. Unknown members are
// allowed and ignored; a known one of the wrong JSON type is INVALID_VALUE.
func (p *parser) properties(f *featureState) error {
	s := &p.s
	if s.null() {
		return nil
	}
	if s.peek() != '{' {
		f.props = invalid
		p.add(CodeInvalidValue, f.at(".properties"), "must be an object, not "+s.kind())
		return s.skip()
	}
	f.props = present
	var seen uint16
	return s.object(func(name []byte) error {
		// The EU information system's own spellings of producerName,
		// producerCountry, productionPlace and area (its GeoJSON, and a
		// DDS's geolocation) are read as ours; both in one feature with the
		// same value are one property, with different values a duplicate
		// member.
		switch n := string(name); n {
		case "commodity":
			return p.stringProp(f, "commodity", propCommodity, &seen, func(v string) string {
				if !IsCommodity(v) {
					f.prop.commodity = invalid
					return "must be one of " + strings.Join(commodities, ", ") + ", not " + quote(v)
				}
				f.prop.commodity = present
				f.prop.Commodity = v
				return ""
			})
		case "producerCountry", "ProducerCountry":
			return p.stringProp(f, n, propCountry, &seen, func(v string) string {
				switch {
				case IsCountryCode(v):
					f.prop.country = present
					f.prop.ProducerCountry = v
					return ""
				case IsCountryCode(strings.ToUpper(v)):
					f.prop.country = invalid
					return "must be an ISO 3166-1 alpha-2 code in upper case: " + quote(strings.ToUpper(v)) + ", not " + quote(v)
				}
				f.prop.country = invalid
				return `must be an ISO 3166-1 alpha-2 country code such as "BR", not ` + quote(v)
			})
		case "area", "Area":
			return p.area(f, n, &seen)
		case "producerName", "ProducerName":
			return p.stringProp(f, n, propProducerName, &seen, func(v string) string {
				f.prop.ProducerName = v
				return maxLen(v, MaxNameLen)
			})
		case "productionPlace", "ProductionPlace":
			return p.stringProp(f, n, propProductionPlace, &seen, func(v string) string {
				f.prop.ProductionPlace = v
				return maxLen(v, MaxNameLen)
			})
		case "externalId":
			return p.stringProp(f, "externalId", propExternalID, &seen, func(v string) string {
				f.prop.ExternalID = v
				return maxLen(v, MaxExternalIDLen)
			})
		case "supplierId":
			return p.stringProp(f, "supplierId", propSupplierID, &seen, func(v string) string {
				f.prop.SupplierID = v
				if v != "" && !isVendorID(v) {
					return "must be an ERP vendor ID: 1-64 characters of A-Z, a-z, 0-9, '.', '_' or '-', starting with a letter or digit"
				}
				return ""
			})
		case "Commodity":
			// A spelling in the EU's style of a property the EU's files do
			// not have: not read, but named when commodity is missing.
			f.prop.euNames = append(f.prop.euNames, n)
		}
		return s.skip()
	})
}

// stringProp reads a string property: null is as good as absent, another
// type is INVALID_VALUE, and check records the value and returns what is
// wrong with it, "" if nothing.
func (p *parser) stringProp(f *featureState, name string, bit uint16, seen *uint16, check func(string) string) error {
	s := &p.s
	slot := &f.prop.names[bits.TrailingZeros16(bit)]
	if dup(seen, bit) {
		if *slot != name {
			// Both spellings, ours and the EU's: one property when they
			// agree (files made to be read both ways carry both).
			v, kind, err := p.text()
			if err != nil || kind == "" && v == f.prop.stringOf(bit) {
				return err
			}
		} else if err := s.skip(); err != nil {
			return err
		}
		p.add(CodeInvalidValue, f.at(".properties."+name), dupIssue)
		return nil
	}
	*slot = name
	if s.null() {
		return nil
	}
	v, kind, err := p.text()
	if err != nil {
		return err
	}
	if kind != "" {
		if bit == propCommodity {
			f.prop.commodity = invalid
		} else if bit == propCountry {
			f.prop.country = invalid
		}
		p.add(CodeInvalidValue, f.at(".properties."+name), "must be a string, not "+kind)
		return nil
	}
	if issue := check(v); issue != "" {
		p.add(CodeInvalidValue, f.at(".properties."+name), issue)
	}
	return nil
}

// area reads properties.area (or the EU's Area, name); its bounds depend
// on the geometry and are checked by finishProperties.
func (p *parser) area(f *featureState, name string, seen *uint16) error {
	s := &p.s
	path := func() string { return f.at(".properties." + name) }
	if dup(seen, propArea) {
		if c := s.peek(); name != f.prop.areaName && (c == '-' || c >= '0' && c <= '9') {
			// area and the EU's Area: one property when they agree.
			text, _, err := s.number()
			if err != nil || f.prop.area == present && parseFloat(text) == f.prop.areaValue {
				return err
			}
		} else if err := s.skip(); err != nil {
			return err
		}
		p.add(CodeInvalidValue, path(), dupIssue)
		return nil
	}
	f.prop.areaName = name
	if s.null() {
		return nil
	}
	switch c := s.peek(); {
	case c == '-' || c >= '0' && c <= '9':
		text, _, err := s.number()
		if err != nil {
			return err
		}
		f.prop.area = present
		f.prop.areaValue = parseFloat(text)
		return nil
	case c == '"':
		f.prop.area = invalid
		v, _, err := p.text()
		p.add(CodeInvalidValue, path(), "must be a JSON number of hectares, not the string "+quote(v))
		return err
	}
	f.prop.area = invalid
	p.add(CodeInvalidValue, path(), "must be a number of hectares, not "+s.kind())
	return s.skip()
}

// finishProperties checks what needs the whole feature: required
// properties, and the area against the geometry type.
func (p *parser) finishProperties(f *featureState) {
	if f.props == invalid {
		return
	}
	path := func(name string) string { return f.at(".properties." + name) }
	pr := &f.prop
	if pr.commodity == absent {
		p.add(CodeRequired, path("commodity"), "is required: one of "+strings.Join(commodities, ", ")+pr.euHint("Commodity", "commodity"))
	}
	if pr.country == absent {
		p.add(CodeRequired, path("producerCountry"), "is required: the ISO 3166-1 alpha-2 code of the country of production")
	}
	point := f.geomType == TypePoint || f.geomType == TypeMultiPoint
	what, whose := "a Point", "the plot's area"
	if f.geomType == TypeMultiPoint {
		what, whose = "a MultiPoint", "the area of each point's plot"
	}
	a := pr.areaValue
	switch {
	case pr.area == invalid:
	case pr.area == absent && point:
		p.add(CodeRequired, path("area"), fmt.Sprintf("is required for %s: %s in hectares, %g to %g", what, whose, MinPointArea, MaxPointArea))
	case pr.area == absent:
	case math.IsInf(a, 0):
		p.add(CodeInvalidValue, path(pr.areaName), "must be a finite number of hectares")
	case point && a < MinPointArea:
		p.add(CodeInvalidValue, path(pr.areaName), fmt.Sprintf("must be at least %g ha for %s, not %s", MinPointArea, what, formatNum(a)))
	case point && a > MaxPointArea && pr.Commodity != "cattle":
		p.add(CodePointAreaTooLarge, path(pr.areaName), fmt.Sprintf(
			"%s ha is more than %g: a point may stand for a plot of at most %g ha; send the plot's boundary as a Polygon", formatNum(a), MaxPointArea, MaxPointArea))
	case !point && a <= 0:
		p.add(CodeInvalidValue, path(pr.areaName), "must be a positive number of hectares, not "+formatNum(a))
	default:
		pr.Area = &a
	}
}

// euHint names a property spelt in the EU's style sent in place of ours
// that is not read (Commodity).
func (pr *propState) euHint(eu, ours string) string {
	for _, n := range pr.euNames {
		if n == eu {
			return fmt.Sprintf(" (%q is not read: name it %q)", eu, ours)
		}
	}
	return ""
}

func maxLen(v string, n int) string {
	if utf8.RuneCountInString(v) > n {
		return fmt.Sprintf("must be at most %d characters", n)
	}
	return ""
}

// isVendorID matches ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$.
func isVendorID(v string) bool {
	if len(v) == 0 || len(v) > maxSupplierIDLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		alnum := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}
