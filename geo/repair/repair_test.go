package repair

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
)

// parse reads one feature of the given geometry as the repair endpoint
// does: open rings and rings across 180° accepted.
func parse(t *testing.T, geometry string) geo.Feature {
	t.Helper()
	body := `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"commodity":"cocoa","producerCountry":"GH","area":1},"geometry":` + geometry + `}]}`
	feats, err := geo.ParseFeatureCollection([]byte(body), geo.ParseOptions{OpenRings: true, DeferAntimeridian: true})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return feats[0]
}

func codes(cs []Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Code
	}
	return out
}

// repaired repairs geometry, checks that the result passes geo.Check as
// written, and returns the result and its geometry as written.
func repaired(t *testing.T, geometry string) (Result, string) {
	t.Helper()
	res := Feature(parse(t, geometry))
	if res.Unrepaired != nil {
		t.Fatalf("unrepaired: %+v", *res.Unrepaired)
	}
	written := string(res.WriteGeometry())
	back := parse(t, written)
	if reason, detail := geo.Check(back); reason != "" {
		t.Fatalf("the repaired geometry %s fails Check: %s %s", written, reason, detail)
	}
	return res, written
}

// A square of 0.001° at 6 decimals, counter-clockwise, and the same clockwise.
const (
	square   = `[[5.000000,6.000000],[5.001000,6.000000],[5.001000,6.001000],[5.000000,6.001000],[5.000000,6.000000]]`
	squareCW = `[[5.000000,6.000000],[5.000000,6.001000],[5.001000,6.001000],[5.001000,6.000000],[5.000000,6.000000]]`
)

func TestValidPlotsAreLeftAsSent(t *testing.T) {
	for _, g := range []string{
		`{"type":"Polygon","coordinates":[` + square + `]}`,
		`{"type":"Polygon","coordinates":[` + squareCW + `]}`, // either winding is valid
		`{"type":"Polygon","coordinates":[[[5.00000012,6.00000011],[5.00100013,6],[5.001,6.001],[5,6.001],[5.00000012,6.00000011]]]}`,
		`{"type":"Point","coordinates":[5.000001,6.000001]}`,
	} {
		res := Feature(parse(t, g))
		if res.Unrepaired != nil || len(res.Changes) != 0 {
			t.Errorf("%s: %+v %+v, want nothing changed", g, res.Changes, res.Unrepaired)
		}
	}
}

func TestOpenRingClosed(t *testing.T) {
	// Valid once closed: only closed, written with the decimals sent.
	res, written := repaired(t, `{"type":"Polygon","coordinates":[[[5.0000001,6],[5.001,6],[5.001,6.001],[5,6.001]]]}`)
	if got := codes(res.Changes); !slices.Equal(got, []string{RingClosed}) {
		t.Fatalf("changes %v", got)
	}
	c := res.Changes[0]
	if c.Path != "geometry.coordinates[0]" || c.Positions != 1 || !strings.Contains(c.Message, "[5.0000001, 6]") {
		t.Errorf("change %+v", c)
	}
	want := `{"type":"Polygon","coordinates":[[[5.0000001,6.0000000],[5.0010000,6.0000000],[5.0010000,6.0010000],[5.0000000,6.0010000],[5.0000001,6.0000000]]]}`
	if written != want {
		t.Errorf("written\n%s, want\n%s", written, want)
	}
}

func TestOpenRingStillRefusedByTheStrictParser(t *testing.T) {
	body := `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"commodity":"cocoa","producerCountry":"GH"},"geometry":{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5.001,6],[5.001,6.001]]]}}]}`
	_, err := geo.ParseFeatureCollection([]byte(body), geo.ParseOptions{})
	var ps geo.Problems
	if !errors.As(err, &ps) || len(ps) != 2 || ps[0].Code != geo.CodeInvalidRing || ps[1].Code != geo.CodeInvalidCoordinateClosure {
		t.Fatalf("strict parse: %v", err)
	}
	feats, err := geo.ParseFeatureCollection([]byte(body), geo.ParseOptions{OpenRings: true})
	if err != nil || len(feats[0].Geometry.Polygons[0][0]) != 3 {
		t.Fatalf("lenient parse: %v %v", feats, err)
	}
	// Two positions are no ring even when open rings are read.
	body = strings.Replace(body, `,[5.001,6.001]`, ``, 1)
	if _, err := geo.ParseFeatureCollection([]byte(body), geo.ParseOptions{OpenRings: true}); err == nil {
		t.Fatal("a ring of 2 positions was read")
	}
}

