// Package pdf renders the appliance's records as PDF documents an auditor
// can read, print and file: a plot's report (Plot) with its map, figures,
// datasets, rules and ledger proof. Documents are deterministic: the same
// record gives the same bytes (dates from the record, fonts embedded from
// this package, objects in a fixed order), so a report's SHA-256 can be
// recorded and checked later.
package pdf

import (
	"bytes"
	_ "embed"
	"fmt"
	"time"

	"github.com/go-pdf/fpdf"
)

// The fonts are DejaVu (fonts/LICENSE), embedded so that the binary needs
// no system fonts: UTF-8 TrueType, as fpdf needs for names beyond
// Latin-1; mono for hashes, where 0 and O, 1 and l must differ.
var (
	//go:embed fonts/DejaVuSans.ttf
	fontSans []byte
	//go:embed fonts/DejaVuSans-Bold.ttf
	fontSansBold []byte
	//go:embed fonts/DejaVuSansMono.ttf
	fontMono []byte
)

// Font families as registered.
const (
	sans = "DejaVuSans"
	mono = "DejaVuSansMono"
)

// Page geometry of A4 portrait, in millimetres.
const (
	pageW    = 210.0
	pageH    = 297.0
	margin   = 15.0
	contentW = pageW - 2*margin
)

// document is an fpdf document with the report's fonts, footer and fixed
// metadata.
type document struct {
	*fpdf.Fpdf
	// images counts the images registered: each is made a pixel wider
	// than the one before (mapImage), as fpdf orders images by width alone.
	images int
}

// newDocument starts an A4 document dated at (the record's time, not the
// clock's) whose pages are footed with footer and their number.
func newDocument(title, footer string, at time.Time) *document {
	f := fpdf.New("P", "mm", "A4", "")
	f.SetMargins(margin, margin, margin)
	f.SetAutoPageBreak(true, margin+5)
	// Each document gets its own copy of the fonts: fpdf writes into the
	// bytes it is given while it cuts a font's subset, and a font changed
	// by one document would change the bytes of the next.
	f.AddUTF8FontFromBytes(sans, "", bytes.Clone(fontSans))
	f.AddUTF8FontFromBytes(sans, "B", bytes.Clone(fontSansBold))
	f.AddUTF8FontFromBytes(mono, "", bytes.Clone(fontMono))
	// Determinism: fixed dates, objects in a sorted order, compression on
	// (its output depends on the input only).
	f.SetCatalogSort(true)
	f.SetCreationDate(at)
	f.SetModificationDate(at)
	f.SetCompression(true)
	f.SetTitle(title, true)
	f.SetCreator("eudr", true)
	f.SetProducer("eudr", true)
	f.AliasNbPages("{nb}")
	d := &document{Fpdf: f}
	f.SetFooterFunc(func() {
		f.SetY(-margin)
		d.font(sans, "", 7.5)
		f.SetTextColor(110, 110, 110)
		f.CellFormat(contentW*0.8, 4, footer, "", 0, "L", false, 0, "")
		f.CellFormat(contentW*0.2, 4, fmt.Sprintf("page %d of {nb}", f.PageNo()), "", 0, "R", false, 0, "")
		f.SetTextColor(0, 0, 0)
	})
	return d
}

// bytes is the finished document.
func (d *document) bytes() ([]byte, error) {
	var b bytes.Buffer
	if err := d.Output(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (d *document) font(family, style string, size float64) { d.SetFont(family, style, size) }

// heading writes a section heading with a rule under it, on a new page
// when less than need millimetres are left under it.
func (d *document) heading(text string, need float64) {
	if d.GetY()+need > pageH-margin-5 {
		d.AddPage()
	}
	d.Ln(3)
	d.font(sans, "B", 11.5)
	d.SetTextColor(20, 50, 90)
	d.CellFormat(contentW, 6.5, text, "", 1, "L", false, 0, "")
	x, y := d.GetXY()
	d.SetDrawColor(20, 50, 90)
	d.SetLineWidth(0.3)
	d.Line(x, y, x+contentW, y)
	d.SetTextColor(0, 0, 0)
	d.Ln(1.5)
}

// field writes a label and its value on one line (the value wraps);
// hashes and identifiers are written in mono.
func (d *document) field(label, value string, isMono bool) {
	const labelW = 48.0
	// A new page here, not in the label's cell: the value is written at
	// the label's height, which must be on the page the label is.
	if d.GetY()+4.6 > pageH-margin-5 {
		d.AddPage()
	}
	d.font(sans, "", 8.5)
	d.SetTextColor(90, 90, 90)
	y := d.GetY()
	d.CellFormat(labelW, 4.6, label, "", 0, "L", false, 0, "")
	d.SetTextColor(0, 0, 0)
	if isMono {
		d.font(mono, "", 8)
	} else {
		d.font(sans, "", 8.5)
	}
	d.SetXY(margin+labelW, y)
	d.MultiCell(contentW-labelW, 4.6, value, "", "L", false)
}

// para writes a paragraph of body text.
func (d *document) para(text string, size float64) {
	d.font(sans, "", size)
	d.MultiCell(contentW, size*0.5, text, "", "L", false)
}

// thisPDF closes a document with how to check the file itself: the
// appliance records its SHA-256 in the ledger when it first makes it
// (Source.Record), which the document cannot hold.
func (d *document) thisPDF() {
	d.heading("Checking this document", 20)
	d.para("This PDF's SHA-256 was recorded in the appliance's ledger (a report.generated entry) when these bytes were first made. "+
		"Send the file to POST /reports/verify to find that entry with its inclusion proof and signed checkpoint; "+
		"a copy changed in any way is not found.", 8.5)
}
