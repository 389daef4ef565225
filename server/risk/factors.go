package risk

// Factor is one factor of a risk assessment: its name, what it was
// computed from, its score and a sentence saying why. Inputs is one of
// CountryFactorInputs, PlotFactorInputs and SupplierFactorInputs.
type Factor struct {
	Name        string `json:"name"`
	Score       int    `json:"score"`
	Inputs      any    `json:"inputs"`
	Explanation string `json:"explanation"`
}

// CountryFactorInputs are the inputs of country_benchmark: the batch's
// plots by country of production, the worst risk class first.
type CountryFactorInputs struct {
	BenchmarkVersion string               `json:"benchmarkVersion"`
	Countries        []CountryPlotsInputs `json:"countries"`
}

// CountryPlotsInputs are the plots of one country of production.
type CountryPlotsInputs struct {
	Country      string  `json:"country"`
	RiskClass    string  `json:"riskClass"`
	PolygonCount int     `json:"polygonCount"`
	AreaHa       float64 `json:"areaHa"`
}

// PlotFactorInputs are the inputs of plot_risk.
type PlotFactorInputs struct {
	PolygonCount              int     `json:"polygonCount"`
	TotalAreaHa               float64 `json:"totalAreaHa"`
	MaxRiskScore              int     `json:"maxRiskScore"`
	MaxRiskPolygonID          string  `json:"maxRiskPolygonId"`
	AreaWeightedMeanRiskScore float64 `json:"areaWeightedMeanRiskScore"`
}

// SupplierFactorInputs are the inputs of supplier_history.
type SupplierFactorInputs struct {
	SupplierID       string  `json:"supplierId"`
	ScreenedPolygons int     `json:"screenedPolygons"`
	HighRiskPolygons int     `json:"highRiskPolygons"`
	FailedPolygons   int     `json:"failedPolygons"`
	HighRiskPct      float64 `json:"highRiskPct"`
}

// FactorsOf lists an assessment's factors as recorded and served: with
// the inputs each was computed from.
func FactorsOf(as Assessment, b *Benchmark) []Factor {
	countries := make([]CountryPlotsInputs, len(as.Country.Countries))
	for i, c := range as.Country.Countries {
		countries[i] = CountryPlotsInputs{Country: c.Country, RiskClass: c.Class, PolygonCount: c.Plots, AreaHa: c.AreaHa}
	}
	p, s := as.Plots, as.Supplier
	return []Factor{
		{Name: FactorCountryBenchmark, Score: as.Country.Score, Explanation: as.Country.Explanation,
			Inputs: CountryFactorInputs{BenchmarkVersion: b.Version, Countries: countries}},
		{Name: FactorPlotRisk, Score: p.Score, Explanation: p.Explanation,
			Inputs: PlotFactorInputs{PolygonCount: p.Plots, TotalAreaHa: p.TotalAreaHa, MaxRiskScore: p.Score,
				MaxRiskPolygonID: p.MaxPolygonID, AreaWeightedMeanRiskScore: p.AreaWeightedMean}},
		{Name: FactorSupplierHistory, Score: s.Score, Explanation: s.Explanation,
			Inputs: SupplierFactorInputs{SupplierID: s.SupplierID, ScreenedPolygons: s.Screened, HighRiskPolygons: s.HighRisk,
				FailedPolygons: s.Failed, HighRiskPct: s.HighRiskPct}},
	}
}
