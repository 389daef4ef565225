package risk

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// EngineVersion names the assessment rules of this package. It is recorded
// with each assessment and changes whenever a change here could give some
// batch another score.
const EngineVersion = "eudr-risk/1"

// Factor names, in the order an Assessment lists them.
const (
	FactorCountryBenchmark = "country_benchmark"
	FactorPlotRisk         = "plot_risk"
	FactorSupplierHistory  = "supplier_history"
)

// Levels of an assessed batch: negligible (score at most the threshold) or
// not (Article 10 of Regulation (EU) 2023/1115).
const (
	LevelNegligible    = "NEGLIGIBLE"
	LevelNotNegligible = "NOT_NEGLIGIBLE"
)

// MaxSupplierScore is the highest supplier_history score.
const MaxSupplierScore = 50

// Plot is a screened plot of a batch.
type Plot struct {
	PolygonID string
	Country   string // producerCountry
	AreaHa    float64
	RiskScore int // from screening, 0-100
}

// History is a supplier's record: how many of its plots were screened to
// each status.
type History struct {
	SupplierID string
	Compliant  int
	HighRisk   int
	Failed     int
}

// Input is what Assess judges.
type Input struct {
	Plots    []Plot
	Supplier History
	// MaxScore is the highest score of a negligible risk (risk.max_score),
	// 0-100.
	MaxScore int
	// Benchmark is the country benchmark; DefaultBenchmark when nil.
	Benchmark *Benchmark
}

// Assessment is the outcome: the score, its level and the three factors.
type Assessment struct {
	Score    int
	Level    string
	Country  CountryFactor
	Plots    PlotFactor
	Supplier SupplierFactor
}

// CountryFactor is the country_benchmark factor.
type CountryFactor struct {
	Score       int
	Countries   []CountryPlots // the worst class first, then by country code
	Explanation string
}

// CountryPlots counts a batch's plots in one country.
type CountryPlots struct {
	Country string
	Class   string // CountryLow, CountryStandard or CountryHigh
	Plots   int
	AreaHa  float64
}

// PlotFactor is the plot_risk factor.
type PlotFactor struct {
	Score            int // the highest plot risk score
	Plots            int
	TotalAreaHa      float64
	MaxPolygonID     string // the first plot with the highest score
	AreaWeightedMean float64
	Explanation      string
}

// SupplierFactor is the supplier_history factor.
type SupplierFactor struct {
	Score       int
	SupplierID  string
	Screened    int // COMPLIANT and HIGH_RISK plots
	HighRisk    int
	Failed      int // not counted in the share
	HighRiskPct float64
	Explanation string
}

// Assess scores a batch (see the package documentation). It fails only on
// input that cannot be judged: no plots, a plot risk score outside 0-100, a
// negative area or count, or a threshold outside 0-100.
func Assess(in Input) (Assessment, error) {
	if err := in.validate(); err != nil {
		return Assessment{}, err
	}
	b := in.Benchmark
	if b == nil {
		b = DefaultBenchmark()
	}
	a := Assessment{Country: countryFactor(b, in.Plots), Plots: plotFactor(in.Plots), Supplier: supplierFactor(in.Supplier)}
	a.Score = max(a.Country.Score, a.Plots.Score, a.Supplier.Score)
	a.Level = LevelNegligible
	if a.Score > in.MaxScore {
		a.Level = LevelNotNegligible
	}
	return a, nil
}

func (in Input) validate() error {
	var errs []error
	if len(in.Plots) == 0 {
		errs = append(errs, errors.New("no plots"))
	}
	for _, p := range in.Plots {
		if p.RiskScore < 0 || p.RiskScore > 100 {
			errs = append(errs, fmt.Errorf("plot %s: risk score %d is not between 0 and 100", p.PolygonID, p.RiskScore))
		}
		if !(p.AreaHa >= 0) || math.IsInf(p.AreaHa, 1) {
			errs = append(errs, fmt.Errorf("plot %s: area %v is not a finite number of at least 0", p.PolygonID, p.AreaHa))
		}
	}
	if h := in.Supplier; h.Compliant < 0 || h.HighRisk < 0 || h.Failed < 0 {
		errs = append(errs, fmt.Errorf("supplier %s: negative counts %+v", h.SupplierID, h))
	}
	if in.MaxScore < 0 || in.MaxScore > 100 {
		errs = append(errs, fmt.Errorf("threshold %d is not between 0 and 100", in.MaxScore))
	}
	if len(errs) > 0 {
		return fmt.Errorf("risk: %w", errors.Join(errs...))
	}
	return nil
}

var classRank = map[string]int{CountryHigh: 0, CountryStandard: 1, CountryLow: 2}

