package storage

import "context"

// SimStore is the sandbox EU system simulator's key-value store
// (euis.SimStore) over SimRecord and PutSimRecord, each call its own
// transaction, so that the simulated statements and declarations survive
// a restart.
type SimStore struct{ DB *DB }

// Get returns the value of key, or nil.
func (s SimStore) Get(key string) ([]byte, error) {
	var v []byte
	err := s.DB.View(context.Background(), func(tx *Tx) error {
		v = tx.SimRecord(key)
		return nil
	})
	return v, err
}

// Put sets the value of key.
func (s SimStore) Put(key string, v []byte) error {
	return s.DB.Update(context.Background(), func(tx *Tx) error { return tx.PutSimRecord(key, v) })
}
