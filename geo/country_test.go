package geo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
)

// parseIn is parseOne with producerCountry country.
func parseIn(t *testing.T, geometry, country, extra string) geo.Feature {
	t.Helper()
	f := parseOne(t, geometry, extra)
	f.Properties.ProducerCountry = country
	return f
}

func TestAssess_ProducerCountry(t *testing.T) {
	ix := geo.NewIndex(geo.SandboxLayers()...).WithBorders()
	kumasi := rectJSON(-1.625, 6.685, -1.615, 6.695)                                               // Ghana
	matoGrosso := rectJSON(-55.01, -12.01, -55, -12)                                               // Brazil
	swapped := rectJSON(-12.01, -55.01, -12, -55)                                                  // the same, axes swapped: South Atlantic
	twoPoints := `{"type":"MultiPoint","coordinates":[[-1.620000,6.690000],[-4.020000,5.360000]]}` // Kumasi, Abidjan
	for _, tc := range []struct {
		name, geometry, country, extra string
		status, reason, detail         string
		outcome                        string
		foundIn                        string
	}{
		{"in Ghana, GH", kumasi, "GH", "", geo.StatusCompliant, "", "", geo.CountryIn, ""},
		{"in Ghana, CI", kumasi, "CI", "", geo.StatusFailed, geo.ReasonOutsideProducerCountry,
			"the plot lies in Ghana (GH), not in Côte d'Ivoire (CI), its producerCountry (more than 5 km from its boundary)", geo.CountryOutside, "GH"},
		{"in Brazil, BR", matoGrosso, "BR", "", geo.StatusCompliant, "", "", geo.CountryIn, ""},
		{"in Brazil, axes swapped", swapped, "BR", "", geo.StatusFailed, geo.ReasonOutsideProducerCountry,
			"the plot lies in no country: at sea? It is more than 5 km from Brazil (BR), its producerCountry; check that each position is longitude first, then latitude", geo.CountryOutside, ""},
		{"in Ghana, GH, area off: the place is judged first", kumasi, "CI", `,"area":500`, geo.StatusFailed, geo.ReasonOutsideProducerCountry, "lies in Ghana (GH)", geo.CountryOutside, "GH"},
		{"in Ghana and Côte d'Ivoire, GH", twoPoints, "GH", `,"area":1`, geo.StatusFailed, geo.ReasonOutsideProducerCountry,
			"the plot's point 1 lies in Côte d'Ivoire (CI), not in Ghana (GH)", geo.CountryOutside, "CI"},
		{"in Ghana, TK: no boundary, not checked", kumasi, "TK", "", geo.StatusCompliant, "", "", geo.CountryNoBoundary, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := geo.Assess(context.Background(), parseIn(t, tc.geometry, tc.country, tc.extra), ix, geo.DefaultRules())
			if err != nil {
				t.Fatal(err)
			}
			if o.Status != tc.status || o.Reason != tc.reason || !strings.Contains(o.Detail, tc.detail) {
				t.Errorf("Assess = %s %s (%s), want %s %s (%s)", o.Status, o.Reason, o.Detail, tc.status, tc.reason, tc.detail)
			}
			if o.Country == nil {
				t.Fatal("Country = nil")
			}
			if c := o.Country; c.Country != tc.country || c.Outcome != tc.outcome || strings.Join(c.FoundIn, " ") != tc.foundIn {
				t.Errorf("Country = %+v, want %s %s found in %q", *c, tc.country, tc.outcome, tc.foundIn)
			}
			if tc.status == geo.StatusFailed && o.AreaHa == 0 {
				t.Error("AreaHa = 0 on a plot failed for its place")
			}
		})
	}

	// A geometry at fault is judged before the place; an index without
	// borders does not check it.
	bowtie := `{"type":"Polygon","coordinates":[[[-1.62,6.68],[-1.61,6.69],[-1.61,6.68],[-1.62,6.69],[-1.62,6.68]]]}`
	if o, _ := geo.Assess(context.Background(), parseIn(t, bowtie, "CI", ""), ix, geo.DefaultRules()); o.Reason != geo.ReasonSelfIntersection || o.Country != nil {
		t.Errorf("a figure 8 in Ghana, CI: %s, Country %v; want SELF_INTERSECTION, nil", o.Reason, o.Country)
	}
	if o, _ := geo.Assess(context.Background(), parseIn(t, kumasi, "CI", ""), geo.NewIndex(geo.SandboxLayers()...), geo.DefaultRules()); o.Status != geo.StatusCompliant || o.Country != nil {
		t.Errorf("without borders: %s %s, Country %v; want COMPLIANT, nil", o.Status, o.Reason, o.Country)
	}
	// WithRasters keeps the check.
	if o, _ := geo.Assess(context.Background(), parseIn(t, kumasi, "CI", ""), ix.WithRasters(), geo.DefaultRules()); o.Reason != geo.ReasonOutsideProducerCountry {
		t.Errorf("WithRasters after WithBorders: %s %s, want OUTSIDE_PRODUCER_COUNTRY", o.Status, o.Reason)
	}
}
