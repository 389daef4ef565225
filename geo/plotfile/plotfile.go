// Package plotfile reads plot files in the formats people have (KML and
// KMZ, zipped ESRI Shapefiles, CSV, Excel workbooks) into the GeoJSON
// FeatureCollection the appliance screens, keeping where each feature came
// from so that a problem is reported in the file's own terms
// (placemarks[3], rows[12].latitude, records[7]). It is pure: bytes in,
// bytes out; the caller checks the result as it checks any GeoJSON.
package plotfile

import (
	"encoding/json"
	"mime"
	"strconv"
	"strings"

	"github.com/eudr/eudr/geo"
)

// Format is a kind of plot file.
type Format string

// The formats Convert reads. GeoJSON is read by geo itself; Convert
// passes it through.
const (
	GeoJSON   Format = "geojson"
	KML       Format = "kml"
	KMZ       Format = "kmz"
	Shapefile Format = "shapefile" // a zip of .shp, .shx, .dbf and .prj
	CSV       Format = "csv"
	XLSX      Format = "xlsx"
)

// Formats lists every Format, in the order documentation names them.
var Formats = []Format{GeoJSON, KML, KMZ, Shapefile, CSV, XLSX}

// mediaTypes are the Content-Types of each format.
var mediaTypes = map[string]Format{
	"application/geo+json":                 GeoJSON,
	"application/json":                     GeoJSON,
	"application/vnd.google-earth.kml+xml": KML,
	"application/vnd.google-earth.kmz":     KMZ,
	"application/zip":                      Shapefile,
	"text/csv":                             CSV,
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": XLSX,
}

// MediaTypes lists the Content-Types FormatOf knows, for a 415's message.
func MediaTypes() []string {
	out := make([]string, 0, len(mediaTypes))
	for _, f := range Formats {
		for mt, g := range mediaTypes {
			if g == f {
				out = append(out, mt)
			}
		}
	}
	return out
}

// FormatOf is the format a request names: by name (?format=), which wins,
// else by its Content-Type (parameters such as charset ignored; no
// Content-Type is GeoJSON). ok is false for a name or type it does not
// know.
func FormatOf(name, contentType string) (f Format, ok bool) {
	if name != "" {
		f = Format(strings.ToLower(name))
		for _, g := range Formats {
			if g == f {
				return f, true
			}
		}
		return "", false
	}
	if contentType == "" {
		return GeoJSON, true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", false
	}
	f, ok = mediaTypes[mt]
	return f, ok
}

// Options bound and steer a conversion.
type Options struct {
	// MaxFeatures is the most features a file may hold (0: no limit);
	// past it Convert fails with geo.ErrTooManyFeatures.
	MaxFeatures int
	// Sheet is the workbook sheet to read (XLSX; "" is the first).
	Sheet string
}

// Converted is a plot file as GeoJSON.
type Converted struct {
	// GeoJSON is the FeatureCollection: each feature's geometry in WGS84
	// longitude, latitude, and its properties under the names the
	// appliance reads (Names), the file's other columns or attributes
	// beside them as they were.
	GeoJSON []byte
	// Sources[i] is where feature i came from, in the file's terms:
	// "placemarks[3]", "rows[12]", "records[7]".
	Sources []string
	// Columns maps a property the appliance reads to the file's own name
	// for it ("area" -> "Area (ha)"), where the file named it otherwise.
	Columns map[string]string
}

// Path rewrites a problem path of the GeoJSON (features[3].properties.area)
// into the file's terms (rows[12].Area (ha)); other paths are unchanged.
func (c *Converted) Path(p string) string {
	rest, ok := strings.CutPrefix(p, "features[")
	if !ok {
		return p
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return p
	}
	i, err := strconv.Atoi(rest[:end])
	if err != nil || i < 0 || i >= len(c.Sources) {
		return p
	}
	tail := rest[end+1:]
	if prop, ok := strings.CutPrefix(tail, ".properties."); ok {
		if col, ok := c.Columns[prop]; ok {
			prop = col
		}
		return c.Sources[i] + "." + prop
	}
	return c.Sources[i] + tail
}

// Problems rewrites every path of ps with Path.
func (c *Converted) Problems(ps geo.Problems) geo.Problems {
	out := make(geo.Problems, len(ps))
	for i, p := range ps {
		p.Path = c.Path(p.Path)
		out[i] = p
	}
	return out
}

// Convert reads body, a plot file of format f, into GeoJSON. A file it
// cannot read, or features it cannot turn into GeoJSON, fail with
// geo.Problems in the file's terms (every problem found, as geo reports
// them); more than o.MaxFeatures features with geo.ErrTooManyFeatures.
// GeoJSON is passed through unread, with no Sources: geo reads it.
func Convert(f Format, body []byte, o Options) (*Converted, error) {
	switch f {
	case GeoJSON:
		return &Converted{GeoJSON: body}, nil
	case KML:
		return readKML(body, o)
	case KMZ:
		return readKMZ(body, o)
	case Shapefile:
		return readShapefile(body, o)
	case CSV:
		return readCSV(body, o)
	case XLSX:
		return readXLSX(body, o)
	}
	return nil, geo.Problems{{Code: geo.CodeInvalidValue, Path: "format", Issue: "unknown format " + string(f)}}
}

// feature is one feature of the output, as the readers build it.
type feature struct {
	Type       string          `json:"type"`
	Geometry   json.RawMessage `json:"geometry"`
	Properties map[string]any  `json:"properties"`
}

// collection encodes features as a FeatureCollection.
func collection(features []feature) ([]byte, error) {
	return json.Marshal(struct {
		Type     string    `json:"type"`
		Features []feature `json:"features"`
	}{"FeatureCollection", features})
}
