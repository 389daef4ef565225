package server

import (
	"regexp"
	"strconv"

	"github.com/eudr/eudr/geo/borders"
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
