package dds_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

var (
	sandbox    = storage.Tenant{Org: "default", Env: storage.Sandbox}
	production = storage.Tenant{Org: "default", Env: storage.Production}
	start      = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	// schedules are the poll schedules of the tests' services.
	schedules = map[storage.Environment][]time.Duration{
		storage.Sandbox:    {time.Second, 2 * time.Second},
		storage.Production: {30 * time.Minute, time.Hour},
	}
	endpoints = dds.Endpoints{Production: "https://eu.example/tracesnt", Acceptance: "https://acceptance.eu.example/tracesnt"}
)

// operator is the EU operator UUID of supplier mapping V-1, which the
// statements of the tests are filed for.
const operator = "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b"

// rig is a service on a bench, with the simulators behind its clients.
type rig struct {
	b   *apitest.Bench
	s   *dds.Service
	sim *euis.Simulator // the sandbox's EU system
	// eu is production's EU system: a simulator that records the
	// credentials it is called with and fails as told.
	eu     *recordingEU
	sealer *dds.Sealer
}

// newRig builds the service; wrap, when not nil, puts a client of the
// test's own in front of the sandbox's simulator.
func newRig(tb testing.TB, wrap func(euis.Client) euis.Client) *rig {
	tb.Helper()
	return newWindowedRig(tb, wrap, euis.Windows{})
}

// newWindowedRig is newRig with the sandbox's periods of withdrawal and
// amendment (the service's and its simulator's) set to w.
func newWindowedRig(tb testing.TB, wrap func(euis.Client) euis.Client, w euis.Windows) *rig {
	tb.Helper()
	b := apitest.NewBench(tb, start)
	sealer, err := dds.LoadSealer(filepath.Join(tb.TempDir(), "eu-credentials.key"))
	if err != nil {
		tb.Fatal(err)
	}
	r := &rig{b: b, sealer: sealer,
		sim: euis.NewSimulator(euis.NewMemSimStore(), euis.SimOptions{Delay: 3 * time.Second, Now: b.Clock.Now, Windows: w})}
	r.eu = &recordingEU{Client: euis.NewSimulator(euis.NewMemSimStore(), euis.SimOptions{Delay: 3 * time.Second, Now: b.Clock.Now})}
	var sandboxClient euis.Client = r.sim
	if wrap != nil {
		sandboxClient = wrap(r.sim)
	}
	r.s = dds.New(dds.Options{DB: b.DB, Jobs: b.Jobs, Events: b.Events, Ledger: b.Ledger, Logger: zerolog.New(b.Logs),
		Clients:       map[storage.Environment]euis.Client{storage.Sandbox: sandboxClient, storage.Production: r.eu},
		PollSchedules: schedules, Sealer: sealer, Endpoints: endpoints, SandboxWindows: w})
	return r
}

// recordingEU is an EU system that records the credentials of each call
// and answers the first failures calls to Submit, Withdraw and Get with
// HTTP 503.
type recordingEU struct {
	euis.Client
	mu       sync.Mutex
	creds    []euis.Credentials
	failures int
}

// failNext makes the next n calls fail. The job runner calls the EU
// system on its own goroutine, so this takes the lock the calls take.
func (e *recordingEU) failNext(n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failures = n
}

// calls counts the calls made so far.
func (e *recordingEU) calls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.creds)
}

func (e *recordingEU) call(cr euis.Credentials, op string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.creds = append(e.creds, cr)
	if e.failures > 0 {
		e.failures--
		return &euis.HTTPError{Operation: op, StatusCode: 503}
	}
	return nil
}

func (e *recordingEU) Submit(ctx context.Context, cr euis.Credentials, s euis.Statement) (string, error) {
	if err := e.call(cr, "submitDds"); err != nil {
		return "", err
	}
	return e.Client.Submit(ctx, cr, s)
}

func (e *recordingEU) Withdraw(ctx context.Context, cr euis.Credentials, uuid string) error {
	if err := e.call(cr, "withdrawDds"); err != nil {
		return err
	}
	return e.Client.Withdraw(ctx, cr, uuid)
}

