package pdf

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"math"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/maptile"
)

// mapPixels is the width and height of a plot's map image. At the 120 mm
// the page gives it, that is some 135 dpi: a 30 m pixel of the loss layer
// drawn at the zoom that fits a 5 ha plot spans several image pixels.
const mapPixels = 640

// plotShare is the most of the map's width or height the plot takes: the
// rest shows what lies around it, so that a reader sees where a patch of
// loss or forest under the plot ends.
const plotShare = 0.3

// mapBackground is the colour under the raster layers: where no layer has
// a value the reader sees a plain, light ground.
var mapBackground = color.NRGBA{R: 246, G: 246, B: 240, A: 255}

// mapView is the square of Web Mercator a plot's map shows: zoom Zoom,
// its north-west corner at X0, Y0 in the zoom's global pixels (256 x 2^Zoom
// across the world), mapPixels across.
type mapView struct {
	Zoom   int
	X0, Y0 float64
}

// worldPixels is the width of the world at zoom z in pixels.
func worldPixels(z int) float64 { return float64(uint64(maptile.Size) << z) }

// project is the point of lon/lat p on the map image, in pixels from its
// north-west corner.
func (v mapView) project(p geo.Position) (x, y float64) {
	w := worldPixels(v.Zoom)
	lat := p[1] * math.Pi / 180
	gx := (p[0] + 180) / 360 * w
	gy := (1 - math.Log(math.Tan(lat)+1/math.Cos(lat))/math.Pi) / 2 * w
	return gx - v.X0, gy - v.Y0
}

// lonLat is the longitude and latitude of the point x, y pixels from the
// map image's north-west corner.
func (v mapView) lonLat(x, y float64) (lon, lat float64) {
	w := worldPixels(v.Zoom)
	lon = (v.X0+x)/w*360 - 180
	lat = math.Atan(math.Sinh(math.Pi*(1-2*(v.Y0+y)/w))) * 180 / math.Pi
	return lon, lat
}

// metresPerPixel is the ground length of a map pixel at the map's centre
// (Web Mercator stretches it by 1/cos(latitude)).
func (v mapView) metresPerPixel() float64 {
	_, lat := v.lonLat(mapPixels/2, mapPixels/2)
	return 2 * math.Pi * 6378137 * math.Cos(lat*math.Pi/180) / worldPixels(v.Zoom)
}

// fitView is the view centred on the plot at the deepest zoom (up to
// maptile.MaxZoom) at which the plot spans at most plotShare of the map.
func fitView(g geo.Geometry) (mapView, error) {
	return fitPoints(geometryPoints(g), plotShare)
}

// fitPoints is the view centred on pts at the deepest zoom (up to
// maptile.MaxZoom) at which they span at most share of the map.
func fitPoints(pts []geo.Position, share float64) (mapView, error) {
	if len(pts) == 0 {
		return mapView{}, fmt.Errorf("the plot has no coordinates to draw")
	}
	for z := maptile.MaxZoom; z >= 0; z-- {
		v := mapView{Zoom: z}
		minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
		for _, p := range pts {
			x, y := v.project(p)
			minX, minY, maxX, maxY = min(minX, x), min(minY, y), max(maxX, x), max(maxY, y)
		}
		if maxX-minX <= share*mapPixels && maxY-minY <= share*mapPixels || z == 0 {
			v.X0 = math.Round((minX+maxX)/2 - mapPixels/2)
			v.Y0 = math.Round((minY+maxY)/2 - mapPixels/2)
			return v, nil
		}
	}
	panic("unreachable")
}

// geometryPoints is every position of g.
func geometryPoints(g geo.Geometry) []geo.Position {
	pts := append([]geo.Position(nil), g.Points...)
	for _, p := range g.Polygons {
		for _, r := range p {
			pts = append(pts, r...)
		}
	}
	return pts
}

// mapRasterOrder is the order raster layers are painted in, bottom first:
// the forest mask under the loss years, alerts on top.
var mapRasterOrder = []geo.LayerKind{geo.Forest2020, geo.LossYear, geo.Alerts}

// renderMap paints raster layers (those the plot was screened against)
// on the view as maptile draws them, forest first. A layer whose minimum
// zoom is deeper than the view's is left out and named in skipped: the
// view would read too many of its pixels.
//
// The image is premultiplied RGBA: image/draw composites NRGBA tiles onto
// it, and copies it, on its fast paths (onto NRGBA it takes the generic
// one, pixel by pixel through interfaces, several times slower: most of a
// batch's report with a page per plot went there).
func renderMap(ctx context.Context, v mapView, rasters []*geo.RasterLayer) (img *image.RGBA, skipped []string, err error) {
	img = image.NewRGBA(image.Rect(0, 0, mapPixels, mapPixels))
	draw.Draw(img, img.Bounds(), image.NewUniform(mapBackground), image.Point{}, draw.Src)
	n := 1 << v.Zoom
	tx0, ty0 := int(math.Floor(v.X0/maptile.Size)), int(math.Floor(v.Y0/maptile.Size))
	tx1, ty1 := int(math.Floor((v.X0+mapPixels-1)/maptile.Size)), int(math.Floor((v.Y0+mapPixels-1)/maptile.Size))
	for _, kind := range mapRasterOrder {
		for _, l := range rasters {
			if l.Kind != kind {
				continue
			}
			if v.Zoom < maptile.LayerMinZoom(l) {
				skipped = append(skipped, l.Name)
				continue
			}
			for ty := max(ty0, 0); ty <= min(ty1, n-1); ty++ {
				for tx := tx0; tx <= tx1; tx++ {
					t := maptile.Tile{Z: v.Zoom, X: (tx%n + n) % n, Y: ty}
					tile, err := maptile.Render(ctx, l, t)
					if err != nil {
						return nil, nil, fmt.Errorf("layer %s, map tile %s: %w", l.ID, t, err)
					}
					at := image.Pt(tx*maptile.Size-int(v.X0), ty*maptile.Size-int(v.Y0))
					draw.Draw(img, tile.Bounds().Add(at), tile, image.Point{}, draw.Over)
				}
			}
		}
	}
	return img, skipped, nil
}
