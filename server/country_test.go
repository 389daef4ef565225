package server

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/borders"
	"github.com/eudr/eudr/storage"
)

var firstPosition = regexp.MustCompile(`(-?[0-9.]+)\s*,\s*(-?[0-9.]+)`)

// countryOf is the code of the country holding the first position of
// coordinates (GeoJSON text): the true producerCountry of a test plot,
// which screening checks. "GH" when the position lies in no country.
func countryOf(coordinates string) string {
	m := firstPosition.FindStringSubmatch(coordinates)
	if m == nil {
		return "GH"
	}
	lon, _ := strconv.ParseFloat(m[1], 64)
	lat, _ := strconv.ParseFloat(m[2], 64)
	at, err := borders.At([2]float64{lon, lat})
	if err != nil || len(at) == 0 {
		return "GH"
	}
	return at[0].Code
}

// Production and the sandbox alike fail a plot that does not lie in its
// producerCountry, and its evidence says where it lies.
func TestPolygons_OutsideProducerCountry(t *testing.T) {
	ta := newTestApp(t)
	ta.runQueues()
	kumasi := square(-1.62, 6.69, 0.001)
	feature := func(country string) string {
		return `{"type":"Feature","geometry":{"type":"Polygon","coordinates":` + kumasi +
			`},"properties":{"commodity":"cocoa","producerCountry":"` + country + `"}}`
	}
	for _, env := range []storage.Environment{storage.Production, storage.Sandbox} {
		_, key := ta.newKey(env)
		acc, w := ta.postPolygonsOn(env, key, "country", collection(feature("CI"), feature("GH")))
		if w.Code != http.StatusAccepted {
			t.Fatalf("%s: POST /polygons: %d %s", env, w.Code, w.Body)
		}
		ta.waitJobOn(env, key, acc.JobID, storage.JobCompleted)
		ev := ta.evidence(env, key, storage.PolygonID(acc.JobID, 0))
		if ev.EUDRStatus != geo.StatusFailed || derefOr(ev.FailureReason) != geo.ReasonOutsideProducerCountry ||
			!strings.HasPrefix(derefOr(ev.FailureDetail), "the plot lies in Ghana (GH), not in Côte d'Ivoire (CI)") {
			t.Errorf("%s: in Ghana, CI: %s %s (%s)", env, ev.EUDRStatus, derefOr(ev.FailureReason), derefOr(ev.FailureDetail))
		}
		if c := ev.CountryCheck; c == nil || c.ProducerCountry != "CI" || c.Outcome != geo.CountryOutside ||
			len(c.FoundIn) != 1 || c.FoundIn[0] != "GH" || c.BufferM != 5000 || c.Boundaries != geo.CountryBoundaries {
			t.Errorf("%s: in Ghana, CI: countryCheck %+v", env, c)
		}
		// In production no layer covers Ghana: the plot gets past the
		// country to the coverage.
		ev = ta.evidence(env, key, storage.PolygonID(acc.JobID, 1))
		if derefOr(ev.FailureReason) == geo.ReasonOutsideProducerCountry || ev.CountryCheck == nil || ev.CountryCheck.Outcome != geo.CountryIn {
			t.Errorf("%s: in Ghana, GH: %s %s, countryCheck %+v", env, ev.EUDRStatus, derefOr(ev.FailureReason), ev.CountryCheck)
		}
	}
}
