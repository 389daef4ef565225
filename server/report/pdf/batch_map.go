package pdf

import (
	"context"
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"github.com/eudr/eudr/geo"
)

// overviewShare is the most of the overview map's width or height the
// batch's plots take: a margin around them, less than a plot's own map
// leaves, since a batch's plots may lie far apart.
const overviewShare = 0.8

// overviewLabels is the most plots the overview map numbers: past it the
// numbers would cover the plots.
const overviewLabels = 40

// markerPixels is the size under which a plot is drawn as a dot rather
// than its outline: smaller outlines would not be seen.
const markerPixels = 6.0

// verdicts are the verdicts in the order the overview's legend lists them.
var verdicts = []string{geo.StatusCompliant, geo.StatusHighRisk, geo.StatusFailed}

// batchOverview draws the overview map of the batch's plots, from a new
// page: every plot's outline (a dot for one too small to see) coloured by
// its verdict over the raster layers the plots were screened against,
// numbered in the order the batch lists them when there are few.
func (d *document) batchOverview(ctx context.Context, b Batch, evs []*evidenceDoc) error {
	d.AddPage()
	d.heading("Plots: overview map of the batch's "+plural(len(b.Plots), "plot"), mapSize+20)
	if len(b.Plots) == 0 {
		d.para("The batch has no plots.", 8.5)
		return nil
	}
	shapes := make([]geo.Geometry, len(b.Plots))
	var pts []geo.Position
	named := map[string]bool{}
	counts := map[string]int{}
	var unreadable []string
	for i, p := range b.Plots {
		for _, r := range evs[i].Rasters {
			named[r.LayerID] = true
		}
		counts[evs[i].EUDRStatus]++
		g, err := parseGeometry(p.Geometry)
		if err != nil {
			unreadable = append(unreadable, p.Polygon.ID)
			continue
		}
		shapes[i] = g
		pts = append(pts, geometryPoints(g)...)
	}
	if len(pts) == 0 {
		d.para("No plot's geometry can be drawn.", 8.5)
		return nil
	}
	// The plots share the environment's layers: the map draws those any of
	// them was screened against.
	var rasters []*geo.RasterLayer
	for _, l := range b.Plots[0].Rasters {
		if named[l.ID] {
			rasters = append(rasters, l)
		}
	}
	v, err := fitPoints(pts, overviewShare)
	if err != nil {
		return err
	}
	d.Ln(3)
	x, y := margin, d.GetY()
	at, skipped, err := d.mapImage(ctx, x, y, v, rasters)
	if err != nil {
		return err
	}
	overlaps := overviewOverlaps(b.Plots)
	d.ClipRect(x, y, mapSize, mapSize, false)
	d.drawOverlaps(overlaps, at)
	// The plots a reader must find on top: a HIGH_RISK plot among
	// compliant neighbours is not hidden under their dots.
	order := make([]int, len(shapes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return drawRank(evs[a].EUDRStatus) - drawRank(evs[b].EUDRStatus) })
	for _, i := range order {
		d.overviewPlot(shapes[i], evs[i].EUDRStatus, at)
	}
	unlabelled := 0
	if len(b.Plots) <= overviewLabels {
		var labels []box
		for i, g := range shapes {
			if pts := geometryPoints(g); len(pts) > 0 && !d.overviewLabel(i+1, pts, at, &labels) {
				unlabelled++
			}
		}
	}
	d.ClipEnd()
	d.mapFrame(x, y, v)
	lx := x + mapSize + 5
	w := d.legendTitle(lx, y)
	for _, s := range verdicts {
		c := verdictColour(s)
		d.legendOutline(lx, w, c, 0.8, fmt.Sprintf("%s: %s", s, plural(counts[s], "plot")))
	}
	var drawn []*geo.RasterLayer // the legend explains what is on the map
	for _, l := range rasters {
		if !slices.Contains(skipped, l.Name) {
			drawn = append(drawn, l)
		}
	}
	d.legendRasters(lx, w, drawn)
	for _, o := range overlaps {
		d.legendOutline(lx, w, overlapColour(o.Kind), 0.8, fmt.Sprintf("%s (%s): %s the plots overlap", o.Name, o.Kind, plural(len(o.Features), "feature")))
	}
	d.SetX(lx)
	d.font(sans, "", 7)
	d.SetTextColor(90, 90, 90)
	note := fmt.Sprintf("A plot under %.1f mm across is drawn as a dot at its centre.", markerPixels*mapSize/mapPixels)
	if len(b.Plots) <= overviewLabels {
		note += " Numbers are the plots' places in the batch, as the pages that follow list them."
		if unlabelled > 0 {
			note += fmt.Sprintf(" %d of them are left out, each where it would cover a number drawn before it.", unlabelled)
		}
	}
	d.MultiCell(w, 3.6, note, "", "L", false)
	d.legendNote(lx, w, v.Zoom)
	d.mapSkipped(y, skipped)
	if len(unreadable) > 0 {
		d.para(fmt.Sprintf("Not drawn: the geometry of %v cannot be read.", unreadable), 7.5)
	}
	return nil
}

