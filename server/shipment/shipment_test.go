package shipment_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/shipment"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

var (
	tenant = storage.Tenant{Org: "default", Env: storage.Sandbox}
	start  = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
)

func newService(tb testing.TB, timeout time.Duration) (*apitest.Bench, *shipment.Service) {
	b := apitest.NewBench(tb, start)
	return b, shipment.New(shipment.Options{DB: b.DB, Jobs: b.Jobs, Events: b.Events, Ledger: b.Ledger, ConsensusTimeout: timeout})
}

func putBatch(tb testing.TB, b *apitest.Bench, id, status string) {
	b.Update(tb, func(tx *storage.Tx) error {
		return tx.PutBatch(tenant, &storage.Batch{ID: id, Status: status, Commodity: "cocoa", CreatedAt: tx.Now()})
	})
}

func link(b *apitest.Bench, s *shipment.Service, batchID, shipmentID string) (*storage.ShipmentLink, error) {
	req := shipment.LinkRequest{BatchID: &batchID, ShipmentID: &shipmentID, ContainerNumbers: []string{"CSQU3054383"}}
	l, err := req.Validate()
	if err != nil {
		return nil, err
	}
	err = b.DB.Update(context.Background(), func(tx *storage.Tx) error { return s.Link(tx, tenant, l) })
	return l, err
}

func TestService_Link(t *testing.T) {
	b, s := newService(t, time.Minute)
	putBatch(t, b, "bat_ok", storage.BatchVerified)
	putBatch(t, b, "bat_ok2", storage.BatchVerified)
	putBatch(t, b, "bat_risky", storage.BatchHighRisk)

	l, err := link(b, s, "bat_ok", "SHP-1")
	if err != nil {
		t.Fatal(err)
	}
	b.RunJobs(t)
	job := b.WaitJob(t, tenant, l.JobID)
	published := b.WaitPublished(t, 1)
	got, err := s.Find(context.Background(), tenant, "SHP-1")
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != storage.JobCompleted || got.Status != storage.LinkLinked || got.LedgerIndex == nil ||
		got.TransactionHash == "" || got.TreeSize != 1 || len(job.LedgerIndexes) != 1 || published != 1 {
		t.Errorf("after the job: job %+v, link %+v, %d publishing commits; want it LINKED under a checkpoint and shipment.linked fired",
			job, got, published)
	}
	line := b.WaitFinished(t, l.JobID)
	for k, v := range map[string]any{"type": work.ShipmentLink, "status": storage.JobCompleted, "org": tenant.Org,
		"environment": string(tenant.Env), "link_id": l.ID, "shipment_id": "SHP-1", "batch_id": "bat_ok",
		"link_status": storage.LinkLinked, "ledger_index": float64(*got.LedgerIndex), "tree_size": 1.0} {
		if line[k] != v {
			t.Errorf("job finished line: %s is %v, want %v; line %v", k, line[k], v, line)
		}
	}

	for _, tc := range []struct {
		name, batch, shipment string
		status                int
		detail                string
	}{
		{"UnknownBatch", "bat_nope", "SHP-2", 404, apierr.DetailInvalidValue},
		{"NotVerified", "bat_risky", "SHP-2", 422, apierr.DetailBatchNotVerified},
		{"ShipmentHeld", "bat_ok2", "SHP-1", 409, apierr.DetailShipmentAlreadyLinked},
		{"BatchHeld", "bat_ok", "SHP-2", 409, apierr.DetailBatchAlreadyLinked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := link(b, s, tc.batch, tc.shipment)
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != tc.status || len(e.Details) != 1 || e.Details[0].Code != tc.detail {
				t.Errorf("got %v, want %d with detail %s", err, tc.status, tc.detail)
			}
		})
	}

	if _, err := s.Find(context.Background(), tenant, "SHP-9"); !errors.As(err, new(apierr.NotFound)) {
		t.Errorf("Find of an unknown shipment: got %v, want apierr.NotFound", err)
	}
}

// A link not anchored within the consensus timeout fails with
// LEDGER_CONSENSUS_TIMEOUT and frees its batch and shipment.
func TestService_LinkTimesOut(t *testing.T) {
	b, s := newService(t, time.Second)
	putBatch(t, b, "bat_ok", storage.BatchVerified)
	l, err := link(b, s, "bat_ok", "SHP-1")
	if err != nil {
		t.Fatal(err)
	}
	b.Clock.Advance(2 * time.Second)
	b.RunJobs(t)
	job := b.WaitJob(t, tenant, l.JobID)
	if job.Status != storage.JobFailed || job.Error == nil || job.Error.Code != apierr.JobLedgerConsensusTimeout || len(job.LedgerIndexes) != 0 {
		t.Fatalf("job %+v, want FAILED LEDGER_CONSENSUS_TIMEOUT with no ledger entry", job)
	}
	if got, err := s.Find(context.Background(), tenant, "SHP-1"); err != nil || got.Status != storage.LinkFailed ||
		got.LedgerIndex != nil || got.TransactionHash != "" {
		t.Errorf("link: %+v %v, want FAILED without an anchor", got, err)
	}
	line := b.WaitFinished(t, l.JobID)
	for k, v := range map[string]any{"level": "warn", "status": storage.JobFailed, "error_code": apierr.JobLedgerConsensusTimeout,
		"link_id": l.ID, "shipment_id": "SHP-1", "link_status": storage.LinkFailed, "duration_ms": 2000.0} {
		if line[k] != v {
			t.Errorf("job finished line: %s is %v, want %v; line %v", k, line[k], v, line)
		}
	}
	if _, ok := line["ledger_index"]; ok {
		t.Errorf("job finished line of a link never anchored has a ledger index: %v", line)
	}
	// Nothing was anchored: the log is still empty.
	b.Update(t, func(tx *storage.Tx) error {
		if n, err := ledger.Size(tx.Tx, anchor.Log(tenant)); err != nil || n != 0 {
			t.Errorf("ledger size after a link that timed out: %d %v, want 0", n, err)
		}
		return nil
	})
	if _, err := link(b, s, "bat_ok", "SHP-1"); err != nil {
		t.Errorf("linking the freed batch and shipment again: %v", err)
	}
}

func TestValidContainerNumber(t *testing.T) {
	for c, want := range map[string]bool{
		"CSQU3054383": true, // the ISO 6346 example
		"CSQU3054384": false,
		"MSKU9070323": true,
		"MSKU9070324": false,
		"MSKU907032":  false,
		"msku9070323": false,
	} {
		if got := shipment.ValidContainerNumber(c); got != want {
			t.Errorf("%s: %v, want %v", c, got, want)
		}
	}
}