func (e *recordingEU) Amend(ctx context.Context, cr euis.Credentials, uuid string, st euis.Statement) (string, error) {
	if err := e.call(cr, "amendDds"); err != nil {
		return "", err
	}
	return e.Client.Amend(ctx, cr, uuid, st)
}

func (e *recordingEU) Get(ctx context.Context, cr euis.Credentials, uuids []string) ([]euis.Status, error) {
	if err := e.call(cr, "getDds"); err != nil {
		return nil, err
	}
	return e.Client.Get(ctx, cr, uuids)
}

// declarable records what batch id of tenant t needs to be declared: the
// supplier mapping V-1 (operator, an importer established in the
// Netherlands, with an EORI), a plot in Ghana, the batch VERIFIED with that
// plot, and its shipment LINKED, entering at Rotterdam.
func (r *rig) declarable(tb testing.TB, t storage.Tenant, id string) {
	tb.Helper()
	r.b.Update(tb, func(tx *storage.Tx) error { return putDeclarable(tx, t, id) })
}

func putDeclarable(tx *storage.Tx, t storage.Tenant, id string) error {
	if err := tx.PutSupplier(t, &storage.Supplier{ID: "sup_V1", ERPVendorID: "V-1", EUOperatorUUID: operator, Name: "Importer BV",
		Country: "NL", EORI: "NL123456789", Role: "OPERATOR", CreatedAt: tx.Now(), UpdatedAt: tx.Now()}); err != nil {
		return err
	}
	pid := "pol_" + id
	feature := `{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-1.6,6.7],[-1.59,6.7],[-1.59,6.7100004],[-1.6,6.7]]]},"properties":{}}`
	if err := tx.PutPolygon(t, &storage.Polygon{ID: pid, SupplierID: "V-1", Commodity: "cocoa", ProducerCountry: "GH",
		ProducerName: "Kofi Mensah", GeometryType: "Polygon", Status: "COMPLIANT", ScreenedAt: tx.Now()},
		&storage.PolygonDetail{Feature: []byte(feature), Evidence: []byte(`{}`)}); err != nil {
		return err
	}
	if err := tx.PutBatch(t, &storage.Batch{ID: id, Reference: "LOT-" + id, Commodity: "cocoa", HSCode: "18010000", SupplierID: "V-1",
		PolygonCount: 1, NetMassKg: "1000", Status: storage.BatchVerified, CreatedAt: tx.Now()}); err != nil {
		return err
	}
	if err := tx.PutBatchPolygons(t, id, []string{pid}); err != nil {
		return err
	}
	return tx.PutShipmentLink(t, &storage.ShipmentLink{ID: "lnk_" + id, BatchID: id, ShipmentID: "SHP-" + id, PortOfEntry: "NLRTM",
		Status: storage.LinkLinked, CreatedAt: tx.Now()})
}

// request is a valid draft request for the batches, filed for operator.
func request(batches ...string) *dds.DraftRequest {
	activity, op := euis.ActivityImport, operator
	return &dds.DraftRequest{BatchIDs: batches, ActivityType: &activity, OperatorUUID: &op}
}

// draft records the drafts req asks for.
func (r *rig) draft(t storage.Tenant, req *dds.DraftRequest) ([]*storage.DDS, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var out []*storage.DDS
	err := r.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
		var err error
		out, err = r.s.Draft(tx, t, req, "key_test")
		return err
	})
	return out, err
}

// mustDraft records the one draft of req.
func (r *rig) mustDraft(tb testing.TB, t storage.Tenant, req *dds.DraftRequest) *storage.DDS {
	tb.Helper()
	out, err := r.draft(t, req)
	if err != nil || len(out) != 1 {
		tb.Fatalf("Draft: %d drafts, %v", len(out), err)
	}
	return out[0]
}

// submit queues the submission of the statement.
func (r *rig) submit(t storage.Tenant, id string) (*storage.Job, error) {
	var job *storage.Job
	err := r.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
		var err error
		job, err = r.s.Submit(tx, t, id)
		return err
	})
	return job, err
}

// revoke withdraws the statement and records the revocation.
func (r *rig) revoke(t storage.Tenant, ref string) (dds.Declaration, error) {
	w, err := r.s.Withdraw(context.Background(), t, ref)
	if err != nil {
		return dds.Declaration{}, err
	}
	var dcl dds.Declaration
	err = r.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
		var err error
		dcl, err = r.s.Revoke(tx, t, w, "key_test")
		return err
	})
	return dcl, err
}

