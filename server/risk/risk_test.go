package risk_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/risk"
)

func TestDefaultBenchmark(t *testing.T) {
	b := risk.DefaultBenchmark()
	if b.Version != "2025/1093" || b.Date != "2025-05-22" || !strings.Contains(b.Source, "2025/1093") || len(b.SHA256) != 64 {
		t.Errorf("embedded benchmark: version %q date %q source %q sha256 %q", b.Version, b.Date, b.Source, b.SHA256)
	}
	if !slices.Equal(b.High, []string{"BY", "KP", "MM", "RU"}) {
		t.Errorf("high: got %v, want BY KP MM RU", b.High)
	}
	if len(b.Standard) != 50 {
		t.Errorf("standard: got %d countries, want the 50 of research/eudr.md section 4", len(b.Standard))
	}
	for _, c := range []struct{ country, want string }{
		{"RU", risk.CountryHigh}, {"BY", risk.CountryHigh}, {"KP", risk.CountryHigh}, {"MM", risk.CountryHigh},
		{"BR", risk.CountryStandard}, {"ID", risk.CountryStandard}, {"CI", risk.CountryStandard}, {"CD", risk.CountryStandard},
		{"GH", risk.CountryLow}, {"DE", risk.CountryLow}, {"US", risk.CountryLow}, {"VN", risk.CountryLow},
		{"XX", risk.CountryLow}, {"", risk.CountryLow},
	} {
		if got := b.Class(c.country); got != c.want {
			t.Errorf("Class(%q) = %q, want %q", c.country, got, c.want)
		}
	}
}

func TestParseBenchmark(t *testing.T) {
	ok := `{"version":"ops-1","source":"operator","date":"2026-01-31","high":["RU"],"standard":["BR","GH"]}`
	b, err := risk.ParseBenchmark([]byte(ok))
	if err != nil {
		t.Fatalf("ParseBenchmark(%s): %v", ok, err)
	}
	if b.Class("GH") != risk.CountryStandard || b.Class("MM") != risk.CountryLow || b.Version != "ops-1" {
		t.Errorf("override: GH %s, MM %s, version %s", b.Class("GH"), b.Class("MM"), b.Version)
	}
	cases := []struct {
		name, data string
		want       []string // each must appear in the error
	}{
		{"not JSON", `{`, []string{"country benchmark"}},
		{"trailing data", ok + `{}`, []string{"data after"}},
		{"unknown member", `{"version":"1","source":"s","date":"2026-01-31","high":[],"standard":[],"low":[]}`, []string{`unknown field "low"`}},
		{"everything wrong", `{"version":" ","date":"31.01.2026","high":["ru","RU","RU"],"standard":["RU","ZZ"]}`,
			[]string{"version is required", "source is required", `date "31.01.2026"`, `high[0] "ru"`, "high[2] RU is listed twice",
				"standard[0] RU is also listed as high", `standard[1] "ZZ"`}},
		{"lists missing", `{"version":"1","source":"s","date":"2026-01-31"}`, []string{"high is required", "standard is required"}},
	}
	for _, c := range cases {
		_, err := risk.ParseBenchmark([]byte(c.data))
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
	}
}

