package apitest

import (
	"testing"

	"github.com/eudr/eudr/server/euis"
)

// EUStatement is a statement the EU system's rules accept, filed for the
// EU operator operatorUUID: cocoa beans of one plot in Ghana, imported
// into the Netherlands. It fails the test if the rules refuse it.
func EUStatement(tb testing.TB, operatorUUID string) euis.Statement {
	tb.Helper()
	s := euis.Statement{
		OperatorRole:       euis.RoleOperator,
		InternalReference:  "PO-RETRY-1",
		ActivityType:       euis.ActivityImport,
		Operator:           euis.Operator{Name: "Importer BV", Country: "NL", EORI: "NL123456789"},
		CountryOfActivity:  "NL",
		BorderCrossCountry: "NL",
		Commodities: []euis.Commodity{{HSHeading: "1801", DescriptionOfGoods: "cocoa, batch R-1", NetWeightKg: "1200",
			Producers: []euis.Producer{{Country: "GH", Name: "Kofi Mensah", GeometryGeoJSON: []byte(`{"type":"FeatureCollection","features":[` +
				`{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-1.600000,6.700000],[-1.590000,6.700000],[-1.590000,6.710000],[-1.600000,6.700000]]]},` +
				`"properties":{"ProducerCountry":"GH","ProducerName":"Kofi Mensah"}}]}`)}}}},
		OperatorUUID:          operatorUUID,
		SupplierOperatorUUIDs: []string{operatorUUID},
	}
	if err := euis.Validate(s); err != nil {
		tb.Fatalf("the test statement breaks an EU rule: %v", err)
	}
	return s
}
