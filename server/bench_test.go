package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/rs/zerolog"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/storage"
)

// benchApp is an appliance on a temp store with one sandbox key and a rate
// limit high enough not to interfere.
func benchApp(b *testing.B) (*App, string) {
	b.Helper()
	cfg, err := LoadConfig("", []string{
		"EUDR_DATA_DIR=" + b.TempDir(),
		"EUDR_ADMIN_PASSWORD=bench-password",
		"EUDR_RATE_LIMIT_PER_SECOND=1000000000",
		"EUDR_RATE_LIMIT_BURST=1000000000",
	})
	if err != nil {
		b.Fatal(err)
	}
	a, err := New(cfg, Options{Version: "bench", Logger: zerolog.New(io.Discard)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	kr, err := ParseKeyRequest(defaultOrg, "bench", "sandbox", nil)
	if err != nil {
		b.Fatal(err)
	}
	_, key, err := a.CreateKey(context.Background(), kr)
	if err != nil {
		b.Fatal(err)
	}
	return a, key
}

func benchGET(b *testing.B, h http.Handler, path, key string) {
	b.Helper()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest(http.MethodGet, path, nil)
			if key != "" {
				r.Header.Set("X-API-Key", key)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("GET %s: status %d: %s", path, w.Code, w.Body)
			}
		}
	})
}

// BenchmarkHealth_FullChain is GET /health through every middleware: trace
// id, access log (to io.Discard), recovery, key lookup, rate limit, router,
// store status.
func BenchmarkHealth_FullChain(b *testing.B) {
	a, key := benchApp(b)
	benchGET(b, a.Handler(storage.Sandbox), eudrPrefix+"/health", key)
}

// BenchmarkHealth_Bare is the same answer from a bare httprouter handler:
// the floor the full chain is compared with.
func BenchmarkHealth_Bare(b *testing.B) {
	benchGET(b, bareHealthRouter(), eudrPrefix+"/health", "")
}

// BenchmarkSuppliersList_FullChain lists 100 suppliers through the full chain.
func BenchmarkSuppliersList_FullChain(b *testing.B) {
	a, key := benchApp(b)
	t := storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}
	for i := range 100 {
		s := &storage.Supplier{ERPVendorID: "V" + string(rune('A'+i%26)) + time.Duration(i).String(),
			EUOperatorUUID: "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b", Name: "Supplier", Country: "CI", Role: roleOperator}
		if err := a.db.Update(context.Background(), func(tx *storage.Tx) error { return upsertSupplier(tx, t, s) }); err != nil {
			b.Fatal(err)
		}
	}
	benchGET(b, a.Handler(storage.Sandbox), eudrPrefix+"/suppliers", key)
}

// bareHealthRouter answers a fixed health body with nothing in between.
func bareHealthRouter() http.Handler {
	rt := httprouter.New()
	body := []byte(`{"status":"ok","environment":"sandbox","version":"bench","uptimeSeconds":1,"store":{"status":"ok","schemaVersion":1,"sizeBytes":65536}}` + "\n")
	rt.GET(eudrPrefix+"/health", func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	return rt
}

func BenchmarkRateLimiter_Take(b *testing.B) {
	rl := newRateLimiter(1e9, 1e9)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		rl.take("key_bench", now)
	}
}

// The polygon benchmarks use realistic plots and a realistic reference
// layer over one region: 2 by 2 degrees of cocoa land in Cote d'Ivoire.
// The load run (load_polygons_test.go) generates the same shapes.
var benchRegion = [4]float64{-7.5, 5.5, -5.5, 7.5} // lon min, lat min, lon max, lat max

