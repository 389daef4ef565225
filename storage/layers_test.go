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

func TestLayers_Environment(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	err := db.Update(ctx, func(tx *storage.Tx) error {
		if err := tx.PutLayer(&storage.Layer{ID: "lyr_02", Name: "sandbox", Env: storage.Sandbox, Coverage: []byte(`[]`)}); err != nil {
			return err
		}
		// A layer stored before layers had an environment: production's.
		old := `{"id":"lyr_01","name":"old","kind":"deforestation","version":"1","source":"s","sha256":"ab","featureCount":0,"coverage":[],"importedAt":"2026-01-01T00:00:00Z"}`
		if err := tx.Bucket([]byte("layers")).Put([]byte("lyr_01"), []byte(old)); err != nil {
			return err
		}
		return tx.Bucket([]byte("layer_data")).Put([]byte("lyr_01"), []byte{})
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(ctx, func(tx *storage.Tx) error {
		ls, err := tx.FindLayers()
		if err != nil {
			return err
		}
		if len(ls) != 2 || ls[0].Env != storage.Sandbox || ls[1].Env != storage.Production {
			t.Errorf("FindLayers environments = %v, %v; want sandbox, then production for the record without one", ls[0].Env, ls[1].Env)
		}
		for id, want := range map[string]storage.Environment{"lyr_01": storage.Production, "lyr_02": storage.Sandbox} {
			l, err := tx.FindLayer(id)
			if err != nil {
				return err
			}
			if l.Env != want {
				t.Errorf("FindLayer(%s).Env = %q, want %q", id, l.Env, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
