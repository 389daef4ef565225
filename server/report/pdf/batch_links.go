package pdf

import (
	"encoding/base64"
	"strings"

	"github.com/eudr/eudr/storage"
)

// batchLinks writes the batch's shipment links, each with the ledger
// transaction that anchors it, its proof, and how to verify it offline.
func (d *document) batchLinks(links []Link) {
	d.heading("Shipment link and ledger transaction", 30)
	if len(links) == 0 {
		d.para("No shipment is linked to the batch.", 8.5)
		return
	}
	for _, l := range links {
		d.batchLink(l.Link)
		if l.Ledger == nil {
			d.para("The link is "+l.Link.Status+": it has no ledger transaction.", 8.5)
			continue
		}
		d.heading("Ledger transaction of shipment "+l.Link.ShipmentID, 70)
		d.ledgerEntry(l.Ledger)
		if data, err := base64.StdEncoding.DecodeString(l.Ledger.Data); err == nil {
			d.Ln(1)
			d.font(sans, "B", 8.5)
			d.CellFormat(contentW, 4.8, "The entry as anchored (its bytes hash to the leaf hash)", "", 1, "L", false, 0, "")
			d.font(mono, "", 7)
			d.SetFillColor(244, 244, 244)
			d.MultiCell(contentW, 3.7, string(data), "", "L", true)
		}
		if d.GetY()+qrSize+8 > pageH-margin-5 {
			d.AddPage()
		}
		d.Ln(3)
		top := d.GetY()
		d.qr(pageW-margin-qrSize, top, ledgerQRText(l.Ledger))
		d.SetXY(margin, top)
		d.font(sans, "", 8.5)
		for _, s := range []string{
			"The entry's bytes hash as SHA-256(0x00 || entry) to the leaf hash; the inclusion proof, hashed from the leaf up as RFC 6962 does (SHA-256(0x01 || left || right)), gives the root hash the signed checkpoint names for its tree size; the checkpoint's signature checks with the appliance's verifier key (GET /ledger/public-key).",
			"On the appliance's stopped data directory, `eudr ledger verify --key VERIFIER_KEY --checkpoint FILE` checks the whole log and that it still matches this checkpoint (FILE holding the signed note above).",
			"The QR code carries the entry index, the leaf hash and the signed checkpoint.",
		} {
			d.SetX(margin)
			d.MultiCell(contentW-qrSize-6, 4.2, s, "", "L", false)
			d.Ln(1)
		}
		d.SetY(max(d.GetY(), top+qrSize+5))
	}
}

// batchLink writes a shipment link's record.
func (d *document) batchLink(l *storage.ShipmentLink) {
	d.font(sans, "B", 9.5)
	d.CellFormat(contentW, 5.5, "Shipment "+l.ShipmentID, "", 1, "L", false, 0, "")
	d.field("Shipment", l.ShipmentID, true)
	d.field("Link", l.ID+" (job "+l.JobID+")", true)
	d.field("Status", l.Status, false)
	d.field("Bill of lading", orNone(l.BillOfLading), false)
	d.field("Containers", orNone(strings.Join(l.ContainerNumbers, ", ")), false)
	d.field("Port of entry", orNone(l.PortOfEntry), false)
	d.field("Estimated arrival", orNone(l.ETA), false)
	d.field("Requested at", storage.FormatTime(l.CreatedAt), false)
	if l.LinkedAt != nil {
		d.field("Linked at", storage.FormatTime(*l.LinkedAt), false)
	}
}