func TestDuplicatePositionsRemoved(t *testing.T) {
	res, written := repaired(t, `{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5.001,6],[5.001,6],[5.001,6.001],[5,6.001],[5,6.001],[5.000000,6.000000]]]}`)
	if got := codes(res.Changes); !slices.Equal(got, []string{DuplicatePositionsRemoved}) {
		t.Fatalf("changes %v", got)
	}
	if c := res.Changes[0]; c.Positions != 2 || c.Path != "geometry.coordinates[0]" || strings.Contains(c.Message, "rounded") {
		t.Errorf("change %+v", c)
	}
	if written != `{"type":"Polygon","coordinates":[`+square+`]}` {
		t.Errorf("written %s", written)
	}
}

func TestRoundingThatCreatesADuplicate(t *testing.T) {
	// Positions 1 and 2 differ as sent and are one point at 6 decimals.
	res, written := repaired(t, `{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5.00100001,6],[5.00099999,6.00000001],[5.001,6.001],[5,6.001],[5.000000,6.000000]]]}`)
	if got := codes(res.Changes); !slices.Equal(got, []string{DuplicatePositionsRemoved, RoundedTo6Decimals}) {
		t.Fatalf("changes %v", got)
	}
	if c := res.Changes[0]; c.Positions != 1 || !strings.Contains(c.Message, "1 of them only once rounded to 6 decimals") {
		t.Errorf("change %+v", c)
	}
	if c := res.Changes[1]; c.Positions != 2 || c.Path != "geometry.coordinates" {
		t.Errorf("change %+v", c)
	}
	if written != `{"type":"Polygon","coordinates":[`+square+`]}` {
		t.Errorf("written %s", written)
	}
}

func TestRoundingThatCreatesASelfTouch(t *testing.T) {
	// Position 4 lies 0.4 micro-degrees off the side from 0 to 1 as sent
	// and on it at 6 decimals: the ring pinches into two loops.
	g := `{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5.002,6],[5.002,6.001],[5.001,6.0000004],[5.0005,6.001],[5,6.001],[5.000000,6.000000]]]}`
	if reason, _ := geo.Check(parse(t, g)); reason != geo.ReasonDuplicateVerticesAfterRounding {
		t.Fatalf("Check as sent: %s", reason)
	}
	res, written := repaired(t, g)
	if got := codes(res.Changes); !slices.Equal(got, []string{SelfIntersectionSplit, RoundedTo6Decimals}) {
		t.Fatalf("changes %v", got)
	}
	want := `{"type":"MultiPolygon","coordinates":[` +
		`[[[5.001000,6.000000],[5.002000,6.000000],[5.002000,6.001000],[5.001000,6.000000]]],` +
		`[[[5.000000,6.000000],[5.001000,6.000000],[5.000500,6.001000],[5.000000,6.001000],[5.000000,6.000000]]]]}`
	if written != want {
		t.Errorf("written\n%s, want\n%s", written, want)
	}
}

func TestOrientation(t *testing.T) {
	// A clockwise ring that needs repair anyway is rebuilt counter-clockwise.
	res, written := repaired(t, `{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5,6.001],[5.001,6.001],[5.001,6.001],[5.001,6],[5.000000,6.000000]]]}`)
	if got := codes(res.Changes); !slices.Equal(got, []string{DuplicatePositionsRemoved, RingRewound}) {
		t.Fatalf("changes %v", got)
	}
	if written != `{"type":"Polygon","coordinates":[`+square+`]}` {
		t.Errorf("written %s", written)
	}
}

func TestSpikeRemoved(t *testing.T) {
	// From [5.001,6.0005] out to [5.002,6.0005] and back.
	res, written := repaired(t, `{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5.001,6],[5.001,6.0005],[5.002,6.0005],[5.001,6.0005],[5.001,6.001],[5,6.001],[5.000000,6.000000]]]}`)
	if got := codes(res.Changes); !slices.Equal(got, []string{SpikesRemoved}) {
		t.Fatalf("changes %v", got)
	}
	if c := res.Changes[0]; c.Positions != 2 { // the tip, then the repeat it leaves
		t.Errorf("change %+v", c)
	}
	want := `{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5.001000,6.000000],[5.001000,6.000500],[5.001000,6.001000],[5.000000,6.001000],[5.000000,6.000000]]]}`
	if written != want {
		t.Errorf("written\n%s, want\n%s", written, want)
	}
}

