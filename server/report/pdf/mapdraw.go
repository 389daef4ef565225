package pdf

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"strconv"
	"strings"

	"github.com/go-pdf/fpdf"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/maptile"
)

// mapSize is the side of the map on the page in millimetres.
const mapSize = 118.0

// VectorOverlap is a vector layer's features that the plot overlaps, as
// the map draws them.
type VectorOverlap struct {
	LayerID  string
	Name     string
	Kind     string
	Features []geo.LayerFeature
}

// overlapColour is the outline and fill of a vector layer kind's features.
func overlapColour(kind string) color.NRGBA {
	if kind == string(geo.ProtectedArea) {
		return color.NRGBA{R: 90, G: 60, B: 200, A: 255}
	}
	return color.NRGBA{R: 230, G: 120, B: 0, A: 255}
}

// drawMap draws the plot's map at x, y: the raster layers it was screened
// against as the appliance's map tiles draw them, the vector features it
// overlaps, its outline, a scale bar, a north arrow and the corners'
// coordinates; then a legend to its right, and under it the layers left
// out (renderMap).
func (d *document) drawMap(ctx context.Context, x, y float64, g geo.Geometry, rasters []*geo.RasterLayer, overlaps []VectorOverlap) error {
	v, err := fitView(g)
	if err != nil {
		return err
	}
	at, skipped, err := d.mapImage(ctx, x, y, v, rasters)
	if err != nil {
		return err
	}
	d.ClipRect(x, y, mapSize, mapSize, false)
	d.drawOverlaps(overlaps, at)
	// The plot: a white halo under a dark outline reads on red and green.
	for _, pass := range []struct {
		w    float64
		grey int
	}{{1.6, 255}, {0.7, 0}} {
		d.SetDrawColor(pass.grey, pass.grey, pass.grey)
		d.SetFillColor(pass.grey, pass.grey, pass.grey)
		d.SetLineWidth(pass.w)
		for _, p := range g.Polygons {
			d.path(p, at, "D")
		}
		for _, p := range g.Points {
			px, py := at(p)
			d.Circle(px, py, 0.6+pass.w/2, "FD")
		}
	}
	d.ClipEnd()
	d.mapFrame(x, y, v)
	d.legend(x+mapSize+5, y, rasters, overlaps, v.Zoom)
	d.mapSkipped(y, skipped)
	return nil
}

// drawOverlaps draws vector features in their layer kind's colour.
func (d *document) drawOverlaps(overlaps []VectorOverlap, at func(geo.Position) (float64, float64)) {
	for _, o := range overlaps {
		c := overlapColour(o.Kind)
		d.SetDrawColor(int(c.R), int(c.G), int(c.B))
		d.SetFillColor(int(c.R), int(c.G), int(c.B))
		// A wide line and a light fill: the features must read over the
		// forest's green and the loss's red alike.
		d.SetLineWidth(0.8)
		for _, f := range o.Features {
			for _, p := range f.Polygons {
				d.SetAlpha(0.3, "Normal")
				d.path(p, at, "f*")
				d.SetAlpha(1, "Normal")
				d.path(p, at, "D")
			}
		}
	}
}

// mapImage places the raster layers' image of view v at x, y (renderMap)
// and returns where a position falls on the page and the layers left out.
func (d *document) mapImage(ctx context.Context, x, y float64, v mapView, rasters []*geo.RasterLayer) (at func(geo.Position) (float64, float64), skipped []string, err error) {
	img, skipped, err := renderMap(ctx, v, rasters)
	if err != nil {
		return nil, nil, err
	}
	// The name tells images apart by what is drawn on them: the same view
	// of the same layers is the same image, embedded once.
	ids := make([]string, len(rasters))
	for i, l := range rasters {
		ids[i] = l.ID
	}
	name := fmt.Sprintf("map-%d-%.0f-%.0f-%s", v.Zoom, v.X0, v.Y0, strings.Join(ids, ","))
	info := d.GetImageInfo(name)
	if info == nil {
		// fpdf writes a document's images in the order of their widths
		// (SetCatalogSort), those of one width in map order: the n-th map
		// gets n columns of ground on its right, cut off on the page, so
		// that the same records give the same bytes.
		wide := image.NewRGBA(image.Rect(0, 0, mapPixels+d.images, mapPixels))
		draw.Draw(wide, wide.Bounds(), image.NewUniform(mapBackground), image.Point{}, draw.Src)
		draw.Draw(wide, img.Bounds(), img, image.Point{}, draw.Src)
		d.images++
		// The fastest compression: a batch with a page per plot encodes a
		// map a plot, and fpdf keeps them in memory until the end; the
		// default level takes a third longer for a few percent less.
		var buf bytes.Buffer
		if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, wide); err != nil {
			return nil, nil, err
		}
		info = d.RegisterImageOptionsReader(name, fpdf.ImageOptions{ImageType: "PNG"}, &buf)
		if info == nil {
			return nil, nil, d.Error()
		}
	}
	scale := mapSize / mapPixels
	d.ClipRect(x, y, mapSize, mapSize, false)
	d.ImageOptions(name, x, y, mapSize*info.Width()/info.Height(), mapSize, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	d.ClipEnd()
	return func(p geo.Position) (float64, float64) {
		px, py := v.project(p)
		return x + px*scale, y + py*scale
	}, skipped, nil
}

