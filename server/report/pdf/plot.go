package pdf

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/storage"
)

// Plot is what a plot's report is made of: its record, its evidence
// document as GET /polygons/{id}/evidence answers it (with the "ledger"
// member), its geometry as sent, and the layers its map is drawn from.
type Plot struct {
	Polygon  *storage.Polygon
	Evidence []byte
	Geometry json.RawMessage
	// Rasters are the environment's raster layers: the map draws those the
	// evidence names.
	Rasters []*geo.RasterLayer
	// Overlaps are the features of the vector layers the plot overlaps.
	Overlaps []VectorOverlap
}

// evidenceDoc is the evidence document as served.
type evidenceDoc struct {
	polygon.Evidence
	Ledger *anchor.DocumentLedger `json:"ledger"`
}

// PlotReport renders a plot's report: its verdict, map and figures, the
// datasets and rules it was judged by, and its ledger proof with how to
// verify it offline. It is dated at the plot's screenedAt, so the same
// evidence and ledger checkpoint give the same bytes.
func PlotReport(ctx context.Context, p Plot) ([]byte, error) {
	ev, at, err := decodeEvidence(p)
	if err != nil {
		return nil, err
	}
	d := newDocument("Plot report "+p.Polygon.ID, "Plot report · polygon "+p.Polygon.ID+" · screened "+ev.ScreenedAt, at)
	if err := d.plotPages(ctx, p, ev, ""); err != nil {
		return nil, err
	}
	d.thisPDF()
	return d.bytes()
}

// decodeEvidence is the plot's evidence document and when it was
// screened.
func decodeEvidence(p Plot) (*evidenceDoc, time.Time, error) {
	var ev evidenceDoc
	if err := json.Unmarshal(p.Evidence, &ev); err != nil {
		return nil, time.Time{}, fmt.Errorf("decode evidence of polygon %s: %w", p.Polygon.ID, err)
	}
	at, err := time.Parse(time.RFC3339Nano, ev.ScreenedAt)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("evidence of polygon %s: screenedAt %q: %w", p.Polygon.ID, ev.ScreenedAt, err)
	}
	return &ev, at, nil
}

// plotPages writes a plot's pages, from a new page: a batch's report
// writes each of its plots with it, under caption (where the plot sits in
// the batch; "" in the plot's own report).
func (d *document) plotPages(ctx context.Context, p Plot, ev *evidenceDoc, caption string) error {
	d.AddPage()
	if caption != "" {
		d.font(sans, "", 8)
		d.SetTextColor(20, 50, 90)
		d.CellFormat(contentW, 4.5, caption, "", 1, "L", false, 0, "")
		d.SetTextColor(0, 0, 0)
	}
	d.plotHeader(p.Polygon, &ev.Evidence)
	if err := d.plotMap(ctx, p, &ev.Evidence); err != nil {
		return err
	}
	d.plotFigures(&ev.Evidence)
	d.plotLossByYear(&ev.Evidence)
	d.plotDatasets(&ev.Evidence)
	d.plotRules(&ev.Evidence)
	d.plotLedger(ev.Ledger)
	return nil
}

// plotHeader writes the title, the plot's identity and its verdict with
// the reason in words.
func (d *document) plotHeader(p *storage.Polygon, ev *polygon.Evidence) {
	d.font(sans, "B", 16)
	d.CellFormat(contentW, 8, "Plot screening report", "", 1, "L", false, 0, "")
	d.font(sans, "", 9)
	d.SetTextColor(80, 80, 80)
	d.CellFormat(contentW, 5, "EU Deforestation Regulation (EU) 2023/1115 — due diligence evidence for one plot of land", "", 1, "L", false, 0, "")
	d.SetTextColor(0, 0, 0)
	d.Ln(2)
	d.field("Polygon", p.ID, true)
	if p.ExternalID != "" {
		d.field("External ID", p.ExternalID, false)
	}
	if p.ProducerName != "" {
		d.field("Producer", p.ProducerName, false)
	}
	if p.ProductionPlace != "" {
		d.field("Production place", p.ProductionPlace, false)
	}
	d.field("Commodity, country", p.Commodity+", "+p.ProducerCountry, false)
	d.field("Screened at", ev.ScreenedAt+" (job "+ev.JobID+", feature "+strconv.Itoa(ev.FeatureIndex)+")", false)
	d.Ln(2)
	r, g, b := statusColour(ev.EUDRStatus)
	y := d.GetY()
	d.SetFillColor(r, g, b)
	d.Rect(margin, y, 3, 13, "F")
	d.SetXY(margin+6, y)
	d.font(sans, "B", 13)
	d.SetTextColor(r, g, b)
	d.CellFormat(contentW-6, 6.5, "Verdict: "+ev.EUDRStatus, "", 2, "L", false, 0, "")
	d.SetTextColor(0, 0, 0)
	d.SetX(margin + 6)
	d.font(sans, "", 8.5)
	d.MultiCell(contentW-6, 4.4, verdictInWords(ev), "", "L", false)
	d.SetY(max(d.GetY(), y+13) + 3)
}

