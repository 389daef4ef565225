package pdf

import "strings"

// table is the layout of a table whose rows may run over pages: each page
// it runs onto starts with its header again.
type table struct {
	widths []float64
	heads  []string
	aligns string // a letter a column: L, C or R
	size   float64
	lineH  float64
}

// cell is one cell of a table row: its text (lines wrap to the column,
// within fpdf's cell margins),
// in mono for hashes and IDs, in colour rgb when set.
type cell struct {
	text string
	mono bool
	rgb  *[3]int
}

// tableHeader writes the table's header row: a head's lines ("\n"
// between them) one under the other, the row as high as the most.
func (d *document) tableHeader(t table) {
	d.font(sans, "B", t.size)
	d.SetFillColor(232, 236, 242)
	d.SetX(margin)
	y := d.GetY()
	n := 1
	for _, head := range t.heads {
		n = max(n, strings.Count(head, "\n")+1)
	}
	h := float64(n)*t.lineH + 1.6
	for i, head := range t.heads {
		x := margin + sum(t.widths[:i])
		d.Rect(x, y, t.widths[i], h, "F")
		for k, line := range strings.Split(head, "\n") {
			d.SetXY(x, y+0.8+float64(k)*t.lineH)
			d.CellFormat(t.widths[i], t.lineH, line, "", 0, t.aligns[i:i+1], false, 0, "")
		}
	}
	d.SetXY(margin, y+h)
}

// tableRow writes a row, starting a new page with the header again when
// the row does not fit under the last one.
func (d *document) tableRow(t table, cells []cell) {
	lines := make([][]string, len(cells))
	n := 1
	for i, c := range cells {
		d.cellFont(t, c)
		for _, l := range strings.Split(c.text, "\n") {
			lines[i] = append(lines[i], d.SplitText(l, t.widths[i])...)
		}
		n = max(n, len(lines[i]))
	}
	h := float64(n)*t.lineH + 1.2
	if d.GetY()+h > pageH-margin-5 {
		d.AddPage()
		d.tableHeader(t)
	}
	y := d.GetY()
	for i, c := range cells {
		d.cellFont(t, c)
		if c.rgb != nil {
			d.SetTextColor(c.rgb[0], c.rgb[1], c.rgb[2])
		}
		for k, l := range lines[i] {
			d.SetXY(margin+sum(t.widths[:i]), y+0.6+float64(k)*t.lineH)
			d.CellFormat(t.widths[i], t.lineH, l, "", 0, t.aligns[i:i+1], false, 0, "")
		}
		d.SetTextColor(0, 0, 0)
	}
	d.SetDrawColor(200, 200, 200)
	d.SetLineWidth(0.2)
	d.Line(margin, y+h, margin+sum(t.widths), y+h)
	d.SetXY(margin, y+h)
}

func (d *document) cellFont(t table, c cell) {
	if c.mono { // a size smaller: mono is wider
		d.font(mono, "", t.size-1)
	} else {
		d.font(sans, "", t.size)
	}
}

// fit is s cut with an ellipsis to fit a cell w millimetres wide (its
// margins left out) in the current font.
func (d *document) fit(s string, w float64) string {
	w -= 2 * d.GetCellMargin()
	if d.GetStringWidth(s) <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && d.GetStringWidth(string(r)+"…") > w {
		r = r[:len(r)-1]
	}
	return string(r) + "…"
}

func sum(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s
}
