package pdf

import (
	"fmt"
	"strconv"

	"github.com/eudr/eudr/geo"
)

// plotTable is the layout of a large batch's table of plots: two lines a
// plot, the polygon ID (37 characters) on one.
var plotTable = table{
	widths: []float64{7, 50, 24, 14, 18, 18, 19, 30},
	heads:  []string{"#", "Polygon / external ID", "Producer,\ncountry", "Area\n(ha)", "Forest\n2020 (ha)", "Loss after\ncutoff (ha)", "Verdict", "Ledger entry"},
	aligns: "RLLRRRLL", size: 7, lineH: 3.3,
}

// leafPrefix is how many hex digits of a plot's leaf hash the table
// shows: enough to find the entry, the full hash is in the ledger.
const leafPrefix = 16

// batchPlotTable lists a large batch's plots, one row each, under the
// overview map: what each plot's report would hold in brief.
func (d *document) batchPlotTable(plots []Plot, evs []*evidenceDoc) {
	d.heading(fmt.Sprintf("Plots: the batch's %d plots in the order it lists them", len(plots)), 30)
	d.font(sans, "", 7.5)
	d.MultiCell(contentW, 3.8, "Forest 2020 is the plot's area under the 2020 forest layer; loss after cutoff is forest standing in 2020 lost after the cutoff, inside the plot. "+
		"Each plot's own report (GET /polygons/{polygonId}/report.pdf) holds its map, datasets, rules and ledger proof; the ledger entry is its index and the first hex digits of its leaf hash.", "", "L", false)
	d.Ln(1)
	d.tableHeader(plotTable)
	for i, p := range plots {
		ev := evs[i]
		idW, prodW := plotTable.widths[1], plotTable.widths[2]
		d.font(mono, "", plotTable.size-1) // as cellFont writes a mono cell
		ext := d.fit(orNone(p.Polygon.ExternalID), idW)
		d.font(sans, "", plotTable.size)
		producer := d.fit(orNone(p.Polygon.ProducerName), prodW)
		forest, loss := "—", "—"
		for _, r := range ev.Rasters {
			if r.Kind == string(geo.Forest2020) {
				forest = strconv.FormatFloat(r.MeasuredHa, 'f', 4, 64)
			}
		}
		if ev.LossInForest != nil {
			loss = strconv.FormatFloat(ev.LossInForest.Ha, 'f', 4, 64)
		}
		entry := "none"
		if l := ev.Ledger; l != nil {
			entry = strconv.FormatInt(l.Index, 10) + "\n" + l.TransactionHash[:min(leafPrefix, len(l.TransactionHash))] + "…"
		}
		r, g, b := statusColour(ev.EUDRStatus)
		d.tableRow(plotTable, []cell{
			{text: strconv.Itoa(i + 1)},
			{text: p.Polygon.ID + "\n" + ext, mono: true},
			{text: producer + "\n" + p.Polygon.ProducerCountry},
			{text: strconv.FormatFloat(ev.AreaHa, 'f', 4, 64)},
			{text: forest},
			{text: loss},
			{text: ev.EUDRStatus, rgb: &[3]int{r, g, b}},
			{text: entry, mono: true},
		})
	}
}
