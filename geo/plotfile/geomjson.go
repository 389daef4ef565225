package plotfile

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/eudr/eudr/geo"
)

// What the KML and Shapefile readers share: geometries as GeoJSON, and a
// feature's attributes as the appliance's properties.

// unzipper reads the files of an archive (KMZ, a zipped Shapefile) up to
// maxUnzipped bytes in all, so that a small upload cannot unpack to
// gigabytes.
type unzipper struct {
	unzipped int64
}

// readZipped is the bytes of f, or a problem at body when it cannot be
// unpacked or the archive's files add up to more than maxUnzipped.
func (u *unzipper) readZipped(f *zip.File) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, geo.Problems{{Code: geo.CodeInvalidValue, Path: "body", Issue: f.Name + " cannot be unpacked: " + err.Error()}}
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxUnzipped-u.unzipped+1))
	if err != nil {
		return nil, geo.Problems{{Code: geo.CodeInvalidValue, Path: "body", Issue: f.Name + " cannot be unpacked: " + err.Error()}}
	}
	if u.unzipped += int64(len(data)); u.unzipped > maxUnzipped {
		return nil, geo.Problems{{Code: geo.CodeInvalidValue, Path: "body",
			Issue: fmt.Sprintf("the archive unpacks to more than %d MiB", maxUnzipped>>20)}}
	}
	return data, nil
}

// output is what a reader has read: the features, where each came from,
// the file's names for the properties, and the problems found.
type output struct {
	features []feature
	sources  []string
	columns  map[string]string
	problems geo.Problems
}

// converted is the file as GeoJSON, or its problems (empty, the issue of
// a file that holds no plot).
func (o *output) converted(empty string) (*Converted, error) {
	if len(o.sources) == 0 && len(o.problems) == 0 {
		o.problems = append(o.problems, geo.Problem{Code: geo.CodeRequired, Path: "body", Issue: empty})
	}
	if len(o.problems) > 0 {
		return nil, capped(o.problems)
	}
	out, err := collection(o.features)
	if err != nil {
		return nil, err
	}
	return &Converted{GeoJSON: out, Sources: o.sources, Columns: o.columns}, nil
}

// coordPair is a longitude and a latitude as JSON numbers. A reader keeps
// the text a file wrote where it has one (KML), because the appliance
// judges precision by the decimals written (1.50 is two); numbers it has
// only as binary (Shapefile) or computed (a projection) are written in
// the shortest form that reads back the same.
type coordPair [2]string

// coordRing is a closed ring of positions, as GeoJSON writes one.
type coordRing []coordPair

// coordPolygon is an outer ring and its holes.
type coordPolygon []coordRing

// numberText is f as the shortest JSON number that reads back as f. The
// caller has made sure f is finite.
func numberText(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// jsonNumber reports whether s is a number as JSON writes them
// (strconv.ParseFloat takes more: "+1", ".5", "1.", "0x1p3", "Inf").
func jsonNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	start := i
	switch n := digits(); {
	case n == 0:
		return false
	case n > 1 && s[start] == '0':
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}

// finite reports whether f is neither NaN nor infinite.
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// pointGeometry is a GeoJSON Point.
func pointGeometry(p coordPair) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"Point","coordinates":`)
	writePosition(&b, p)
	b.WriteByte('}')
	return b.Bytes()
}

// multiPointGeometry is a GeoJSON MultiPoint.
func multiPointGeometry(ps []coordPair) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"MultiPoint","coordinates":`)
	writeRing(&b, ps)
	b.WriteByte('}')
	return b.Bytes()
}

// polygonsGeometry is a GeoJSON Polygon for one polygon, a MultiPolygon
// for several.
func polygonsGeometry(ps []coordPolygon) json.RawMessage {
	var b bytes.Buffer
	if len(ps) == 1 {
		b.WriteString(`{"type":"Polygon","coordinates":`)
		writePolygon(&b, ps[0])
		b.WriteByte('}')
		return b.Bytes()
	}
	return multiPolygonGeometry(ps)
}

// multiPolygonGeometry is a GeoJSON MultiPolygon, of one polygon too.
func multiPolygonGeometry(ps []coordPolygon) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"MultiPolygon","coordinates":[`)
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		writePolygon(&b, p)
	}
	b.WriteString("]}")
	return b.Bytes()
}

func writePolygon(b *bytes.Buffer, p coordPolygon) {
	b.WriteByte('[')
	for i, r := range p {
		if i > 0 {
			b.WriteByte(',')
		}
		writeRing(b, r)
	}
	b.WriteByte(']')
}

func writeRing(b *bytes.Buffer, r []coordPair) {
	b.WriteByte('[')
	for i, p := range r {
		if i > 0 {
			b.WriteByte(',')
		}
		writePosition(b, p)
	}
	b.WriteByte(']')
}

func writePosition(b *bytes.Buffer, p coordPair) {
	b.WriteByte('[')
	b.WriteString(p[0])
	b.WriteByte(',')
	b.WriteString(p[1])
	b.WriteByte(']')
}

// attributes gathers a feature's attributes into its properties, under
// the appliance's names where PropertyName knows the file's (the value
// read by propertyValue), else under the file's own. A name of the
// appliance's given twice in one feature (country and producerCountry)
// goes to the first, the second staying under its own name. columns
// learns each property's name in the file, from the first feature that
// gives it.
type attributes struct {
	props   map[string]any
	columns map[string]string
}

func newAttributes(columns map[string]string) attributes {
	return attributes{props: map[string]any{}, columns: columns}
}

// text adds an attribute read as text; an empty one is left out, as a
// blank cell is.
func (a attributes) text(name, value string) {
	name = strings.TrimSpace(name)
	if prop, ok := PropertyName(name); ok {
		if _, taken := a.props[prop]; !taken {
			if v, ok := propertyValue(prop, value); ok {
				a.props[prop] = v
				if _, known := a.columns[prop]; !known && name != prop {
					a.columns[prop] = name
				}
			}
			return
		}
	}
	if _, taken := a.props[name]; taken || name == "" {
		return
	}
	if value = strings.TrimSpace(value); value != "" {
		a.props[name] = value
	}
}

// value adds an attribute a file holds typed (a .dbf number or logical):
// a property of the appliance's is read from its text as any is, another
// keeps its type.
func (a attributes) value(name, text string, v any) {
	name = strings.TrimSpace(name)
	if _, ok := PropertyName(name); ok || v == nil {
		a.text(name, text)
		return
	}
	if _, taken := a.props[name]; !taken && name != "" {
		a.props[name] = v
	}
}

// capped keeps a hopeless file's answer to a readable size, as geo
// keeps a GeoJSON's: at most geo.DefaultMaxProblems problems, and one
// saying how many more there were.
func capped(ps geo.Problems) geo.Problems {
	if n := len(ps) - geo.DefaultMaxProblems; n > 0 {
		ps = append(ps[:geo.DefaultMaxProblems:geo.DefaultMaxProblems], geo.Problem{Code: geo.CodeTooManyProblems, Path: "body",
			Issue: fmt.Sprintf("%d more problems are not listed; fix these and send again", n)})
	}
	return ps
}
