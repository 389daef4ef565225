package euis_test

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/euis"
)

// t0 is the time of the tests' clocks: 2026-05-20 09:50 UTC.
var t0 = time.Date(2026, 5, 20, 9, 50, 0, 0, time.UTC)

func newClock(t time.Time) *apitest.Clock { return apitest.NewClock(t) }

// point returns the GeoJSON of a point plot near Abidjan, distinct for
// each i.
func point(i int) []byte {
	return fmt.Appendf(nil, `{"type":"Point","coordinates":[%.6f,%.6f]}`, -4.0+float64(i%1000)*0.0001, 5.3+float64(i/1000)*0.0001)
}

// padded returns a point GeoJSON of exactly n bytes (n >= 64), padded with
// JSON whitespace.
func padded(n int) []byte {
	head := []byte(`{"type":"Point","coordinates":[-4.000000,5.300000]`)
	b := make([]byte, 0, n)
	b = append(b, head...)
	b = append(b, bytes.Repeat([]byte(" "), n-len(head)-1)...)
	return append(b, '}')
}

// producers returns n producers in country with point plots from i0.
func producers(country string, i0, n int) []euis.Producer {
	ps := make([]euis.Producer, n)
	for i := range ps {
		ps[i] = euis.Producer{Country: country, Name: fmt.Sprintf("Producer %d", i0+i), GeometryGeoJSON: point(i0 + i)}
	}
	return ps
}

func ptr(v float64) *float64 { return &v }

func dec(s string) *euis.Decimal { d := euis.Decimal(s); return &d }

// cocoa returns a cocoa beans commodity (HS 1801) of n producers.
func cocoa(n int) euis.Commodity {
	return euis.Commodity{
		HSHeading:          "1801",
		DescriptionOfGoods: "Cocoa beans, whole, raw",
		NetWeightKg:        "1250.5",
		Producers:          producers("CI", 0, n),
	}
}

// validStatement returns an IMPORT statement that passes Validate: cocoa
// beans from two producers and wood (HS 4410, a supplementary unit in MTQ,
// species) from one, referencing two statements.
func validStatement() euis.Statement {
	return euis.Statement{
		OperatorRole:       euis.RoleOperator,
		InternalReference:  "PO-4711",
		ActivityType:       euis.ActivityImport,
		Operator:           euis.Operator{Name: "Chocolaterie Example NV", Country: "BE", EORI: "BE0123456789"},
		CountryOfActivity:  "BE",
		BorderCrossCountry: "NL",
		Commodities: []euis.Commodity{
			cocoa(2),
			{
				HSHeading:             "4410",
				DescriptionOfGoods:    "Particle board of wood",
				NetWeightKg:           "300",
				SupplementaryUnit:     dec("12.345678"),
				SupplementaryUnitType: "MTQ",
				SpeciesInfo:           []euis.Species{{ScientificName: "Fagus sylvatica", CommonName: "European beech"}},
				Producers:             []euis.Producer{{Country: "fr", Name: "Scierie du Jura", GeometryGeoJSON: []byte(`{"type":"Polygon","coordinates":[[[5.900000,46.600000],[5.910000,46.600000],[5.910000,46.610000],[5.900000,46.600000]]]}`)}},
			},
		},
		ReferencedStatements: []euis.Reference{
			{ReferenceNumber: "26FRYUI34JTQKB", VerificationNumber: "SEKUYXPP"},
			{ReferenceNumber: "S26FRNMNBSA96Q", VerificationNumber: "SFFCB4Y3"},
		},
		OperatorUUID:          "6f1d0c1e-8a4b-4c3a-9e57-2b1f7e0d9a10",
		SupplierOperatorUUIDs: []string{"0b7e3b52-1f7a-4a8e-9b0d-6c2e5f4a3d21", "6F1D0C1E-8A4B-4C3A-9E57-2B1F7E0D9A10"},
	}
}

// mustValidate fails the test when s does not pass Validate.
func mustValidate(tb testing.TB, s euis.Statement) {
	tb.Helper()
	if err := euis.Validate(s); err != nil {
		tb.Fatalf("Validate: %v", err)
	}
}
