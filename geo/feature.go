package geo

import (
	"encoding/json"

	"github.com/tidwall/geojson"
	"github.com/tidwall/geojson/geometry"
)

// Geometry types a feature may have. LineString, MultiLineString and
// GeometryCollection are refused (INVALID_GEOMETRY_TYPE).
const (
	TypePoint        = "Point"
	TypeMultiPoint   = "MultiPoint"
	TypePolygon      = "Polygon"
	TypeMultiPolygon = "MultiPolygon"
)

// Position is a WGS 84 [longitude, latitude] in decimal degrees. An altitude
// sent as a third number is dropped. It is an alias, so a Ring is a
// [][2]float64 to functions that take one.
type Position = [2]float64

// Ring is a closed linear ring: at least 4 positions, the last equal to the first.
type Ring []Position

// Polygon is an exterior ring followed by its interior rings (holes).
type Polygon []Ring

// Geometry is a feature's decoded geometry. Polygon and MultiPolygon fill
// Polygons (one for a Polygon); Point and MultiPoint fill Points (one for a
// Point).
type Geometry struct {
	Type     string // TypePoint, TypeMultiPoint, TypePolygon or TypeMultiPolygon
	Polygons []Polygon
	Points   []Position
}

// IsPoint reports whether the geometry is a Point or MultiPoint: a plot of at
// most 4 ha given by a point, whose area must be sent.
func (g Geometry) IsPoint() bool { return g.Type == TypePoint || g.Type == TypeMultiPoint }

// Object returns the geometry as a tidwall/geojson object for spatial
// predicates (Intersects, Contains) against reference layers. It returns
// nil for a geometry without positions.
func (g Geometry) Object() geojson.Object {
	switch g.Type {
	case TypePoint:
		if len(g.Points) == 0 {
			return nil
		}
		return geojson.NewPoint(toPoint(g.Points[0]))
	case TypeMultiPoint:
		if len(g.Points) == 0 {
			return nil
		}
		pts := make([]geometry.Point, len(g.Points))
		for i, p := range g.Points {
			pts[i] = toPoint(p)
		}
		return geojson.NewMultiPoint(pts)
	case TypePolygon:
		if len(g.Polygons) == 0 || len(g.Polygons[0]) == 0 {
			return nil
		}
		return geojson.NewPolygon(toPoly(g.Polygons[0]))
	case TypeMultiPolygon:
		polys := make([]*geometry.Poly, 0, len(g.Polygons))
		for _, p := range g.Polygons {
			if len(p) > 0 {
				polys = append(polys, toPoly(p))
			}
		}
		if len(polys) == 0 {
			return nil
		}
		return geojson.NewMultiPolygon(polys)
	}
	return nil
}

func toPoint(p Position) geometry.Point { return geometry.Point{X: p[0], Y: p[1]} }

func toPoints(r Ring) []geometry.Point {
	pts := make([]geometry.Point, len(r))
	for i, p := range r {
		pts[i] = toPoint(p)
	}
	return pts
}

func toPoly(p Polygon) *geometry.Poly {
	var holes [][]geometry.Point
	for _, h := range p[1:] {
		holes = append(holes, toPoints(h))
	}
	return geometry.NewPoly(toPoints(p[0]), holes, geometry.DefaultIndexOptions)
}

// Properties are a feature's known properties, checked. Others are ignored.
type Properties struct {
	Commodity       string   // one of Commodities
	ProducerCountry string   // ISO 3166-1 alpha-2, upper case
	Area            *float64 // hectares; always set for a point, optional for a polygon
	ProducerName    string
	ProductionPlace string
	ExternalID      string // the client's own ID of the plot
	SupplierID      string // an ERP vendor ID (a supplier mapping's erpVendorId)
}

// Feature is one decoded, structurally valid feature of a request.
type Feature struct {
	// Index is the feature's position in the request's features array.
	Index      int
	Geometry   Geometry
	Properties Properties
	// MaxDecimals is the most decimal places any longitude or latitude of
	// the feature was written with in the request (see the package doc).
	MaxDecimals int
	// Raw is the feature as sent. It aliases the parsed input.
	Raw json.RawMessage
}

// commodities are the values of properties.commodity (EUDR Annex I).
var commodities = []string{"cattle", "cocoa", "coffee", "oil_palm", "soya", "wood", "rubber"}

// IsCommodity reports whether s is a commodity the regulation covers, as
// spelled in properties.commodity.
func IsCommodity(s string) bool {
	for _, c := range commodities {
		if s == c {
			return true
		}
	}
	return false
}

// Commodities returns the values properties.commodity may take.
func Commodities() []string { return append([]string(nil), commodities...) }