func TestBowtieSplit(t *testing.T) {
	res, written := repaired(t, `{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5.002,6.002],[5.002,6],[5,6.002],[5.000000,6.000000]]]}`)
	if got := codes(res.Changes); !slices.Equal(got, []string{SelfIntersectionSplit}) {
		t.Fatalf("changes %v", got)
	}
	if c := res.Changes[0]; c.Parts != 2 || !strings.Contains(c.Message, "crosses") {
		t.Errorf("change %+v", c)
	}
	want := `{"type":"MultiPolygon","coordinates":[` +
		`[[[5.001000,6.001000],[5.002000,6.000000],[5.002000,6.002000],[5.001000,6.001000]]],` +
		`[[[5.000000,6.000000],[5.001000,6.001000],[5.000000,6.002000],[5.000000,6.000000]]]]}`
	if written != want {
		t.Errorf("written\n%s, want\n%s", written, want)
	}
}

func TestFigureEightThroughACornerSplit(t *testing.T) {
	// Two squares drawn as one ring, passing their common corner twice.
	res, written := repaired(t, `{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5.001,6],[5.001,6.001],[5.002,6.001],[5.002,6.002],[5.001,6.002],[5.001,6.001],[5,6.001],[5,6]]]}`)
	if got := codes(res.Changes); !slices.Equal(got, []string{SelfIntersectionSplit}) {
		t.Fatalf("changes %v", got)
	}
	want := `{"type":"MultiPolygon","coordinates":[` +
		`[[[5.001000,6.001000],[5.002000,6.001000],[5.002000,6.002000],[5.001000,6.002000],[5.001000,6.001000]]],` +
		`[[[5.000000,6.000000],[5.001000,6.000000],[5.001000,6.001000],[5.000000,6.001000],[5.000000,6.000000]]]]}`
	if written != want {
		t.Errorf("written\n%s, want\n%s", written, want)
	}
}

func TestSpikeAlongASide(t *testing.T) {
	// The top side runs west past a corner and comes back to it.
	res, _ := repaired(t, `{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5.002,6],[5.002,6.001],[5.001,6.001],[5.0015,6.001],[5.001,6.001],[5.001,6.002],[5,6.002],[5,6]]]}`)
	if got := codes(res.Changes); !slices.Equal(got, []string{SpikesRemoved}) || res.Geometry.Type != geo.TypePolygon {
		t.Fatalf("changes %v, geometry %v", got, res.Geometry)
	}
}

func TestOverlappingPartsMerged(t *testing.T) {
	// Two squares of 0.002° overlapping on a quarter of each.
	g := `{"type":"MultiPolygon","coordinates":[` +
		`[[[5.000000,6.000000],[5.002,6],[5.002,6.002],[5,6.002],[5.000000,6.000000]]],` +
		`[[[5.001000,6.001000],[5.003,6.001],[5.003,6.003],[5.001,6.003],[5.001000,6.001000]]]]}`
	sent := parse(t, g)
	res, written := repaired(t, g)
	if got := codes(res.Changes); !slices.Equal(got, []string{OverlappingPartsMerged}) {
		t.Fatalf("changes %v", got)
	}
	c := res.Changes[0]
	quarter := geo.RingArea([][2]float64{{5.001, 6.001}, {5.002, 6.001}, {5.002, 6.002}, {5.001, 6.002}})
	if c.Parts != 1 || math.Abs(c.AreaHa-quarter) > 1e-6 {
		t.Errorf("change %+v, want 1 part and %v ha", c, quarter)
	}
	if len(res.Geometry.Polygons) != 1 || len(res.Geometry.Polygons[0][0]) != 9 {
		t.Errorf("written %s", written)
	}
	var total float64
	for _, p := range sent.Geometry.Polygons {
		total += geo.PolygonArea(toFloat(p))
	}
	if got := geo.PolygonArea(toFloat(res.Geometry.Polygons[0])); math.Abs(got-(total-quarter)) > 1e-6 {
		t.Errorf("area %v, want %v", got, total-quarter)
	}
}

func TestHolesRemoved(t *testing.T) {
	hole := `[[5.0004,6.0004],[5.0004,6.0006],[5.0006,6.0006],[5.0006,6.0004],[5.0004,6.0004]]`
	res, written := repaired(t, `{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5.001,6],[5.001,6.001],[5,6.001],[5,6]],`+hole+`]}`)
	if got := codes(res.Changes); !slices.Equal(got, []string{HolesRemoved}) {
		t.Fatalf("changes %v", got)
	}
	want := geo.RingArea([][2]float64{{5.0004, 6.0004}, {5.0004, 6.0006}, {5.0006, 6.0006}, {5.0006, 6.0004}})
	if c := res.Changes[0]; c.Parts != 1 || c.Path != "geometry.coordinates" || c.AreaHa != want || want < 0.04 {
		t.Errorf("change %+v, want %v ha", c, want)
	}
	if written != `{"type":"Polygon","coordinates":[`+square+`]}` {
		t.Errorf("written %s", written)
	}
}

