package geo

import (
	"context"
	"fmt"
	"slices"

	"github.com/peterstace/simplefeatures/geom"

	"github.com/eudr/eudr/geo/geotiff"
)

// Kinds of raster reference layer: folders of single-band uint8 GeoTIFF
// tiles, such as the satellite datasets EUDR screening uses.
const (
	// Forest2020 is a forest mask as it stood at the end of 2020 (the JRC
	// Global Forest Cover 2020 map): a pixel is forest when its value is
	// not 0.
	Forest2020 LayerKind = "forest-2020"
	// LossYear is the year of forest loss (the Hansen/UMD Global Forest
	// Change lossyear layer): 0 is no loss, k is loss in the year 2000+k.
	LossYear LayerKind = "loss-year"
	// Alerts is a disturbance alert raster (RADD, GLAD): a pixel is an
	// alert when its value is not 0.
	Alerts LayerKind = "alerts"
)

// CutoffDate is the EUDR cutoff: forest lost after it makes a product
// non-compliant.
const CutoffDate = "2020-12-31"

// LossCutoffValue is the last loss-year value before the EUDR cutoff
// 2020-12-31: a loss-year pixel above it was lost after the cutoff.
const LossCutoffValue = 20

// IsRaster reports whether layers of kind k are GeoTIFF tiles rather than
// vector features.
func (k LayerKind) IsRaster() bool { return k == Forest2020 || k == LossYear || k == Alerts }

// RasterLayer is a reference layer of GeoTIFF tiles. Its tiles must not
// overlap each other (a dataset's 10 x 10 degree grid does not).
type RasterLayer struct {
	ID      string
	Name    string
	Kind    LayerKind // Forest2020, LossYear or Alerts
	Version string
	Source  string
	SHA256  string // hex SHA-256 of the layer's tile list as imported
	Tiles   []RasterTile

	// cells are the rows' cell areas of the tiles' grids, as plots need
	// them.
	cells cellAreaTables
}

// RasterTile is one GeoTIFF of a raster layer: its name, its grid, its
// nodata value and a reader of its pixels (which may open the file when
// first read).
type RasterTile struct {
	Name      string
	Grid      geotiff.Georef
	NoData    uint8
	HasNoData bool
	Reader    RasterReader
}

// RasterResult is what one raster layer says of a plot.
type RasterResult struct {
	LayerID string
	Kind    LayerKind
	// Covered reports whether the layer has data for the whole plot: the
	// plot lies inside its tiles and none of its pixels is nodata.
	Covered bool
	// Tiles are the names of the tiles read for the plot, sorted: those
	// holding a point of the bounding box of one of its polygons, edges
	// included (a tile whose west or north edge the plot only touches
	// holds the pixels a finer layer's centres on that side take their
	// value from).
	Tiles []string
	// Stats counts the plot's pixels by value on the layer's own grid. A
	// polygon that holds no pixel centre at all (a plot smaller than a
	// pixel, or a thin one) is counted as the pixel under a point inside
	// each of its parts, with the part's area, and Sampled is true.
	Stats   PixelStats
	Sampled bool
	// Ha is what the layer measures on the plot, on its own grid: forest
	// for Forest2020, loss after the cutoff (wherever it is) for LossYear,
	// alerts for Alerts. Pct is Ha as a share of the plot, 0-100.
	Ha, Pct float64
}

// LossInForest is forest standing in 2020 and lost after the cutoff: the
// pixels of a loss-year layer above LossCutoffValue that a forest-2020
// layer marks as forest. The two grids are combined on the finer one: each
// of its pixels whose centre is in the plot takes the other layer's value
// at that centre; a centre on an edge between two of the other layer's
// pixels takes the one east or south of it, inside the plot or not.
type LossInForest struct {
	LossLayerID string
	// ForestLayerID is the forest-2020 layer used, or "" when none covers
	// the plot: loss after the cutoff then counts wherever it is, since
	// a plot must not pass for want of a forest map.
	ForestLayerID string
	// Pixels is the number of pixels counted, of the finer grid (of the
	// loss-year grid without a forest layer).
	Pixels int
	Ha     float64
	Pct    float64 // of the plot, 0-100
}

// WithRasters returns a copy of ix that also screens against raster
// layers, after those ix has, in that order. Nil layers are skipped.
func (ix *Index) WithRasters(layers ...*RasterLayer) *Index {
	out := &Index{layers: ix.layers, features: ix.features, coverage: ix.coverage, rasters: slices.Clone(ix.rasters), borders: ix.borders}
	for _, l := range layers {
		if l != nil {
			out.rasters = append(out.rasters, l)
		}
	}
	return out
}

// Rasters returns the raster layers in the order Screen reports them.
func (ix *Index) Rasters() []*RasterLayer { return append([]*RasterLayer(nil), ix.rasters...) }

