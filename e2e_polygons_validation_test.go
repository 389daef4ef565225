package main_test

// End-to-end tests of the validation and limits of POST /polygons.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

func polOptional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func TestPolygon_Validation(t *testing.T) {
	t.Parallel()
	// One worker runs jobs in the order accepted; a key's bucket that
	// hardly refills makes X-RateLimit-Remaining count requests exactly.
	p := startServer(t, "EUDR_JOBS_WORKERS=1", "EUDR_RATE_LIMIT_PER_SECOND=0.001", "EUDR_RATE_LIMIT_BURST=100000")
	key := p.createKey(t, sandbox)
	base := p.SandboxURL

	ok := func(lon, lat float64) string {
		return polFeature(polSquare(lon, lat, 0.001), map[string]any{"commodity": "cocoa", "producerCountry": "GH"})
	}
	t.Run("EveryProblem", func(t *testing.T) {
		feats := []string{
			// 0: ring not closed
			polFeature(`{"type":"Polygon","coordinates":[`+polRing([][2]float64{{-1.501, 6.499}, {-1.499, 6.499}, {-1.499, 6.501}, {-1.501, 6.501}}, 6)+`]}`,
				map[string]any{"commodity": "cocoa", "producerCountry": "GH"}),
			// 1: a line
			polFeature(`{"type":"LineString","coordinates":[[-1.500000,6.500000],[-1.400000,6.400000]]}`,
				map[string]any{"commodity": "cocoa", "producerCountry": "GH"}),
			// 2: longitude 200 at the second position
			polFeature(`{"type":"Polygon","coordinates":[`+polRing([][2]float64{{-1.5, 6.5}, {200, 6.5}, {-1.49, 6.51}, {-1.5, 6.5}}, 6)+`]}`,
				map[string]any{"commodity": "cocoa", "producerCountry": "GH"}),
			// 3: no commodity
			polFeature(polSquare(-1.3, 6.3, 0.001), map[string]any{"producerCountry": "GH"}),
			// 4: a point of 5 ha
			polFeature(`{"type":"Point","coordinates":[-1.200000,6.200000]}`, map[string]any{"commodity": "cocoa", "producerCountry": "GH", "area": 5}),
			// 5: a ring of 3 positions
			polFeature(`{"type":"Polygon","coordinates":[`+polRing([][2]float64{{-1.1, 6.1}, {-1.09, 6.1}, {-1.1, 6.1}}, 6)+`]}`,
				map[string]any{"commodity": "cocoa", "producerCountry": "GH"}),
			// 6: nothing wrong
			ok(-1.0, 6.0),
			// 7: a side across the antimeridian
			polFeature(`{"type":"Polygon","coordinates":[`+polRing([][2]float64{{179.995, 0}, {-179.995, 0}, {-179.995, 0.01}, {179.995, 0.01}, {179.995, 0}}, 6)+`]}`,
				map[string]any{"commodity": "wood", "producerCountry": "FJ"}),
		}
		r := polPost(t, base, key, apitest.NewIdemKey(), polCollection(feats...))
		want := map[string]string{
			"features[0].geometry.coordinates[0]":    "INVALID_COORDINATE_CLOSURE",
			"features[1].geometry.type":              "INVALID_GEOMETRY_TYPE",
			"features[2].geometry.coordinates[0][1]": "INVALID_COORDINATE_RANGE",
			"features[3].properties.commodity":       "REQUIRED",
			"features[4].properties.area":            "POINT_AREA_TOO_LARGE",
			"features[5].geometry.coordinates[0]":    "INVALID_RING",
			"features[7].geometry.coordinates[0]":    "CROSSES_ANTIMERIDIAN",
		}
		var codes []string
		for _, c := range want {
			codes = append(codes, c)
		}
		e := apitest.WantError(t, r, http.StatusBadRequest, "VALIDATION_FAILED", codes...)
		for field, code := range want {
			if d := e.Detail(t, field); d.Code != code {
				t.Errorf("detail for %s: %+v, want %s", field, d, code)
			}
		}
	})

	t.Run("Malformed", func(t *testing.T) {
		for _, c := range []struct {
			name, body string
			codes      []string
			field      string
		}{
			{"truncated", `{"type":"FeatureCollection","features":[` + ok(-1, 6), []string{"MALFORMED_JSON"}, "body"},
			{"trailing", polCollection(ok(-1, 6)) + " x", []string{"MALFORMED_JSON"}, "body"},
			{"empty body", "", []string{"MALFORMED_JSON"}, "body"},
			{"a Feature", ok(-1, 6), []string{"INVALID_VALUE", "REQUIRED"}, "type"},
			{"an array", "[" + ok(-1, 6) + "]", []string{"INVALID_VALUE"}, "body"},
			{"no features", `{"type":"FeatureCollection","features":[]}`, []string{"REQUIRED"}, "features"},
			{"features null", `{"type":"FeatureCollection","features":null}`, []string{"REQUIRED"}, "features"},
			{"wrong type", `{"type":"GeometryCollection","features":[` + ok(-1, 6) + `]}`, []string{"INVALID_VALUE"}, "type"},
		} {
			e := apitest.WantError(t, polPost(t, base, key, apitest.NewIdemKey(), c.body), http.StatusBadRequest, "VALIDATION_FAILED", c.codes...)
			if len(e.Details) > 0 {
				e.Detail(t, c.field)
			}
		}
		apitest.WantError(t, apitest.Do(t, "POST", base+polPath, apitest.Merge(idem(key), apitest.Hdr("Content-Type", "text/plain")), polCollection(ok(-1, 6))),
			http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "INVALID_VALUE")
		e := apitest.WantError(t, apitest.Do(t, "POST", base+polPath, apitest.Merge(apitest.WithKey(key), apitest.Hdr("Content-Type", polContentType)), polCollection(ok(-1, 6))),
			http.StatusBadRequest, "VALIDATION_FAILED", "IDEMPOTENCY_KEY_MISSING")
		e.Detail(t, "headers.Idempotency-Key")
	})

	// Nothing refused made a job.
	if l := polWalk(t, base, key, "", 1000); len(l) != 0 {
		t.Fatalf("polygons after refused requests only: %d", len(l))
	}

	var accepted []string
	total := 0
	t.Run("Idempotency", func(t *testing.T) {
		ik := apitest.NewIdemKey()
		body := polCollection(ok(-1, 6), ok(-1.1, 6.1))
		first := polCheckAccepted(t, polPost(t, base, key, ik, body), 2)
		r := polPost(t, base, key, ik, body)
		if again := polCheckAccepted(t, r, 2); again != first || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replayed POST /polygons: jobId %s (Idempotent-Replayed %q), want %s replayed", again, r.Header.Get("Idempotent-Replayed"), first)
		}
		apitest.WantError(t, polPost(t, base, key, ik, polCollection(ok(-1, 6))), http.StatusConflict, "CONFLICT", "IDEMPOTENCY_KEY_REUSED")
		accepted = append(accepted, first)
		total += 2
	})

	t.Run("RateLimitPerRequest", func(t *testing.T) {
		small := polPost(t, base, key, apitest.NewIdemKey(), polCollection(ok(-1, 6)))
		accepted = append(accepted, polCheckAccepted(t, small, 1))
		big := make([]string, 500)
		for i := range big {
			big[i] = ok(20+float64(i%25)*0.01, float64(i/25)*0.01)
		}
		large := polPost(t, base, key, apitest.NewIdemKey(), polCollection(big...))
		accepted = append(accepted, polCheckAccepted(t, large, 500))
		total += 501
		_, before, _ := rateHeaders(t, small)
		_, after, _ := rateHeaders(t, large)
		if before-after != 1 {
			t.Errorf("X-RateLimit-Remaining %d after a 1-feature request, %d after the next one of 500 features; want one less", before, after)
		}
		_, next, _ := rateHeaders(t, apitest.Do(t, "GET", base+polPath+"?limit=1", apitest.WithKey(key), nil))
		if after-next != 1 {
			t.Errorf("X-RateLimit-Remaining %d then %d after a GET; want one less", after, next)
		}
	})

	// Every accepted job completes; the list holds their polygons and no others.
	jobs := map[string]bool{}
	for _, id := range accepted {
		polWaitJob(t, base, key, id, 30*time.Second)
		jobs[id] = true
	}
	list := polWalk(t, base, key, "", 1000)
	if len(list) != total {
		t.Errorf("GET /polygons: %d polygons, want %d of the %d accepted jobs", len(list), total, len(accepted))
	}
	for _, pol := range list {
		if !jobs[pol.JobID] {
			t.Errorf("polygon %s of job %s, which no accepted request made", pol.PolygonID, pol.JobID)
		}
	}
}

