package storage

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Org is an organisation: the owner of users, keys and tenant data.
type Org struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
}

// User is a person who logs in for a JWT (key management, admin work).
type User struct {
	Username string `json:"username"`
	Org      string `json:"org"`
	// Role is the user's role in its organisation: "admin" or "reader".
	// Records written before roles existed read as "admin", the only role
	// there was.
	Role string `json:"role"`
	// ApplianceAdmin lets the user do what affects the whole appliance
	// (backups, reference layers, users of any organisation).
	ApplianceAdmin bool   `json:"applianceAdmin,omitempty"`
	PasswordHash   string `json:"passwordHash"` // PHC string ($argon2id$... or $2a$...)
	// PasswordVersion counts the changes of PasswordHash; PutUser keeps it.
	// A login token carries the version it was issued under and ends when
	// the password changes.
	PasswordVersion int       `json:"passwordVersion,omitempty"`
	CreatedAt       time.Time `json:"createdAt"`
}

// APIKey is a key's record. The value itself is never stored: only the
// SHA-256 of the current value (Hash) and, in the hash index, of every value
// the key had before rotation.
type APIKey struct {
	ID         string      `json:"id"`
	Org        string      `json:"org"`
	Env        Environment `json:"env"`
	Name       string      `json:"name"`
	Scopes     []string    `json:"scopes"`
	Hash       []byte      `json:"hash"`
	Prefix     string      `json:"prefix"` // first 12 characters of the value
	Last4      string      `json:"last4"`
	CreatedAt  time.Time   `json:"createdAt"`
	RotatedAt  *time.Time  `json:"rotatedAt,omitempty"`
	RevokedAt  *time.Time  `json:"revokedAt,omitempty"`
	LastUsedAt *time.Time  `json:"lastUsedAt,omitempty"`
}

// PutOrg writes an organisation.
func (tx *Tx) PutOrg(o *Org) error {
	return putJSON(tx.Bucket(bucketOrgs), []byte(o.ID), o)
}

// FindOrg returns an organisation or ErrNotFound.
func (tx *Tx) FindOrg(id string) (*Org, error) {
	var o Org
	if err := getJSON(tx.Bucket(bucketOrgs), []byte(id), &o); err != nil {
		return nil, err
	}
	return &o, nil
}

// PutUser writes a user. It sets u.PasswordVersion: the stored user's, one
// more when u.PasswordHash differs from the stored one. Every path that
// changes a password goes through here, so none can leave the tokens
// issued before the change valid.
func (tx *Tx) PutUser(u *User) error {
	old, err := tx.FindUser(u.Username)
	switch {
	case err == nil:
		u.PasswordVersion = old.PasswordVersion
		if u.PasswordHash != old.PasswordHash {
			u.PasswordVersion++
		}
	case !errors.Is(err, ErrNotFound):
		return fmt.Errorf("read user %s: %w", u.Username, err)
	}
	return putJSON(tx.Bucket(bucketUsers), []byte(u.Username), u)
}

// FindUser returns a user by name or ErrNotFound.
func (tx *Tx) FindUser(username string) (*User, error) {
	var u User
	if err := getJSON(tx.Bucket(bucketUsers), []byte(username), &u); err != nil {
		return nil, err
	}
	u.readOld()
	return &u, nil
}

// roleBeforeRoles is the role of a user record written before there were
// roles: every user then was an admin.
const roleBeforeRoles = "admin"

func (u *User) readOld() {
	if u.Role == "" {
		u.Role = roleBeforeRoles
	}
}

// FindUsers returns the users of an organisation, or of every one when org
// is "", by username.
func (tx *Tx) FindUsers(org string) ([]*User, error) {
	var users []*User
	c := tx.Bucket(bucketUsers).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		var u User
		if err := unmarshal(v, &u); err != nil {
			return nil, fmt.Errorf("decode user %s: %w", k, err)
		}
		u.readOld()
		if org == "" || u.Org == org {
			users = append(users, &u)
		}
	}
	return users, nil
}

// DeleteUser removes a user; ErrNotFound when there is none of that name.
func (tx *Tx) DeleteUser(username string) error {
	b := tx.Bucket(bucketUsers)
	if b.Get([]byte(username)) == nil {
		return ErrNotFound
	}
	return b.Delete([]byte(username))
}

