package pdf

import (
	"fmt"
	"strconv"
	"strings"

	qr "github.com/piglig/go-qr"

	"github.com/eudr/eudr/server/anchor"
)

// qrSize is the side of the ledger QR code on the page in millimetres:
// a checkpoint makes a code of some 70 modules, 0.5 mm each, which a
// phone reads from print.
const qrSize = 42.0

// ledgerQRText is what the QR code carries: the entry's index and leaf
// hash, then the signed checkpoint note that proves it, as given to
// `eudr ledger verify --checkpoint`.
func ledgerQRText(l *anchor.DocumentLedger) string {
	return fmt.Sprintf("eudr ledger entry %d\nleaf %s\n\n%s", l.Index, l.TransactionHash, l.Checkpoint)
}

// plotLedger writes the ledger entry that anchors the evidence, its
// inclusion proof and signed checkpoint, how to check them offline and a
// QR code carrying the leaf hash and the checkpoint.
func (d *document) plotLedger(l *anchor.DocumentLedger) {
	d.AddPage()
	d.heading("Ledger: proof that the evidence was not changed", 60)
	if l == nil {
		d.para("The plot has no ledger entry: it was screened before the ledger recorded screenings.", 8.5)
		return
	}
	d.ledgerEntry(l)
	d.heading("How to verify offline", qrSize+10)
	top := d.GetY()
	d.qr(pageW-margin-qrSize, top, ledgerQRText(l))
	d.SetXY(margin, top)
	steps := []string{
		"1. The evidence document (GET /polygons/{id}/evidence) without its \"ledger\" member, with its keys sorted and no whitespace, hashes (SHA-256) to the evidenceSha256 recorded in the entry; the entry's bytes (the \"data\" member, base64) hash as SHA-256(0x00 || entry) to the leaf hash above.",
		"2. The inclusion proof, hashed from the leaf up as RFC 6962 does (SHA-256(0x01 || left || right)), gives the root hash above, which the signed checkpoint names for its tree size.",
		"3. The checkpoint's signature checks with the appliance's verifier key (GET /ledger/public-key; a golang.org/x/mod/sumdb/note key).",
		"4. POST /evidence/verify takes the evidence document back and checks each step. On the appliance's stopped data directory, `eudr ledger verify --key VERIFIER_KEY --checkpoint FILE` checks the whole log and that it still matches this checkpoint: FILE may hold the signed note above, or the evidence document.",
		"The QR code carries the entry index, the leaf hash and the signed checkpoint.",
	}
	d.font(sans, "", 8.5)
	for _, s := range steps {
		d.SetX(margin)
		d.MultiCell(contentW-qrSize-6, 4.2, s, "", "L", false)
		d.Ln(1)
	}
}

// ledgerEntry writes a ledger entry's index and leaf hash, its inclusion
// proof and the signed checkpoint the proof leads to.
func (d *document) ledgerEntry(l *anchor.DocumentLedger) {
	d.field("Entry index", strconv.FormatInt(l.Index, 10), false)
	d.field("Leaf hash", l.TransactionHash, true)
	d.field("Tree size", strconv.FormatInt(l.TreeSize, 10), false)
	d.field("Root hash", l.RootHash, true)
	d.Ln(1)
	d.font(sans, "B", 8.5)
	d.CellFormat(contentW, 4.8, fmt.Sprintf("Inclusion proof (%d hashes, leaf to root)", len(l.Proof)), "", 1, "L", false, 0, "")
	d.font(mono, "", 7.5)
	for i, h := range l.Proof {
		d.CellFormat(contentW, 3.9, fmt.Sprintf("%2d  %s", i+1, h), "", 1, "L", false, 0, "")
	}
	d.Ln(1)
	d.font(sans, "B", 8.5)
	d.CellFormat(contentW, 4.8, "Signed checkpoint", "", 1, "L", false, 0, "")
	// 7 pt mono fits a signature line (some 100 characters) on one line.
	d.font(mono, "", 7)
	d.SetFillColor(244, 244, 244)
	d.MultiCell(contentW, 3.7, strings.TrimRight(l.Checkpoint, "\n"), "", "L", true)
}

// qr draws text as a QR code qrSize wide at x, y, module by module (as
// vector squares, sharp at any print size), with a caption under it.
func (d *document) qr(x, y float64, text string) {
	bits, err := qrModules(text)
	if err != nil {
		d.SetXY(x, y)
		d.para("QR code: "+err.Error(), 7)
		return
	}
	n := len(bits)
	const quiet = 4
	m := qrSize / float64(n+2*quiet)
	d.SetFillColor(255, 255, 255)
	d.Rect(x, y, qrSize, qrSize, "F")
	d.SetFillColor(0, 0, 0)
	// A rectangle a run of dark modules in a row, not one a module: a
	// third of the drawing operators, which a batch's report holds one
	// page of for each plot until it is written out.
	for r, row := range bits {
		for c := 0; c < len(row); {
			if !row[c] {
				c++
				continue
			}
			run := 1
			for c+run < len(row) && row[c+run] {
				run++
			}
			d.Rect(x+float64(c+quiet)*m, y+float64(r+quiet)*m, float64(run)*m+0.01, m+0.01, "F")
			c += run
		}
	}
	d.font(sans, "", 6.5)
	d.SetXY(x, y+qrSize)
	d.MultiCell(qrSize, 3, "Leaf hash and signed checkpoint", "", "C", false)
}

// qrModules encodes text as a QR code at error correction level M and
// returns its modules, row by row, dark true. The encoder scores the
// eight masks in turn and keeps the first of the lowest: the same text
// gives the same code, so the same report the same bytes.
func qrModules(text string) ([][]bool, error) {
	code, err := qr.EncodeText(text, qr.Medium)
	if err != nil {
		return nil, err
	}
	bits := make([][]bool, code.Size())
	for y := range bits {
		bits[y] = make([]bool, code.Size())
		for x := range bits[y] {
			bits[y][x] = code.Module(x, y)
		}
	}
	return bits, nil
}