// find reads the statement.
func (r *rig) find(tb testing.TB, t storage.Tenant, id string) dds.Declaration {
	tb.Helper()
	dcl, err := r.s.Find(context.Background(), t, id)
	if err != nil {
		tb.Fatal(err)
	}
	return dcl
}

// waitStatus runs the jobs and moves the clock on a second at a time (the
// simulator and the poll schedule run on it) until the statement has
// status want; it fails when the submission job ends first.
func (r *rig) waitStatus(tb testing.TB, t storage.Tenant, id, want string) dds.Declaration {
	tb.Helper()
	r.b.RunJobs(tb)
	for {
		dcl := r.find(tb, t, id)
		if dcl.DDS.Status == want {
			return dcl
		}
		if dcl.DDS.Poll != nil {
			// The statement is read again after the job: the job may have
			// changed it and ended in between.
			if j := r.b.Job(tb, t, dcl.DDS.Poll.JobID); j.Status == storage.JobCompleted || j.Status == storage.JobFailed {
				if dcl = r.find(tb, t, id); dcl.DDS.Status == want {
					return dcl
				}
				tb.Fatalf("dds %s is %s and its job %s ended %s (%+v), want %s", id, dcl.DDS.Status, j.ID, j.Status, j.Error, want)
			}
		}
		r.b.Clock.Advance(time.Second)
		r.b.Jobs.Wake()
		time.Sleep(5 * time.Millisecond)
	}
}

// waitJob runs the jobs, without moving the clock, until done holds for
// the job.
func (r *rig) waitJob(tb testing.TB, t storage.Tenant, id string, done func(*storage.Job) bool) *storage.Job {
	tb.Helper()
	r.b.RunJobs(tb)
	for {
		if j := r.b.Job(tb, t, id); done(j) {
			return j
		}
		r.b.Jobs.Wake()
		time.Sleep(5 * time.Millisecond)
	}
}

// history is the statuses of d's history, by whom.
func history(d *storage.DDS) string {
	out := ""
	for i, h := range d.History {
		if i > 0 {
			out += " "
		}
		out += h.Status + "/" + h.Actor
	}
	return out
}

// wantError checks that err is the API error of status with one detail
// code each of details (none: any).
func wantError(tb testing.TB, what string, err error, status int, details ...string) *apierr.Error {
	tb.Helper()
	e := apierr.From(err)
	got := []string{}
	for _, d := range e.Details {
		got = append(got, d.Code)
	}
	if e.Status != status || (len(details) > 0 && fmt.Sprint(got) != fmt.Sprint(details)) {
		tb.Errorf("%s: got %d %v (%v), want %d %v", what, e.Status, got, err, status, details)
	}
	return e
}

// countDDS is how many statements the tenant has.
func (r *rig) countDDS(tb testing.TB, t storage.Tenant) int {
	tb.Helper()
	list, _, err := r.s.List(context.Background(), t, dds.Filter{}, storage.Page{Limit: 1000})
	if err != nil {
		tb.Fatal(err)
	}
	return len(list)
}

// isNotFound reports whether err is an apierr.NotFound.
func isNotFound(err error) bool { return errors.As(err, new(apierr.NotFound)) }

// waitEUStatus is waitStatus for the EU system's status of the statement
// (its poll state's euStatus).
func (r *rig) waitEUStatus(tb testing.TB, t storage.Tenant, id, want string) dds.Declaration {
	tb.Helper()
	r.b.RunJobs(tb)
	for {
		dcl := r.find(tb, t, id)
		if dcl.DDS.Poll != nil && dcl.DDS.Poll.EUStatus == want {
			return dcl
		}
		if dcl.DDS.Status != storage.DDSSubmitted && dcl.DDS.Status != storage.DDSDraft {
			tb.Fatalf("dds %s is %s before the EU system's status was %s", id, dcl.DDS.Status, want)
		}
		r.b.Clock.Advance(time.Second)
		r.b.Jobs.Wake()
		time.Sleep(5 * time.Millisecond)
	}
}
