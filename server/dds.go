package server

import (
	"encoding/json"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/storage"
)

// ddsResponse is a DDS as the API shows it. Lists leave out the statement.
type ddsResponse struct {
	DDSID                string          `json:"ddsId"`
	Status               string          `json:"status"`
	BatchIDs             []string        `json:"batchIds"`
	ActivityType         string          `json:"activityType"`
	OperatorUUID         string          `json:"operatorUuid"`
	InternalReference    *string         `json:"internalReference"`
	ReferencedStatements []dds.Reference `json:"referencedStatements"`
	EUUUID               *string         `json:"euUuid"`
	ReferenceNumber      *string         `json:"referenceNumber"`
	VerificationNumber   *string         `json:"verificationNumber"`
	Reasons              []string        `json:"reasons"`
	SplitOf              *string         `json:"splitOf"`
	Part                 *int            `json:"part"`
	History              []ddsChangeBody `json:"history"`
	CreatedAt            string          `json:"createdAt"`
	SubmittedAt          *string         `json:"submittedAt"`
	// Submission is the submission job while it is under way or after it
	// failed.
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

// ddsSubmissionBody is a statement's submission while its job is under way
// or after the job failed: the job's status, retry state and error, as
// GET /jobs/{jobId} shows them.
type ddsSubmissionBody struct {
	JobID  string `json:"jobId"`
	Status string `json:"status"`
	retryBody
	Error *jobErrorBody `json:"error"`
}

type ddsSubmitAccepted struct {
	JobID string `json:"jobId"`
}

func toDDSResponse(dcl dds.Declaration, withStatement bool) ddsResponse {
	d := dcl.DDS
	r := ddsResponse{DDSID: d.ID, Status: d.Status, BatchIDs: d.BatchIDs, ActivityType: d.ActivityType,
		OperatorUUID: d.OperatorUUID, InternalReference: storage.Optional(d.InternalReference),
		ReferencedStatements: []dds.Reference{}, EUUUID: storage.Optional(d.EUUUID),
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
		r.ReferencedStatements = append(r.ReferencedStatements, dds.Reference(ref))
	}
	for _, h := range d.History {
		r.History = append(r.History, ddsChangeBody{At: storage.FormatTime(h.At), Status: h.Status, Actor: h.Actor,
			Note: storage.Optional(h.Note), LedgerIndex: h.LedgerIndex})
	}
	if job := dcl.Submission; job != nil {
		r.Submission = &ddsSubmissionBody{JobID: job.ID, Status: job.Status, retryBody: toRetryBody(job.Retry)}
		if job.Error != nil {
			r.Submission.Error = &jobErrorBody{Code: job.Error.Code, Message: job.Error.Message}
		}
	}
	if withStatement {
		r.Statement = d.Statement
	}
	return r
}

// ddsView is d as the API shows it, with its submission read in tx.
func ddsView(tx *storage.Tx, t storage.Tenant, d *storage.DDS, withStatement bool) (ddsResponse, error) {
	dcl, err := dds.WithSubmission(tx, t, d)
	return toDDSResponse(dcl, withStatement), err
}

// actorOf names who made a request: its API key or logged-in user.
func actorOf(r *http.Request) string { return infoFrom(r.Context()).who.id() }

// handleDDSCreate builds a DRAFT statement from batches (dds.Draft) and
// answers it with its Annex II payload; with split, the parts of a
// statement over the EU system's limits, as a list.
func (a *App) handleDDSCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req dds.DraftRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := apierr.Merge(decoded, req.Validate()); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	actor := actorOf(r)
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		drafts, err := a.dds.Draft(tx, t, &req, actor)
		if err != nil {
			return reply{}, err
		}
		out := make([]ddsResponse, len(drafts))
		for i, d := range drafts {
			out[i] = toDDSResponse(dds.Declaration{DDS: d}, true)
		}
		if req.Split {
			return reply{status: http.StatusOK, body: out}, nil
		}
		return reply{status: http.StatusOK, body: out[0]}, nil
	})
}

func (a *App) handleDDSGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	dcl, err := a.dds.Find(r.Context(), tenantFrom(r.Context()), ps.ByName("ddsId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, toDDSResponse(dcl, true))
}

func (a *App) handleDDSList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	f := dds.Filter{Status: r.URL.Query().Get("status")}
	if err := apierr.Merge(apierr.DetailsOf(err), f.Validate()); err != nil {
		writeError(w, r, err)
		return
	}
	list, more, err := a.dds.List(r.Context(), tenantFrom(r.Context()), f, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]ddsResponse, len(list))
	for i, dcl := range list {
		out[i] = toDDSResponse(dcl, false)
	}
	if more {
		setNextPage(w, r, page, out[len(out)-1].DDSID)
	}
	writeJSON(w, r, http.StatusOK, out)
}

// handleDDSSubmit queues the filing of a DRAFT (dds.Submit) and answers
// 202 with its job.
func (a *App) handleDDSSubmit(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	id := ps.ByName("ddsId")
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		job, err := a.dds.Submit(tx, t, id)
		if err != nil {
			return reply{}, err
		}
		return accepted(job.ID, ddsSubmitAccepted{JobID: job.ID}), nil
	})
}

// handleDDSRevoke withdraws a statement in the EU system (dds.Withdraw,
// outside any transaction) and then records it REVOKED (dds.Revoke).
// ddsId may be the EU reference number.
func (a *App) handleDDSRevoke(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	t := tenantFrom(r.Context())
	wd, err := a.dds.Withdraw(r.Context(), t, ps.ByName("ddsId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	actor := actorOf(r)
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		dcl, err := a.dds.Revoke(tx, t, wd, actor)
		if err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusOK, body: toDDSResponse(dcl, false)}, nil
	})
}

// handleDDSAmend amends a VALIDATED statement in the EU system (dds.Amend,
// outside any transaction) and then records it (dds.RecordAmendment).
func (a *App) handleDDSAmend(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	var req dds.AmendRequest
	decoded, err := decodeJSON(r, &req)
	if err == nil {
		// Validate here too, though the service does: its problems
		// then come in one answer with the body's decoding problems.
		err = apierr.Merge(decoded, req.Validate())
	}
	var am *dds.Amendment
	if err == nil {
		am, err = a.dds.Amend(r.Context(), tenantFrom(r.Context()), ps.ByName("ddsId"), &req)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		dcl, err := a.dds.RecordAmendment(tx, tenantFrom(r.Context()), am, actorOf(r))
		return reply{status: http.StatusOK, body: toDDSResponse(dcl, true)}, err
	})
}

// handleDDSReferenceLookup fetches a statement another operator filed from
// the EU system by its numbers (dds.LookUp, outside any transaction) and
// stores the answer (dds.RecordLookup).
func (a *App) handleDDSReferenceLookup(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req dds.LookupRequest
	decoded, err := decodeJSON(r, &req)
	if err == nil {
		// Validate here too, though the service does: its problems
		// then come in one answer with the body's decoding problems.
		err = apierr.Merge(decoded, req.Validate())
	}
	var l *dds.Lookup
	if err == nil {
		l, err = a.dds.LookUp(r.Context(), tenantFrom(r.Context()), req)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		v, err := a.dds.RecordLookup(tx, tenantFrom(r.Context()), l, actorOf(r))
		return reply{status: http.StatusOK, body: v}, err
	})
}

// handleDDSReferenceGet answers the latest stored look-up of a reference
// number (dds.FindLookup).
func (a *App) handleDDSReferenceGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	l, err := a.dds.FindLookup(r.Context(), tenantFrom(r.Context()), ps.ByName("referenceNumber"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, l)
}
