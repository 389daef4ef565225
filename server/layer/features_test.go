package layer_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/storage"
)

// BenchmarkFeatures reads a view of a layer of 100,000 small squares, as
// the console's map does after each move: the layer decoded once (Cold,
// after a reload), then kept (Cached).
func BenchmarkFeatures(b *testing.B) {
	f := newFixture(b)
	const n = 100_000
	feats := make([]string, n)
	for i := range n {
		x, y := float64(i%400)*0.01, float64(i/400)*0.01
		feats[i] = fmt.Sprintf(`{"type":"Feature","id":"f%d","properties":{},"geometry":{"type":"Polygon","coordinates":[[[%g,%g],[%g,%g],[%g,%g],[%g,%g],[%g,%g]]]}}`,
			i, x, y, x+0.005, y, x+0.005, y+0.005, x, y+0.005, x, y)
	}
	l, err := f.s.Import(context.Background(), layer.Request{Name: "Squares", Kind: "protected_area", Version: "1", Source: "bench",
		Features: []byte(`{"type":"FeatureCollection","features":[` + strings.Join(feats, ",") + `]}`), Env: storage.Production})
	if err != nil {
		b.Fatal(err)
	}
	read := func(b *testing.B) {
		fc, err := f.s.Features(context.Background(), storage.Production, l.ID, "0,0,0.5,0.5")
		if err != nil || len(fc.Features) != 51*51 {
			b.Fatalf("%v, %d features", err, len(fc.Features))
		}
	}
	b.Run("Cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			if err := f.s.Load(context.Background()); err != nil { // forgets the decoded layers
				b.Fatal(err)
			}
			b.StartTimer()
			read(b)
		}
	})
	b.Run("Cached", func(b *testing.B) {
		read(b)
		for b.Loop() {
			read(b)
		}
	})
}
