package plotfile

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"golang.org/x/text/encoding/ianaindex"

	"github.com/eudr/eudr/geo"
)

// KML and KMZ. No maintained Go package reads KML (github.com/twpayne/go-kml
// writes it only), and the part plots use is small, so this reads it with
// encoding/xml: every Placemark at any depth of Documents and Folders, in
// document order, is a feature (placemarks[i]); its Polygon, Point or
// MultiGeometry of either the geometry (altitudes dropped, coordinates
// kept as written); its ExtendedData (SchemaData/SimpleData and Data) the
// properties, and its <name> and <description> the properties name and
// description unless ExtendedData gives those.

// kmlPlacemark is what a Placemark holds that the appliance reads.
type kmlPlacemark struct {
	Name        *string         `xml:"name"`
	Description *string         `xml:"description"`
	SimpleData  []kmlSimpleData `xml:"ExtendedData>SchemaData>SimpleData"`
	Data        []kmlData       `xml:"ExtendedData>Data"`
	// Elements are the Placemark's other elements, its geometry among
	// them (Style, TimeStamp and the like are passed over).
	Elements []kmlGeometry `xml:",any"`
}

type kmlSimpleData struct {
	Name  string `xml:"name,attr"`
	Value string `xml:",chardata"`
}

type kmlData struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value"`
}

// kmlGeometry is an element that may be a geometry: a Point's
// coordinates, a Polygon's rings, a MultiGeometry's children.
type kmlGeometry struct {
	XMLName     xml.Name
	Coordinates string        `xml:"coordinates"`
	Outer       []string      `xml:"outerBoundaryIs>LinearRing>coordinates"`
	Inner       []string      `xml:"innerBoundaryIs>LinearRing>coordinates"`
	Children    []kmlGeometry `xml:",any"`
}

// kmlGeometries are the KML geometry elements; those a plot cannot be
// are refused by name.
var kmlGeometries = map[string]bool{
	"Point": true, "Polygon": true, "MultiGeometry": true,
	"LineString": false, "LinearRing": false, "Model": false, "Track": false, "MultiTrack": false,
}

// kmlNetworkLink is a link to another KML file.
type kmlNetworkLink struct {
	Href    string `xml:"Link>href"`
	URLHref string `xml:"Url>href"` // KML 2.0
}

// maxUnzipped bounds what a KMZ or a zipped Shapefile may unpack to, so
// that a small archive cannot fill the memory.
const maxUnzipped = 256 << 20

func readKML(body []byte, o Options) (*Converted, error) {
	r := newKMLReader(o, nil)
	if err := r.read("", body); err != nil {
		return nil, err
	}
	return r.result()
}

// readKMZ reads a zipped KML: its doc.kml, else its first .kml, and the
// .kml files of the archive that one links to with NetworkLinks, in
// place of the link.
func readKMZ(body []byte, o Options) (*Converted, error) {
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		return nil, geo.Problems{{Code: geo.CodeInvalidValue, Path: "body",
			Issue: "not a KMZ: a KMZ is a zip archive holding a .kml file (" + err.Error() + ")"}}
	}
	files := map[string]*zip.File{}
	first, doc := "", ""
	for _, f := range zr.File {
		name := path.Clean(f.Name)
		if f.FileInfo().IsDir() {
			continue
		}
		files[name] = f
		if strings.EqualFold(path.Ext(name), ".kml") {
			if first == "" {
				first = name
			}
			if strings.EqualFold(name, "doc.kml") {
				doc = name
			}
		}
	}
	root := doc
	if root == "" {
		root = first
	}
	if root == "" {
		return nil, geo.Problems{{Code: geo.CodeRequired, Path: "body", Issue: "the KMZ holds no .kml file"}}
	}
	r := newKMLReader(o, files)
	data, err := r.unzip(root)
	if err != nil {
		return nil, err
	}
	if err := r.read(root, data); err != nil {
		return nil, err
	}
	return r.result()
}

// kmlReader gathers the placemarks of a KML or KMZ.
type kmlReader struct {
	o       Options
	archive map[string]*zip.File // a KMZ's files; nil for a KML
	read1   map[string]bool      // the archive's files read, against loops
	unzipper
	output
}

func newKMLReader(o Options, archive map[string]*zip.File) *kmlReader {
	return &kmlReader{o: o, archive: archive, read1: map[string]bool{}, output: output{columns: map[string]string{}}}
}

func (r *kmlReader) result() (*Converted, error) { return r.converted("the file holds no Placemark") }

// unzip is a file of the KMZ, within what the archive may unpack to.
func (r *kmlReader) unzip(name string) ([]byte, error) { return r.readZipped(r.archive[name]) }

