// Package sd owns simplified declarations: the one-time declaration a
// micro or small primary operator files with the EU information system
// instead of a due-diligence statement per shipment, by itself or through
// an authorised representative (REPRESENTATIVE_MSPO), its producers
// located by a geometry, postal addresses or cadastral identifiers. A
// declaration is recorded and queued for filing in one request; its job
// files it (submitSd), polls its status (getSd) until the EU system
// decides, retries transient failures, and after a crash finds a filing
// whose answer was lost by its internal reference rather than filing it
// twice. It can be withdrawn (withdrawSd) and, once VALIDATED, updated
// (updateSd); another operator's declaration can be looked up by its
// numbers (getSdByIdentifiers) and the answer kept. Every change is
// recorded with an sd.status ledger entry under a signed checkpoint in the
// transaction that makes it; the EU system is never called inside a
// transaction.
package sd

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
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// Options are what the service needs.
type Options struct {
	DB     *storage.DB
	Jobs   *work.Queue
	Ledger *anchor.Ledger
	Logger zerolog.Logger
	// Clients are the EU system of each environment: the SOAP client in
	// production, the simulator in the sandbox.
	Clients map[storage.Environment]euis.SDClient
	// PollSchedules are each environment's delays between calls for one
	// declaration; the last repeats. Each lists at least one.
	PollSchedules map[storage.Environment][]time.Duration
	// Credentials returns the tenant's EU system credentials, unsealed, or
	// the API error that says they are missing (the DDS workflow keeps
	// them).
	Credentials func(tx *storage.Tx, t storage.Tenant) (euis.Credentials, error)
	// AttemptOf describes a transient failure of the EU system as the job's
	// lastAttempt shows it (dds.AttemptOf: the same codes for both).
	AttemptOf func(error) storage.JobAttempt
}

// Service records, files and withdraws simplified declarations.
type Service struct{ o Options }

// New returns the service and registers its submission job with o.Jobs.
func New(o Options) *Service {
	s := &Service{o: o}
	o.Jobs.Handle(work.SDSubmission, s.runSubmission)
	return s
}

// ActorEUSystem made the changes the EU system decided.
const ActorEUSystem = "eu-system"

// DetailNotWithdrawable is the 409 detail of a declaration that cannot be
// withdrawn.
const DetailNotWithdrawable = "SD_NOT_WITHDRAWABLE"

// Statuses are the statuses a declaration can have, in their order.
var Statuses = []string{storage.SDDraft, storage.SDSubmitted, storage.SDValidated, storage.SDRejected, storage.SDWithdrawn}

// record records a change of d's status in the caller's transaction: the
// status, a history entry by actor, and its sd.status ledger entry under
// a checkpoint signed in the same transaction.
func (s *Service) record(tx *storage.Tx, t storage.Tenant, d *storage.SD, status, actor, note string) error {
	sum := sha256.Sum256(d.Statement)
	e, err := anchor.Append(tx, t, anchor.SDEntry{Type: anchor.EntrySDStatus, SDID: d.ID, Status: status, Actor: actor,
		StatementSHA256: hex.EncodeToString(sum[:]), SDIdentifier: d.SDIdentifier, ReferenceNumber: d.ReferenceNumber,
		VerificationNumber: d.VerificationNumber, Reasons: d.Reasons})
	if err != nil {
		return err
	}
	if _, err := s.o.Ledger.Sign(tx, t); err != nil {
		return err
	}
	d.Status = status
	d.History = append(d.History, storage.DDSChange{At: tx.Now(), Status: status, Actor: actor, Note: note, LedgerIndex: &e.Index})
	return tx.PutSD(t, d)
}

// Declaration is a declaration with its submission job while the job is
// queued or under way, or after it failed.
type Declaration struct {
	SD         *storage.SD
	Submission *storage.Job
}

func withSubmission(tx *storage.Tx, t storage.Tenant, d *storage.SD) (Declaration, error) {
	job, err := tx.SubmissionJob(t, d.Poll)
	if err != nil {
		return Declaration{}, fmt.Errorf("sd %s: %w", d.ID, err)
	}
	return Declaration{SD: d, Submission: job}, nil
}

// Find returns the declaration ref names (its ID, sdIdentifier or
// reference number); apierr.NotFound when there is none.
func (s *Service) Find(ctx context.Context, t storage.Tenant, ref string) (Declaration, error) {
	var out Declaration
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		d, err := tx.FindSD(t, ref)
		if err != nil {
			return err
		}
		out, err = withSubmission(tx, t, d)
		return err
	})
	return out, apierr.Named(err, "simplified declaration", ref)
}

// CheckStatus refuses a status filter that is not a status (a 400 at
// query.status); "" lists all.
func CheckStatus(status string) error {
	if status == "" || slices.Contains(Statuses, status) {
		return nil
	}
	return apierr.Invalid("query.status", "must be DRAFT, SUBMITTED, VALIDATED, REJECTED or WITHDRAWN")
}

// List returns one page of the tenant's declarations that f keeps (a
// status, an internal reference), newest first, and whether more follow;
// a status that does not exist is a 400 at query.status.
func (s *Service) List(ctx context.Context, t storage.Tenant, f storage.SDFilter, p storage.Page) ([]Declaration, bool, error) {
	if err := CheckStatus(f.Status); err != nil {
		return nil, false, err
	}
	var out []Declaration
	var more bool
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		list, m, err := tx.FindSDs(t, f, p)
		if err != nil {
			return err
		}
		more, out = m, make([]Declaration, len(list))
		for i, d := range list {
			if out[i], err = withSubmission(tx, t, d); err != nil {
				return err
			}
		}
		return nil
	})
	return out, more, err
}