func TestAnnexI(t *testing.T) {
	s := risk.AnnexI()
	if s.Version == "" || !strings.Contains(s.Source, "2023/1115") || s.Date != "2023-06-09" || len(s.SHA256) != 64 {
		t.Errorf("Annex I: version %q source %q date %q", s.Version, s.Source, s.Date)
	}
	// Every commodity of geo has products, and only those.
	var got []string
	for c, ps := range s.Commodities {
		got = append(got, c)
		if len(ps) == 0 {
			t.Errorf("%s: no products", c)
		}
		for _, p := range ps {
			if l := len(p.Code); (l != 2 && l != 4 && l != 6) || strings.Trim(p.Code, "0123456789") != "" || p.Description == "" {
				t.Errorf("%s: bad entry %+v", c, p)
			}
			if others := s.CommodityOf(p.Code); !slices.Equal(others, []string{c}) {
				t.Errorf("%s: code %s belongs to %v", c, p.Code, others)
			}
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(geo.Commodities()))
	if !slices.Equal(got, want) {
		t.Errorf("commodities: got %v, want geo's %v", got, want)
	}
}

func TestScope_CheckHSCode(t *testing.T) {
	s := risk.AnnexI()
	cases := []struct {
		commodity, code string
		ok              bool
		issue           string // part of the issue when not ok
	}{
		{"cocoa", "1801", true, ""},
		{"cocoa", "180100", true, ""},
		{"cocoa", "18010000", true, ""},
		{"cocoa", "1806321000", true, ""},
		{"coffee", "090111", true, ""},
		{"soya", "1201", true, ""},
		{"soya", "120810", true, ""},
		{"soya", "1208", false, "soya codes start with 1201, 120810, 1507, 2304"},
		{"soya", "120890", false, ""},
		{"cattle", "010221", true, ""},
		{"cattle", "01022910", true, ""},
		{"cattle", "0102", false, "not a product of cattle"},
		{"cattle", "010231", false, ""}, // buffalo
		{"cattle", "160250", true, ""},
		{"cattle", "4107", true, ""},
		{"oil_palm", "1511", true, ""},
		{"oil_palm", "382370", true, ""},
		{"oil_palm", "3401", false, "not a product of oil_palm"},
		{"rubber", "4011", true, ""},
		{"rubber", "4009", false, ""},
		{"rubber", "4014", false, ""},
		{"wood", "4403", true, ""},
		{"wood", "4421", true, ""},
		{"wood", "4703", true, ""},
		{"wood", "4802", true, ""},
		{"wood", "4901", true, ""},
		{"wood", "9401", true, ""},
		{"wood", "940360", true, ""},
		{"wood", "9403", false, ""},
		{"wood", "940370", false, ""},
		{"wood", "940610", true, ""},
		{"wood", "9402", false, ""},
		{"cocoa", "0901", false, "(0901 is listed for coffee)"},
		{"cocoa", "18", false, "4, 6, 8 or 10 digits"},
		{"cocoa", "18011", false, "4, 6, 8 or 10 digits"},
		{"cocoa", "1801 00", false, "without spaces"},
		{"cocoa", "1801.00", false, "without spaces"},
		{"cocoa", "", false, "4, 6, 8 or 10 digits"},
		{"cocoa", "180100000000", false, "4, 6, 8 or 10 digits"},
	}
	for _, c := range cases {
		issue := s.CheckHSCode(c.commodity, c.code)
		if (issue == "") != c.ok || !strings.Contains(issue, c.issue) {
			t.Errorf("CheckHSCode(%s, %q) = %q, want ok %v and an issue with %q", c.commodity, c.code, issue, c.ok, c.issue)
		}
	}
}

// plots makes n plots in country, of 1 ha each, with the risk score given.
func plots(country string, n, score int) []risk.Plot {
	out := make([]risk.Plot, n)
	for i := range out {
		out[i] = risk.Plot{PolygonID: fmt.Sprintf("pol_%s_%06d", country, i), Country: country, AreaHa: 1, RiskScore: score}
	}
	return out
}

func TestAssess(t *testing.T) {
	clean := risk.History{SupplierID: "V-1"}
	bad := risk.History{SupplierID: "V-9", Compliant: 0, HighRisk: 40, Failed: 7} // every screened plot HIGH_RISK
	mixed := risk.History{SupplierID: "V-2", Compliant: 30, HighRisk: 10, Failed: 2}
	cases := []struct {
		name     string
		plots    []risk.Plot
		history  risk.History
		maxScore int
		score    int
		level    string
		country  int
		plot     int
		supplier int
	}{
		// The risk rule of docs/batches.md with the default threshold 50:
		// COMPLIANT plots (risk score at most 50) from low- or
		// standard-risk countries are negligible whatever the supplier's
		// record; from a high-risk country never.
		{"low country, clean plots", plots("GH", 3, 0), clean, 50, 0, risk.LevelNegligible, 0, 0, 0},
		{"low country, plots in 2020 forest", plots("DE", 2, 50), clean, 50, 50, risk.LevelNegligible, 0, 50, 0},
		{"standard country", plots("BR", 2, 0), clean, 50, 25, risk.LevelNegligible, 25, 0, 0},
		{"standard country, plots at the limit, worst supplier", plots("ID", 2, 50), bad, 50, 50, risk.LevelNegligible, 25, 50, 50},
		{"low country, worst supplier", plots("GH", 1, 0), bad, 50, 50, risk.LevelNegligible, 0, 0, 50},
		{"high country", plots("RU", 1, 0), clean, 50, 100, risk.LevelNotNegligible, 100, 0, 0},
		{"high country among others", append(plots("BR", 3, 10), plots("MM", 1, 0)...), mixed, 50, 100, risk.LevelNotNegligible, 100, 10, 13},
		{"each high country", append(append(plots("BY", 1, 0), plots("KP", 1, 0)...), plots("RU", 1, 0)...), clean, 50, 100, risk.LevelNotNegligible, 100, 0, 0},
		// Other thresholds.
		{"a stricter threshold counts the supplier", plots("GH", 1, 0), mixed, 10, 13, risk.LevelNotNegligible, 0, 0, 13},
		{"a stricter threshold counts a standard country", plots("BR", 1, 0), clean, 20, 25, risk.LevelNotNegligible, 25, 0, 0},
		{"threshold 100 accepts everything", plots("RU", 1, 100), bad, 100, 100, risk.LevelNegligible, 100, 100, 50},
		{"threshold 0", plots("GH", 1, 0), clean, 0, 0, risk.LevelNegligible, 0, 0, 0},
		{"a risky plot over the threshold", plots("GH", 1, 75), clean, 50, 75, risk.LevelNotNegligible, 0, 75, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := risk.Assess(risk.Input{Plots: c.plots, Supplier: c.history, MaxScore: c.maxScore})
			if err != nil {
				t.Fatal(err)
			}
			if a.Score != c.score || a.Level != c.level || a.Country.Score != c.country || a.Plots.Score != c.plot || a.Supplier.Score != c.supplier {
				t.Errorf("got score %d %s (country %d, plots %d, supplier %d), want %d %s (%d, %d, %d)",
					a.Score, a.Level, a.Country.Score, a.Plots.Score, a.Supplier.Score, c.score, c.level, c.country, c.plot, c.supplier)
			}
			for _, e := range []string{a.Country.Explanation, a.Plots.Explanation, a.Supplier.Explanation} {
				if e == "" || !strings.HasSuffix(e, ".") {
					t.Errorf("explanation %q is not a sentence", e)
				}
			}
		})
	}
}

