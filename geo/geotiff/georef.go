package geotiff

import (
	"fmt"
	"math"
)

// Georef places a north-up raster on WGS 84 longitude and latitude
// (EPSG:4326), in degrees. Pixel (col, row) covers the area
//
//	West + col*DX <= lon <= West + (col+1)*DX
//	North - (row+1)*DY <= lat <= North - row*DY
//
// whatever the file declared: for a RasterPixelIsPoint file (whose tie point
// is the centre of pixel (0, 0)) Open moves West and North half a pixel out,
// as GDAL does, and sets PixelIsPoint.
type Georef struct {
	// West and North are the longitude and latitude of the outer upper-left
	// corner of pixel (0, 0).
	West, North float64
	// DX and DY are a pixel's width and height in degrees, both > 0; rows run
	// southward.
	DX, DY float64
	// Width and Height are the raster's size in pixels.
	Width, Height int
	// PixelIsPoint is true if the file declared RasterPixelIsPoint.
	PixelIsPoint bool
}

// Bounds is a longitude/latitude rectangle in degrees.
type Bounds struct {
	West, South, East, North float64
}

// Window is a rectangle of pixels: columns Col to Col+Width-1, rows Row to
// Row+Height-1.
type Window struct {
	Col, Row, Width, Height int
}

// Empty reports whether the window has no pixels.
func (w Window) Empty() bool { return w.Width <= 0 || w.Height <= 0 }

// Bounds returns the area the raster covers.
func (g Georef) Bounds() Bounds {
	return Bounds{
		West:  g.West,
		South: g.North - float64(g.Height)*g.DY,
		East:  g.West + float64(g.Width)*g.DX,
		North: g.North,
	}
}

// LonLat returns the longitude and latitude of the raster position (x, y),
// in pixels from the outer upper-left corner: (0, 0) is that corner, (col+0.5,
// row+0.5) the centre of pixel (col, row), (Width, Height) the lower-right
// corner.
func (g Georef) LonLat(x, y float64) (lon, lat float64) {
	return g.West + x*g.DX, g.North - y*g.DY
}

// Center returns the longitude and latitude of the centre of pixel (col, row).
func (g Georef) Center(col, row int) (lon, lat float64) {
	return g.LonLat(float64(col)+0.5, float64(row)+0.5)
}

// GeoKey IDs and values (GeoTIFF 1.1, OGC 19-008r4, section 7 and annex).
const (
	keyModelType        = 1024
	keyRasterType       = 1025
	keyGeographicType   = 2048
	keyGeodeticDatum    = 2050
	keyPrimeMeridian    = 2051
	keyAngularUnits     = 2054
	keyProjectedCSType  = 3072
	modelTypeProjected  = 1
	modelTypeGeographic = 2
	modelTypeGeocentric = 3
	rasterPixelIsArea   = 1
	rasterPixelIsPoint  = 2
	epsgWGS84           = 4326
	datumWGS84          = 6326
	primeGreenwich      = 8901
	unitDegree          = 9102
	userDefined         = 32767
	maxGeoKeys          = 1024
)

// readGeoref reads the georeferencing tags and the GeoKey directory.
func readGeoref(d *ifd, width, height int) (Georef, error) {
	g := Georef{Width: width, Height: height}
	pixelIsPoint, err := readCRS(d)
	if err != nil {
		return g, err
	}
	g.PixelIsPoint = pixelIsPoint

	if d.has(tagModelTransformation) {
		m, err := d.floats(tagModelTransformation, 16)
		if err != nil {
			return g, err
		}
		if len(m) != 16 {
			return g, errorf(Malformed, "ModelTransformation (34264) has %d values, want 16", len(m))
		}
		// lon = m[0]*x + m[1]*y + m[3], lat = m[4]*x + m[5]*y + m[7].
		if m[1] != 0 || m[4] != 0 {
			return g, errorf(Georeferencing, "the raster is rotated or sheared (ModelTransformation %g, %g): warp it north-up first (gdalwarp -t_srs EPSG:4326)", m[1], m[4])
		}
		g.DX, g.DY, g.West, g.North = m[0], -m[5], m[3], m[7]
	} else {
		scale, err := d.floats(tagModelPixelScale, 3)
		if err != nil {
			return g, err
		}
		tie, err := d.floats(tagModelTiepoint, 12)
		if err != nil {
			return g, err
		}
		switch {
		case scale == nil && tie == nil:
			return g, errorf(Georeferencing, "the file is not georeferenced (no ModelPixelScale, ModelTiepoint or ModelTransformation tags; a .tfw world file is not read): use a GeoTIFF")
		case scale == nil:
			return g, errorf(Georeferencing, "ModelPixelScale (33550) is missing: ground control points without a pixel scale are not supported, warp the raster first (gdalwarp -t_srs EPSG:4326)")
		case tie == nil:
			return g, errorf(Georeferencing, "ModelTiepoint (33922) is missing: the raster has a pixel size but no position")
		case len(scale) < 2:
			return g, errorf(Malformed, "ModelPixelScale (33550) has %d values, want 3", len(scale))
		case len(tie) < 6:
			return g, errorf(Malformed, "ModelTiepoint (33922) has %d values, want 6", len(tie))
		case len(tie) > 6:
			return g, errorf(Georeferencing, "ModelTiepoint (33922) holds several tie points (ground control points): warp the raster first (gdalwarp -t_srs EPSG:4326)")
		}
		g.DX, g.DY = scale[0], scale[1]
		// Raster position (tie[0], tie[1]) is at (tie[3], tie[4]).
		g.West = tie[3] - tie[0]*g.DX
		g.North = tie[4] + tie[1]*g.DY
	}
	for _, v := range []float64{g.DX, g.DY, g.West, g.North} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return g, errorf(Georeferencing, "the georeferencing holds %v", v)
		}
	}
	if g.DX <= 0 || g.DY <= 0 {
		return g, errorf(Georeferencing, "pixel size %g x %g degrees: only north-up rasters with positive pixel sizes are supported (warp with gdalwarp -t_srs EPSG:4326)", g.DX, g.DY)
	}
	if g.PixelIsPoint {
		g.West -= g.DX / 2
		g.North += g.DY / 2
	}
	b := g.Bounds()
	// A pixel of slack around the globe for rasters whose edge pixels are
	// centred on it.
	if b.West < -180-g.DX-1e-9 || b.East > 180+g.DX+1e-9 || b.South < -90-g.DY-1e-9 || b.North > 90+g.DY+1e-9 {
		return g, errorf(Georeferencing, "the raster's bounds (west %g, south %g, east %g, north %g) are not longitudes and latitudes: the CRS is not really EPSG:4326", b.West, b.South, b.East, b.North)
	}
	return g, nil
}

