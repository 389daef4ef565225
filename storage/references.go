package storage

import (
	"encoding/json"
	"time"
)

var bucketReferenceLookups = []byte("reference_lookups")

// ReferenceLookup is what the EU system answered when asked for a
// statement another operator filed, by its reference and verification
// numbers: kept, under the reference number, so that a later statement
// that references it can rely on what was seen. The latest look-up of a
// reference number replaces the one before.
type ReferenceLookup struct {
	ReferenceNumber    string `json:"referenceNumber"`
	VerificationNumber string `json:"verificationNumber"`
	// Found is false when the EU system knows no statement with the pair.
	Found bool `json:"found"`
	// Usability is the EU system's verifyDeclaration result for the
	// statement found (EXISTING_USABLE, EXISTING_NON_USABLE); "" when not
	// found.
	Usability string `json:"usability,omitempty"`
	// Statement is the server's summary of the statement found (its API
	// shape), none when not found.
	Statement  json.RawMessage `json:"statement,omitempty"`
	LookedUpAt time.Time       `json:"lookedUpAt"`
	Actor      string          `json:"actor"`
}

// PutReferenceLookup records l under its reference number, replacing the
// look-up of that number before.
func (tx *Tx) PutReferenceLookup(t Tenant, l *ReferenceLookup) error {
	return tx.putLookup(t, bucketReferenceLookups, l)
}

// FindReferenceLookup returns the latest look-up of a reference number, or
// ErrNotFound.
func (tx *Tx) FindReferenceLookup(t Tenant, referenceNumber string) (*ReferenceLookup, error) {
	return tx.findLookup(t, bucketReferenceLookups, referenceNumber)
}

// putLookup records l in the tenant's bucket under its reference number.
func (tx *Tx) putLookup(t Tenant, bucket []byte, l *ReferenceLookup) error {
	b, err := tx.tenantBucket(t, bucket)
	if err != nil {
		return err
	}
	return putJSON(b, []byte(l.ReferenceNumber), l)
}

// findLookup returns the look-up of referenceNumber in the tenant's
// bucket, or ErrNotFound.
func (tx *Tx) findLookup(t Tenant, bucket []byte, referenceNumber string) (*ReferenceLookup, error) {
	b, err := tx.tenantBucket(t, bucket)
	if err != nil {
		return nil, err
	}
	var l ReferenceLookup
	if err := getJSON(b, []byte(referenceNumber), &l); err != nil {
		return nil, err
	}
	return &l, nil
}
