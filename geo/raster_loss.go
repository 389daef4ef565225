package geo

import "math"

// lossInForest combines a loss-year layer's windows with a forest-2020
// layer's on the finer of their grids and returns the pixels of that grid
// lost after the cutoff that were forest, and their hectares.
func (p *rasterPlot) lossInForest(loss, forest []rasterWindow) (pixels int, ha float64) {
	if p.g.IsPoint() {
		for _, q := range p.points {
			lv, lok := valueAt(loss, q)
			fv, fok := valueAt(forest, q)
			if lok && fok && lostPixel(lv, fv, true) {
				pixels++
				ha += p.pointHa
			}
		}
		return pixels, ha
	}
	fine, other, fineIsLoss := loss, forest, true
	if len(loss) > 0 && len(forest) > 0 && cellDeg2(forest[0].tile.Grid) < cellDeg2(loss[0].tile.Grid) {
		fine, other, fineIsLoss = forest, loss, false
	}
	visit := func(t *RasterTile, v uint8, at pt, cellHa float64) {
		if t.HasNoData && v == t.NoData {
			return
		}
		if ov, ok := valueAt(other, at); ok && lostPixel(v, ov, fineIsLoss) {
			pixels++
			ha += cellHa
		}
	}
	seen := 0
	for _, w := range fine {
		nodata, hasNoData := w.tile.NoData, w.tile.HasNoData
		scanRows(w.parts, w.tile.Grid, w.cells.of(w.tile.Grid), w.win, func(xs []int64, r scanRow) {
			px := w.px[r.y*w.win.Width : (r.y+1)*w.win.Width]
			for i := 0; i < len(r.runs); i += 2 {
				x, x1 := r.runs[i], r.runs[i+1]
				seen += x1 - x
				// The other grid's value is looked up once for the fine
				// pixels whose centres share a pixel of it.
				cur := newRowCursor(other, r.lat)
				for x < x1 {
					ov, ok, east := cur.at(xs[x])
					for ; x < x1 && xs[x] < east; x++ {
						if v := px[x]; ok && !(hasNoData && v == nodata) && lostPixel(v, ov, fineIsLoss) {
							pixels++
							ha += r.ha
						}
					}
				}
			}
		})
	}
	if seen == 0 { // a plot smaller than a pixel: a point of each part
		for _, sp := range p.samplePoints() {
			if t, v := pixelAt(fine, sp.at); t != nil {
				visit(t, v, sp.at, sp.ha)
			}
		}
	}
	return pixels, ha
}

// lostPixel reports whether a pixel of the finer grid of value v, whose
// centre is in a pixel of value ov of the other grid, is forest lost
// after the cutoff; fineIsLoss says which grid is the loss-year one.
func lostPixel(v, ov uint8, fineIsLoss bool) bool {
	lv, fv := v, ov
	if !fineIsLoss {
		lv, fv = ov, v
	}
	return lv > LossCutoffValue && fv != 0
}

// rowCursor finds the pixels among ws holding points of one latitude from
// west to east, as valueAt does, and how far east each answer holds: from
// the pixel found last it steps to the next of its window, and searches
// the windows again only where one ends or another may begin.
type rowCursor struct {
	ws []rasterWindow
	y  int64
	// The window and pixel found last (w nil: none yet, or none held the
	// point), and clip, the west edge of the nearest window before w that
	// holds pixels of the row east of the point (MaxInt64: none).
	w        *rasterWindow
	col, row int
	clip     int64
}

func newRowCursor(ws []rasterWindow, y int64) rowCursor {
	return rowCursor{ws: ws, y: y}
}

// at returns valueAt(ws, (x, y)), and east the longitude up to which (not
// included) the points east of x find the same answer. x must not
// decrease from one call to the next.
func (c *rowCursor) at(x int64) (v uint8, ok bool, east int64) {
	if w := c.w; w != nil && x < c.clip {
		// Windows before w hold no point west of clip that they did not
		// hold before; the next pixels of w's row are w's to answer.
		col := c.col
		for col < w.win.Width && w.edges.lons[col+1] <= x {
			col++
		}
		if col < w.win.Width {
			c.col = col
			return c.value(), c.valid(), min(w.edges.lons[col+1], c.clip)
		}
	}
	c.w, c.clip = nil, math.MaxInt64
	q := pt{x, c.y}
	for i := range c.ws {
		w := &c.ws[i]
		if w.edges == nil {
			w.edges = fixedGrid{w.tile.Grid}.windowEdges(w.win)
		}
		col, row, in := w.edges.pixel(q)
		if in {
			c.w, c.col, c.row = w, col, row
			return c.value(), c.valid(), min(w.edges.lons[col+1], c.clip)
		}
		// Windows before the one holding q may hold points east of it.
		if row >= 0 && row < w.win.Height && x < w.edges.lons[0] {
			c.clip = min(c.clip, w.edges.lons[0])
		}
	}
	return 0, false, c.clip
}

func (c *rowCursor) value() uint8 { return c.w.px[c.row*c.w.win.Width+c.col] }

// valid reports whether the pixel found is not nodata.
func (c *rowCursor) valid() bool {
	t := c.w.tile
	return !(t.HasNoData && c.value() == t.NoData)
}
