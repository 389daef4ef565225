package euis_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/euis"
)

// flatten returns the producers' names of the statements' commodities, in
// order.
func flatten(ss []euis.Statement) []string {
	var out []string
	for _, s := range ss {
		for _, c := range s.Commodities {
			for _, p := range c.Producers {
				out = append(out, p.Name)
			}
		}
	}
	return out
}

func names(s euis.Statement) []string { return flatten([]euis.Statement{s}) }

// shape returns the producer counts of each statement's commodities: the
// layout of a split, as "[1000 1000 500] [12]".
func shape(ss []euis.Statement) string {
	var parts []string
	for _, s := range ss {
		var counts []int
		for _, c := range s.Commodities {
			counts = append(counts, len(c.Producers))
		}
		parts = append(parts, fmt.Sprint(counts))
	}
	return strings.Join(parts, " ")
}

func checkSplit(t *testing.T, in euis.Statement, out []euis.Statement) {
	t.Helper()
	for i, s := range out {
		if err := euis.Validate(s); err != nil {
			t.Errorf("statement %d: %v", i, err)
		}
		if n := euis.GeolocationSize(s); n > euis.MaxGeolocationBytes {
			t.Errorf("statement %d: %d bytes of geolocation", i, n)
		}
	}
	if got, want := flatten(out), names(in); !reflect.DeepEqual(got, want) {
		t.Errorf("producers changed or reordered: %d of %d", len(got), len(want))
	}
}

