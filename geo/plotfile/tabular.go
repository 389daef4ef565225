package plotfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/encoding/wkt"

	"github.com/eudr/eudr/geo"
)

// A table is a plot file of rows and columns: a CSV file, a workbook's
// sheet. Its first row is the header; each other row is a plot, its
// geometry in a WKT column or in latitude and longitude columns (a
// point), its properties in the other columns.
//
// A row is named rows[N] with N its row number as a spreadsheet shows the
// file, the header being row 1: the number a user looks for.
type table struct {
	header []string
	rows   []tableRow
	// exactWidth makes a row with more or fewer cells than the header a
	// problem (CSV); else only a value beyond the header's last column is
	// (a workbook leaves out a row's empty cells at its end).
	exactWidth bool
}

// tableRow is one row of a table below its header.
type tableRow struct {
	n     int // its row number, the header being 1
	cells []cell
}

// cell is one cell of a table: its text, and a workbook's numeric cell
// its number as well.
type cell struct {
	text  string
	num   float64
	isNum bool
}

func (c cell) blank() bool { return !c.isNum && strings.TrimSpace(c.text) == "" }

// columnRole is what a table's column holds.
type columnRole int

const (
	passThrough columnRole = iota // a property kept under the column's name
	wktColumn
	latitudeColumn
	longitudeColumn
	propertyColumn // a property the appliance reads (PropertyName)
)

// column is one column of a table's header.
type column struct {
	name string // as the header names it ("Area (ha)")
	role columnRole
	prop string // propertyColumn: the property ("area")
}

// problems collects a file's problems, at most geo.DefaultMaxProblems of
// them listed, as geo does.
type problems struct {
	list  geo.Problems
	count int
}

func (ps *problems) add(code, path, issue string) {
	ps.count++
	if len(ps.list) < geo.DefaultMaxProblems {
		ps.list = append(ps.list, geo.Problem{Code: code, Path: path, Issue: issue})
	}
}

func (ps *problems) err() error {
	if ps.count == 0 {
		return nil
	}
	out := ps.list
	if n := ps.count - len(out); n > 0 {
		out = append(out, geo.Problem{Code: geo.CodeTooManyProblems, Path: "body",
			Issue: fmt.Sprintf("%d more problems are not listed; fix these and send again", n)})
	}
	return out
}

