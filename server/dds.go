package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// Actors of DDS history entries that no client caused.
const (
	actorEUSystem  = "eu-system"
	actorAppliance = "appliance"
)

// ddsResponse is a DDS as the API shows it. Lists leave out the statement.
type ddsResponse struct {
	DDSID                string             `json:"ddsId"`
	Status               string             `json:"status"`
	BatchIDs             []string           `json:"batchIds"`
	ActivityType         string             `json:"activityType"`
	OperatorUUID         string             `json:"operatorUuid"`
	InternalReference    *string            `json:"internalReference"`
	ReferencedStatements []ddsReferenceBody `json:"referencedStatements"`
	EUUUID               *string            `json:"euUuid"`
	ReferenceNumber      *string            `json:"referenceNumber"`
	VerificationNumber   *string            `json:"verificationNumber"`
	Reasons              []string           `json:"reasons"`
	SplitOf              *string            `json:"splitOf"`
	Part                 *int               `json:"part"`
	History              []ddsChangeBody    `json:"history"`
	CreatedAt            string             `json:"createdAt"`
	SubmittedAt          *string            `json:"submittedAt"`
	// Submission is the submission job while it is under way or after it
	// failed; set by ddsView.
	Submission *ddsSubmissionBody `json:"submission"`
	Statement  json.RawMessage    `json:"statement,omitempty"`
}

type ddsChangeBody struct {
	At          string  `json:"at"`
	Status      string  `json:"status"`
	Actor       string  `json:"actor"`
	Note        *string `json:"note"`
	LedgerIndex *int64  `json:"ledgerIndex"`
}

func toDDSResponse(d *storage.DDS, withStatement bool) ddsResponse {
	r := ddsResponse{DDSID: d.ID, Status: d.Status, BatchIDs: d.BatchIDs, ActivityType: d.ActivityType,
		OperatorUUID: d.OperatorUUID, InternalReference: storage.Optional(d.InternalReference),
		ReferencedStatements: []ddsReferenceBody{}, EUUUID: storage.Optional(d.EUUUID),
		ReferenceNumber: storage.Optional(d.ReferenceNumber), VerificationNumber: storage.Optional(d.VerificationNumber),
		Reasons: d.Reasons, SplitOf: storage.Optional(d.SplitOf), CreatedAt: storage.FormatTime(d.CreatedAt),
		SubmittedAt: storage.FormatTimePtr(d.SubmittedAt)}
	if r.Reasons == nil {
		r.Reasons = []string{}
	}
	if d.Part > 0 {
		r.Part = &d.Part
	}
	for _, ref := range d.ReferencedStatements {
		r.ReferencedStatements = append(r.ReferencedStatements, ddsReferenceBody(ref))
	}
	for _, h := range d.History {
		r.History = append(r.History, ddsChangeBody{At: storage.FormatTime(h.At), Status: h.Status, Actor: h.Actor,
			Note: storage.Optional(h.Note), LedgerIndex: h.LedgerIndex})
	}
	if withStatement {
		r.Statement = d.Statement
	}
	return r
}

// changeDDS records a state change of d in tx: the new status, a history
// entry, and its ledger entry under a checkpoint signed in the same
// transaction. Every state change of a DDS goes through here.
func (a *App) changeDDS(tx *storage.Tx, t storage.Tenant, d *storage.DDS, status, actor, note string) error {
	sum := sha256.Sum256(d.Statement)
	e, err := anchor.Append(tx, t, anchor.DDSEntry{Type: anchor.EntryDDSStatus, DDSID: d.ID, Status: status, Actor: actor,
		StatementSHA256: hex.EncodeToString(sum[:]), EUUUID: d.EUUUID, ReferenceNumber: d.ReferenceNumber,
		VerificationNumber: d.VerificationNumber, Reasons: d.Reasons})
	if err != nil {
		return err
	}
	if _, err := a.ledger.Sign(tx, t); err != nil {
		return err
	}
	d.Status = status
	d.History = append(d.History, storage.DDSChange{At: tx.Now(), Status: status, Actor: actor, Note: note, LedgerIndex: &e.Index})
	return tx.PutDDS(t, d)
}

// actorOf names who made a request: its API key or logged-in user.
func actorOf(r *http.Request) string { return infoFrom(r.Context()).who.id() }

