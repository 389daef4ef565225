package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

var (
	bucketDDS            = []byte("dds")
	bucketDDSByReference = []byte("dds_by_reference") // EU reference number -> DDS ID
)

// DDS statuses: a DRAFT is SUBMITTED, then VALIDATED or REJECTED by the EU
// system; a SUBMITTED or VALIDATED one can be REVOKED, for good
// (docs/dds.md).
const (
	DDSDraft     = "DRAFT"
	DDSSubmitted = "SUBMITTED"
	DDSValidated = "VALIDATED"
	DDSRejected  = "REJECTED"
	DDSRevoked   = "REVOKED"
)

// DDS is a due-diligence statement: a draft built from batches, then its
// filing with the EU information system. Statement is the Annex II payload
// as the server encodes it; it does not change after the draft is made.
type DDS struct {
	ID                   string          `json:"id"` // dds_ + ULID
	Status               string          `json:"status"`
	BatchIDs             []string        `json:"batchIds"`
	ActivityType         string          `json:"activityType"`
	OperatorUUID         string          `json:"operatorUuid"`
	InternalReference    string          `json:"internalReference,omitempty"`
	ReferencedStatements []DDSReference  `json:"referencedStatements,omitempty"`
	Statement            json.RawMessage `json:"statement"`
	// SplitOf is the ID of the first part when a statement over the EU
	// limits was split into several; Part numbers them from 1.
	SplitOf string `json:"splitOf,omitempty"`
	Part    int    `json:"part,omitempty"`
	// EUUUID, ReferenceNumber and VerificationNumber come from the EU
	// information system once filed.
	EUUUID             string        `json:"euUuid,omitempty"`
	ReferenceNumber    string        `json:"referenceNumber,omitempty"`
	VerificationNumber string        `json:"verificationNumber,omitempty"`
	Reasons            []string      `json:"reasons,omitempty"`
	History            []DDSChange   `json:"history"`
	CreatedAt          time.Time     `json:"createdAt"`
	SubmittedAt        *time.Time    `json:"submittedAt,omitempty"`
	Poll               *DDSPollState `json:"poll,omitempty"`
}

// DDSReference names an earlier statement by its EU numbers.
type DDSReference struct {
	ReferenceNumber    string `json:"referenceNumber"`
	VerificationNumber string `json:"verificationNumber"`
}

// DDSChange is one entry of a DDS's history: a state change, when, by whom,
// and the ledger entry that anchors it.
type DDSChange struct {
	At          time.Time `json:"at"`
	Status      string    `json:"status"`
	Actor       string    `json:"actor"`
	Note        string    `json:"note,omitempty"`
	LedgerIndex *int64    `json:"ledgerIndex,omitempty"`
}

// DDSPollState is where the filing and following of a DDS stands.
type DDSPollState struct {
	// JobID is the submission job.
	JobID string `json:"jobId,omitempty"`
	// SubmitAttemptAt is set just before the statement is sent: a job
	// that finds it set without an EU UUID lost the answer, and looks the
	// statement up by its internal reference before sending it again.
	SubmitAttemptAt *time.Time `json:"submitAttemptAt,omitempty"`
	Polls           int        `json:"polls"`
	LastPoll        time.Time  `json:"lastPoll"`
	EUStatus        string     `json:"euStatus,omitempty"` // the EU system's last status, as sent
}

// CountPoll counts one more call to the EU system at now in *p (made
// when nil) and returns the delay before the next one: the schedule's
// delay for the calls made so far, its last one repeating.
func CountPoll(p **DDSPollState, schedule []time.Duration, now time.Time) time.Duration {
	if *p == nil {
		*p = &DDSPollState{}
	}
	delay := schedule[min((*p).Polls, len(schedule)-1)]
	(*p).Polls++
	(*p).LastPoll = now
	return delay
}

// SubmissionJob returns the submission job p names while it is queued,
// under way or failed; nil when p names none, the job is gone, or it
// completed (the record's status and history tell the rest). It fails
// only when the job cannot be read.
func (tx *Tx) SubmissionJob(t Tenant, p *DDSPollState) (*Job, error) {
	if p == nil || p.JobID == "" {
		return nil, nil
	}
	job, err := tx.FindJob(t, p.JobID)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("submission job %s: %w", p.JobID, err)
	}
	if job.Status == JobCompleted {
		return nil, nil
	}
	return job, nil
}