func TestWhatCannotBeRepairedIsLeft(t *testing.T) {
	for _, tc := range []struct{ geometry, reason string }{
		{`{"type":"Polygon","coordinates":[[[179.999500,6],[-179.9995,6],[-179.9995,6.001],[179.9995,6.001]]]}`, geo.ReasonCrossesAntimeridian},
		{`{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5.001,6],[5.002,6],[5.000000,6.000000]]]}`, geo.ReasonDegenerateRing},
		{`{"type":"Polygon","coordinates":[[[5,6],[5.001,6],[5.001,6.001],[5.001,6.001],[5,6]]]}`, geo.ReasonInsufficientPrecision},
		{`{"type":"Polygon","coordinates":[[[5.1,6.1],[5.2,6.1],[5.2,6.2],[5.1,6.2]]]}`, geo.ReasonInsufficientPrecision},
	} {
		f := parse(t, tc.geometry)
		res := Feature(f)
		if res.Unrepaired == nil || res.Unrepaired.Reason != tc.reason {
			t.Errorf("%s: unrepaired %+v, want %s", tc.geometry, res.Unrepaired, tc.reason)
			continue
		}
		// Left as sent, closed.
		for i, r := range res.Geometry.Polygons[0] {
			sent := f.Geometry.Polygons[0][i]
			if len(r) < len(sent) || !slices.Equal(r[:len(sent)], sent) || r[0] != r[len(r)-1] {
				t.Errorf("%s: ring %v", tc.geometry, r)
			}
		}
		// Written back, it reads the same precision and fails the same way.
		back := parse(t, string(res.WriteGeometry()))
		if back.MaxDecimals != f.MaxDecimals {
			t.Errorf("%s: written with %d decimals, sent with %d", tc.geometry, back.MaxDecimals, f.MaxDecimals)
		}
		if reason, _ := geo.Check(back); reason != tc.reason {
			t.Errorf("%s: written back, Check says %s", tc.geometry, reason)
		}
	}
}

func toFloat(p geo.Polygon) [][][2]float64 {
	out := make([][][2]float64, len(p))
	for i, r := range p {
		out[i] = r
	}
	return out
}

func TestLatitudeAndLongitudeSwapped(t *testing.T) {
	// A plot in Ghana sent latitude first lies at sea, off Gabon.
	res, written := repaired(t, `{"type":"Polygon","coordinates":[[[6.500000,-1.500000],[6.500000,-1.499000],[6.501000,-1.499000],[6.501000,-1.500000],[6.500000,-1.500000]]]}`)
	if got := codes(res.Changes); !slices.Equal(got, []string{CoordinatesSwapped}) {
		t.Fatalf("changes %v", got)
	}
	if c := res.Changes[0]; c.Positions != 5 || !strings.Contains(c.Message, "GH") {
		t.Errorf("change %+v", c)
	}
	want := `{"type":"Polygon","coordinates":[[[-1.500000,6.500000],[-1.499000,6.500000],[-1.499000,6.501000],[-1.500000,6.501000],[-1.500000,6.500000]]]}`
	if written != want {
		t.Errorf("written\n%s, want\n%s", written, want)
	}
	// A point too; and a plot in Ghana as sent, or outside it either way
	// (in Nigeria, and at sea), is left where it is.
	res, _ = repaired(t, `{"type":"Point","coordinates":[6.500001,-1.500001]}`)
	if got := codes(res.Changes); !slices.Equal(got, []string{CoordinatesSwapped}) {
		t.Errorf("point: changes %v", got)
	}
	for _, g := range []string{
		`{"type":"Polygon","coordinates":[[[-1.500000,6.500000],[-1.499000,6.500000],[-1.499000,6.501000],[-1.500000,6.501000],[-1.500000,6.500000]]]}`,
		`{"type":"Polygon","coordinates":[[[7.500000,9.500000],[7.501000,9.500000],[7.501000,9.501000],[7.500000,9.501000],[7.500000,9.500000]]]}`,
		`{"type":"Polygon","coordinates":[[[-20.000000,-20.000000],[-19.999000,-20.000000],[-19.999000,-19.999000],[-20.000000,-19.999000],[-20.000000,-20.000000]]]}`,
	} {
		if res := Feature(parse(t, g)); len(res.Changes) != 0 {
			t.Errorf("%s: changes %+v", g, res.Changes)
		}
	}
}