// mapFrame draws the map's border, scale bar, north arrow and corner
// coordinates.
func (d *document) mapFrame(x, y float64, v mapView) {
	d.SetDrawColor(60, 60, 60)
	d.SetLineWidth(0.3)
	d.Rect(x, y, mapSize, mapSize, "D")
	d.scaleBar(x+3, y+mapSize-4, v)
	d.northArrow(x+mapSize-8, y+4)
	d.corners(x, y, v)
}

// mapSkipped moves under the map drawn at y and names the layers it left
// out.
func (d *document) mapSkipped(y float64, skipped []string) {
	d.SetXY(margin, y+mapSize+6)
	if len(skipped) > 0 {
		d.font(sans, "", 7.5)
		d.MultiCell(contentW, 3.8, "Not drawn: "+strings.Join(skipped, ", ")+" (the area is too large to draw their pixels at this scale).", "", "L", false)
	}
}

// path draws polygon p (rings even-odd, so holes stay open) with style.
func (d *document) path(p geo.Polygon, at func(geo.Position) (float64, float64), style string) {
	for _, r := range p {
		for i, q := range r {
			px, py := at(q)
			if i == 0 {
				d.MoveTo(px, py)
			} else {
				d.LineTo(px, py)
			}
		}
		d.ClosePath()
	}
	d.DrawPath(style)
}

// scaleBar draws a bar of a round length (1, 2 or 5 x 10^n m) about a
// quarter of the map wide, its left end at x, y.
func (d *document) scaleBar(x, y float64, v mapView) {
	mmPerMetre := (mapSize / mapPixels) / v.metresPerPixel()
	target := mapSize / 4 / mmPerMetre
	step := math.Pow(10, math.Floor(math.Log10(target)))
	length := step
	for _, m := range []float64{2, 5, 10} {
		if m*step <= target {
			length = m * step
		}
	}
	w := length * mmPerMetre
	label := strconv.FormatFloat(length, 'f', -1, 64) + " m"
	if length >= 1000 {
		label = strconv.FormatFloat(length/1000, 'f', -1, 64) + " km"
	}
	d.SetFillColor(255, 255, 255)
	d.SetAlpha(0.8, "Normal")
	d.Rect(x-1.5, y-5, w+3+14, 7, "F")
	d.SetAlpha(1, "Normal")
	d.SetFillColor(0, 0, 0)
	d.Rect(x, y-1, w/2, 1.2, "F")
	d.SetDrawColor(0, 0, 0)
	d.SetLineWidth(0.25)
	d.Rect(x, y-1, w, 1.2, "D")
	d.font(sans, "", 7)
	d.Text(x+w+2, y+0.2, label)
	d.Text(x, y-2, "0")
}

// northArrow draws an arrow pointing north (up: the map is north-up) with
// an N over it, centred on x.
func (d *document) northArrow(x, y float64) {
	d.SetFillColor(255, 255, 255)
	d.SetAlpha(0.8, "Normal")
	d.Rect(x-3.5, y-1.5, 7, 13, "F")
	d.SetAlpha(1, "Normal")
	d.SetFillColor(0, 0, 0)
	d.Polygon([]fpdf.PointType{{X: x, Y: y + 3.5}, {X: x + 2.2, Y: y + 10.5}, {X: x, Y: y + 9}, {X: x - 2.2, Y: y + 10.5}}, "F")
	d.font(sans, "B", 8)
	d.Text(x-1.3, y+2.8, "N")
}

// corners writes the longitude and latitude of the map's north-west and
// south-east corners outside them.
func (d *document) corners(x, y float64, v mapView) {
	d.font(sans, "", 6.8)
	d.SetTextColor(60, 60, 60)
	wLon, nLat := v.lonLat(0, 0)
	eLon, sLat := v.lonLat(mapPixels, mapPixels)
	d.Text(x, y-1.2, "NW "+lonLatText(wLon, nLat))
	se := "SE " + lonLatText(eLon, sLat)
	d.Text(x+mapSize-d.GetStringWidth(se), y+mapSize+3.2, se)
	d.SetTextColor(0, 0, 0)
}