// read reads one KML document (name is its path in a KMZ, "" for a KML),
// adding its placemarks and those of the files it links to. A document
// that is not well-formed XML ends the reading: nothing after the fault
// can be trusted.
func (r *kmlReader) read(name string, data []byte) error {
	r.read1[name] = true
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		enc, err := ianaindex.IANA.Encoding(label)
		if err != nil || enc == nil {
			return nil, fmt.Errorf("the encoding %q is not one the appliance reads: write the file in UTF-8", label)
		}
		return enc.NewDecoder().Reader(in), nil
	}
	root := false
	for {
		tok, err := d.Token()
		if err == io.EOF && !root {
			err = errors.New("no element: it is not XML")
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return r.malformed(name, d, err)
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if !root {
			if start.Name.Local != "kml" {
				return r.malformed(name, d, fmt.Errorf("the root element is <%s>, not <kml>", start.Name.Local))
			}
			root = true
		}
		switch start.Name.Local {
		case "Placemark":
			var pm kmlPlacemark
			if err := d.DecodeElement(&pm, &start); err != nil {
				return r.malformed(name, d, err)
			}
			if r.o.MaxFeatures > 0 && len(r.sources) == r.o.MaxFeatures {
				return fmt.Errorf("more than %d placemarks: %w", r.o.MaxFeatures, geo.ErrTooManyFeatures)
			}
			r.placemark(&pm)
		case "NetworkLink":
			var nl kmlNetworkLink
			if err := d.DecodeElement(&nl, &start); err != nil {
				return r.malformed(name, d, err)
			}
			if err := r.follow(name, nl); err != nil {
				return err
			}
		}
	}
}

// malformed is the problem of a file that is not well-formed XML, at the
// line where reading stopped.
func (r *kmlReader) malformed(name string, d *xml.Decoder, err error) error {
	line, _ := d.InputPos()
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		line, err = se.Line, errors.New(se.Msg)
	}
	where := "line " + strconv.Itoa(line)
	if name != "" {
		where = name + " " + where
	}
	r.problems = append(r.problems, geo.Problem{Code: geo.CodeInvalidValue, Path: "body",
		Issue: "not well-formed KML (XML) at " + where + ": " + err.Error()})
	return capped(r.problems)
}

// follow reads the file a NetworkLink names, when it is a .kml of the
// same KMZ. A link anywhere else is a problem rather than passed over: its
// placemarks would be left out unseen, and the appliance fetches nothing.
func (r *kmlReader) follow(from string, nl kmlNetworkLink) error {
	href := strings.TrimSpace(nl.Href)
	if href == "" {
		href = strings.TrimSpace(nl.URLHref)
	}
	if href == "" {
		return nil
	}
	name := href
	if i := strings.IndexAny(name, "?#"); i >= 0 {
		name = name[:i]
	}
	name = path.Join(path.Dir(from), name)
	_, ok := r.archive[name]
	if r.archive == nil || strings.Contains(href, "://") || strings.HasPrefix(href, "/") || !ok || !strings.EqualFold(path.Ext(name), ".kml") {
		r.problems = append(r.problems, geo.Problem{Code: geo.CodeInvalidValue, Path: "body",
			Issue: fmt.Sprintf("a NetworkLink to %s is not followed: the appliance reads only the .kml files inside the KMZ sent; put the placemarks in the file", quoteText(href))})
		return nil
	}
	if r.read1[name] {
		return nil // already read: a loop of links
	}
	data, err := r.unzip(name)
	if err != nil {
		return err
	}
	return r.read(name, data)
}

// placemark adds a Placemark as a feature, or its problems.
func (r *kmlReader) placemark(pm *kmlPlacemark) {
	src := "placemarks[" + strconv.Itoa(len(r.sources)) + "]"
	r.sources = append(r.sources, src)
	attrs := newAttributes(r.columns)
	for _, d := range pm.SimpleData {
		attrs.text(d.Name, d.Value)
	}
	for _, d := range pm.Data {
		attrs.text(d.Name, d.Value)
	}
	if pm.Name != nil {
		attrs.text("name", *pm.Name)
	}
	if pm.Description != nil {
		attrs.text("description", *pm.Description)
	}
	geom, problem := kmlGeometryOf(pm.Elements)
	if problem != "" {
		r.problems = append(r.problems, geo.Problem{Code: geo.CodeInvalidGeometryType, Path: src + ".geometry", Issue: problem})
		return
	}
	var g kmlShapes
	if issue := g.add(geom); issue != "" {
		r.problems = append(r.problems, geo.Problem{Code: geo.CodeInvalidValue, Path: src + ".geometry", Issue: issue})
		return
	}
	var out feature
	out.Type, out.Properties = "Feature", attrs.props
	switch {
	case len(g.polygons) > 0 && len(g.points) > 0:
		r.problems = append(r.problems, geo.Problem{Code: geo.CodeInvalidGeometryType, Path: src + ".geometry",
			Issue: "a MultiGeometry of both Points and Polygons is not accepted: make each a Placemark of its own"})
		return
	case len(g.polygons) > 0:
		out.Geometry = polygonsGeometry(g.polygons)
	case len(g.points) == 1:
		out.Geometry = pointGeometry(g.points[0])
	case len(g.points) > 1:
		out.Geometry = multiPointGeometry(g.points)
	default:
		r.problems = append(r.problems, geo.Problem{Code: geo.CodeRequired, Path: src + ".geometry",
			Issue: "the MultiGeometry is empty: " + kmlWant})
		return
	}
	r.features = append(r.features, out)
}

