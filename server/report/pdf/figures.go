package pdf

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/polygon"
)

// ha writes hectares as the evidence records them, to 4 decimals (1 m²).
func ha(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) + " ha" }

// pct writes a percentage of the plot to 2 decimals.
func pct(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + " %" }

// plotFigures writes what was measured on the plot.
func (d *document) plotFigures(ev *polygon.Evidence) {
	d.heading("Figures", 45)
	d.field("Area", ha(ev.AreaHa), false)
	for _, r := range ev.Rasters {
		if r.Kind == string(geo.Forest2020) {
			d.field("Forest in 2020", fmt.Sprintf("%s (%s of the plot), %s", ha(r.MeasuredHa), pct(r.MeasuredPct), r.Name), false)
		}
	}
	if l := ev.LossInForest; l != nil {
		d.field("Loss inside forest", fmt.Sprintf("%s (%s of the plot, %d pixels): forest standing in 2020 lost after %s",
			ha(l.Ha), pct(l.Pct), l.Pixels, ev.Rules.Cutoff), false)
	} else if ev.Risk != nil {
		d.field("Loss inside forest", "not measured: no loss-year layer covers the plot", false)
	}
	if r := ev.Risk; r != nil {
		d.field("Deforestation overlap", fmt.Sprintf("%s (%s of the plot)", ha(r.DeforestedHa), pct(r.DeforestedPct)), false)
		d.field("Protected-area overlap", fmt.Sprintf("%s (%s of the plot)", ha(r.ProtectedHa), pct(r.ProtectedPct)), false)
		d.field("Risk score", fmt.Sprintf("%d (maximum %d)", r.RiskScore, ev.Rules.MaxRiskScore), false)
	} else {
		d.field("Overlaps, risk score", "not measured: the plot was not screened against the layers", false)
	}
	names := map[string]string{}
	for _, l := range ev.Layers {
		names[l.LayerID] = l.Name
	}
	for _, o := range ev.Overlaps {
		d.field("Overlap", fmt.Sprintf("%s (%s of the plot) with %s (%s, %s), features %s",
			ha(o.OverlapHa), pct(o.OverlapPct), names[o.LayerID], o.LayerID, o.Kind, strings.Join(o.FeatureIDs, ", ")), false)
	}
	if c := ev.CountryCheck; c != nil {
		s := fmt.Sprintf("%s: %s (boundaries %s, %g m buffer)", c.ProducerCountry, c.Outcome, c.Boundaries, c.BufferM)
		if len(c.FoundIn) > 0 {
			s += "; found in " + strings.Join(c.FoundIn, ", ")
		}
		d.field("Producer country check", s, false)
	}
}

// plotLossByYear writes a loss-year layer's loss per year as a table with
// a bar each, years after the cutoff in red.
func (d *document) plotLossByYear(ev *polygon.Evidence) {
	for _, r := range ev.Rasters {
		if r.Kind != string(geo.LossYear) || len(r.LossByYear) == 0 {
			continue
		}
		d.heading("Loss by year: "+r.Name, 12+5*float64(len(r.LossByYear)))
		top := 0.0
		for _, y := range r.LossByYear {
			top = max(top, y.Ha)
		}
		widths := []float64{22, 22, 32}
		d.font(sans, "B", 8)
		d.SetFillColor(232, 236, 242)
		for i, h := range []string{"Year", "Pixels", "Hectares"} {
			d.CellFormat(widths[i], 4.8, h, "", 0, "LRR"[i:i+1], true, 0, "")
		}
		d.Ln(4.8)
		const barW = 90.0
		for _, y := range r.LossByYear {
			d.font(sans, "", 8)
			d.CellFormat(widths[0], 4.8, strconv.Itoa(y.Year), "B", 0, "L", false, 0, "")
			d.CellFormat(widths[1], 4.8, strconv.Itoa(y.Pixels), "B", 0, "R", false, 0, "")
			d.CellFormat(widths[2], 4.8, ha(y.Ha), "B", 0, "R", false, 0, "")
			if y.Year > 2020 {
				d.SetFillColor(190, 20, 30)
			} else {
				d.SetFillColor(214, 150, 90)
			}
			if top > 0 {
				d.Rect(margin+widths[0]+widths[1]+widths[2]+4, d.GetY()+1, barW*y.Ha/top, 2.8, "F")
			}
			d.Ln(4.8)
		}
		d.font(sans, "", 7.5)
		d.MultiCell(contentW, 4, fmt.Sprintf("All loss under the plot, inside forest or not; %d pixels of the plot, %d of them nodata. Loss after %s counts for the verdict.",
			r.Pixels, r.NoDataPixels, ev.Rules.Cutoff), "", "L", false)
	}
}

// plotDatasets writes each dataset the plot was measured against with its
// version, source and SHA-256.
func (d *document) plotDatasets(ev *polygon.Evidence) {
	d.heading("Datasets", 40)
	type dataset struct{ id, name, kind, version, source, sha string }
	var sets []dataset
	for _, l := range ev.Layers {
		sets = append(sets, dataset{l.LayerID, l.Name, l.Kind, l.Version, l.Source, l.SHA256})
	}
	for _, r := range ev.Rasters {
		sets = append(sets, dataset{r.LayerID, r.Name, r.Kind, r.Version, r.Source, r.SHA256})
	}
	if len(sets) == 0 {
		d.para("The plot was not measured against any dataset.", 8.5)
	}
	for _, s := range sets {
		if d.GetY()+20 > pageH-margin-5 {
			d.AddPage()
		}
		d.font(sans, "B", 8.5)
		d.CellFormat(contentW, 4.8, s.name, "", 1, "L", false, 0, "")
		d.field("Layer, kind, version", s.id+", "+s.kind+", "+s.version, false)
		d.field("Source", s.source, false)
		d.field("SHA-256", s.sha, true)
		d.Ln(1)
	}
}

// plotRules writes the thresholds the plot was judged by and the engine
// that judged it.
func (d *document) plotRules(ev *polygon.Evidence) {
	r := ev.Rules
	d.heading("Rules, thresholds and engine", 45)
	d.field("EUDR cutoff date", r.Cutoff+": forest lost after it counts", false)
	d.field("Loss threshold", fmt.Sprintf("%g %% of the plot or %g ha", r.LossThresholdPct, r.LossThresholdHa), false)
	d.field("Overlap threshold", fmt.Sprintf("%g %% of the plot", r.OverlapThresholdPct), false)
	d.field("Maximum risk score", strconv.Itoa(r.MaxRiskScore), false)
	d.field("Area tolerance", fmt.Sprintf("%g %% between declared and measured area", r.AreaTolerancePct), false)
	d.field("Engine version", ev.EngineVersion, false)
	d.field("Appliance version", ev.AppVersion, false)
	d.field("Plot GeoJSON SHA-256", ev.InputSHA256, true)
	if ev.Repair != nil {
		d.field("Original GeoJSON SHA-256", ev.Repair.OriginalSHA256+" (before repair)", true)
	}
}