// lonLatText is a position as latitude, longitude in decimal degrees with
// their hemispheres, to 5 decimals (about a metre).
func lonLatText(lon, lat float64) string {
	ns, ew := "N", "E"
	if lat < 0 {
		ns, lat = "S", -lat
	}
	if lon < 0 {
		ew, lon = "W", -lon
	}
	return fmt.Sprintf("%.5f° %s, %.5f° %s", lat, ns, lon, ew)
}

// legend explains the map's colours beside it, at x, y.
func (d *document) legend(x, y float64, rasters []*geo.RasterLayer, overlaps []VectorOverlap, zoom int) {
	w := d.legendTitle(x, y)
	d.legendOutline(x, w, color.NRGBA{A: 255}, 0.7, "The plot as sent")
	d.legendRasters(x, w, rasters)
	for _, o := range overlaps {
		d.legendOutline(x, w, overlapColour(o.Kind), 0.8, fmt.Sprintf("%s (%s), overlapped", o.Name, o.Kind))
	}
	d.legendNote(x, w, zoom)
}

// legendTitle starts a legend at x, y and returns its width.
func (d *document) legendTitle(x, y float64) float64 {
	w := pageW - margin - x
	d.SetXY(x, y)
	d.font(sans, "B", 8.5)
	d.CellFormat(w, 5, "Legend", "", 2, "L", false, 0, "")
	return w
}

// legendSwatch writes a legend line: a patch of colour c and its label.
func (d *document) legendSwatch(x, w float64, c color.NRGBA, label string) {
	cy := d.GetY()
	d.SetFillColor(int(c.R), int(c.G), int(c.B))
	d.Rect(x, cy+0.8, 4, 3, "F")
	d.SetXY(x+5.5, cy)
	d.font(sans, "", 7.5)
	d.MultiCell(w-5.5, 4.4, label, "", "L", false)
	d.SetX(x)
}

// legendOutline writes a legend line: an outline of colour c and width,
// and its label.
func (d *document) legendOutline(x, w float64, c color.NRGBA, width float64, label string) {
	cy := d.GetY()
	d.SetDrawColor(int(c.R), int(c.G), int(c.B))
	d.SetLineWidth(width)
	d.Rect(x+0.3, cy+1, 3.4, 2.6, "D")
	d.SetXY(x+5.5, cy)
	d.font(sans, "", 7.5)
	d.MultiCell(w-5.5, 4.4, label, "", "L", false)
	d.SetX(x)
}

// legendRasters writes the colours of the raster layers' kinds.
func (d *document) legendRasters(x, w float64, rasters []*geo.RasterLayer) {
	kinds := map[geo.LayerKind]bool{}
	for _, l := range rasters {
		kinds[l.Kind] = true
	}
	if kinds[geo.Forest2020] {
		d.legendSwatch(x, w, flatten(maptile.PaletteOf(geo.Forest2020)[1]), "Forest in 2020")
	}
	if kinds[geo.LossYear] {
		p := maptile.PaletteOf(geo.LossYear)
		d.legendSwatch(x, w, flatten(p[geo.LossCutoffValue]), "Forest lost 2001–2020 (before the cutoff)")
		for v := geo.LossCutoffValue + 1; v <= geo.LossCutoffValue+5; v++ {
			label := strconv.Itoa(2000 + v)
			if v == geo.LossCutoffValue+5 {
				label += " and later (darker each year)"
			}
			d.legendSwatch(x, w, flatten(p[v]), "Forest lost in "+label)
		}
	}
	if kinds[geo.Alerts] {
		d.legendSwatch(x, w, flatten(maptile.PaletteOf(geo.Alerts)[1]), "Deforestation alert")
	}
}

// legendNote ends a legend with how the map was drawn.
func (d *document) legendNote(x, w float64, zoom int) {
	d.Ln(2)
	d.SetX(x)
	d.font(sans, "", 7)
	d.SetTextColor(90, 90, 90)
	d.MultiCell(w, 3.6, fmt.Sprintf("Drawn by the appliance from its own layers, Web Mercator zoom %d, north up; each map pixel is the layer pixel under its centre.", zoom), "", "L", false)
	d.SetTextColor(0, 0, 0)
}

// flatten is c as drawn over the map's background.
func flatten(c color.NRGBA) color.NRGBA {
	a := float64(c.A) / 255
	m := func(f, b uint8) uint8 { return uint8(float64(f)*a + float64(b)*(1-a) + 0.5) }
	return color.NRGBA{R: m(c.R, mapBackground.R), G: m(c.G, mapBackground.G), B: m(c.B, mapBackground.B), A: 255}
}