const kmlWant = "give the Placemark a Polygon, a MultiGeometry of Polygons, or a Point"

// kmlGeometryOf is the one geometry among a Placemark's elements, or why
// there is none the appliance takes.
func kmlGeometryOf(elements []kmlGeometry) (*kmlGeometry, string) {
	var found *kmlGeometry
	for i := range elements {
		e := &elements[i]
		if _, ok := kmlGeometries[e.XMLName.Local]; !ok {
			continue
		}
		if found != nil {
			return nil, "the Placemark has more than one geometry: " + kmlWant
		}
		found = e
	}
	if found == nil {
		return nil, "the Placemark has no geometry: " + kmlWant
	}
	if issue := kmlRefused(found); issue != "" {
		return nil, issue
	}
	return found, ""
}

// kmlRefused says why a geometry, or one inside a MultiGeometry, is not
// one a plot can be.
func kmlRefused(g *kmlGeometry) string {
	switch g.XMLName.Local {
	case "LineString", "LinearRing", "Track", "MultiTrack":
		return "a " + g.XMLName.Local + " is not accepted: a line does not enclose a plot; " + kmlWant
	case "MultiGeometry":
		for i := range g.Children {
			if _, ok := kmlGeometries[g.Children[i].XMLName.Local]; ok {
				if issue := kmlRefused(&g.Children[i]); issue != "" {
					return issue
				}
			}
		}
	case "Point", "Polygon":
	default:
		return "a " + g.XMLName.Local + " is not accepted: " + kmlWant
	}
	return ""
}

// kmlShapes are the polygons and points of a geometry, a MultiGeometry's
// flattened.
type kmlShapes struct {
	polygons []coordPolygon
	points   []coordPair
}

// add adds g's shapes, or says what is wrong with its coordinates.
func (s *kmlShapes) add(g *kmlGeometry) string {
	switch g.XMLName.Local {
	case "Point":
		r, issue := kmlCoordinates(g.Coordinates)
		if issue != "" {
			return issue
		}
		if len(r) != 1 {
			return fmt.Sprintf("a Point has %d coordinates, not one", len(r))
		}
		s.points = append(s.points, r[0])
	case "Polygon":
		if len(g.Outer) != 1 {
			return fmt.Sprintf("a Polygon has %d outerBoundaryIs, not one", len(g.Outer))
		}
		var p coordPolygon
		for _, text := range append(g.Outer, g.Inner...) {
			r, issue := kmlCoordinates(text)
			if issue != "" {
				return issue
			}
			p = append(p, r)
		}
		s.polygons = append(s.polygons, p)
	case "MultiGeometry":
		for i := range g.Children {
			if _, ok := kmlGeometries[g.Children[i].XMLName.Local]; ok {
				if issue := s.add(&g.Children[i]); issue != "" {
					return issue
				}
			}
		}
	}
	return ""
}

// kmlCoordinates reads a <coordinates>: tuples lon,lat[,alt] apart by
// white space (spaces beside the commas forgiven), the altitude dropped.
func kmlCoordinates(text string) (coordRing, string) {
	var r coordRing
	for _, tuple := range strings.Fields(joinCommas(text)) {
		parts := strings.Split(tuple, ",")
		if len(parts) < 2 || len(parts) > 3 {
			return nil, fmt.Sprintf("coordinates: %s is not longitude,latitude[,altitude]", quoteText(tuple))
		}
		var p coordPair
		for k := range p {
			f, err := strconv.ParseFloat(parts[k], 64)
			if err != nil || !finite(f) {
				return nil, fmt.Sprintf("coordinates: %s in %s is not a number", quoteText(parts[k]), quoteText(tuple))
			}
			p[k] = parts[k]
			if !jsonNumber(p[k]) {
				p[k] = numberText(f)
			}
		}
		r = append(r, p)
	}
	return r, ""
}

// joinCommas drops the white space beside commas ("1.5, 6.2" is one
// tuple), which some writers put in.
func joinCommas(s string) string {
	if !strings.Contains(s, ",") {
		return s
	}
	var b strings.Builder
	fields := strings.Split(s, ",")
	for i, f := range fields {
		if i > 0 {
			f = strings.TrimLeft(f, " \t\r\n")
			b.WriteByte(',')
		}
		if i < len(fields)-1 {
			f = strings.TrimRight(f, " \t\r\n")
		}
		b.WriteString(f)
	}
	return b.String()
}

// quote is a file's text in an issue, cut short when long.
func quoteText(s string) string {
	const max = 40
	if r := []rune(s); len(r) > max {
		return strconv.Quote(string(r[:max])) + "…"
	}
	return strconv.Quote(s)
}
