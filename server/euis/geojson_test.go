package euis_test

import (
	"encoding/json"
	"testing"

	"github.com/eudr/eudr/server/euis"
)

// A plot in the EU's GeoJSON file profile: 6 decimals, rounded; the EU's
// property names; Area for a point only; the commodity under the
// appliance's own name when asked; text as it is (no HTML escapes).
func TestPlotFeature(t *testing.T) {
	area := 1.5
	for _, tc := range []struct {
		name, feature string
		props         euis.PlotProperties
		want          string
	}{
		{"Point", `{"type":"Feature","geometry":{"type":"Point","coordinates":[5.0000006,-6.12345649]},"properties":{"area":1.5}}`,
			euis.PlotProperties{ProducerCountry: "GH", ProducerName: "Kofi & Sons <Ltd>", ProductionPlace: "Kumasi", AreaHa: &area},
			`{"geometry":{"coordinates":[5.000001,-6.123456],"type":"Point"},"properties":{"Area":1.5,"ProducerCountry":"GH","ProducerName":"Kofi & Sons <Ltd>","ProductionPlace":"Kumasi"},"type":"Feature"}`},
		{"PolygonWithDeclaredArea", `{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}`,
			euis.PlotProperties{ProducerCountry: "CI", AreaHa: &area, Commodity: "cocoa"},
			`{"geometry":{"coordinates":[[[0.000000,0.000000],[1.000000,0.000000],[1.000000,1.000000],[0.000000,0.000000]]],"type":"Polygon"},` +
				`"properties":{"ProducerCountry":"CI","commodity":"cocoa"},"type":"Feature"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := euis.PlotFeature(json.RawMessage(tc.feature), tc.props)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
	if _, err := euis.PlotFeature(json.RawMessage(`[`), euis.PlotProperties{}); err == nil {
		t.Error("bad feature: no error")
	}
}
