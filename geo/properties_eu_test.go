package geo_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/eudr/eudr/geo"
)

// The EU information system's spellings ProducerName, ProducerCountry,
// ProductionPlace and Area are read as ours.
func TestParseFeatureCollection_EUNames(t *testing.T) {
	// Both spellings, agreeing: one property (a file made to be read by the
	// EU system and by tools that expect ours).
	both := mustParse(t, `{"type":"FeatureCollection","features":[{"type":"Feature",
		"geometry":{"type":"Point","coordinates":[-1.995,5.3]},
		"properties":{"commodity":"cocoa","producerCountry":"GH","ProducerCountry":"GH","Area":1.5,"area":1.5,
		  "ProducerName":"Yaw","producerName":"Yaw"}}]}`)
	if p := both[0].Properties; p.ProducerCountry != "GH" || p.ProducerName != "Yaw" || p.Area == nil || *p.Area != 1.5 {
		t.Errorf("both spellings agreeing: properties = %+v", p)
	}

	feats := mustParse(t, `{"type":"FeatureCollection","features":[{"type":"Feature",
		"geometry":{"type":"Point","coordinates":[-1.995,5.3]},
		"properties":{"commodity":"cocoa","ProducerCountry":"GH","ProducerName":"Yaw Boateng","ProductionPlace":"Tarkwa","Area":1.5}}]}`)
	p := feats[0].Properties
	if p.ProducerCountry != "GH" || p.ProducerName != "Yaw Boateng" || p.ProductionPlace != "Tarkwa" || p.Area == nil || *p.Area != 1.5 {
		t.Errorf("properties = %+v, want the EU names read", p)
	}
}

// Each problem of an EU-named property is at the name sent; both
// spellings in one feature with different values are a duplicate member,
// as one name twice is.
func TestParseFeatureCollection_EUNameProblems(t *testing.T) {
	body := `{"type":"FeatureCollection","features":[
	{"type":"Feature","geometry":{"type":"Point","coordinates":[-1.995,5.3]},
	 "properties":{"commodity":"cocoa","producerCountry":"GH","ProducerCountry":"CI","area":1,"Area":2,
	   "producerName":"A","ProducerName":"B","ProductionPlace":"P","productionPlace":"Q"}},
	{"type":"Feature","geometry":{"type":"Point","coordinates":[-1.995,5.3]},
	 "properties":{"commodity":"cocoa","ProducerCountry":"gh","Area":9}},
	{"type":"Feature","geometry":{"type":"Point","coordinates":[-1.995,5.3]},
	 "properties":{"commodity":"cocoa","ProducerCountry":"GH","Area":"1"}}]}`
	_, err := geo.ParseFeatureCollection([]byte(body), geo.ParseOptions{})
	var probs geo.Problems
	if !errors.As(err, &probs) {
		t.Fatalf("err = %v, want problems", err)
	}
	type at struct{ code, path string }
	var got []at
	for _, p := range probs {
		got = append(got, at{p.Code, p.Path})
	}
	want := []at{
		{geo.CodeInvalidValue, "features[0].properties.ProducerCountry"},
		{geo.CodeInvalidValue, "features[0].properties.Area"},
		{geo.CodeInvalidValue, "features[0].properties.ProducerName"},
		{geo.CodeInvalidValue, "features[0].properties.productionPlace"},
		{geo.CodeInvalidValue, "features[1].properties.ProducerCountry"},
		{geo.CodePointAreaTooLarge, "features[1].properties.Area"},
		{geo.CodeInvalidValue, "features[2].properties.Area"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n got %v\nwant %v\n(%v)", got, want, probs)
	}
	for _, i := range []int{0, 1, 2, 3} {
		if probs[i].Issue != "appears more than once" {
			t.Errorf("problem %d = %v, want the duplicate member's issue", i, probs[i])
		}
	}
}