func TestSplit_Fits(t *testing.T) {
	in := validStatement()
	out, err := euis.Split(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || !reflect.DeepEqual(out[0], in) {
		t.Errorf("Split of a statement that fits changed it: %+v", out)
	}
}

func TestSplit_ProducersPerCommodity(t *testing.T) {
	in := validStatement()
	in.Commodities[0] = cocoa(2500)
	in.Commodities[0].NetWeightKg = "1000.000001"
	in.Commodities[0].SpeciesInfo = []euis.Species{{ScientificName: "Theobroma cacao", CommonName: "Cacao"}}
	out, err := euis.Split(in)
	if err != nil {
		t.Fatal(err)
	}
	checkSplit(t, in, out)
	// One statement: the commodity becomes three entries of it.
	if got := shape(out); got != "[1000 1000 500 1]" {
		t.Fatalf("shape %s, want [1000 1000 500 1]", got)
	}
	s := out[0]
	if s.InternalReference != "PO-4711" {
		t.Errorf("internal reference %q, want PO-4711 unchanged (one statement)", s.InternalReference)
	}
	for i, c := range s.Commodities[:3] {
		if c.HSHeading != "1801" || c.DescriptionOfGoods != in.Commodities[0].DescriptionOfGoods || !reflect.DeepEqual(c.SpeciesInfo, in.Commodities[0].SpeciesInfo) {
			t.Errorf("part %d: %+v", i, c)
		}
	}
	// 1000.000001 kg in millionths: 400,000,000 + 400,000,000 + the
	// remainder 200,000,001, exactly.
	if w := []euis.Decimal{s.Commodities[0].NetWeightKg, s.Commodities[1].NetWeightKg, s.Commodities[2].NetWeightKg}; !reflect.DeepEqual(w, []euis.Decimal{"400", "400", "200.000001"}) {
		t.Errorf("net weights %v, want [400 400 200.000001]", w)
	}
}

func TestSplit_Commodities(t *testing.T) {
	in := validStatement()
	in.Commodities = nil
	for i := range 150 {
		c := cocoa(0)
		c.Producers = producers("GH", i, 1)
		c.DescriptionOfGoods = fmt.Sprint("Lot ", i)
		in.Commodities = append(in.Commodities, c)
	}
	out, err := euis.Split(in)
	if err != nil {
		t.Fatal(err)
	}
	checkSplit(t, in, out)
	if len(out) != 2 || len(out[0].Commodities) != 100 || len(out[1].Commodities) != 50 {
		t.Fatalf("shape %s, want 100 and 50 commodities", shape(out))
	}
	if out[0].InternalReference != "PO-4711-1" || out[1].InternalReference != "PO-4711-2" {
		t.Errorf("internal references %q, %q", out[0].InternalReference, out[1].InternalReference)
	}
	if out[1].Commodities[0].DescriptionOfGoods != "Lot 100" {
		t.Errorf("second statement starts with %q, want Lot 100", out[1].Commodities[0].DescriptionOfGoods)
	}
	if len(out[0].ReferencedStatements) != 2 || len(out[1].ReferencedStatements) != 0 {
		t.Errorf("references %v / %v, want all on the first statement", out[0].ReferencedStatements, out[1].ReferencedStatements)
	}
	for i, s := range out {
		if s.ActivityType != in.ActivityType || !reflect.DeepEqual(s.Operator, in.Operator) || s.OperatorUUID != in.OperatorUUID || !reflect.DeepEqual(s.SupplierOperatorUUIDs, in.SupplierOperatorUUIDs) {
			t.Errorf("statement %d lost its head: %+v", i, s)
		}
	}
}

func TestSplit_Producers(t *testing.T) {
	in := validStatement()
	in.ReferencedStatements = nil
	in.Commodities = nil
	for i := range 12 {
		c := cocoa(0)
		c.Producers = producers("CI", i*1000, 1000)
		in.Commodities = append(in.Commodities, c)
	}
	out, err := euis.Split(in)
	if err != nil {
		t.Fatal(err)
	}
	checkSplit(t, in, out)
	if got, want := shape(out), "[1000 1000 1000 1000 1000 1000 1000 1000 1000 1000] [1000 1000]"; got != want {
		t.Errorf("shape %s, want %s", got, want)
	}
}

func TestSplit_WholeCommodities(t *testing.T) {
	// 9,500 + 800 producers: the 800 go whole to a second statement.
	in := validStatement()
	in.Commodities = nil
	for i := range 10 {
		n := 950
		c := cocoa(0)
		c.Producers = producers("CI", i*1000, n)
		in.Commodities = append(in.Commodities, c)
	}
	c := cocoa(0)
	c.Producers = producers("GH", 20000, 800)
	in.Commodities = append(in.Commodities, c)
	out, err := euis.Split(in)
	if err != nil {
		t.Fatal(err)
	}
	checkSplit(t, in, out)
	if got, want := shape(out), "[950 950 950 950 950 950 950 950 950 950] [800]"; got != want {
		t.Errorf("shape %s, want %s", got, want)
	}
}

func TestSplit_Geolocation(t *testing.T) {
	in := validStatement()
	c := cocoa(0)
	for i := range 20 {
		c.Producers = append(c.Producers, euis.Producer{Country: "CI", Name: fmt.Sprint("Plot ", i), GeometryGeoJSON: padded(1_000_000)})
	}
	in.Commodities = []euis.Commodity{c}
	out, err := euis.Split(in)
	if err != nil {
		t.Fatal(err)
	}
	checkSplit(t, in, out)
	// 1,333,336 base64 bytes a plot: 18 plots fit in 25,000,000.
	if got := shape(out); got != "[18] [2]" {
		t.Errorf("shape %s, want [18] [2]", got)
	}
	if w := []euis.Decimal{out[0].Commodities[0].NetWeightKg, out[1].Commodities[0].NetWeightKg}; !reflect.DeepEqual(w, []euis.Decimal{"1125.45", "125.05"}) {
		t.Errorf("net weights %v, want 18/20 and 2/20 of 1250.5: [1125.45 125.05]", w)
	}
	if out[0].Commodities[0].NetWeightKg != "1125.45" {
		t.Errorf("first part %v kg, want 18/20 of 1250.5 = 1125.45", out[0].Commodities[0].NetWeightKg)
	}
}

func TestSplit_WholeUnits(t *testing.T) {
	in := validStatement()
	in.Commodities = []euis.Commodity{{
		HSHeading: "010229", DescriptionOfGoods: "Live cattle", NetWeightKg: "3000",
		SupplementaryUnit: dec("7"), SupplementaryUnitType: "NAR", Producers: producers("BR", 0, 2500),
	}}
	out, err := euis.Split(in)
	if err != nil {
		t.Fatal(err)
	}
	checkSplit(t, in, out)
	var units []euis.Decimal
	for _, c := range out[0].Commodities {
		units = append(units, *c.SupplementaryUnit)
	}
	if !reflect.DeepEqual(units, []euis.Decimal{"2", "2", "3"}) {
		t.Errorf("heads %v, want [2 2 3]: whole animals adding up to 7", units)
	}
}

func TestSplit_InternalReference(t *testing.T) {
	in := validStatement()
	in.Commodities = nil
	for i := range 250 {
		c := cocoa(0)
		c.Producers = producers("GH", i, 1)
		in.Commodities = append(in.Commodities, c)
	}
	for _, tc := range []struct{ ref, first, last string }{
		{strings.Repeat("R", 35), strings.Repeat("R", 33) + "-1", strings.Repeat("R", 33) + "-3"},
		{"", "", ""},
		{"PO-4711", "PO-4711-1", "PO-4711-3"},
	} {
		in.InternalReference = tc.ref
		out, err := euis.Split(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != 3 || out[0].InternalReference != tc.first || out[2].InternalReference != tc.last {
			t.Errorf("Split with internal reference %q: %d statements, %q ... %q; want 3, %q ... %q", tc.ref, len(out), out[0].InternalReference, out[len(out)-1].InternalReference, tc.first, tc.last)
		}
	}
}

func TestSplit_CommoditiesWithoutProducers(t *testing.T) {
	in := validStatement()
	in.Commodities = nil
	for i := range 120 {
		c := cocoa(0)
		c.Producers = producers("GH", i, 1)
		in.Commodities = append(in.Commodities, c)
	}
	covered := cocoa(0)
	covered.DescriptionOfGoods = "Covered by the referenced statements"
	in.Commodities = append(in.Commodities, covered)
	out, err := euis.Split(in)
	if err != nil {
		t.Fatal(err)
	}
	checkSplit(t, in, out)
	if len(out) != 2 || out[0].Commodities[0].DescriptionOfGoods != covered.DescriptionOfGoods {
		t.Errorf("the commodity without producers is not first in the first statement: %s", shape(out))
	}
}

func TestSplit_Unsplittable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*euis.Statement)
		code   string
	}{
		{"InvalidHSHeading", func(s *euis.Statement) {
			for len(s.Commodities) < 120 {
				s.Commodities = append(s.Commodities, cocoa(1))
			}
			s.Commodities[5].HSHeading = "ABC"
		}, euis.CodeInvalidFormat},
		{"GeometryTooLarge", func(s *euis.Statement) {
			s.Commodities[0].Producers[0].GeometryGeoJSON = padded(19_000_000)
		}, euis.CodeGeometryTooLarge},
		{"TooManyReferences", func(s *euis.Statement) {
			s.ReferencedStatements = nil
			for i := range 2001 {
				s.ReferencedStatements = append(s.ReferencedStatements, euis.Reference{ReferenceNumber: fmt.Sprintf("26FR%010d", i), VerificationNumber: "SEKUYXPP"})
			}
		}, euis.CodeTooManyReferences},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validStatement()
			tc.mutate(&s)
			out, err := euis.Split(s)
			var vs euis.Violations
			if !errors.As(err, &vs) || out != nil {
				t.Fatalf("Split = %d statements, %v; want Violations", len(out), err)
			}
			found := false
			for _, v := range vs {
				switch v.Code {
				case tc.code:
					found = true
				case euis.CodeTooManyCommodities, euis.CodeGeolocationTooLarge:
					t.Errorf("Split reports %v, which it would cure", v)
				}
			}
			if !found {
				t.Errorf("Split = %v, want %s", vs, tc.code)
			}
		})
	}
}
