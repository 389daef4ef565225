package pdf

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/storage"
)

func TestRecord_OnceForTheSameBytes(t *testing.T) {
	b := apitest.NewBench(t, time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))
	s := Source{DB: b.DB, Ledger: b.Ledger}
	ctx := context.Background()
	tenant := storage.Tenant{Org: "default", Env: storage.Sandbox}
	body := []byte("%PDF-1.4 a report")
	sum := sha256.Sum256(body)

	// Requests racing for a report never made record it once.
	var wg sync.WaitGroup
	got := make([]*storage.PDFReport, 8)
	for i := range got {
		wg.Go(func() {
			r, err := s.record(ctx, tenant, KindBatch, "bat_X", Made{Body: body, SHA256: sum})
			if err != nil {
				t.Error(err)
			}
			got[i] = r
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for _, r := range got {
		if r.LedgerIndex != 0 || r.SHA256 != hex.EncodeToString(sum[:]) || r.Kind != KindBatch || r.RecordID != "bat_X" || r.Bytes != len(body) {
			t.Errorf("record %+v; want entry 0 of batch bat_X with the body's hash and size", r)
		}
	}
	var size int64
	var entry anchor.ReportEntry
	err := b.DB.View(ctx, func(tx *storage.Tx) error {
		cp, err := ledger.LatestCheckpoint(tx.Tx, anchor.Log(tenant))
		if err != nil {
			return err
		}
		size = cp.Size
		e, err := ledger.ReadEntry(tx.Tx, anchor.Log(tenant), 0)
		if err != nil {
			return err
		}
		return json.Unmarshal(e.Data, &entry)
	})
	if err != nil {
		t.Fatal(err)
	}
	if size != 1 || entry.Type != anchor.EntryReportGenerated || entry.SHA256 != got[0].SHA256 || entry.Report != KindBatch || entry.RecordID != "bat_X" {
		t.Errorf("the ledger holds %d entries, the first %+v; want one report.generated entry of the batch's report", size, entry)
	}

	// Check finds the bytes and proves their entry; others are unknown.
	c, err := s.Check(ctx, tenant, body)
	if err != nil || !c.Recorded || c.Report.LedgerIndex != 0 || c.Ledger == nil || c.Ledger.TreeSize != 1 {
		t.Errorf("check of the report: %+v, %v", c, err)
	}
	if c, err := s.Check(ctx, tenant, append(body, ' ')); err != nil || c.Recorded || c.Report != nil || c.Ledger != nil {
		t.Errorf("check of other bytes: %+v, %v; want not recorded", c, err)
	}
	other := storage.Tenant{Org: "default", Env: storage.Production}
	if c, err := s.Check(ctx, other, body); err != nil || c.Recorded {
		t.Errorf("check in the other environment: %+v, %v; want not recorded", c, err)
	}
}
