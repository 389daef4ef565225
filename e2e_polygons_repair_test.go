package main_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// polRepairChange is a change in POST /polygons/repair's answer and in the
// evidence of a plot screened repaired.
type polRepairChange struct {
	Code      string  `json:"code"`
	Path      string  `json:"path"`
	Message   string  `json:"message"`
	Positions int     `json:"positions"`
	Parts     int     `json:"parts"`
	AreaHa    float64 `json:"areaHa"`
}

type polFeatureRepair struct {
	FeatureIndex   int               `json:"featureIndex"`
	OriginalSHA256 string            `json:"originalSha256"`
	Changes        []polRepairChange `json:"changes"`
	Unrepaired     *struct {
		Reason string `json:"reason"`
		Detail string `json:"detail"`
	} `json:"unrepaired"`
}

// A file with a bowtie, a ring left open, a hole and a repeated position
// is refused by POST /polygons, repaired by POST /polygons/repair with
// every change listed, and screened with ?repair=true, each plot's
// evidence recording its changes and the hash of the feature as sent.
func TestPolygon_Repair(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	key := p.createKey(t, sandbox)
	base := p.SandboxURL
	props := func(id string) map[string]any {
		return map[string]any{"commodity": "cocoa", "producerCountry": "GH", "externalId": id}
	}
	hole := [4]float64{-1.409, 6.591, -1.407, 6.593}
	features := []string{
		polFeature(`{"type":"Polygon","coordinates":[`+
			polRing([][2]float64{{-1.3, 6.4}, {-1.298, 6.402}, {-1.298, 6.4}, {-1.3, 6.402}, {-1.3, 6.4}}, 6)+`]}`, props("bowtie")),
		polFeature(`{"type":"Polygon","coordinates":[`+
			polRing([][2]float64{{-1.25, 6.45}, {-1.248, 6.45}, {-1.248, 6.452}, {-1.25, 6.452}}, 6)+`]}`, props("open")),
		polFeature(`{"type":"Polygon","coordinates":[`+polBoxRing(-1.41, 6.59, -1.406, 6.594, 6, false)+","+
			polBoxRing(hole[0], hole[1], hole[2], hole[3], 6, true)+`]}`, props("hole")),
		polFeature(`{"type":"Polygon","coordinates":[`+
			polRing([][2]float64{{-1.45, 6.55}, {-1.448, 6.55}, {-1.448, 6.55}, {-1.448, 6.552}, {-1.45, 6.552}, {-1.45, 6.55}}, 6)+`]}`, props("duplicate")),
	}
	body := polCollection(features...)

	// As sent, the open ring is refused outright.
	polPostFile(t, base, key, "", polContentType, []byte(body)).WantStatus(t, http.StatusBadRequest)

	r := apitest.Do(t, "POST", base+polPath+"/repair", apitest.Merge(apitest.WithKey(key),
		apitest.Hdr("Content-Type", polContentType)), []byte(body)).WantStatus(t, http.StatusOK)
	var rep struct {
		FeatureCount    int                `json:"featureCount"`
		ChangedCount    int                `json:"changedCount"`
		UnrepairedCount int                `json:"unrepairedCount"`
		Collection      json.RawMessage    `json:"collection"`
		Features        []polFeatureRepair `json:"features"`
	}
	r.Decode(t, &rep)
	if rep.FeatureCount != 4 || rep.ChangedCount != 4 || rep.UnrepairedCount != 0 || len(rep.Features) != 4 {
		t.Fatalf("repair: %d features, %d changed, %d unrepaired: %s", rep.FeatureCount, rep.ChangedCount, rep.UnrepairedCount, r.Body)
	}
	want := [][]string{{"SELF_INTERSECTION_SPLIT"}, {"RING_CLOSED"}, {"HOLES_REMOVED"}, {"DUPLICATE_POSITIONS_REMOVED"}}
	for i, f := range rep.Features {
		var got []string
		for _, c := range f.Changes {
			got = append(got, c.Code)
			if c.Message == "" || c.Path != "geometry.coordinates[0]" && c.Path != "geometry.coordinates" {
				t.Errorf("feature %d: change %+v", i, c)
			}
		}
		if f.FeatureIndex != i || f.Unrepaired != nil || !slices.Equal(got, want[i]) || f.OriginalSHA256 != polSHA256(t, features[i]) {
			t.Errorf("feature %d: %+v, want changes %v and the hash of the feature as sent", i, f, want[i])
		}
	}
	if c := rep.Features[0].Changes[0]; c.Parts != 2 {
		t.Errorf("the bowtie: %+v, want 2 parts", c)
	}
	if c := rep.Features[1].Changes[0]; c.Positions != 1 {
		t.Errorf("the open ring: %+v", c)
	}
	if c, ha := rep.Features[2].Changes[0], polBoxHa(hole[0], hole[1], hole[2], hole[3]); c.Parts != 1 || !polNear(c.AreaHa, ha, ha/1000) {
		t.Errorf("the hole: %+v, want 1 hole of %v ha", c, ha)
	}
	if c := rep.Features[3].Changes[0]; c.Positions != 1 {
		t.Errorf("the repeated position: %+v", c)
	}
	var coll struct {
		Features []struct {
			Geometry struct {
				Type string `json:"type"`
			} `json:"geometry"`
			Properties struct {
				ExternalID string `json:"externalId"`
			} `json:"properties"`
		} `json:"features"`
	}
	if err := json.Unmarshal(rep.Collection, &coll); err != nil || len(coll.Features) != 4 ||
		coll.Features[0].Geometry.Type != "MultiPolygon" || coll.Features[0].Properties.ExternalID != "bowtie" {
		t.Fatalf("repaired collection %s: %v", rep.Collection, err)
	}
	var repaired []json.RawMessage
	var top struct {
		Features []json.RawMessage `json:"features"`
	}
	if err := json.Unmarshal(rep.Collection, &top); err != nil {
		t.Fatal(err)
	}
	repaired = top.Features

	// The file with ?repair=true: screened repaired, every plot
	// COMPLIANT, the changes in each plot's evidence.
	polPostFile(t, base, key, "?repair=yes", polContentType, []byte(body)).WantStatus(t, http.StatusBadRequest)
	id := polCheckAccepted(t, polPostFile(t, base, key, "?repair=true", polContentType, []byte(body)), 4)
	job := polWaitJob(t, base, key, id, 60*time.Second)
	for i, res := range polAllResults(t, base, key, job) {
		if res.EUDRStatus != "COMPLIANT" {
			t.Errorf("plot %d: %s %s, want COMPLIANT once repaired", i, res.EUDRStatus, polStr(res.FailureReason))
		}
		var ev struct {
			InputSHA256 string            `json:"inputSha256"`
			Repair      *polFeatureRepair `json:"repair"`
		}
		apitest.Do(t, "GET", polItemURL(base, res.PolygonID)+"/evidence", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &ev)
		if ev.Repair == nil {
			t.Errorf("plot %d: no repair in its evidence", i)
			continue
		}
		var got []string
		for _, c := range ev.Repair.Changes {
			got = append(got, c.Code)
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, repaired[i])
		if !slices.Equal(got, want[i]) || ev.Repair.OriginalSHA256 != polSHA256(t, features[i]) || ev.InputSHA256 != polSHA256(t, compact.String()) {
			t.Errorf("plot %d: evidence %s with %+v, want changes %v, the hash of the feature as sent and of the one screened", i, ev.InputSHA256, *ev.Repair, want[i])
		}
	}
}