// rasterWindow is the pixels of one tile under a plot: for a polygon, the
// window of the bounding boxes of some of its parts (parts), for a point,
// one pixel.
type rasterWindow struct {
	tile  *RasterTile
	win   geotiff.Window
	px    []uint8
	parts []fixedPolygon  // the parts whose pixels are all in the window
	cells *cellAreaTables // the layer's
	// edges are made by the first value: a finer grid looks up a pixel
	// here for each of its own.
	edges *windowEdges
}

// value returns the pixel of the window that holds q, and false if none
// does, by the rule of fixedGrid.pixel.
func (w *rasterWindow) value(q pt) (uint8, bool) {
	if w.edges == nil {
		w.edges = fixedGrid{w.tile.Grid}.windowEdges(w.win)
	}
	col, row, ok := w.edges.pixel(q)
	if !ok {
		return 0, false
	}
	return w.px[row*w.win.Width+col], true
}

// pixelAt returns the pixel holding q among ws and its tile; t is nil
// when no window holds it.
func pixelAt(ws []rasterWindow, q pt) (t *RasterTile, v uint8) {
	for i := range ws {
		if v, in := ws[i].value(q); in {
			return ws[i].tile, v
		}
	}
	return nil, 0
}

// valueAt returns the pixel holding q among ws; ok is false when no
// window holds it or the pixel is nodata.
func valueAt(ws []rasterWindow, q pt) (v uint8, ok bool) {
	t, v := pixelAt(ws, q)
	return v, t != nil && !(t.HasNoData && v == t.NoData)
}

// rasterPlot is a plot being measured against raster layers.
type rasterPlot struct {
	g       Geometry
	pointHa float64
	plotHa  float64
	parts   []plotPart // of a polygon plot
	points  []pt       // the points of a point plot in half nano-degrees
	shape   geom.Geometry
	samples []samplePoint // of a plot smaller than a pixel, when needed
}

// plotPart is a part of a polygon plot and its bounding box. Pixels are
// read part by part: the box of a whole MultiPolygon may be far larger
// than its parts (two halves of a plot split at 180° span the globe).
type plotPart struct {
	lo, hi   [2]float64 // in degrees
	flo, fhi pt         // in half nano-degrees
	fixed    fixedPolygon
}

// newRasterPlot prepares plot g for measuring; false for a polygon plot
// without a ring.
func newRasterPlot(g Geometry, pointHa, plotHa float64) (*rasterPlot, bool) {
	p := &rasterPlot{g: g, pointHa: pointHa, plotHa: plotHa}
	if g.IsPoint() {
		for _, q := range g.Points {
			p.points = append(p.points, fixedPoint(q[0], q[1]))
		}
		return p, true
	}
	fixed := fixPolygons(g.Polygons)
	for i, poly := range g.Polygons {
		lo, hi, ok := bbox([]Polygon{poly})
		if !ok {
			continue
		}
		p.parts = append(p.parts, plotPart{lo: lo, hi: hi,
			flo: fixedPoint(lo[0], lo[1]), fhi: fixedPoint(hi[0], hi[1]), fixed: fixed[i]})
	}
	return p, len(p.parts) > 0
}

// screenRasters measures the plot against every raster layer and combines
// the forest-2020 and loss-year layers. loss is nil when no loss-year layer
// covers the plot; with several, it is the largest.
func (ix *Index) screenRasters(ctx context.Context, g Geometry, pointHa, plotHa float64) ([]RasterResult, *LossInForest, error) {
	if len(ix.rasters) == 0 {
		return nil, nil, nil
	}
	p, ok := newRasterPlot(g, pointHa, plotHa)
	if !ok {
		return nil, nil, nil
	}
	results := make([]RasterResult, len(ix.rasters))
	windows := make([][]rasterWindow, len(ix.rasters))
	for i, l := range ix.rasters {
		ws, inside, err := p.read(ctx, l)
		if err != nil {
			return nil, nil, fmt.Errorf("raster layer %q: %w", l.Name, err)
		}
		windows[i] = ws
		results[i] = p.measure(l, ws, inside)
	}

	// The newest forest-2020 layer that covers the plot is its forest map.
	forest := -1
	for i, r := range results {
		if r.Kind == Forest2020 && r.Covered {
			forest = i
		}
	}
	var loss *LossInForest
	for i, r := range results {
		if r.Kind != LossYear || !r.Covered {
			continue
		}
		lf := LossInForest{LossLayerID: r.LayerID}
		if forest < 0 {
			lf.Pixels, lf.Ha = r.Stats.from(LossCutoffValue + 1)
		} else {
			lf.ForestLayerID = results[forest].LayerID
			lf.Pixels, lf.Ha = p.lossInForest(windows[i], windows[forest])
		}
		lf.Pct = pct(lf.Ha, plotHa)
		if loss == nil || lf.Ha > loss.Ha {
			loss = &lf
		}
	}
	return results, loss, nil
}

