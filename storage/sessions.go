package storage

import (
	"fmt"
	"time"
)

// Session is a console session, stored under the SHA-256 of its id: the id
// itself lives only in the browser's cookie, so a copy of the store (a
// backup) signs nobody in.
type Session struct {
	Username string      `json:"username"`
	Env      Environment `json:"env"` // the listener it was made on
	// PasswordVersion is the user's at sign-in: the session ends when the
	// password changes, as a login token does.
	PasswordVersion int       `json:"passwordVersion,omitempty"`
	CreatedAt       time.Time `json:"createdAt"`
	// LastSeenAt is the last use, recorded at most once a minute.
	LastSeenAt time.Time `json:"lastSeenAt"`
}

// PutSession writes a session under the hash of its id.
func (tx *Tx) PutSession(hash []byte, s *Session) error {
	return putJSON(tx.Bucket(bucketSessions), hash, s)
}

// FindSession returns the session whose id hashes to hash, or ErrNotFound.
func (tx *Tx) FindSession(hash []byte) (*Session, error) {
	var s Session
	if err := getJSON(tx.Bucket(bucketSessions), hash, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// DeleteSession removes a session; there being none is no error.
func (tx *Tx) DeleteSession(hash []byte) error {
	return tx.Bucket(bucketSessions).Delete(hash)
}

// DeleteSessions removes every session for which ended reports true and
// returns how many it removed.
func (tx *Tx) DeleteSessions(ended func(*Session) bool) (int, error) {
	b := tx.Bucket(bucketSessions)
	var gone [][]byte
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var s Session
		if err := unmarshal(v, &s); err != nil {
			return 0, fmt.Errorf("decode session: %w", err)
		}
		if ended(&s) {
			gone = append(gone, k)
		}
	}
	for _, k := range gone {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(gone), nil
}
