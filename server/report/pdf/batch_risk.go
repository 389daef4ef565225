package pdf

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/server/risk"
	"github.com/eudr/eudr/storage"
)

// batchSupplier writes the supplier mapping of the batch's supplierID,
// or says there is none.
func (d *document) batchSupplier(supplierID string, s *storage.Supplier) {
	d.heading("Supplier mapping", 30)
	if s == nil {
		d.field("ERP vendor ID", supplierID, true)
		d.para("No mapping: no supplier mapping names this ERP vendor ID (none was made, or it was deleted since the batch was registered).", 8.5)
		return
	}
	d.field("Name", s.Name, false)
	d.field("Country", s.Country, false)
	d.field("ERP vendor ID", s.ERPVendorID, true)
	d.field("Supplier ID", s.ID, true)
	d.field("EU operator UUID", orNone(s.EUOperatorUUID), true)
	d.field("Role", orNone(s.Role), false)
	if s.EORI != "" {
		d.field("EORI", s.EORI, true)
	}
	for _, id := range s.Identifiers {
		d.field("Identifier ("+id.Type+")", id.Value, true)
	}
	address := s.FullAddress
	if address == "" {
		var parts []string
		for _, p := range []string{s.Street, strings.TrimSpace(s.PostalCode + " " + s.City)} {
			if p != "" {
				parts = append(parts, p)
			}
		}
		address = strings.Join(parts, ", ")
	}
	d.field("Address", orNone(address), false)
	d.field("Mapping created, updated", storage.FormatTime(s.CreatedAt)+", "+storage.FormatTime(s.UpdatedAt), false)
}

// assessmentDoc is a recorded risk assessment, its factors' inputs kept
// as recorded to be read by each factor's name.
type assessmentDoc struct {
	batch.RiskAssessment
	Factors []struct {
		Name        string          `json:"name"`
		Score       int             `json:"score"`
		Inputs      json.RawMessage `json:"inputs"`
		Explanation string          `json:"explanation"`
	} `json:"factors"`
}

// factorTable is the layout of the assessment's factors.
var factorTable = table{widths: []float64{30, 12, 68, 70}, heads: []string{"Factor", "Score", "Inputs", "Why"},
	aligns: "LRLL", size: 7.5, lineH: 3.5}

// batchRisk writes the batch's risk assessment: its outcome, each factor
// with its inputs and score, the regulatory data and the engine it used.
func (d *document) batchRisk(doc json.RawMessage) error {
	d.heading("Risk assessment", 50)
	if len(doc) == 0 {
		d.para("The batch has no risk assessment.", 8.5)
		return nil
	}
	var as assessmentDoc
	if err := json.Unmarshal(doc, &as); err != nil {
		return fmt.Errorf("decode risk assessment: %w", err)
	}
	if as.RiskScore == nil {
		d.para("Not assessed yet: the batch is "+as.Status+" (job "+as.JobID+").", 8.5)
		return nil
	}
	outcome := fmt.Sprintf("%d (maximum %d): %s, batch %s", *as.RiskScore, deref(as.MaxScore), deref(as.RiskLevel), as.Status)
	d.field("Risk score, level", outcome, false)
	d.field("Assessed at", deref(as.AssessedAt)+" (job "+as.JobID+")", false)
	d.field("Engine version", deref(as.EngineVersion), false)
	d.field("Appliance version", deref(as.AppVersion), false)
	d.Ln(2)
	d.tableHeader(factorTable)
	for _, f := range as.Factors {
		inputs, err := factorInputs(f.Name, f.Inputs)
		if err != nil {
			return fmt.Errorf("factor %s: %w", f.Name, err)
		}
		d.tableRow(factorTable, []cell{{text: f.Name}, {text: strconv.Itoa(f.Score)}, {text: inputs}, {text: f.Explanation}})
	}
	d.font(sans, "", 7.5)
	d.Ln(1)
	d.MultiCell(contentW, 3.8, "The batch's score is its highest factor's; above the maximum, the batch is HIGH_RISK and cannot be linked to a shipment.", "", "L", false)
	if v := as.DataVersions; v != nil {
		d.heading("Regulatory data the assessment used", 40)
		dataSet := func(name string, s batch.DataSet) {
			if d.GetY()+30 > pageH-margin-5 {
				d.AddPage()
			}
			d.font(sans, "B", 8.5)
			d.CellFormat(contentW, 4.8, name, "", 1, "L", false, 0, "")
			d.field("Version, date", s.Version+", "+s.Date, false)
			d.field("Regulation, source", s.Source, false)
			d.field("SHA-256", s.SHA256, true)
			d.Ln(1)
		}
		dataSet("Country benchmark (Article 29)", v.CountryBenchmark)
		dataSet("Annex I scope (commodities and HS codes)", v.AnnexI)
	}
	return nil
}

// factorInputs says a factor's inputs in words; a factor this version
// does not know by name keeps its inputs as recorded.
func factorInputs(name string, raw json.RawMessage) (string, error) {
	switch name {
	case risk.FactorCountryBenchmark:
		var in risk.CountryFactorInputs
		if err := json.Unmarshal(raw, &in); err != nil {
			return "", err
		}
		lines := []string{"Benchmark " + in.BenchmarkVersion}
		for _, c := range in.Countries {
			lines = append(lines, fmt.Sprintf("%s: %s risk, %d plots, %s", c.Country, c.RiskClass, c.PolygonCount, ha(c.AreaHa)))
		}
		return strings.Join(lines, "\n"), nil
	case risk.FactorPlotRisk:
		var in risk.PlotFactorInputs
		if err := json.Unmarshal(raw, &in); err != nil {
			return "", err
		}
		return fmt.Sprintf("%d plots, %s\nhighest plot risk score %d, plot\n%s\narea-weighted mean %.2f",
			in.PolygonCount, ha(in.TotalAreaHa), in.MaxRiskScore, in.MaxRiskPolygonID, in.AreaWeightedMeanRiskScore), nil
	case risk.FactorSupplierHistory:
		var in risk.SupplierFactorInputs
		if err := json.Unmarshal(raw, &in); err != nil {
			return "", err
		}
		return fmt.Sprintf("supplier %s\n%d plots screened, %d HIGH_RISK, %d FAILED\n%s high risk",
			in.SupplierID, in.ScreenedPolygons, in.HighRiskPolygons, in.FailedPolygons, pct(in.HighRiskPct)), nil
	}
	return string(raw), nil
}

// deref is *p, or "" for nil.
func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