// drawRank is the order the overview draws a verdict's plots in, lowest
// first.
func drawRank(status string) int {
	switch status {
	case geo.StatusHighRisk:
		return 2
	case geo.StatusFailed:
		return 1
	}
	return 0
}

// verdictColour is a verdict's colour as drawn (statusColour).
func verdictColour(status string) color.NRGBA {
	r, g, b := statusColour(status)
	return color.NRGBA{R: uint8(r), G: uint8(g), B: uint8(b), A: 255}
}

// overviewPlot draws a plot in its verdict's colour over a white halo:
// its outline lightly filled, or a dot when it is too small to see.
func (d *document) overviewPlot(g geo.Geometry, status string, at func(geo.Position) (float64, float64)) {
	pts := geometryPoints(g)
	if len(pts) == 0 {
		return
	}
	r, gr, b := statusColour(status)
	x0, y0, x1, y1 := bounds(pts, at)
	if len(g.Polygons) == 0 || max(x1-x0, y1-y0) < markerPixels*mapSize/mapPixels {
		d.SetDrawColor(255, 255, 255)
		d.SetFillColor(r, gr, b)
		d.SetLineWidth(0.35)
		if len(g.Polygons) == 0 { // points: each one
			for _, p := range pts {
				px, py := at(p)
				d.Circle(px, py, 0.9, "FD")
			}
			return
		}
		d.Circle((x0+x1)/2, (y0+y1)/2, 1.1, "FD")
		return
	}
	d.SetDrawColor(255, 255, 255)
	d.SetLineWidth(1.2)
	for _, p := range g.Polygons {
		d.path(p, at, "D")
	}
	d.SetDrawColor(r, gr, b)
	d.SetFillColor(r, gr, b)
	d.SetLineWidth(0.5)
	for _, p := range g.Polygons {
		d.SetAlpha(0.35, "Normal")
		d.path(p, at, "f*")
		d.SetAlpha(1, "Normal")
		d.path(p, at, "D")
	}
}

// box is a rectangle on the page, in millimetres.
type box struct{ x0, y0, x1, y1 float64 }

func (a box) overlaps(b box) bool { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 }

// overviewLabel writes a plot's number to the upper right of it, on a
// white ground, unless it would cover one of the labels already drawn: a
// number over another would name neither plot. It adds the label drawn to
// labels and reports whether it drew it.
func (d *document) overviewLabel(n int, pts []geo.Position, at func(geo.Position) (float64, float64), labels *[]box) bool {
	_, y0, x1, _ := bounds(pts, at)
	s := strconv.Itoa(n)
	d.font(sans, "B", 6.5)
	w := d.GetStringWidth(s) + 1
	r := box{x1 + 0.6, y0 - 3.2, x1 + 0.6 + w, y0 - 0.3}
	for _, l := range *labels {
		if l.overlaps(r) {
			return false
		}
	}
	*labels = append(*labels, r)
	d.SetFillColor(255, 255, 255)
	d.SetAlpha(0.85, "Normal")
	d.Rect(x1+0.6, y0-3.2, w, 2.9, "F")
	d.SetAlpha(1, "Normal")
	d.SetTextColor(0, 0, 0)
	d.Text(x1+1.1, y0-0.9, s)
	return true
}

// overviewOverlaps are the vector features the batch's plots overlap,
// each once, by layer in the order the plots first name them.
func overviewOverlaps(plots []Plot) []VectorOverlap {
	var out []VectorOverlap
	layer := map[string]int{}     // layer ID: its place in out
	drawn := map[[2]string]bool{} // layer and feature ID
	for _, p := range plots {
		for _, o := range p.Overlaps {
			i, ok := layer[o.LayerID]
			if !ok {
				i = len(out)
				layer[o.LayerID] = i
				out = append(out, VectorOverlap{LayerID: o.LayerID, Name: o.Name, Kind: o.Kind})
			}
			for _, f := range o.Features {
				if k := [2]string{o.LayerID, f.ID}; !drawn[k] {
					drawn[k] = true
					out[i].Features = append(out[i].Features, f)
				}
			}
		}
	}
	return out
}

// bounds is the box of pts on the page.
func bounds(pts []geo.Position, at func(geo.Position) (float64, float64)) (x0, y0, x1, y1 float64) {
	x0, y0, x1, y1 = math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range pts {
		x, y := at(p)
		x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
	}
	return x0, y0, x1, y1
}
