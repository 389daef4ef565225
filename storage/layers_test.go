package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/eudr/eudr/storage"
)

func TestLayers_RoundTrip(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	feats := `{"type":"FeatureCollection","features":[]}`
	for _, id := range []string{"lyr_01", "lyr_02"} {
		err := db.Update(ctx, func(tx *storage.Tx) error {
			return tx.PutLayer(&storage.Layer{ID: id, Name: "n " + id, Kind: "deforestation", Version: "1", Source: "s",
				SHA256: "ab", FeatureCount: 3, Coverage: []byte(`[[[[0,0],[1,0],[1,1],[0,0]]]]`),
				Features: []byte(feats), ImportedAt: testNow})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	err := db.View(ctx, func(tx *storage.Tx) error {
		ls, err := tx.FindLayers()
		if err != nil {
			return err
		}
		if len(ls) != 2 || ls[0].ID != "lyr_02" || ls[1].ID != "lyr_01" {
			t.Fatalf("FindLayers = %v, want newest first", ls)
		}
		if ls[0].Features != nil || ls[0].FeatureCount != 3 || string(ls[0].Coverage) != `[[[[0,0],[1,0],[1,1],[0,0]]]]` || !ls[0].ImportedAt.Equal(testNow) {
			t.Errorf("listed layer = %+v", ls[0])
		}
		l, err := tx.FindLayer("lyr_01")
		if err != nil {
			return err
		}
		if string(l.Features) != feats || l.Name != "n lyr_01" || l.Kind != "deforestation" {
			t.Errorf("FindLayer = %+v", l)
		}
		if _, err := tx.FindLayer("nope"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("FindLayer(nope) err = %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