// benchRing is a closed, simple, counter-clockwise ring of n corners around
// (lon, lat) enclosing about ha hectares, with coordinates rounded to 6
// decimals: a star-shaped outline whose radius wanders smoothly, as a
// surveyed boundary does. Corners advance in angle by at least 0.7 of a
// step, so no two sides cross, before or after rounding.
func benchRing(r *rand.Rand, lon, lat, ha float64, n int) geo.Ring {
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

// benchPlots is a POST /polygons body of n plots of 20-200 corners and
// 0.5-50 ha (log-uniform), spread over benchRegion, with their commodity,
// producer country and external ID. 10,000 plots are about 25 MB.
func benchPlots(n int) []byte {
	r := rand.New(rand.NewPCG(2020, 12_31))
	commodities := geo.Commodities()
	var b bytes.Buffer
	b.WriteString(`{"type":"FeatureCollection","features":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		lon := benchRegion[0] + 0.01 + r.Float64()*(benchRegion[2]-benchRegion[0]-0.02)
		lat := benchRegion[1] + 0.01 + r.Float64()*(benchRegion[3]-benchRegion[1]-0.02)
		ring := benchRing(r, lon, lat, 0.5*math.Pow(100, r.Float64()), 20+r.IntN(181))
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

var benchPlots10k = sync.OnceValue(func() []byte { return benchPlots(10_000) })

// benchIndex is a production index of one deforestation layer of 100,000
// polygons of 8-40 corners and 1-20 ha (log-uniform) over benchRegion,
// with a coverage polygon holding the region: about 40% of the plots of
// benchPlots overlap some of it (HIGH_RISK), the rest are COMPLIANT.
var benchIndex = sync.OnceValue(func() *geo.Index {
	r := rand.New(rand.NewPCG(2021, 1))
	feats := make([]geo.LayerFeature, 100_000)
	for i := range feats {
		lon := benchRegion[0] + r.Float64()*(benchRegion[2]-benchRegion[0])
		lat := benchRegion[1] + r.Float64()*(benchRegion[3]-benchRegion[1])
		feats[i] = geo.LayerFeature{ID: fmt.Sprintf("loss-%06d", i),
			Polygons: []geo.Polygon{{benchRing(r, lon, lat, math.Pow(20, r.Float64()), 8+r.IntN(33))}}}
	}
	b := benchRegion
	coverage := geo.Polygon{{{b[0] - 1, b[1] - 1}, {b[2] + 1, b[1] - 1}, {b[2] + 1, b[3] + 1}, {b[0] - 1, b[3] + 1}, {b[0] - 1, b[1] - 1}}}
	return geo.NewIndex(&geo.Layer{ID: "lyr_bench", Name: "bench loss", Kind: geo.DeforestationAfterCutoff,
		Version: "1", Source: "bench", Coverage: []geo.Polygon{coverage}, Features: feats})
})

// BenchmarkPolygonsCreate10k is POST /polygons of 10,000 realistic plots
// through the full chain: key, rate limit, Idempotency-Key (fingerprint of
// the body), parse and validate the collection, commit the job with its
// input, answer 202. The target is under 1 s per request.
func BenchmarkPolygonsCreate10k(b *testing.B) {
	a, key := benchApp(b)
	h := a.Handler(storage.Sandbox)
	body := benchPlots10k()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	runtime.GC() // not the setup's garbage in the timing
	n := 0
	for b.Loop() {
		n++
		r := httptest.NewRequest(http.MethodPost, eudrPrefix+"/polygons", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/geo+json")
		r.Header.Set("X-API-Key", key)
		r.Header.Set("Idempotency-Key", fmt.Sprintf("bench-%d", n))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusAccepted || !bytes.Contains(w.Body.Bytes(), []byte(`"featureCount":10000`)) {
			b.Fatalf("POST /polygons: status %d: %.300s", w.Code, w.Body)
		}
	}
	b.ReportMetric(float64(10_000*n)/b.Elapsed().Seconds(), "features/s")
}

// BenchmarkScreenChunk screens one job chunk (200 realistic plots, on
// every CPU as a job does) against the 100,000-polygon index: screening,
// evidence and results, not the transaction that records them. Each
// iteration takes the next chunk of the 10,000 plots: -benchtime=50x
// screens each once. The target is at least 2,000 features/s.
func BenchmarkScreenChunk(b *testing.B) {
	ix := benchIndex()
	feats, err := geo.ParseFeatureCollection(benchPlots10k(), geo.ParseOptions{})
	if err != nil {
		b.Fatal(err)
	}
	s := screening{ix: ix, layers: ix.Layers(), rules: geo.DefaultRules(), appVersion: "bench",
		log: func(index int, cause any) { b.Errorf("feature %d: panic %v", index, cause) }}
	now := time.Now()
	// Every plot is valid and covered, and some overlap the layer.
	var highRisk int
	for _, o := range s.screenAll(context.Background(), "job_bench", feats[:screenChunk], now) {
		switch o.polygon.Status {
		case geo.StatusFailed:
			b.Fatalf("feature %d: FAILED %s: %s", o.polygon.FeatureIndex, o.polygon.FailureReason, o.polygon.FailureDetail)
		case geo.StatusHighRisk:
			highRisk++
		}
	}
	if highRisk == 0 {
		b.Fatal("no plot of the first chunk overlaps the layer")
	}
	b.ReportAllocs()
	runtime.GC()
	n := 0
	for b.Loop() {
		start := (n * screenChunk) % len(feats)
		n++
		out := s.screenAll(context.Background(), "job_bench", feats[start:start+screenChunk], now)
		if out[len(out)-1].polygon == nil {
			b.Fatal("chunk not screened")
		}
	}
	b.ReportMetric(float64(screenChunk*n)/b.Elapsed().Seconds(), "features/s")
}