func TestPolygon_Limits(t *testing.T) {
	t.Parallel()
	p := startServer(t, "EUDR_JOBS_WORKERS=1", "EUDR_LIMITS_MAX_FEATURES=3", "EUDR_LIMITS_MAX_BODY_BYTES=4096")
	key := p.createKey(t, sandbox)
	base := p.SandboxURL
	feat := func(i int, name string) string {
		return polFeature(polSquare(-1+float64(i)*0.01, 6, 0.001), map[string]any{"commodity": "cocoa", "producerCountry": "GH", "producerName": name})
	}
	four := polCollection(feat(0, ""), feat(1, ""), feat(2, ""), feat(3, ""))
	if len(four) > 4096 {
		t.Fatalf("4 features take %d bytes, over the body limit", len(four))
	}
	ik := apitest.NewIdemKey()
	e := apitest.WantError(t, polPost(t, base, key, ik, four), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE", "INVALID_VALUE")
	e.Detail(t, "features")

	long := strings.Repeat("n", 1500)
	big := polCollection(feat(0, long), feat(1, long), feat(2, long))
	apitest.WantError(t, polPost(t, base, key, apitest.NewIdemKey(), big), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	apitest.WantError(t, polPost(t, base, key, apitest.NewIdemKey(), strings.NewReader(big)), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")

	// Three features are within the limit, with the Idempotency-Key a 413 did not use.
	id := polCheckAccepted(t, polPost(t, base, key, ik, polCollection(feat(0, "a"), feat(1, "b"), feat(2, "c"))), 3)
	polWaitJob(t, base, key, id, 20*time.Second)
	list := polWalk(t, base, key, "", 1000)
	if len(list) != 3 || list[0].JobID != id || list[2].JobID != id {
		t.Errorf("GET /polygons: %d polygons, want the 3 of job %s only", len(list), id)
	}
}
