package sd

import (
	"context"
	"encoding/json"

	"github.com/eudr/eudr/storage"
)

// View is a declaration as the API shows it; lists leave out the
// statement.
type View struct {
	SDID               string          `json:"sdId"`
	Status             string          `json:"status"`
	OperatorRole       string          `json:"operatorRole"`
	InternalReference  string          `json:"internalReference"`
	SDIdentifier       *string         `json:"sdIdentifier"`
	ReferenceNumber    *string         `json:"referenceNumber"`
	VerificationNumber *string         `json:"verificationNumber"`
	EUStatus           *string         `json:"euStatus"`
	Reasons            []string        `json:"reasons"`
	History            []ChangeView    `json:"history"`
	CreatedAt          string          `json:"createdAt"`
	SubmittedAt        *string         `json:"submittedAt"`
	Submission         *SubmissionView `json:"submission"`
	Statement          json.RawMessage `json:"statement,omitempty"`
}

// ChangeView is one entry of the history.
type ChangeView struct {
	At          string  `json:"at"`
	Status      string  `json:"status"`
	Actor       string  `json:"actor"`
	Note        *string `json:"note"`
	LedgerIndex *int64  `json:"ledgerIndex"`
}

// SubmissionView is the submission job while it is under way or after it
// failed, as GET /jobs/{jobId} shows it.
type SubmissionView struct {
	JobID         string            `json:"jobId"`
	Status        string            `json:"status"`
	Attempts      int               `json:"attempts"`
	LastAttempt   *AttemptView      `json:"lastAttempt"`
	NextAttemptAt *string           `json:"nextAttemptAt"`
	Error         *storage.JobError `json:"error"`
}

// AttemptView is a failed attempt of the job.
type AttemptView struct {
	At      string `json:"at"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Accepted is the 202 answer of POST /declarations/sd.
type Accepted struct {
	SDID  string `json:"sdId"`
	JobID string `json:"jobId"`
}

// ViewOf shows dcl, with its statement or not.
func ViewOf(dcl Declaration, withStatement bool) View {
	d := dcl.SD
	v := View{SDID: d.ID, Status: d.Status, OperatorRole: d.OperatorRole, InternalReference: d.InternalReference,
		SDIdentifier: storage.Optional(d.SDIdentifier), ReferenceNumber: storage.Optional(d.ReferenceNumber),
		VerificationNumber: storage.Optional(d.VerificationNumber), Reasons: d.Reasons, History: []ChangeView{},
		CreatedAt: storage.FormatTime(d.CreatedAt), SubmittedAt: storage.FormatTimePtr(d.SubmittedAt)}
	if v.Reasons == nil {
		v.Reasons = []string{}
	}
	if d.Poll != nil {
		v.EUStatus = storage.Optional(d.Poll.EUStatus)
	}
	for _, h := range d.History {
		v.History = append(v.History, ChangeView{At: storage.FormatTime(h.At), Status: h.Status, Actor: h.Actor,
			Note: storage.Optional(h.Note), LedgerIndex: h.LedgerIndex})
	}
	if job := dcl.Submission; job != nil {
		v.Submission = &SubmissionView{JobID: job.ID, Status: job.Status, Error: job.Error}
		if r := job.Retry; r != nil {
			next := storage.FormatTime(r.NextAttemptAt)
			v.Submission.Attempts, v.Submission.NextAttemptAt = r.Attempts, &next
			v.Submission.LastAttempt = &AttemptView{At: storage.FormatTime(r.LastAttempt.At), Code: r.LastAttempt.Code, Message: r.LastAttempt.Message}
		}
	}
	if withStatement {
		v.Statement = d.Statement
	}
	return v
}

// View is the declaration ref names (Find) with its statement.
func (s *Service) View(ctx context.Context, t storage.Tenant, ref string) (View, error) {
	dcl, err := s.Find(ctx, t, ref)
	if err != nil {
		return View{}, err
	}
	return ViewOf(dcl, true), nil
}
