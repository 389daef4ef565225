package shipment_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/eudr/eudr/storage"
)

// A link's ledger entry is proved in the checkpoint signed with it: the
// same proof after the log has grown; a link not anchored has none.
func TestService_LinkLedger(t *testing.T) {
	b, s := newService(t, time.Minute)
	ctx := context.Background()
	putBatch(t, b, "bat_ok", storage.BatchVerified)
	putBatch(t, b, "bat_ok2", storage.BatchVerified)
	l, err := link(b, s, "bat_ok", "SHP-1")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.LinkLedger(ctx, tenant, l); got != nil || err != nil {
		t.Errorf("ledger of a PENDING link: %+v %v, want none", got, err)
	}
	b.RunJobs(t)
	b.WaitJob(t, tenant, l.JobID)
	linked, err := s.Find(ctx, tenant, "SHP-1")
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.LinkLedger(ctx, tenant, linked)
	if err != nil {
		t.Fatal(err)
	}
	if first == nil || first.Index != *linked.LedgerIndex || first.TransactionHash != linked.TransactionHash ||
		first.TreeSize != linked.TreeSize || first.RootHash != linked.RootHash || first.Checkpoint == "" || first.Data == "" {
		t.Fatalf("ledger of link %+v: %+v", linked, first)
	}
	second, err := link(b, s, "bat_ok2", "SHP-2")
	if err != nil {
		t.Fatal(err)
	}
	b.RunJobs(t)
	b.WaitJob(t, tenant, second.JobID)
	again, err := s.LinkLedger(ctx, tenant, linked)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, first) {
		t.Errorf("after the log grew: %+v, want the proof in the first checkpoint %+v", again, first)
	}
}