func countryFactor(b *Benchmark, plots []Plot) CountryFactor {
	byCountry := map[string]*CountryPlots{}
	for _, p := range plots {
		c := byCountry[p.Country]
		if c == nil {
			c = &CountryPlots{Country: p.Country, Class: b.Class(p.Country)}
			byCountry[p.Country] = c
		}
		c.Plots++
		c.AreaHa += p.AreaHa
	}
	f := CountryFactor{}
	for _, c := range byCountry {
		f.Countries = append(f.Countries, *c)
		f.Score = max(f.Score, classScore(c.Class))
	}
	slices.SortFunc(f.Countries, func(x, y CountryPlots) int {
		return cmp.Or(cmp.Compare(classRank[x.Class], classRank[y.Class]), cmp.Compare(x.Country, y.Country))
	})
	worst := f.Countries[0].Class
	var in []string
	n := 0
	for _, c := range f.Countries {
		if c.Class == worst {
			in = append(in, c.Country)
			n += c.Plots
		}
	}
	subject := fmt.Sprintf("%s of the %s", count(n, "plot", "plots"), count(len(plots), "plot", "plots"))
	if n == len(plots) {
		subject = "All " + count(n, "plot", "plots")
		if n == 1 {
			subject = "The plot"
		}
	}
	verb := "are"
	if n == 1 {
		verb = "is"
	}
	f.Explanation = fmt.Sprintf("%s %s in %s of %s risk (%s) under the country benchmark %s of %s, which scores %s risk %d",
		subject, verb, count(len(in), "a country", "countries"), worst, strings.Join(in, ", "), b.Version, b.Date, worst, f.Score)
	switch worst {
	case CountryHigh:
		f.Explanation += ": above any negligible level, the risk must be mitigated (Article 11 of Regulation (EU) 2023/1115)."
	case CountryLow:
		f.Explanation += ": simplified due diligence applies (Article 13)."
	default:
		f.Explanation += ": full due diligence applies, and the plots' own screening decides."
	}
	return f
}

func plotFactor(plots []Plot) PlotFactor {
	f := PlotFactor{Plots: len(plots), Score: -1}
	var weighted, plain float64
	for _, p := range plots {
		f.TotalAreaHa += p.AreaHa
		weighted += p.AreaHa * float64(p.RiskScore)
		plain += float64(p.RiskScore)
		if p.RiskScore > f.Score {
			f.Score, f.MaxPolygonID = p.RiskScore, p.PolygonID
		}
	}
	if f.TotalAreaHa > 0 {
		f.AreaWeightedMean = round2(weighted / f.TotalAreaHa)
	} else {
		f.AreaWeightedMean = round2(plain / float64(len(plots)))
	}
	f.TotalAreaHa = round4(f.TotalAreaHa)
	if len(plots) == 1 {
		f.Explanation = fmt.Sprintf("The batch's one plot (%s) has a risk score of %d from screening.", f.MaxPolygonID, f.Score)
		return f
	}
	f.Explanation = fmt.Sprintf("The riskiest of the %d plots (%s) has a risk score of %d from screening "+
		"(area-weighted mean %s over %s ha); the batch takes the highest, since its product may come from any of its plots.",
		len(plots), f.MaxPolygonID, f.Score, strconv.FormatFloat(f.AreaWeightedMean, 'f', -1, 64),
		strconv.FormatFloat(f.TotalAreaHa, 'f', -1, 64))
	return f
}

func supplierFactor(h History) SupplierFactor {
	f := SupplierFactor{SupplierID: h.SupplierID, Screened: h.Compliant + h.HighRisk, HighRisk: h.HighRisk, Failed: h.Failed}
	if f.Screened == 0 {
		f.Explanation = fmt.Sprintf("Supplier %s has no screened plots yet: no history, score 0.", h.SupplierID)
		return f
	}
	share := float64(h.HighRisk) / float64(f.Screened)
	f.HighRiskPct = round2(100 * share)
	f.Score = min(MaxSupplierScore, int(math.Round(MaxSupplierScore*share)))
	f.Explanation = fmt.Sprintf("Of the %s of supplier %s screened so far, %d (%s %%) were HIGH_RISK; "+
		"the history scores half that share, at most %d, so it raises a batch towards the threshold but alone never makes "+
		"a batch of compliant plots non-negligible under the default threshold.",
		count(f.Screened, "plot", "plots"), h.SupplierID, h.HighRisk, strconv.FormatFloat(f.HighRiskPct, 'f', -1, 64), MaxSupplierScore)
	return f
}

// count writes n with the singular or plural noun.
func count(n int, one, many string) string {
	if n == 1 {
		if strings.HasPrefix(one, "a ") {
			return one
		}
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }
