package storage

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

var (
	bucketSuppliers     = []byte("suppliers")
	bucketSuppliersByID = []byte("suppliers_by_id")
)

// Supplier maps an ERP vendor ID to an EU operator.
type Supplier struct {
	ID             string `json:"id"` // sup_ + ULID: time-ordered
	ERPVendorID    string `json:"erpVendorId"`
	EUOperatorUUID string `json:"euOperatorUuid"`
	Name           string `json:"name"`
	Country        string `json:"country"`
	EORI           string `json:"eori,omitempty"`
	Role           string `json:"role"`
	// Identifiers are the operator's reference numbers besides the EORI
	// (VAT, GLN, ...); Street, PostalCode, City and FullAddress its
	// address. They identify it in a statement filed on its behalf.
	Identifiers []OperatorIdentifier `json:"identifiers,omitempty"`
	Street      string               `json:"street,omitempty"`
	PostalCode  string               `json:"postalCode,omitempty"`
	City        string               `json:"city,omitempty"`
	FullAddress string               `json:"fullAddress,omitempty"`
	CreatedAt   time.Time            `json:"createdAt"`
	UpdatedAt   time.Time            `json:"updatedAt"`
}

// OperatorIdentifier is one of an EU operator's reference numbers: its
// type (vat, gln, ...) and value.
type OperatorIdentifier struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// supplierBuckets returns the tenant's mappings by ERP vendor ID and the
// index by supplier ID (nil in a read-only tx when the tenant has none).
func (tx *Tx) supplierBuckets(t Tenant) (byVendor, byID *bolt.Bucket, err error) {
	if byVendor, err = tx.tenantBucket(t, bucketSuppliers); err != nil {
		return nil, nil, err
	}
	byID, err = tx.tenantBucket(t, bucketSuppliersByID)
	return byVendor, byID, err
}

// PutSupplier inserts or replaces the tenant's mapping for s.ERPVendorID.
// An existing mapping keeps its ID and CreatedAt, which are copied into s.
func (tx *Tx) PutSupplier(t Tenant, s *Supplier) error {
	b, byID, err := tx.supplierBuckets(t)
	if err != nil {
		return err
	}
	var old Supplier
	switch err := getJSON(b, []byte(s.ERPVendorID), &old); err {
	case nil:
		s.ID, s.CreatedAt = old.ID, old.CreatedAt
	case ErrNotFound:
		if err := byID.Put([]byte(s.ID), []byte(s.ERPVendorID)); err != nil {
			return err
		}
	default:
		return fmt.Errorf("read supplier %s: %w", s.ERPVendorID, err)
	}
	return putJSON(b, []byte(s.ERPVendorID), s)
}

// FindSupplier returns the tenant's mapping for an ERP vendor ID or ErrNotFound.
func (tx *Tx) FindSupplier(t Tenant, erpVendorID string) (*Supplier, error) {
	b, err := tx.tenantBucket(t, bucketSuppliers)
	if err != nil {
		return nil, err
	}
	var s Supplier
	if err := getJSON(b, []byte(erpVendorID), &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// DeleteSupplier removes the tenant's mapping or returns ErrNotFound.
func (tx *Tx) DeleteSupplier(t Tenant, erpVendorID string) error {
	s, err := tx.FindSupplier(t, erpVendorID)
	if err != nil {
		return err
	}
	b, byID, err := tx.supplierBuckets(t)
	if err != nil {
		return err
	}
	if err := byID.Delete([]byte(s.ID)); err != nil {
		return err
	}
	return b.Delete([]byte(erpVendorID))
}

// Page selects a slice of a list ordered newest first.
type Page struct {
	// After is the ID of the last item of the previous page ("" for the first).
	After string
	// Limit is the maximum number of items.
	Limit int
}

// FindSuppliers returns the tenant's mappings newest first, one page, and
// whether more follow.
func (tx *Tx) FindSuppliers(t Tenant, p Page) ([]*Supplier, bool, error) {
	b, byID, err := tx.supplierBuckets(t)
	if err != nil || b == nil || byID == nil {
		return nil, false, err
	}
	var out []*Supplier
	c := byID.Cursor()
	k, v := lastBefore(c, []byte(p.After))
	for ; k != nil; k, v = c.Prev() {
		if len(out) == p.Limit {
			return out, true, nil
		}
		var s Supplier
		if err := getJSON(b, v, &s); err != nil {
			return nil, false, fmt.Errorf("read supplier %s: %w", v, err)
		}
		out = append(out, &s)
	}
	return out, false, nil
}