// statusColour is the verdict's colour: green, red, or grey when FAILED.
func statusColour(status string) (r, g, b int) {
	switch status {
	case geo.StatusCompliant:
		return 20, 120, 50
	case geo.StatusHighRisk:
		return 190, 20, 30
	}
	return 90, 90, 90
}

// reasonWords says each failureReason in words.
var reasonWords = map[string]string{
	geo.ReasonAreaMismatch:             "The declared area differs from the measured area by more than the tolerance.",
	geo.ReasonNoReferenceCoverage:      "No deforestation reference layer has data for the whole plot, so it could not be judged.",
	geo.ReasonDeforestationAfterCutoff: "The plot overlaps forest lost after the EUDR cutoff date beyond the thresholds.",
	geo.ReasonProtectedAreaOverlap:     "The plot overlaps a protected area beyond the threshold.",
	geo.ReasonRiskScoreAboveMax:        "No single overlap exceeds its threshold, but the risk score is above the maximum.",
	geo.ReasonScreeningError:           "The plot could not be measured against the reference layers.",
}

// verdictInWords is the verdict's reason as a reader would say it.
func verdictInWords(ev *polygon.Evidence) string {
	if ev.EUDRStatus == geo.StatusCompliant {
		return "No deforestation after the cutoff date and no protected-area overlap beyond the thresholds were found on the plot."
	}
	var s []string
	if ev.FailureReason != nil {
		reason := *ev.FailureReason
		if w, ok := reasonWords[reason]; ok {
			reason += ": " + w
		}
		s = append(s, "Reason "+reason)
	}
	if ev.FailureDetail != nil {
		s = append(s, *ev.FailureDetail)
	}
	return strings.Join(s, "\n")
}

// plotMap draws the plot's map from the raster layers its evidence names
// and the vector features it overlaps.
func (d *document) plotMap(ctx context.Context, p Plot, ev *polygon.Evidence) error {
	d.heading("Map: the plot over what it was screened against", mapSize+20)
	named := map[string]bool{}
	for _, r := range ev.Rasters {
		named[r.LayerID] = true
	}
	var rasters []*geo.RasterLayer
	for _, l := range p.Rasters {
		if named[l.ID] {
			rasters = append(rasters, l)
		}
	}
	g, err := parseGeometry(p.Geometry)
	if err != nil {
		d.para("The plot's geometry cannot be drawn: "+err.Error(), 8.5)
		return nil
	}
	d.Ln(3)
	return d.drawMap(ctx, margin, d.GetY(), g, rasters, p.Overlaps)
}

// parseGeometry decodes a GeoJSON geometry as sent, without judging it:
// a plot that FAILED for its ring crossing itself is still drawn.
func parseGeometry(raw json.RawMessage) (geo.Geometry, error) {
	var g struct {
		Type        string          `json:"type"`
		Coordinates json.RawMessage `json:"coordinates"`
	}
	if err := json.Unmarshal(raw, &g); err != nil {
		return geo.Geometry{}, err
	}
	out := geo.Geometry{Type: g.Type}
	var err error
	switch g.Type {
	case geo.TypePolygon:
		var p geo.Polygon
		err = json.Unmarshal(g.Coordinates, &p)
		out.Polygons = []geo.Polygon{p}
	case geo.TypeMultiPolygon:
		err = json.Unmarshal(g.Coordinates, &out.Polygons)
	case geo.TypePoint:
		var p geo.Position
		err = json.Unmarshal(g.Coordinates, &p)
		out.Points = []geo.Position{p}
	case geo.TypeMultiPoint:
		err = json.Unmarshal(g.Coordinates, &out.Points)
	default:
		err = fmt.Errorf("geometry type %q", g.Type)
	}
	return out, err
}