// PutDDS writes a DDS and indexes its EU reference number once known.
func (tx *Tx) PutDDS(t Tenant, d *DDS) error {
	b, err := tx.tenantBucket(t, bucketDDS)
	if err != nil {
		return err
	}
	if d.ReferenceNumber != "" {
		refs, err := tx.tenantBucket(t, bucketDDSByReference)
		if err != nil {
			return err
		}
		if err := refs.Put([]byte(d.ReferenceNumber), []byte(d.ID)); err != nil {
			return err
		}
	}
	return putJSON(b, []byte(d.ID), d)
}

// FindDDS returns the tenant's DDS by its ID or, failing that, by its EU
// reference number; ErrNotFound when neither matches.
func (tx *Tx) FindDDS(t Tenant, idOrReference string) (*DDS, error) {
	var d DDS
	if err := tx.findIndexed(t, bucketDDS, bucketDDSByReference, idOrReference, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// findIndexed reads into v the tenant's record of bucket under key ref
// or, failing that, under the ID index maps ref to (another name of the
// record: an EU number); ErrNotFound when neither has it.
func (tx *Tx) findIndexed(t Tenant, bucket, index []byte, ref string, v any) error {
	b, err := tx.tenantBucket(t, bucket)
	if err != nil {
		return err
	}
	err = getJSON(b, []byte(ref), v)
	if err != ErrNotFound {
		return err
	}
	refs, err := tx.tenantBucket(t, index)
	if err != nil {
		return err
	}
	if refs == nil {
		return ErrNotFound
	}
	id := refs.Get([]byte(ref))
	if id == nil {
		return ErrNotFound
	}
	return getJSON(b, id, v)
}

// FindDDSByEUUUID returns the tenant's DDS filed under an EU UUID, or
// ErrNotFound. It reads every statement: it serves the rare recovery of a
// submission whose answer was lost.
func (tx *Tx) FindDDSByEUUUID(t Tenant, uuid string) (*DDS, error) {
	b, err := tx.tenantBucket(t, bucketDDS)
	if err != nil || b == nil {
		return nil, ErrNotFound
	}
	var found *DDS
	err = b.ForEach(func(k, v []byte) error {
		var d DDS
		if err := unmarshal(v, &d); err != nil {
			return fmt.Errorf("read dds %s: %w", k, err)
		}
		if d.EUUUID == uuid {
			found = &d
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, ErrNotFound
	}
	return found, nil
}

// DDSFilter selects statements; an empty field matches any.
type DDSFilter struct {
	Status string
}

// FindDDSs returns the tenant's statements newest first, one page, and
// whether more follow.
func (tx *Tx) FindDDSs(t Tenant, f DDSFilter, p Page) ([]*DDS, bool, error) {
	b, err := tx.tenantBucket(t, bucketDDS)
	if err != nil || b == nil {
		return nil, false, err
	}
	var out []*DDS
	c := b.Cursor()
	for k, v := lastBefore(c, []byte(p.After)); k != nil; k, v = c.Prev() {
		var d DDS
		if err := unmarshal(v, &d); err != nil {
			return nil, false, fmt.Errorf("read dds %s: %w", k, err)
		}
		if f.Status != "" && d.Status != f.Status {
			continue
		}
		if len(out) == p.Limit {
			return out, true, nil
		}
		out = append(out, &d)
	}
	return out, false, nil
}

var bucketEUSimulator = []byte("eu_simulator")

// SimRecord returns the sandbox EU system simulator's value under key, or
// nil: the simulator keeps its statements in the store so that they
// survive a restart.
func (tx *Tx) SimRecord(key string) []byte {
	b := tx.Bucket(bucketEUSimulator)
	if b == nil {
		return nil
	}
	if v := b.Get([]byte(key)); v != nil {
		return append([]byte(nil), v...)
	}
	return nil
}

// PutSimRecord sets the simulator's value under key.
func (tx *Tx) PutSimRecord(key string, v []byte) error {
	b, err := tx.CreateBucketIfNotExists(bucketEUSimulator)
	if err != nil {
		return err
	}
	return b.Put([]byte(key), v)
}
