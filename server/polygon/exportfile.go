package polygon

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/eudr/eudr/storage"
)

// plotGeometry is the geometry of a stored feature as lists of positions:
// points for a Point or MultiPoint, polygons (rings of positions) for a
// Polygon or MultiPolygon, the only types a plot is recorded with.
type plotGeometry struct {
	typ      string
	points   [][]float64
	polygons [][][][]float64
}

func (g plotGeometry) multi() bool { return strings.HasPrefix(g.typ, "Multi") }

// geometryOfFeature decodes the geometry of a stored feature.
func geometryOfFeature(feature json.RawMessage) (plotGeometry, error) {
	var f struct {
		Geometry struct {
			Type        string          `json:"type"`
			Coordinates json.RawMessage `json:"coordinates"`
		} `json:"geometry"`
	}
	if err := json.Unmarshal(feature, &f); err != nil {
		return plotGeometry{}, fmt.Errorf("stored feature: %w", err)
	}
	g := plotGeometry{typ: f.Geometry.Type}
	var err error
	switch g.typ {
	case "Point":
		var c []float64
		err = json.Unmarshal(f.Geometry.Coordinates, &c)
		g.points = [][]float64{c}
	case "MultiPoint":
		err = json.Unmarshal(f.Geometry.Coordinates, &g.points)
	case "Polygon":
		var c [][][]float64
		err = json.Unmarshal(f.Geometry.Coordinates, &c)
		g.polygons = [][][][]float64{c}
	case "MultiPolygon":
		err = json.Unmarshal(f.Geometry.Coordinates, &g.polygons)
	default:
		return plotGeometry{}, fmt.Errorf("stored feature: geometry type %q", g.typ)
	}
	if err != nil {
		return plotGeometry{}, fmt.Errorf("stored feature: %s coordinates: %w", g.typ, err)
	}
	return g, nil
}

// coord6 is a longitude or latitude with exactly 6 decimals, rounded, as
// the EU information system keeps it (and the GeoJSON export writes it).
func coord6(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

// position writes a position's longitude and latitude (an altitude is
// left out) with sep between them.
func position(b *strings.Builder, p []float64, sep string) {
	if len(p) < 2 {
		return // the parser refuses such a position: never stored
	}
	b.WriteString(coord6(p[0]))
	b.WriteString(sep)
	b.WriteString(coord6(p[1]))
}

// wkt is the geometry as Well-Known Text (OGC 06-103r4), 2D, with 6
// decimals.
func (g plotGeometry) wkt() string {
	var b strings.Builder
	b.WriteString(strings.ToUpper(g.typ))
	b.WriteString(" (")
	ring := func(r [][]float64) {
		b.WriteByte('(')
		for i, p := range r {
			if i > 0 {
				b.WriteString(", ")
			}
			position(&b, p, " ")
		}
		b.WriteByte(')')
	}
	polygon := func(rings [][][]float64) {
		b.WriteByte('(')
		for i, r := range rings {
			if i > 0 {
				b.WriteString(", ")
			}
			ring(r)
		}
		b.WriteByte(')')
	}
	switch g.typ {
	case "Point":
		position(&b, g.points[0], " ")
	case "MultiPoint": // MULTIPOINT ((x y), (x y))
		for i, p := range g.points {
			if i > 0 {
				b.WriteString(", ")
			}
			ring([][]float64{p})
		}
	case "Polygon":
		for i, r := range g.polygons[0] {
			if i > 0 {
				b.WriteString(", ")
			}
			ring(r)
		}
	case "MultiPolygon":
		for i, rings := range g.polygons {
			if i > 0 {
				b.WriteString(", ")
			}
			polygon(rings)
		}
	}
	b.WriteByte(')')
	return b.String()
}

// csvWriter writes a table with exportColumns and the geometry as WKT.
type csvWriter struct{ w *csv.Writer }

func newCSVWriter(w *bufio.Writer) *csvWriter { return &csvWriter{w: csv.NewWriter(w)} }

func (c *csvWriter) begin() error {
	return c.w.Write(append(slices.Clone(exportColumns), "wkt"))
}

func (c *csvWriter) plot(p *storage.Polygon, feature json.RawMessage) error {
	g, err := geometryOfFeature(feature)
	if err != nil {
		return fmt.Errorf("polygon %s: %w", p.ID, err)
	}
	fields := exportFields(p)
	for i, name := range exportColumns {
		if freeText[name] {
			fields[i] = csvCell(fields[i])
		}
	}
	return c.w.Write(append(fields, g.wkt()))
}

// csvCell is a client's text made safe for a spreadsheet: one that starts
// like a formula (=, +, -, @, a tab or a carriage return) gets a leading
// apostrophe, so that opening the export runs nothing (CSV injection).
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func (c *csvWriter) end() error {
	c.w.Flush()
	return c.w.Error()
}

// kmlWriter writes a KML 2.2 document of a Placemark per plot, named by
// its externalId or else its polygonId, with its fields as ExtendedData
// (those with a value) and its geometry.
type kmlWriter struct{ w *bufio.Writer }

func (k *kmlWriter) begin() error {
	_, err := k.w.WriteString(xml.Header + `<kml xmlns="http://www.opengis.net/kml/2.2">` + "\n<Document>\n<name>polygons</name>\n")
	return err
}

func (k *kmlWriter) plot(p *storage.Polygon, feature json.RawMessage) error {
	g, err := geometryOfFeature(feature)
	if err != nil {
		return fmt.Errorf("polygon %s: %w", p.ID, err)
	}
	name := p.ExternalID
	if name == "" {
		name = p.ID
	}
	var b strings.Builder
	b.WriteString("<Placemark><name>")
	xmlText(&b, name)
	b.WriteString("</name>\n<ExtendedData>")
	for i, v := range exportFields(p) {
		if v == "" {
			continue
		}
		b.WriteString(`<Data name="` + exportColumns[i] + `"><value>`)
		xmlText(&b, v)
		b.WriteString("</value></Data>")
	}
	b.WriteString("</ExtendedData>\n")
	if g.multi() {
		b.WriteString("<MultiGeometry>")
	}
	for _, pt := range g.points {
		b.WriteString("<Point><coordinates>")
		position(&b, pt, ",")
		b.WriteString("</coordinates></Point>")
	}
	for _, rings := range g.polygons {
		b.WriteString("<Polygon>")
		for i, r := range rings {
			boundary := "innerBoundaryIs"
			if i == 0 {
				boundary = "outerBoundaryIs"
			}
			b.WriteString("<" + boundary + "><LinearRing><coordinates>")
			for j, pt := range r {
				if j > 0 {
					b.WriteByte(' ')
				}
				position(&b, pt, ",")
			}
			b.WriteString("</coordinates></LinearRing></" + boundary + ">")
		}
		b.WriteString("</Polygon>")
	}
	if g.multi() {
		b.WriteString("</MultiGeometry>")
	}
	b.WriteString("\n</Placemark>\n")
	_, err = k.w.WriteString(b.String())
	return err
}

func (k *kmlWriter) end() error {
	_, err := k.w.WriteString("</Document>\n</kml>\n")
	return err
}

// xmlText writes s escaped as XML character data.
func xmlText(b *strings.Builder, s string) {
	xml.EscapeText(b, []byte(s)) // a strings.Builder does not fail
}