// handleDDSCreate builds a DRAFT statement from batches (API.md section 7)
// and answers it with its Annex II payload. A statement over the EU
// system's limits is 422 naming each, unless split is asked for: then it
// is filed as several drafts, answered as a list.
func (a *App) handleDDSCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req ddsRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := mergeProblems(decoded, req.validate()); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	actor := actorOf(r)
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		src, err := readDDSSource(tx, t, &req)
		if err != nil {
			return reply{}, err
		}
		s, err := buildStatement(&req, src)
		if err != nil {
			return reply{}, err
		}
		parts := []euis.Statement{s}
		if verr := euis.Validate(s); verr != nil {
			if !req.Split {
				_, serr := euis.Split(s)
				return reply{}, statementProblems(verr, serr == nil)
			}
			if parts, err = euis.Split(s); err != nil {
				return reply{}, statementProblems(err, false)
			}
		}
		var out []ddsResponse
		first := ""
		for i, p := range parts {
			d, err := a.newDDS(tx, t, &req, p, actor)
			if err != nil {
				return reply{}, err
			}
			if len(parts) > 1 {
				if i == 0 {
					first = d.ID
				}
				d.SplitOf, d.Part = first, i+1
				if err := tx.PutDDS(t, d); err != nil {
					return reply{}, err
				}
			}
			out = append(out, toDDSResponse(d, true))
		}
		if req.Split {
			return reply{status: http.StatusOK, body: out}, nil
		}
		return reply{status: http.StatusOK, body: out[0]}, nil
	})
}

// newDDS records a DRAFT of statement s.
func (a *App) newDDS(tx *storage.Tx, t storage.Tenant, req *ddsRequest, s euis.Statement, actor string) (*storage.DDS, error) {
	id := storage.NewID("dds", tx.Now())
	if s.InternalReference == "" {
		// The DDS ID (30 characters): a statement can always be found
		// again in the EU system by its internal reference.
		s.InternalReference = id
	}
	payload, err := storage.MarshalJSON(toPayload(s))
	if err != nil {
		return nil, err
	}
	d := &storage.DDS{ID: id, BatchIDs: req.BatchIDs, ActivityType: s.ActivityType,
		OperatorUUID: s.OperatorUUID, InternalReference: s.InternalReference, Statement: payload, CreatedAt: tx.Now()}
	for _, ref := range s.ReferencedStatements { // a split's first part holds them all
		d.ReferencedStatements = append(d.ReferencedStatements, storage.DDSReference{ReferenceNumber: ref.ReferenceNumber,
			VerificationNumber: ref.VerificationNumber})
	}
	if err := a.changeDDS(tx, t, d, storage.DDSDraft, actor, "created from batches"); err != nil {
		return nil, err
	}
	return d, nil
}

func (a *App) handleDDSGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	id := ps.ByName("ddsId")
	t := tenantFrom(r.Context())
	var out ddsResponse
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		d, err := tx.FindDDS(t, id)
		if err != nil {
			return err
		}
		out, err = ddsView(tx, t, d, true)
		return err
	})
	err = apierr.Named(err, "dds", id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, out)
}

func (a *App) handleDDSList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	var probs apierr.Problems
	status := r.URL.Query().Get("status")
	switch status {
	case "", storage.DDSDraft, storage.DDSSubmitted, storage.DDSValidated, storage.DDSRejected, storage.DDSRevoked:
	default:
		probs.Add(apierr.DetailInvalidValue, "query.status", "must be DRAFT, SUBMITTED, VALIDATED, REJECTED or REVOKED")
	}
	if err := mergeProblems(problemsOf(err), probs.Err()); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	var out []ddsResponse
	var more bool
	err = a.db.View(r.Context(), func(tx *storage.Tx) error {
		list, m, err := tx.FindDDSs(t, storage.DDSFilter{Status: status}, page)
		if err != nil {
			return err
		}
		more, out = m, make([]ddsResponse, len(list))
		for i, d := range list {
			if out[i], err = ddsView(tx, t, d, false); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	if more {
		setNextPage(w, r, page, out[len(out)-1].DDSID)
	}
	writeJSON(w, r, http.StatusOK, out)
}

type ddsSubmitAccepted struct {
	JobID string `json:"jobId"`
}

// handleDDSSubmit queues the filing of a DRAFT. Production needs EU system
// credentials (422 EU_SYSTEM_NOT_CONFIGURED); the sandbox files with the
// simulator.
func (a *App) handleDDSSubmit(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	id := ps.ByName("ddsId")
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		d, err := tx.FindDDS(t, id)
		if errors.Is(err, storage.ErrNotFound) {
			return reply{}, apierr.NotFound{Kind: "dds", ID: id}
		}
		if err != nil {
			return reply{}, err
		}
		if d.Status != storage.DDSDraft {
			return reply{}, apierr.Conflict(apierr.DetailDDSNotDraft, "path.ddsId", fmt.Sprintf("dds %s is %s; only a DRAFT can be submitted", d.ID, d.Status))
		}
		if d.Poll != nil && d.Poll.JobID != "" {
			// Being submitted, unless that job failed for good: then a
			// new submission may start (the job found nothing was filed,
			// or the DDS would no longer be a DRAFT).
			prev, err := tx.FindJob(t, d.Poll.JobID)
			if err != nil && !errors.Is(err, storage.ErrNotFound) {
				return reply{}, err
			}
			if prev != nil && prev.Status != storage.JobFailed {
				return reply{}, apierr.Conflict(apierr.DetailDDSNotDraft, "path.ddsId", fmt.Sprintf("dds %s is being submitted already (job %s)", d.ID, prev.ID))
			}
		}
		if _, err := a.euCredentials(tx, t); err != nil {
			return reply{}, err
		}
		job, err := a.jobs.Enqueue(tx, t, work.DDSSubmission, 1, []byte(d.ID))
		if err != nil {
			return reply{}, err
		}
		d.Poll = &storage.DDSPollState{JobID: job.ID}
		if err := tx.PutDDS(t, d); err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusAccepted, header: http.Header{"Location": {eudrPrefix + "/jobs/" + job.ID}},
			body: ddsSubmitAccepted{JobID: job.ID}}, nil
	})
}