// HasUsers reports whether any user exists (false on a new store).
func (tx *Tx) HasUsers() bool {
	k, _ := tx.Bucket(bucketUsers).Cursor().First()
	return k != nil
}

// CreateAPIKey stores a new key and indexes its hash.
func (tx *Tx) CreateAPIKey(k *APIKey) error {
	if err := putJSON(tx.Bucket(bucketAPIKeys), []byte(k.ID), k); err != nil {
		return fmt.Errorf("put api key %s: %w", k.ID, err)
	}
	return tx.Bucket(bucketAPIKeyHashes).Put(k.Hash, []byte(k.ID))
}

// FindAPIKey returns a key record by id (revoked ones too) or ErrNotFound.
func (tx *Tx) FindAPIKey(id string) (*APIKey, error) {
	var k APIKey
	if err := getJSON(tx.Bucket(bucketAPIKeys), []byte(id), &k); err != nil {
		return nil, err
	}
	return &k, nil
}

// FindAPIKeyByHash returns the key that has, or had before a rotation, the
// value whose SHA-256 is hash. Compare hash with the record's Hash to tell a
// current value from a rotated-out one. ErrNotFound when no key ever had it.
func (tx *Tx) FindAPIKeyByHash(hash []byte) (*APIKey, error) {
	id := tx.Bucket(bucketAPIKeyHashes).Get(hash)
	if id == nil {
		return nil, ErrNotFound
	}
	return tx.FindAPIKey(string(id))
}

// FindAPIKeys returns the organisation's keys that are not revoked, newest
// first.
func (tx *Tx) FindAPIKeys(org string) ([]*APIKey, error) {
	var keys []*APIKey
	c := tx.Bucket(bucketAPIKeys).Cursor()
	for k, v := c.Last(); k != nil; k, v = c.Prev() {
		var key APIKey
		if err := unmarshal(v, &key); err != nil {
			return nil, fmt.Errorf("decode api key %s: %w", k, err)
		}
		if key.Org == org && key.RevokedAt == nil {
			keys = append(keys, &key)
		}
	}
	return keys, nil
}

// UpdateAPIKey writes a changed key record. When its Hash is new (a
// rotation), the new hash is indexed; old hashes stay indexed so that an old
// value is recognised as rotated rather than unknown.
func (tx *Tx) UpdateAPIKey(k *APIKey) error {
	old, err := tx.FindAPIKey(k.ID)
	if err != nil {
		return err
	}
	if !bytes.Equal(old.Hash, k.Hash) {
		if err := tx.Bucket(bucketAPIKeyHashes).Put(k.Hash, []byte(k.ID)); err != nil {
			return err
		}
	}
	return putJSON(tx.Bucket(bucketAPIKeys), []byte(k.ID), k)
}

// TouchAPIKeys records when keys were last used, from the in-memory tally the
// server keeps (writing on every request would cost an fsync each).
func (tx *Tx) TouchAPIKeys(lastUsed map[string]time.Time) error {
	ids := make([]string, 0, len(lastUsed))
	for id := range lastUsed {
		ids = append(ids, id)
	}
	sort.Strings(ids) // sequential writes
	for _, id := range ids {
		k, err := tx.FindAPIKey(id)
		if errors.Is(err, ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return fmt.Errorf("read api key %s: %w", id, err)
		}
		t := lastUsed[id].UTC()
		if k.LastUsedAt != nil && !t.After(*k.LastUsedAt) {
			continue
		}
		k.LastUsedAt = &t
		if err := putJSON(tx.Bucket(bucketAPIKeys), []byte(id), k); err != nil {
			return err
		}
	}
	return nil
}

// Secret returns the random secret stored under name in the meta bucket,
// creating one of size bytes on first use (in a writable transaction).
func (tx *Tx) Secret(name string, size int) ([]byte, error) {
	meta := tx.Bucket(bucketMeta)
	key := []byte("secret:" + name)
	if v := meta.Get(key); v != nil {
		return bytes.Clone(v), nil
	}
	if !tx.Writable() {
		return nil, ErrNotFound
	}
	v := make([]byte, size)
	if _, err := rand.Read(v); err != nil {
		return nil, err
	}
	return v, meta.Put(key, v)
}
