package storage

import (
	"encoding/json"
	"fmt"
	"time"
)

var (
	bucketSD            = []byte("sd")
	bucketSDByReference = []byte("sd_by_reference") // sdIdentifier and reference number -> SD ID
)

// SD statuses: a simplified declaration is DRAFT until the EU system has
// accepted it, then SUBMITTED, then VALIDATED (AVAILABLE there) or
// REJECTED; a SUBMITTED or VALIDATED one can be WITHDRAWN (docs/simplified.md).
const (
	SDDraft     = "DRAFT"
	SDSubmitted = "SUBMITTED"
	SDValidated = "VALIDATED"
	SDRejected  = "REJECTED"
	SDWithdrawn = "WITHDRAWN"
)

// SD is a simplified declaration of a micro or small primary operator and
// its filing with the EU information system. Statement is the declaration
// as the API took it, replaced only by an update the EU system accepted
// (the history keeps each version's SHA-256).
type SD struct {
	ID                string          `json:"id"` // sd_ + ULID
	Status            string          `json:"status"`
	OperatorRole      string          `json:"operatorRole"`
	InternalReference string          `json:"internalReference"`
	Statement         json.RawMessage `json:"statement"`
	// SDIdentifier, ReferenceNumber and VerificationNumber come from the
	// EU information system once filed.
	SDIdentifier       string        `json:"sdIdentifier,omitempty"`
	ReferenceNumber    string        `json:"referenceNumber,omitempty"`
	VerificationNumber string        `json:"verificationNumber,omitempty"`
	Reasons            []string      `json:"reasons,omitempty"`
	History            []DDSChange   `json:"history"`
	CreatedAt          time.Time     `json:"createdAt"`
	SubmittedAt        *time.Time    `json:"submittedAt,omitempty"`
	Poll               *DDSPollState `json:"poll,omitempty"`
}

// PutSD writes a simplified declaration and indexes its EU identifier and
// reference number once known.
func (tx *Tx) PutSD(t Tenant, d *SD) error {
	b, err := tx.tenantBucket(t, bucketSD)
	if err != nil {
		return err
	}
	for _, key := range []string{d.SDIdentifier, d.ReferenceNumber} {
		if key == "" {
			continue
		}
		refs, err := tx.tenantBucket(t, bucketSDByReference)
		if err != nil {
			return err
		}
		if err := refs.Put([]byte(key), []byte(d.ID)); err != nil {
			return err
		}
	}
	return putJSON(b, []byte(d.ID), d)
}

// FindSD returns the tenant's simplified declaration by its ID, its
// sdIdentifier or its reference number; ErrNotFound when none matches.
func (tx *Tx) FindSD(t Tenant, ref string) (*SD, error) {
	var d SD
	if err := tx.findIndexed(t, bucketSD, bucketSDByReference, ref, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// SDFilter keeps the declarations of a status and internal reference; ""
// keeps any.
type SDFilter struct {
	Status            string
	InternalReference string
}

// FindSDs returns the tenant's simplified declarations that f keeps,
// newest first, one page, and whether more follow.
func (tx *Tx) FindSDs(t Tenant, f SDFilter, p Page) ([]*SD, bool, error) {
	b, err := tx.tenantBucket(t, bucketSD)
	if err != nil || b == nil {
		return nil, false, err
	}
	var out []*SD
	c := b.Cursor()
	for k, v := lastBefore(c, []byte(p.After)); k != nil; k, v = c.Prev() {
		var d SD
		if err := unmarshal(v, &d); err != nil {
			return nil, false, fmt.Errorf("read sd %s: %w", k, err)
		}
		if (f.Status != "" && d.Status != f.Status) || (f.InternalReference != "" && d.InternalReference != f.InternalReference) {
			continue
		}
		if len(out) == p.Limit {
			return out, true, nil
		}
		out = append(out, &d)
	}
	return out, false, nil
}