// readTable turns a table into GeoJSON: every problem of its header and
// rows at once, or geo.ErrTooManyFeatures past o.MaxFeatures rows.
func readTable(t *table, o Options) (*Converted, error) {
	var ps problems
	cols := headerColumns(t.header, &ps)
	if ps.count > 0 {
		return nil, ps.err()
	}
	var wktCol, latCol, lonCol = -1, -1, -1
	for j, c := range cols {
		switch c.role {
		case wktColumn:
			wktCol = j
		case latitudeColumn:
			latCol = j
		case longitudeColumn:
			lonCol = j
		}
	}
	c := &Converted{Columns: map[string]string{}}
	for _, col := range cols {
		if col.role == propertyColumn && col.name != col.prop {
			c.Columns[col.prop] = col.name
		}
	}
	features := []feature{}
	for _, row := range t.rows {
		if blankRow(row.cells) {
			continue // an empty line is no plot
		}
		if o.MaxFeatures > 0 && len(c.Sources) == o.MaxFeatures {
			return nil, geo.ErrTooManyFeatures
		}
		src := fmt.Sprintf("rows[%d]", row.n)
		checkWidth(t, row, src, &ps)
		var geom json.RawMessage
		if wktCol >= 0 {
			geom = rowWKT(row, cols[wktCol].name, wktCol, src, &ps)
		} else {
			geom = rowPoint(row, cols[latCol].name, latCol, cols[lonCol].name, lonCol, src, &ps)
		}
		c.Sources = append(c.Sources, src)
		if ps.count > 0 {
			continue // only problems are returned now
		}
		features = append(features, feature{Type: "Feature", Geometry: geom, Properties: rowProperties(row, cols)})
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	var err error
	c.GeoJSON, err = collection(features)
	return c, err
}

// headerColumns is what each column of the header holds; a header with no
// geometry column, or two columns for one thing, is a problem at "header".
func headerColumns(header []string, ps *problems) []column {
	cols := make([]column, len(header))
	first := map[string]string{} // a role or property -> the column naming it first
	claim := func(key, what, name string) bool {
		if prev, ok := first[key]; ok {
			ps.add(geo.CodeInvalidValue, "header", fmt.Sprintf("columns %q and %q are both %s; keep one", prev, name, what))
			return false
		}
		first[key] = name
		return true
	}
	for j, h := range header {
		name := strings.TrimSpace(h)
		if name == "" {
			name = columnLetters(j) // the name a spreadsheet shows above it
		}
		cols[j] = column{name: name}
		switch {
		case matches(name, wktAliases):
			if claim("wkt", "a WKT geometry", name) {
				cols[j].role = wktColumn
			}
		case matches(name, latitudeAliases):
			if claim("latitude", "the latitude", name) {
				cols[j].role = latitudeColumn
			}
		case matches(name, longitudeAliases):
			if claim("longitude", "the longitude", name) {
				cols[j].role = longitudeColumn
			}
		default:
			if prop, ok := PropertyName(name); ok && claim(prop, prop, name) {
				cols[j].role, cols[j].prop = propertyColumn, prop
			}
		}
	}
	_, wkt := first["wkt"]
	lat, hasLat := first["latitude"]
	lon, hasLon := first["longitude"]
	switch {
	case wkt:
		// A WKT column is the geometry; latitude and longitude columns
		// beside it are kept as properties.
		for j := range cols {
			if cols[j].role == latitudeColumn || cols[j].role == longitudeColumn {
				cols[j].role = passThrough
			}
		}
	case hasLat && !hasLon:
		ps.add(geo.CodeRequired, "header", fmt.Sprintf("has a latitude column (%q) but no longitude column (one of %s)", lat, strings.Join(longitudeAliases, ", ")))
	case hasLon && !hasLat:
		ps.add(geo.CodeRequired, "header", fmt.Sprintf("has a longitude column (%q) but no latitude column (one of %s)", lon, strings.Join(latitudeAliases, ", ")))
	case !hasLat && !hasLon:
		ps.add(geo.CodeRequired, "header", fmt.Sprintf(
			"has no geometry column: a WKT column (one of %s) or latitude and longitude columns (%s; %s) is required",
			strings.Join(wktAliases, ", "), strings.Join(latitudeAliases, ", "), strings.Join(longitudeAliases, ", ")))
	}
	return cols
}

// columnLetters is a spreadsheet's name of the j-th column (0: A, 26: AA).
func columnLetters(j int) string {
	s := ""
	for j++; j > 0; j = (j - 1) / 26 {
		s = string(rune('A'+(j-1)%26)) + s
	}
	return s
}

func blankRow(cells []cell) bool {
	for _, c := range cells {
		if !c.blank() {
			return false
		}
	}
	return true
}

// checkWidth reports a row whose cells do not line up with the header.
func checkWidth(t *table, row tableRow, src string, ps *problems) {
	n, w := len(row.cells), len(t.header)
	if t.exactWidth && n != w {
		ps.add(geo.CodeInvalidValue, src, fmt.Sprintf("has %d cells, the header %d: a cell is missing or one too many (a separator inside a value that is not quoted?)", n, w))
		return
	}
	for j := w; j < n; j++ {
		if !row.cells[j].blank() {
			ps.add(geo.CodeInvalidValue, src, fmt.Sprintf("has a value in column %s, which the header does not name", columnLetters(j)))
			return
		}
	}
}

func cellAt(row tableRow, j int) cell {
	if j < len(row.cells) {
		return row.cells[j]
	}
	return cell{}
}

// rowWKT is a row's geometry from its WKT column, as GeoJSON; nil with a
// problem when it has none or it does not parse.
func rowWKT(row tableRow, name string, j int, src string, ps *problems) json.RawMessage {
	path := src + "." + name
	c := cellAt(row, j)
	text := strings.TrimSpace(c.text)
	if c.isNum || text == "" {
		ps.add(geo.CodeRequired, path, "is empty: a WKT geometry such as POLYGON ((lon lat, ...)) is required")
		return nil
	}
	g, err := wkt.Unmarshal(text)
	if err == nil {
		var geom json.RawMessage
		if geom, err = wktGeometry(g, wktNumber.FindAllString(text, -1)); err == nil {
			return geom
		}
	}
	switch {
	case errors.Is(err, wkt.ErrUnsupportedGeometry), errors.Is(err, errUnsupportedGeometry):
		ps.add(geo.CodeInvalidGeometryType, path, "is not a WKT geometry: it must start with POINT, POLYGON or MULTIPOLYGON, not "+quoteStart(text))
	default:
		ps.add(geo.CodeInvalidValue, path, "is not valid WKT (a 2D POINT (lon lat), POLYGON ((lon lat, ...)) or MULTIPOLYGON (((lon lat, ...)))): "+quoteStart(text))
	}
	return nil
}

// wktNumber is a number of a WKT text.
var wktNumber = regexp.MustCompile(`[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?`)

// errUnsupportedGeometry: a geometry the appliance does not take as a plot.
var errUnsupportedGeometry = errors.New("not a point, polygon or multipolygon")

// wktGeometry is g as GeoJSON, each coordinate written as the WKT text
// wrote it (nums, the text's numbers in order, which is the order of g's
// coordinates), since the appliance judges precision by the decimals
// written: 1.500000 keeps its six. A number JSON would not write so
// (+1.5, .5), or a text whose numbers do not pair with g's coordinates
// (a Z or M value), is written in the shortest form instead.
func wktGeometry(g orb.Geometry, nums []string) (json.RawMessage, error) {
	count := 0
	switch g := g.(type) {
	case orb.Point:
		count = 1
	case orb.Polygon:
		for _, r := range g {
			count += len(r)
		}
	case orb.MultiPolygon:
		for _, p := range g {
			for _, r := range p {
				count += len(r)
			}
		}
	}
	if len(nums) != 2*count {
		nums = nil
	}
	next := 0
	pair := func(p orb.Point) coordPair {
		out := coordPair{numberText(p[0]), numberText(p[1])}
		for k := range out {
			if next < len(nums) && jsonNumber(nums[next]) {
				if v, err := strconv.ParseFloat(nums[next], 64); err == nil && v == p[k] {
					out[k] = nums[next]
				}
			}
			next++
		}
		return out
	}
	polygon := func(p orb.Polygon) coordPolygon {
		out := make(coordPolygon, len(p))
		for i, r := range p {
			out[i] = make(coordRing, len(r))
			for j, pt := range r {
				out[i][j] = pair(pt)
			}
		}
		return out
	}
	switch g := g.(type) {
	case orb.Point:
		return pointGeometry(pair(g)), nil
	case orb.Polygon:
		return polygonsGeometry([]coordPolygon{polygon(g)}), nil
	case orb.MultiPolygon:
		ps := make([]coordPolygon, len(g))
		for i, p := range g {
			ps[i] = polygon(p)
		}
		return multiPolygonGeometry(ps), nil
	}
	return nil, errUnsupportedGeometry
}

// quoteStart quotes the start of a long text, for a message.
func quoteStart(s string) string {
	const max = 40
	if r := []rune(s); len(r) > max {
		return strconv.Quote(string(r[:max])) + "..."
	}
	return strconv.Quote(s)
}

// rowPoint is a row's point from its latitude and longitude columns, as
// GeoJSON, each number as the cell wrote it when JSON writes it so; nil
// with a problem for each coordinate missing, not a number or out of
// range.
func rowPoint(row tableRow, latName string, latCol int, lonName string, lonCol int, src string, ps *problems) json.RawMessage {
	latCell, lonCell := cellAt(row, latCol), cellAt(row, lonCol)
	lat, latOK := coordinate(latCell, src+"."+latName, "latitude", 90, ps)
	lon, lonOK := coordinate(lonCell, src+"."+lonName, "longitude", 180, ps)
	if !latOK || !lonOK {
		return nil
	}
	text := func(c cell, v float64) string {
		if t := strings.TrimSpace(c.text); !c.isNum && jsonNumber(t) {
			return t
		}
		return numberText(v)
	}
	return pointGeometry(coordPair{text(lonCell, lon), text(latCell, lat)})
}

// coordinate reads a latitude or longitude in decimal degrees, a decimal
// comma taken as a point.
func coordinate(c cell, path, what string, limit float64, ps *problems) (float64, bool) {
	v, text := c.num, strings.TrimSpace(c.text)
	if !c.isNum {
		if text == "" {
			ps.add(geo.CodeRequired, path, fmt.Sprintf("is empty: the %s in decimal degrees is required", what))
			return 0, false
		}
		var err error
		if v, err = strconv.ParseFloat(strings.Replace(text, ",", ".", 1), 64); err != nil {
			ps.add(geo.CodeInvalidValue, path, fmt.Sprintf("must be the %s in decimal degrees, not %s", what, quoteStart(text)))
			return 0, false
		}
	}
	if math.IsNaN(v) || v < -limit || v > limit {
		ps.add(geo.CodeInvalidCoordinateRange, path, fmt.Sprintf("must be a %s from %g to %g, not %s", what, -limit, limit, strconv.FormatFloat(v, 'g', -1, 64)))
		return 0, false
	}
	return v, true
}

// rowProperties are a row's properties: those the appliance reads under
// their names (propertyValue), the other columns under the header's name,
// a workbook's numbers as numbers. Empty cells are absent.
func rowProperties(row tableRow, cols []column) map[string]any {
	props := make(map[string]any, len(cols))
	for j, col := range cols {
		c := cellAt(row, j)
		if c.blank() || col.role == wktColumn || col.role == latitudeColumn || col.role == longitudeColumn {
			continue
		}
		switch {
		case col.role == propertyColumn && c.isNum && col.prop == "area":
			props[col.prop] = c.num
		case col.role == propertyColumn:
			if v, ok := propertyValue(col.prop, c.text); ok {
				props[col.prop] = v
			}
		case c.isNum:
			props[col.name] = c.num
		default:
			props[col.name] = c.text
		}
	}
	return props
}
