package geo_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/eudr/eudr/geo"
)

// plots10k is a request of 10,000 realistic plots: star-shaped boundaries
// of 200 corners, 100-300 m across, written with 6 decimals, in the
// tropics, with the usual properties. About 50 MB.
var plots10k = sync.OnceValue(func() []byte {
	r := rand.New(rand.NewPCG(2020, 12_31))
	commodities := geo.Commodities()
	countries := []string{"BR", "CI", "GH", "ID", "MY", "CO", "ET", "VN", "CM", "PE"}
	var b bytes.Buffer
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := range 10_000 {
		if i > 0 {
			b.WriteString(",\n")
		}
		lon, lat := -75+r.Float64()*195, -20+r.Float64()*35
		radius := 0.0005 + r.Float64()*0.001
		b.WriteString(`{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[`)
		const n = 200
		var first string
		for k := range n {
			a := 2 * math.Pi * (float64(k) + 0.3*r.Float64()) / n
			rad := radius * (0.85 + 0.15*r.Float64())
			pos := fmt.Sprintf("[%.6f,%.6f]", lon+rad*math.Cos(a), lat+rad*math.Sin(a))
			if k == 0 {
				first = pos
			}
			b.WriteString(pos)
			b.WriteByte(',')
		}
		b.WriteString(first)
		fmt.Fprintf(&b, `]]},"properties":{"commodity":%q,"producerCountry":%q,"area":%.2f,"producerName":"Producer %d","productionPlace":"Farm %d","externalId":"plot-%06d","supplierId":"V-%d"}}`,
			commodities[i%len(commodities)], countries[i%len(countries)], math.Pi*radius*radius*1.2e8, i%500, i, i, i%50)
	}
	b.WriteString("]}")
	return b.Bytes()
})

func BenchmarkParseFeatureCollection_10k(b *testing.B) {
	body := plots10k()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		feats, err := geo.ParseFeatureCollection(body, geo.ParseOptions{MaxFeatures: 10_000})
		if err != nil || len(feats) != 10_000 {
			b.Fatalf("got %d features, %v", len(feats), err)
		}
	}
}

func BenchmarkCheck_10k(b *testing.B) {
	feats, err := geo.ParseFeatureCollection(plots10k(), geo.ParseOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range feats {
			if reason, detail := geo.Check(f); reason != "" {
				b.Fatalf("feature %d: %s: %s", f.Index, reason, detail)
			}
		}
	}
}
