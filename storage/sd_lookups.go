package storage

var bucketSDLookups = []byte("sd_lookups")

// PutSDLookup records the look-up of a simplified declaration another
// operator filed, under its declaration number, replacing the look-up of
// that number before. It is a ReferenceLookup without usability: the
// information system says nothing of whether a declaration can be
// referenced beyond its content.
func (tx *Tx) PutSDLookup(t Tenant, l *ReferenceLookup) error {
	b, err := tx.tenantBucket(t, bucketSDLookups)
	if err != nil {
		return err
	}
	return putJSON(b, []byte(l.ReferenceNumber), l)
}

// FindSDLookup returns the latest look-up of a declaration number, or
// ErrNotFound.
func (tx *Tx) FindSDLookup(t Tenant, referenceNumber string) (*ReferenceLookup, error) {
	b, err := tx.tenantBucket(t, bucketSDLookups)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return nil, ErrNotFound
	}
	var l ReferenceLookup
	if err := getJSON(b, []byte(referenceNumber), &l); err != nil {
		return nil, err
	}
	return &l, nil
}