// handleDDSRevoke withdraws a SUBMITTED or VALIDATED statement in the EU
// system and marks it REVOKED, for good (SPEC.md section 3). referenceId is
// the ddsId or the EU reference number. Anything else, a statement past
// the EU system's 72-hour window, or one the EU system refuses to withdraw
// (GROUPED) is 409 DDS_NOT_REVOCABLE with the reason.
func (a *App) handleDDSRevoke(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	ref := ps.ByName("ddsId")
	t := tenantFrom(r.Context())
	var d *storage.DDS
	var creds euis.Credentials
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		if d, err = tx.FindDDS(t, ref); err != nil {
			return err
		}
		if err := revocable(d, tx.Now()); err != nil {
			return err
		}
		creds, err = a.euCredentials(tx, t)
		return err
	})
	err = apierr.Named(err, "dds", ref)
	if err != nil {
		writeError(w, r, err)
		return
	}
	client := a.euClient(t.Env)
	werr := client.Withdraw(r.Context(), creds, d.EUUUID)
	var fault *euis.Fault
	if errors.As(werr, &fault) && !euis.IsTransient(werr) {
		// Withdrawn already (a revocation whose answer was lost before it
		// was recorded)? Then record it now; otherwise it is refused.
		st, gerr := client.Get(r.Context(), creds, []string{d.EUUUID})
		if gerr != nil || len(st) != 1 || st[0].Status != euis.StatusWithdrawn {
			writeError(w, r, apierr.Conflict(apierr.DetailDDSNotRevocable, "path.ddsId", "the EU system refused to withdraw it: "+fault.Message))
			return
		}
		werr = nil
	}
	switch {
	case werr != nil && euis.IsTransient(werr):
		writeError(w, r, &apierr.Error{Status: http.StatusServiceUnavailable, Code: apierr.CodeServiceUnavailable,
			Message: "the EU system could not be reached; nothing was changed, try again", RetryAfter: 30, Err: werr})
		return
	case werr != nil:
		writeError(w, r, &apierr.Error{Status: http.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
			Message: "the EU system did not take the withdrawal; nothing was changed: check the endpoint and credentials",
			Details: []apierr.Detail{{Code: apierr.DetailEUSystemNotConfigured, Field: "credentials", Issue: werr.Error()}}})
		return
	}
	actor := actorOf(r)
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		cur, err := tx.FindDDS(t, d.ID)
		if err != nil {
			return reply{}, err
		}
		if cur.Status != storage.DDSRevoked {
			if err := a.changeDDS(tx, t, cur, storage.DDSRevoked, actor, "revoked: withdrawn in the EU system"); err != nil {
				return reply{}, err
			}
		}
		view, err := ddsView(tx, t, cur, false)
		if err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusOK, body: view}, nil
	})
}

// revocable refuses a revocation the EU system would not take.
func revocable(d *storage.DDS, now time.Time) error {
	refuse := func(issue string) error { return apierr.Conflict(apierr.DetailDDSNotRevocable, "path.ddsId", issue) }
	switch {
	case d.Status != storage.DDSSubmitted && d.Status != storage.DDSValidated:
		return refuse(fmt.Sprintf("dds %s is %s; only a SUBMITTED or VALIDATED statement can be revoked", d.ID, d.Status))
	case d.SubmittedAt != nil && now.Sub(*d.SubmittedAt) > euis.AmendWindow:
		return refuse(fmt.Sprintf("dds %s was submitted on %s: the EU system allows a withdrawal within %s of submission only",
			d.ID, storage.FormatTime(*d.SubmittedAt), euis.AmendWindow))
	case d.Poll != nil && d.Poll.EUStatus == euis.StatusGrouped:
		return refuse(fmt.Sprintf("dds %s is grouped into another statement in the EU system and cannot be withdrawn", d.ID))
	}
	return nil
}