// readCRS checks that the GeoKey directory declares WGS 84 longitude and
// latitude (EPSG:4326) and says whether pixels are points.
func readCRS(d *ifd) (pixelIsPoint bool, err error) {
	if !d.has(tagGeoKeyDirectory) {
		return false, errorf(UnsupportedCRS, "GeoKeyDirectory (34735) is missing, so the CRS is unknown: only EPSG:4326 (WGS 84 longitude/latitude) is supported")
	}
	dir, err := d.uints(tagGeoKeyDirectory, 4+4*maxGeoKeys)
	if err != nil {
		return false, err
	}
	if len(dir) < 4 || dir[0] != 1 {
		return false, errorf(Malformed, "GeoKeyDirectory (34735) has no valid header")
	}
	n := dir[3]
	if n > uint64(len(dir)-4)/4 {
		return false, errorf(Malformed, "GeoKeyDirectory (34735) declares %d keys but holds %d", n, (len(dir)-4)/4)
	}
	keys := make(map[uint64]uint64, n)
	for i := uint64(0); i < n; i++ {
		k := dir[4+4*i:]
		if k[1] != 0 { // value elsewhere (GeoDoubleParams, GeoAsciiParams): not one we need as a SHORT
			continue
		}
		keys[k[0]] = k[3]
	}

	if v, ok := keys[keyRasterType]; ok {
		switch v {
		case rasterPixelIsArea:
		case rasterPixelIsPoint:
			pixelIsPoint = true
		default:
			return false, errorf(Georeferencing, "GTRasterTypeGeoKey is %d, want 1 (PixelIsArea) or 2 (PixelIsPoint)", v)
		}
	}
	if v, ok := keys[keyProjectedCSType]; ok && v != 0 {
		return false, errorf(UnsupportedCRS, "the CRS is projected (%s): only EPSG:4326 (WGS 84 longitude/latitude) is supported, reproject with gdalwarp -t_srs EPSG:4326", epsg(v))
	}
	switch v, ok := keys[keyModelType]; {
	case !ok, v == modelTypeGeographic:
	case v == modelTypeProjected:
		return false, errorf(UnsupportedCRS, "the CRS is projected (GTModelTypeGeoKey 1): only EPSG:4326 (WGS 84 longitude/latitude) is supported, reproject with gdalwarp -t_srs EPSG:4326")
	case v == modelTypeGeocentric:
		return false, errorf(UnsupportedCRS, "the CRS is geocentric (GTModelTypeGeoKey 3): only EPSG:4326 (WGS 84 longitude/latitude) is supported")
	default:
		return false, errorf(UnsupportedCRS, "GTModelTypeGeoKey is %d: only EPSG:4326 (WGS 84 longitude/latitude) is supported", v)
	}
	if v, ok := keys[keyAngularUnits]; ok && v != unitDegree {
		return false, errorf(UnsupportedCRS, "the angular unit is EPSG:%d, not degrees (9102): only EPSG:4326 is supported", v)
	}
	if v, ok := keys[keyPrimeMeridian]; ok && v != primeGreenwich {
		return false, errorf(UnsupportedCRS, "the prime meridian is EPSG:%d, not Greenwich (8901): only EPSG:4326 is supported", v)
	}
	switch v, ok := keys[keyGeographicType]; {
	case ok && v == epsgWGS84:
	case (!ok || v == userDefined) && keys[keyGeodeticDatum] == datumWGS84:
		// A user-defined geographic CRS on the WGS 84 datum in degrees is EPSG:4326.
	case !ok || v == userDefined:
		return false, errorf(UnsupportedCRS, "the GeoKeys name no geographic CRS (GeographicTypeGeoKey missing or user-defined, datum not WGS 84): only EPSG:4326 (WGS 84 longitude/latitude) is supported")
	default:
		return false, errorf(UnsupportedCRS, "the CRS is %s: only EPSG:4326 (WGS 84 longitude/latitude) is supported, reproject with gdalwarp -t_srs EPSG:4326", epsg(v))
	}
	return pixelIsPoint, nil
}

func epsg(code uint64) string {
	if code == userDefined {
		return "user-defined"
	}
	return fmt.Sprintf("EPSG:%d", code)
}
