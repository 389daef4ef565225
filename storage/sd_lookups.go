package storage

var bucketSDLookups = []byte("sd_lookups")

// PutSDLookup records the look-up of a simplified declaration another
// operator filed, under its declaration number, replacing the look-up of
// that number before. It is a ReferenceLookup without usability: the
// information system says nothing of whether a declaration can be
// referenced beyond its content.
func (tx *Tx) PutSDLookup(t Tenant, l *ReferenceLookup) error {
	return tx.putLookup(t, bucketSDLookups, l)
}

// FindSDLookup returns the latest look-up of a declaration number, or
// ErrNotFound.
func (tx *Tx) FindSDLookup(t Tenant, referenceNumber string) (*ReferenceLookup, error) {
	return tx.findLookup(t, bucketSDLookups, referenceNumber)
}