// read reads the pixels of l's tiles under the plot. inside reports
// whether the plot lies wholly inside the tiles.
func (p *rasterPlot) read(ctx context.Context, l *RasterLayer) (ws []rasterWindow, inside bool, err error) {
	if p.g.IsPoint() {
		inside = true
		for _, q := range p.points {
			t, col, row := tileAt(l, q)
			if t == nil {
				inside = false
				continue
			}
			w, err := readWindow(ctx, t, geotiff.Window{Col: col, Row: row, Width: 1, Height: 1})
			if err != nil {
				return nil, false, err
			}
			ws = append(ws, w)
		}
		return ws, inside, nil
	}
	var rects []geom.Geometry
	tilesDeg2 := make([]float64, len(p.parts)) // each part's box's area inside tiles, in square degrees
	var wins []partsWindow
	for i := range l.Tiles {
		t := &l.Tiles[i]
		b := t.Grid.Bounds()
		fg := fixedGrid{t.Grid}
		meets := false
		wins = wins[:0]
		for j, part := range p.parts {
			w, s, e, n := max(b.West, part.lo[0]), max(b.South, part.lo[1]), min(b.East, part.hi[0]), min(b.North, part.hi[1])
			if w > e+t.Grid.DX || s > n+t.Grid.DY {
				// Clear of the box. Within a pixel of it, the exact window
				// below decides: in float64 a tile the box touches may seem
				// a hair away.
				continue
			}
			if w <= e && s <= n {
				tilesDeg2[j] += (e - w) * (n - s)
				meets = true
			}
			// The pixels holding a point of the box, edges included: a
			// tile that the box's east or south side only touches still
			// has the pixels a finer grid's centres on that side fall in.
			if win := fg.window(part.flo, part.fhi); !win.Empty() {
				wins = append(wins, partsWindow{win: win, parts: []int{j}})
			}
		}
		if meets {
			rects = append(rects, rectGeom(b))
		}
		for _, pw := range mergeWindows(wins) {
			rw, err := readWindow(ctx, t, pw.win)
			if err != nil {
				return nil, false, err
			}
			rw.cells = &l.cells
			for _, j := range pw.parts {
				rw.parts = append(rw.parts, p.parts[j].fixed)
			}
			ws = append(ws, rw)
		}
	}
	// Tiles do not overlap, so their parts of a box add up to the box
	// when they cover it; otherwise the plot itself may still lie inside
	// them (a plot in the inner corner of an L of tiles).
	inside = len(rects) > 0
	for j, part := range p.parts {
		if tilesDeg2[j] < (part.hi[0]-part.lo[0])*(part.hi[1]-part.lo[1])*(1-1e-12) {
			inside = false
		}
	}
	if !inside && len(rects) > 0 {
		inside = p.insideRects(rects)
	}
	return ws, inside, nil
}

// partsWindow is a window of a tile that holds the pixels of the plot's
// parts numbered parts.
type partsWindow struct {
	win   geotiff.Window
	parts []int
}

// mergeWindows replaces windows that share a pixel with the window round
// both, until no two do: each pixel is then read, and counted, once.
// Windows apart stay apart, so that the pixels read are those of the
// parts' boxes and of the gaps between parts close together, not of the
// box round all of them.
func mergeWindows(ws []partsWindow) []partsWindow {
	for {
		// Sorted by first column, a window can only share a pixel with
		// those after it that start before it ends.
		slices.SortFunc(ws, func(a, b partsWindow) int { return a.win.Col - b.win.Col })
		merged := false
		for i := 0; i < len(ws); i++ {
			a := &ws[i].win
			for j := i + 1; j < len(ws) && ws[j].win.Col < a.Col+a.Width; {
				b := ws[j].win
				if b.Row >= a.Row+a.Height || a.Row >= b.Row+b.Height {
					j++
					continue
				}
				c1, r1 := max(a.Col+a.Width, b.Col+b.Width), max(a.Row+a.Height, b.Row+b.Height)
				a.Row = min(a.Row, b.Row)
				a.Width, a.Height = c1-a.Col, r1-a.Row
				ws[i].parts = append(ws[i].parts, ws[j].parts...)
				ws = slices.Delete(ws, j, j+1)
				merged = true
			}
		}
		if !merged {
			return ws
		}
	}
}