// TestAssess_Rule checks the risk rule of docs/batches.md over every
// country code and plot score a COMPLIANT plot can have under the default
// threshold.
func TestAssess_Rule(t *testing.T) {
	b := risk.DefaultBenchmark()
	histories := []risk.History{{SupplierID: "none"}, {SupplierID: "all bad", HighRisk: 5}, {SupplierID: "half", Compliant: 5, HighRisk: 5}}
	for a := 'A'; a <= 'Z'; a++ {
		for c := 'A'; c <= 'Z'; c++ {
			country := string([]rune{a, c})
			if !geo.IsCountryCode(country) {
				continue
			}
			for _, score := range []int{0, 25, 50} {
				for _, h := range histories {
					got, err := risk.Assess(risk.Input{Plots: plots(country, 2, score), Supplier: h, MaxScore: 50})
					if err != nil {
						t.Fatal(err)
					}
					want := risk.LevelNegligible
					if b.Class(country) == risk.CountryHigh {
						want = risk.LevelNotNegligible
					}
					if got.Level != want {
						t.Fatalf("%s, plot score %d, supplier %s: %s (score %d), want %s", country, score, h.SupplierID, got.Level, got.Score, want)
					}
				}
			}
		}
	}
}

func TestAssess_Factors(t *testing.T) {
	in := risk.Input{
		Plots: []risk.Plot{
			{PolygonID: "pol_a", Country: "BR", AreaHa: 3, RiskScore: 10},
			{PolygonID: "pol_b", Country: "GH", AreaHa: 1, RiskScore: 30},
			{PolygonID: "pol_c", Country: "BR", AreaHa: 1, RiskScore: 30},
			{PolygonID: "pol_d", Country: "RU", AreaHa: 0.5, RiskScore: 0},
		},
		Supplier: risk.History{SupplierID: "V-1", Compliant: 7, HighRisk: 1, Failed: 3},
		MaxScore: 50,
	}
	a, err := risk.Assess(in)
	if err != nil {
		t.Fatal(err)
	}
	wantCountries := []risk.CountryPlots{
		{Country: "RU", Class: risk.CountryHigh, Plots: 1, AreaHa: 0.5},
		{Country: "BR", Class: risk.CountryStandard, Plots: 2, AreaHa: 4},
		{Country: "GH", Class: risk.CountryLow, Plots: 1, AreaHa: 1},
	}
	if !slices.Equal(a.Country.Countries, wantCountries) {
		t.Errorf("countries: got %+v, want %+v", a.Country.Countries, wantCountries)
	}
	if !strings.Contains(a.Country.Explanation, "1 plot of the 4 plots is in a country of high risk (RU)") {
		t.Errorf("country explanation: %q", a.Country.Explanation)
	}
	// The highest score wins, first plot on ties; the mean is weighted by area:
	// (3*10 + 1*30 + 1*30 + 0.5*0) / 5.5 = 16.36.
	if p := a.Plots; p.Score != 30 || p.MaxPolygonID != "pol_b" || p.AreaWeightedMean != 16.36 || p.TotalAreaHa != 5.5 || p.Plots != 4 {
		t.Errorf("plot factor: %+v", p)
	}
	// 1 of 8 screened (FAILED not counted): 12.5 %, half is 6.25, rounded 6.
	if s := a.Supplier; s.Score != 6 || s.Screened != 8 || s.HighRisk != 1 || s.Failed != 3 || s.HighRiskPct != 12.5 {
		t.Errorf("supplier factor: %+v", s)
	}
	if a.Score != 100 || a.Level != risk.LevelNotNegligible {
		t.Errorf("assessment: %d %s, want 100 %s", a.Score, a.Level, risk.LevelNotNegligible)
	}
	// Points have their declared area; zero area falls back to a plain mean.
	z, err := risk.Assess(risk.Input{Plots: []risk.Plot{{PolygonID: "x", Country: "GH", RiskScore: 10}, {PolygonID: "y", Country: "GH", RiskScore: 20}}, MaxScore: 50})
	if err != nil || z.Plots.AreaWeightedMean != 15 {
		t.Errorf("zero area: %+v, %v", z.Plots, err)
	}
	// The benchmark given is used.
	ops, err := risk.ParseBenchmark([]byte(`{"version":"ops","source":"s","date":"2026-01-01","high":["GH"],"standard":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	o, err := risk.Assess(risk.Input{Plots: plots("GH", 1, 0), MaxScore: 50, Benchmark: ops})
	if err != nil || o.Level != risk.LevelNotNegligible || !strings.Contains(o.Country.Explanation, "benchmark ops of 2026-01-01") {
		t.Errorf("with an operator's benchmark: %+v, %v", o, err)
	}
}

func TestAssess_Refused(t *testing.T) {
	for _, in := range []risk.Input{
		{MaxScore: 50},
		{Plots: plots("GH", 1, 101), MaxScore: 50},
		{Plots: plots("GH", 1, -1), MaxScore: 50},
		{Plots: []risk.Plot{{PolygonID: "x", Country: "GH", AreaHa: -1}}, MaxScore: 50},
		{Plots: plots("GH", 1, 0), MaxScore: 101},
		{Plots: plots("GH", 1, 0), Supplier: risk.History{HighRisk: -1}, MaxScore: 50},
	} {
		if _, err := risk.Assess(in); err == nil {
			b, _ := json.Marshal(in)
			t.Errorf("Assess(%s): no error", b)
		}
	}
}
