package pdf

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/storage"
)

// statementHistory writes the statement's status history: each change,
// when, by whom, its note and its ledger entry.
func (d *document) statementHistory(s *storage.DDS) {
	d.heading("Status history", 12+8*float64(min(len(s.History), 4)))
	rows := make([][]string, len(s.History))
	for i, c := range s.History {
		entry := "none"
		if c.LedgerIndex != nil {
			entry = strconv.FormatInt(*c.LedgerIndex, 10)
		}
		rows[i] = []string{storage.FormatTime(c.At), c.Status, c.Actor, entry, c.Note}
	}
	d.stmtTable([]stmtColumn{{"Time (UTC)", 39, true}, {"Status", 22, false}, {"Actor", 48, true},
		{"Entry", 15, false}, {"Note", 56, false}}, rows)
}

// statementLedger writes the dds.status ledger entry of each change of
// the history, with its bytes and inclusion proof, the checkpoint they are
// proved in, and how to check them offline.
func (d *document) statementLedger(p dds.Proved) {
	d.heading("Ledger: proof of each status change", 60)
	if len(p.Entries) == 0 {
		d.para("The statement's history has no ledger entry.", 8.5)
		return
	}
	d.para("Each change of the statement's status appended a dds.status entry to the appliance's ledger, "+
		"naming the statement, the status, the actor and the statement's SHA-256, and the appliance signed a checkpoint "+
		"of the ledger with it. Each entry is proved below in the checkpoint signed with the last of them.", 8.5)
	d.Ln(1)
	statusOf := map[int64]string{}
	for _, c := range p.DDS.History {
		if c.LedgerIndex != nil {
			statusOf[*c.LedgerIndex] = c.Status
		}
	}
	for _, e := range p.Entries {
		data, err := base64.StdEncoding.DecodeString(e.Data)
		if err != nil {
			data = []byte("(not base64: " + err.Error() + ")")
		}
		if d.GetY()+30+3.9*float64(len(e.Proof)) > pageH-margin-5 {
			d.AddPage()
		}
		d.font(sans, "B", 8.5)
		d.CellFormat(contentW, 5, "Entry "+strconv.FormatInt(e.Index, 10)+" · "+statusOf[e.Index], "", 1, "L", false, 0, "")
		d.field("Entry bytes", string(data), true)
		d.field("Leaf hash", e.TransactionHash, true)
		d.field("Inclusion proof", proofLines(e.Proof), true)
		d.Ln(1.5)
	}
	last := p.Entries[len(p.Entries)-1]
	d.heading("Checkpoint", 40)
	d.field("Tree size", strconv.FormatInt(last.TreeSize, 10), false)
	d.field("Root hash", last.RootHash, true)
	d.Ln(1)
	d.font(sans, "B", 8.5)
	d.CellFormat(contentW, 4.8, "Signed checkpoint", "", 1, "L", false, 0, "")
	d.font(mono, "", 7)
	d.SetFillColor(244, 244, 244)
	d.MultiCell(contentW, 3.7, strings.TrimRight(p.Checkpoint, "\n"), "", "L", true)

	// The steps and the QR code on one page: some 80 mm.
	d.heading("How to verify offline", qrSize+40)
	top := d.GetY()
	d.qr(pageW-margin-qrSize, top, ledgerQRText(&last))
	d.SetXY(margin, top)
	steps := []string{
		"1. The statement's JSON (the \"statement\" member of GET /declarations/dds/{ddsId}, or its line of an archive's dds.jsonl) hashes (SHA-256) to the statementSha256 each entry names.",
		"2. An entry's bytes hash as SHA-256(0x00 || bytes) to its leaf hash; its inclusion proof, hashed from the leaf up as RFC 6962 does (SHA-256(0x01 || left || right)), gives the root hash above, which the signed checkpoint names for its tree size. GET /ledger/entries/{index} serves an entry's bytes.",
		"3. The checkpoint's signature checks with the appliance's verifier key (GET /ledger/public-key).",
		"4. On the appliance's stopped data directory, `eudr ledger verify --key VERIFIER_KEY --checkpoint FILE` checks the whole log and that it still matches this checkpoint (FILE holding the signed note above).",
		fmt.Sprintf("The QR code carries the last entry's index (%d) and leaf hash and the signed checkpoint.", last.Index),
	}
	d.font(sans, "", 8.5)
	for _, s := range steps {
		d.SetX(margin)
		d.MultiCell(contentW-qrSize-6, 4.2, s, "", "L", false)
		d.Ln(1)
	}
	d.SetY(max(d.GetY(), top+qrSize+6))
}

// proofLines is an inclusion proof's hashes, one a line, numbered from the
// leaf up.
func proofLines(proof []string) string {
	if len(proof) == 0 {
		return "(none: the entry is the whole tree)"
	}
	lines := make([]string, len(proof))
	for i, h := range proof {
		lines[i] = fmt.Sprintf("%2d %s", i+1, h)
	}
	return strings.Join(lines, "\n")
}

// stmtColumn is a column of a statement report's table: its header, width
// in millimetres, and whether its values are identifiers, written in mono.
type stmtColumn struct {
	header string
	width  float64
	mono   bool
}

// stmtTable writes rows under a header as a table (table.go): each cell
// wraps within its column, and a row that does not fit on the page goes
// to the next, under the header again.
func (d *document) stmtTable(cols []stmtColumn, rows [][]string) {
	t := table{size: 8, lineH: 4}
	for _, c := range cols {
		t.widths, t.heads, t.aligns = append(t.widths, c.width), append(t.heads, c.header), t.aligns+"L"
	}
	d.tableHeader(t)
	cells := make([]cell, len(cols))
	for _, row := range rows {
		for i, c := range cols {
			cells[i] = cell{text: row[i], mono: c.mono}
		}
		d.tableRow(t, cells)
	}
	d.Ln(1)
}