// insideRects reports whether the polygon plot lies inside the union of
// rects, up to the slack coverage allows.
func (p *rasterPlot) insideRects(rects []geom.Geometry) bool {
	if p.shape.IsEmpty() {
		shape, _, _, ok := toGeom(p.g.Polygons)
		if !ok {
			return false
		}
		p.shape = shape
	}
	u, err := geom.UnionMany(rects)
	if err != nil {
		return false
	}
	out, err := geom.Difference(p.shape, u)
	return err == nil && areaOf(out) <= coverageSlackHa
}

func rectGeom(b geotiff.Bounds) geom.Geometry {
	return geom.Envelope{}.ExpandToIncludeXY(geom.XY{X: b.West, Y: b.South}).
		ExpandToIncludeXY(geom.XY{X: b.East, Y: b.North}).AsGeometry()
}

// tileAt returns the tile of l holding q and the pixel there, or nil.
func tileAt(l *RasterLayer, q pt) (t *RasterTile, col, row int) {
	for i := range l.Tiles {
		if col, row, ok := (fixedGrid{l.Tiles[i].Grid}).pixel(q); ok {
			return &l.Tiles[i], col, row
		}
	}
	return nil, 0, 0
}

func readWindow(ctx context.Context, t *RasterTile, w geotiff.Window) (rasterWindow, error) {
	px := make([]uint8, w.Width*w.Height)
	if err := t.Reader.ReadWindow(ctx, w, px); err != nil {
		return rasterWindow{}, fmt.Errorf("tile %s: %w", t.Name, err)
	}
	return rasterWindow{tile: t, win: w, px: px}, nil
}

// measure counts the plot's pixels in ws on l's grid.
func (p *rasterPlot) measure(l *RasterLayer, ws []rasterWindow, inside bool) RasterResult {
	r := RasterResult{LayerID: l.ID, Kind: l.Kind}
	for _, w := range ws {
		r.Tiles = append(r.Tiles, w.tile.Name)
	}
	r.Tiles = sortedIDs(r.Tiles)
	count := func(t *RasterTile, v uint8, ha float64) {
		r.Stats.count(v, ha, t.HasNoData && v == t.NoData)
	}
	if p.g.IsPoint() {
		for _, q := range p.points {
			if t, v := pixelAt(ws, q); t != nil {
				count(t, v, p.pointHa)
			}
		}
	} else {
		for _, w := range ws {
			nodata, hasNoData := w.tile.NoData, w.tile.HasNoData
			scanRows(w.parts, w.tile.Grid, w.cells.of(w.tile.Grid), w.win, func(_ []int64, row scanRow) {
				px := w.px[row.y*w.win.Width : (row.y+1)*w.win.Width]
				for i := 0; i < len(row.runs); i += 2 {
					for _, v := range px[row.runs[i]:row.runs[i+1]] {
						r.Stats.count(v, row.ha, hasNoData && v == nodata)
					}
				}
			})
		}
		if n, _ := r.Stats.Total(); n == 0 {
			for _, sp := range p.samplePoints() {
				if t, v := pixelAt(ws, sp.at); t != nil {
					count(t, v, sp.ha)
					r.Sampled = true
				}
			}
		}
	}
	r.Covered = inside && r.Stats.NoDataPixels == 0
	switch l.Kind {
	case Forest2020, Alerts:
		_, r.Ha = r.Stats.from(1)
	case LossYear:
		_, r.Ha = r.Stats.from(LossCutoffValue + 1)
	}
	r.Pct = pct(r.Ha, p.plotHa)
	return r
}

// samplePoint stands for a part of a plot that holds no pixel centre: a
// point inside it, in half nano-degrees, and the part's area.
type samplePoint struct {
	at pt
	ha float64
}

// samplePoints returns, for a polygon plot that holds no pixel centre, a
// point inside each part (not the centre of its bounding box, which an L
// or a MultiPolygon may not contain) with the part's area: each part is
// then measured as the pixel its point falls in.
func (p *rasterPlot) samplePoints() []samplePoint {
	if p.samples != nil {
		return p.samples
	}
	p.samples = []samplePoint{}
	for _, part := range p.g.Polygons {
		g, _, _, ok := toGeom([]Polygon{part})
		if !ok {
			continue
		}
		pt, ok := g.PointOnSurface().XY()
		if !ok {
			continue
		}
		p.samples = append(p.samples, samplePoint{at: fixedPoint(pt.X, pt.Y), ha: areaOf(g)})
	}
	return p.samples
}

// cellDeg2 is a grid's pixel size in square degrees.
func cellDeg2(g geotiff.Georef) float64 { return g.DX * g.DY }

// from returns the pixels and hectares of values v and above.
func (s *PixelStats) from(v int) (pixels int, ha float64) {
	for ; v < len(s.Pixels); v++ {
		pixels += s.Pixels[v]
		ha += s.Ha[v]
	}
	return pixels, ha
}
