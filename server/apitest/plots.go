package apitest

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/eudr/eudr/geo"
)

// The benchmarks of polygon screening use realistic plots and a realistic
// reference layer over one region: 2 by 2 degrees of cocoa land in Cote
// d'Ivoire: lon min, lat min, lon max, lat max. The load run
// (load_polygons_test.go) generates the same shapes.
func plotRegion() [4]float64 { return [4]float64{-7.5, 5.5, -5.5, 7.5} }

// plotRing is a closed, simple, counter-clockwise ring of n corners around
// (lon, lat) enclosing about ha hectares, with coordinates rounded to 6
// decimals: a star-shaped outline whose radius wanders smoothly, as a
// surveyed boundary does. Corners advance in angle by at least 0.7 of a
// step, so no two sides cross, before or after rounding.
func plotRing(r *rand.Rand, lon, lat, ha float64, n int) geo.Ring {
	radius := math.Sqrt(ha*1e4/math.Pi) / 111_320 // degrees of latitude
	kx := 1 / math.Cos(lat*math.Pi/180)
	p1, p2 := 2*math.Pi*r.Float64(), 2*math.Pi*r.Float64()
	round6 := func(v float64) float64 { return math.Round(v*1e6) / 1e6 }
	ring := make(geo.Ring, 0, n+1)
	for k := range n {
		a := 2 * math.Pi * (float64(k) + 0.3*r.Float64()) / float64(n)
		rad := radius * (1 + 0.12*math.Sin(3*a+p1) + 0.06*math.Sin(5*a+p2) + 0.02*r.Float64())
		ring = append(ring, geo.Position{round6(lon + kx*rad*math.Cos(a)), round6(lat + rad*math.Sin(a))})
	}
	return append(ring, ring[0])
}

// Plots is a POST /polygons body of n plots of 20-200 corners and 0.5-50
// ha (log-uniform), spread over the region, with their commodity,
// producer country and external ID; the same n give the same bytes.
// 10,000 plots are about 25 MB.
func Plots(n int) []byte {
	r := rand.New(rand.NewPCG(2020, 12_31))
	region := plotRegion()
	commodities := geo.Commodities()
	var b bytes.Buffer
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		lon := region[0] + 0.01 + r.Float64()*(region[2]-region[0]-0.02)
		lat := region[1] + 0.01 + r.Float64()*(region[3]-region[1]-0.02)
		ring := plotRing(r, lon, lat, 0.5*math.Pow(100, r.Float64()), 20+r.IntN(181))
		b.WriteString(`{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[`)
		for k, p := range ring {
			if k > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "[%.6f,%.6f]", p[0], p[1])
		}
		fmt.Fprintf(&b, `]]},"properties":{"commodity":%q,"producerCountry":"CI","externalId":"plot-%06d"}}`,
			commodities[i%len(commodities)], i)
	}
	b.WriteString("]}")
	return b.Bytes()
}

// PlotLayer is a deforestation layer of n polygons of 8-40 corners and
// 1-20 ha (log-uniform) over the region of Plots, with a coverage polygon
// holding the region: with 100,000 polygons, about 40% of the plots
// overlap some of it (HIGH_RISK), the rest are COMPLIANT.
func PlotLayer(n int) *geo.Layer {
	r := rand.New(rand.NewPCG(2021, 1))
	b := plotRegion()
	feats := make([]geo.LayerFeature, n)
	for i := range feats {
		lon := b[0] + r.Float64()*(b[2]-b[0])
		lat := b[1] + r.Float64()*(b[3]-b[1])
		feats[i] = geo.LayerFeature{ID: fmt.Sprintf("loss-%06d", i),
			Polygons: []geo.Polygon{{plotRing(r, lon, lat, math.Pow(20, r.Float64()), 8+r.IntN(33))}}}
	}
	coverage := geo.Polygon{{{b[0] - 1, b[1] - 1}, {b[2] + 1, b[1] - 1}, {b[2] + 1, b[3] + 1}, {b[0] - 1, b[3] + 1}, {b[0] - 1, b[1] - 1}}}
	return &geo.Layer{ID: "lyr_bench", Name: "bench loss", Kind: geo.DeforestationAfterCutoff,
		Version: "1", Source: "bench", Coverage: []geo.Polygon{coverage}, Features: feats}
}
