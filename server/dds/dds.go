// Package dds owns due-diligence statements: drafting one from VERIFIED
// batches linked to shipments (checked against the EU information
// system's rules, split when its limits require), submitting it (a job
// that files it with the EU system and polls its status until the EU
// system decides, retrying transient failures), amending and revoking it,
// and the
// organisation's EU system credentials, sealed at rest. Every change of a
// statement's status is recorded with a dds.status ledger entry under a
// signed checkpoint in the transaction that makes it. The EU system is
// never called inside a transaction.
package dds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// Options are what the service needs.
type Options struct {
	DB     *storage.DB
	Jobs   *work.Queue
	Events *event.Publisher
	Ledger *anchor.Ledger
	Logger zerolog.Logger
	// Clients are the EU information system of each environment: the SOAP
	// client in production, the simulator in the sandbox.
	Clients map[storage.Environment]euis.Client
	// PollSchedules are each environment's delays between calls to the EU
	// system for one statement (status polls and retries); the last one
	// repeats. Each must list at least one delay.
	PollSchedules map[storage.Environment][]time.Duration
	// Sealer seals the credentials' auth keys at rest.
	Sealer *Sealer
	// Endpoints are the EU system's configured URLs and the rules for an
	// endpoint given with credentials.
	Endpoints Endpoints
	// SandboxWindows are the sandbox's periods of withdrawal and amendment,
	// the same as its simulated EU system's; euis.EUWindows when
	// SandboxWindows.Amend is 0. Production always keeps the EU's.
	SandboxWindows euis.Windows
}

// Service drafts, submits and revokes statements and keeps the EU system
// credentials.
type Service struct {
	o       Options
	answers lastAnswers
}

// New returns the service and registers its submission job with o.Jobs.
func New(o Options) *Service {
	s := &Service{o: o}
	o.Jobs.Handle(work.DDSSubmission, s.runSubmission)
	return s
}

// windows are the periods of withdrawal and amendment in t's environment.
func (s *Service) windows(t storage.Tenant) euis.Windows {
	if t.Env == storage.Sandbox && s.o.SandboxWindows.Amend > 0 {
		return s.o.SandboxWindows
	}
	return euis.EUWindows
}

// Actors of history entries that no client caused.
const (
	// ActorEUSystem made the changes the EU system decided: filed,
	// validated, rejected, withdrawn there.
	ActorEUSystem = "eu-system"
)

// Record records a change of d's status in the caller's transaction: the
// new status, a history entry by actor with note, and its dds.status
// ledger entry under a checkpoint signed in the same transaction. Every
// change of a statement's status goes through it, so that the history
// and the ledger agree; it is exported for statements made outside the
// draft workflow (the fixtures of tests). It returns the ledger's or the
// store's error.
func (s *Service) Record(tx *storage.Tx, t storage.Tenant, d *storage.DDS, status, actor, note string) error {
	sum := sha256.Sum256(d.Statement)
	return s.recordEntry(tx, t, d, anchor.DDSEntry{Type: anchor.EntryDDSStatus, DDSID: d.ID, Status: status, Actor: actor,
		StatementSHA256: hex.EncodeToString(sum[:]), EUUUID: d.EUUUID, ReferenceNumber: d.ReferenceNumber,
		VerificationNumber: d.VerificationNumber, Reasons: d.Reasons}, note)
}

// recordEntry appends e to the ledger under a checkpoint signed in tx,
// and records d with e's status and a history entry by e's actor with
// note, pointing at it.
func (s *Service) recordEntry(tx *storage.Tx, t storage.Tenant, d *storage.DDS, e anchor.DDSEntry, note string) error {
	le, err := anchor.Append(tx, t, e)
	if err != nil {
		return err
	}
	if _, err := s.o.Ledger.Sign(tx, t); err != nil {
		return err
	}
	d.Status = e.Status
	d.History = append(d.History, storage.DDSChange{At: tx.Now(), Status: e.Status, Actor: e.Actor, Note: note, LedgerIndex: &le.Index})
	return tx.PutDDS(t, d)
}

// Declaration is a statement with its submission job while the job is
// queued or under way, or after it failed; Submission is nil before the
// statement is submitted and once the job completed (its status and
// history tell the rest).
type Declaration struct {
	DDS        *storage.DDS
	Submission *storage.Job
}

// WithSubmission reads d's submission job in tx. It fails only when the
// job cannot be read.
func WithSubmission(tx *storage.Tx, t storage.Tenant, d *storage.DDS) (Declaration, error) {
	job, err := tx.SubmissionJob(t, d.Poll)
	if err != nil {
		return Declaration{}, fmt.Errorf("dds %s: %w", d.ID, err)
	}
	return Declaration{DDS: d, Submission: job}, nil
}

// Find returns the statement ref names (its ID or EU reference number)
// with its submission; apierr.NotFound when there is none, the store's
// error when it fails.
func (s *Service) Find(ctx context.Context, t storage.Tenant, ref string) (Declaration, error) {
	var out Declaration
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		d, err := tx.FindDDS(t, ref)
		if err != nil {
			return err
		}
		out, err = WithSubmission(tx, t, d)
		return err
	})
	return out, apierr.Named(err, "dds", ref)
}

// Filter selects statements of a list.
type Filter struct {
	// Status is one status to list; "" lists all.
	Status string
}

// Statuses are the statuses a statement can have, in their order.
var Statuses = []string{storage.DDSDraft, storage.DDSSubmitted, storage.DDSValidated, storage.DDSRejected, storage.DDSRevoked}

// Validate refuses a status that does not exist (a 400 at query.status).
func (f Filter) Validate() error {
	if f.Status == "" || slices.Contains(Statuses, f.Status) {
		return nil
	}
	return apierr.Invalid("query.status", "must be DRAFT, SUBMITTED, VALIDATED, REJECTED or REVOKED")
}

// List returns one page of the tenant's statements, newest first, with
// their submissions, and whether more follow. It fails only when the
// store does.
func (s *Service) List(ctx context.Context, t storage.Tenant, f Filter, p storage.Page) ([]Declaration, bool, error) {
	var out []Declaration
	var more bool
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		list, m, err := tx.FindDDSs(t, storage.DDSFilter{Status: f.Status}, p)
		if err != nil {
			return err
		}
		more, out = m, make([]Declaration, len(list))
		for i, d := range list {
			if out[i], err = WithSubmission(tx, t, d); err != nil {
				return err
			}
		}
		return nil
	})
	return out, more, err
}
