package polygon_test

import (
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/storage"
)

// Each plot screened is reported once its result is recorded, with its
// status.
func TestService_ObserveScreening(t *testing.T) {
	b := apitest.NewBench(t, start)
	ix := geo.NewIndex(geo.SandboxLayers()...)
	var mu sync.Mutex
	seen := map[string]int{}
	s := polygon.New(polygon.Options{DB: b.DB, Jobs: b.Jobs, Events: b.Events, Ledger: b.Ledger, Logger: zerolog.Nop(),
		Index: func(storage.Environment) *geo.Index { return ix }, Rules: geo.DefaultRules(), AppVersion: "test",
		MaxFeatures: 10, Now: b.Clock.Now,
		ObserveScreening: func(env storage.Environment, status string, took time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			key := string(env) + " " + status
			if took < 0 {
				key += " (negative duration)"
			}
			seen[key]++
		}})
	job := submit(t, b, s, collection(fixtures...))
	b.RunJobs(t)
	b.WaitJob(t, tenant, job.ID)
	// The job is seen COMPLETED a moment before its last chunk is
	// reported: wait for the five plots.
	observed := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, c := range seen {
			n += c
		}
		return n
	}
	for observed() < len(fixtures) {
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]int{"sandbox HIGH_RISK": 2, "sandbox FAILED": 2, "sandbox COMPLIANT": 1}
	if !maps.Equal(seen, want) {
		t.Errorf("observed: got %v, want %v", seen, want)
	}
}
