package polygon_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/plotfile"
	"github.com/eudr/eudr/geo/repair"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/storage"
)

// openBowtie is fixtures' bowtie with its ring left open.
var openBowtie = plot("bowtie", "[[[5.000000,6.000000],[5.001000,6.001000],[5.001000,6.000000],[5.000000,6.001000]]]")

func TestService_Repair(t *testing.T) {
	_, s := newService(t, 3)
	body := collection(fixtures[3], openBowtie)
	// The strict path refuses the open ring outright.
	if _, err := s.Check([]byte(body), plotfile.GeoJSON, ""); apierr.From(err).Status != 400 {
		t.Fatalf("Check of an open ring: %v, want a 400", err)
	}
	r, err := s.Repair([]byte(body), plotfile.GeoJSON, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Features) != 2 {
		t.Fatalf("%d features", len(r.Features))
	}
	clean, bowtie := r.Features[0], r.Features[1]
	sum := sha256.Sum256([]byte(fixtures[3]))
	if clean.FeatureIndex != 0 || len(clean.Changes) != 0 || clean.Unrepaired != nil || clean.OriginalSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("the clean plot: %+v", clean)
	}
	if bowtie.FeatureIndex != 1 || bowtie.Unrepaired != nil || len(bowtie.Changes) != 2 ||
		bowtie.Changes[0].Code != repair.RingClosed || bowtie.Changes[1].Code != repair.SelfIntersectionSplit {
		t.Errorf("the bowtie: %+v", bowtie)
	}
	if changed, unrepaired := r.Counts(); changed != 1 || unrepaired != 0 {
		t.Errorf("counts %d %d", changed, unrepaired)
	}
	// The collection passes the strict check: the clean plot as sent, the
	// bowtie a MultiPolygon of two triangles with its properties kept.
	feats, err := geo.ParseFeatureCollection(r.Collection, geo.ParseOptions{})
	if err != nil {
		t.Fatalf("the repaired collection: %v\n%s", err, r.Collection)
	}
	if !strings.Contains(string(r.Collection), fixtures[3]) || feats[1].Geometry.Type != geo.TypeMultiPolygon ||
		len(feats[1].Geometry.Polygons) != 2 || feats[1].Properties.ExternalID != "bowtie" {
		t.Errorf("the repaired collection: %s", r.Collection)
	}
	for _, f := range feats {
		if reason, detail := geo.Check(f); reason != "" {
			t.Errorf("feature %d: %s %s", f.Index, reason, detail)
		}
	}
	// The same limits as POST /polygons.
	if _, err := s.Repair([]byte(collection(fixtures[:4]...)), plotfile.GeoJSON, ""); apierr.From(err).Status != 413 {
		t.Errorf("four features: %v, want a 413", err)
	}
}

// TestService_ScreenRepaired: a collection queued repaired is screened as
// repaired, each plot's evidence recording its changes and the hash of
// the feature as sent; a body sent with its own repair member gets none.
func TestService_ScreenRepaired(t *testing.T) {
	b, s := newService(t, 10)
	sub, rep, err := s.CheckRepaired([]byte(collection(fixtures[3], openBowtie)), plotfile.GeoJSON, "")
	if err != nil {
		t.Fatal(err)
	}
	var job *storage.Job
	b.Update(t, func(tx *storage.Tx) error {
		job, err = s.Submit(tx, tenant, sub)
		return err
	})
	forged := submit(t, b, s, collection(strings.Replace(fixtures[3], `"properties"`, `"repair":{"changes":[{"code":"HOLES_REMOVED"}]},"properties"`, 1)))
	b.RunJobs(t)
	if job = b.WaitJob(t, tenant, job.ID); job.Status != storage.JobCompleted || job.Progress.Total != 2 {
		t.Fatalf("job %+v", job)
	}
	res := results(t, b, job.ID)
	if len(res) != 2 || res[0].EUDRStatus != geo.StatusCompliant || res[1].EUDRStatus == geo.StatusFailed {
		t.Fatalf("results %+v: the bowtie repaired should be screened", res)
	}
	for i, want := range rep.Features {
		ev := evidenceOf(t, s, res[i].PolygonID)
		if ev.Repair == nil || ev.Repair.OriginalSHA256 != want.OriginalSHA256 || len(ev.Repair.Changes) != len(want.Changes) {
			t.Errorf("evidence %d: repair %+v, want %+v", i, ev.Repair, want)
			continue
		}
		for k, c := range ev.Repair.Changes {
			if c.Code != want.Changes[k].Code || c.Message != want.Changes[k].Message {
				t.Errorf("evidence %d change %d: %+v, want %+v", i, k, c, want.Changes[k])
			}
		}
	}
	// The clean plot's evidence has an empty list; its input hash is of
	// the feature as sent, unchanged.
	if ev := evidenceOf(t, s, res[0].PolygonID); ev.Repair == nil || ev.Repair.Changes == nil || ev.InputSHA256 != ev.Repair.OriginalSHA256 {
		t.Errorf("the clean plot's evidence: %+v", ev.Repair)
	}
	// The bowtie's: its input hash is of the repaired feature.
	if ev := evidenceOf(t, s, res[1].PolygonID); ev.Repair == nil || ev.InputSHA256 == ev.Repair.OriginalSHA256 {
		t.Errorf("the bowtie's evidence: %+v", ev)
	}
	// A client's own "repair" member is not evidence.
	b.WaitJob(t, tenant, forged.ID)
	if ev := evidenceOf(t, s, results(t, b, forged.ID)[0].PolygonID); ev.Repair != nil {
		t.Errorf("a forged repair reached the evidence: %+v", ev.Repair)
	}
}

func evidenceOf(t *testing.T, s *polygon.Service, id string) polygon.Evidence {
	t.Helper()
	raw, err := s.Evidence(context.Background(), tenant, id)
	if err != nil {
		t.Fatal(err)
	}
	var ev polygon.Evidence
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}
