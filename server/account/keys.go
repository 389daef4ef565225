package account

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// Scopes of an API key (docs/api.md): read allows GET and HEAD, write
// everything else and implies read.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
)

// MaxKeyNameLen is the longest key name, in characters.
const MaxKeyNameLen = 100

// HasScope reports whether a key with scopes may do what need allows:
// write implies read.
func HasScope(scopes []string, need string) bool {
	return slices.Contains(scopes, need) || need == ScopeRead && slices.Contains(scopes, ScopeWrite)
}

// KeyRequest is a validated request for a new key.
type KeyRequest struct {
	Org    string
	Env    storage.Environment
	Name   string
	Scopes []string
}

// ParseKeyRequest validates the fields of a key request as the API and the
// `eudr admin create-key` command take them: no scopes (nil) means read
// and write. It returns every problem found as one apierr 400.
func ParseKeyRequest(org, name, env string, scopes []string) (KeyRequest, error) {
	var probs apierr.Problems
	if utf8.RuneCountInString(name) > MaxKeyNameLen {
		probs.Add(apierr.DetailInvalidValue, "name", fmt.Sprintf("must be at most %d characters", MaxKeyNameLen))
	}
	e := storage.Environment(env)
	switch {
	case env == "":
		probs.Add(apierr.DetailRequired, "environment", "is required: sandbox or production")
	case !e.Valid():
		probs.Add(apierr.DetailInvalidValue, "environment", fmt.Sprintf("must be sandbox or production, not %q", env))
	}
	if scopes == nil {
		scopes = []string{ScopeRead, ScopeWrite}
	}
	if len(scopes) == 0 {
		probs.Add(apierr.DetailInvalidValue, "scopes", "must name at least one scope: read, write")
	}
	for i, s := range scopes {
		if s != ScopeRead && s != ScopeWrite {
			probs.Add(apierr.DetailInvalidValue, fmt.Sprintf("scopes[%d]", i), fmt.Sprintf("must be read or write, not %q", s))
		}
	}
	if err := probs.Err(); err != nil {
		return KeyRequest{}, err
	}
	// write implies read: store both so the record says what the key can do.
	norm := []string{ScopeRead}
	if slices.Contains(scopes, ScopeWrite) {
		norm = append(norm, ScopeWrite)
	}
	return KeyRequest{Org: org, Env: e, Name: name, Scopes: norm}, nil
}

// CreateKey makes a new key in the caller's transaction and returns its
// record and its value, which is not stored (only its SHA-256 is): the
// caller shows it once. It fails, writing nothing, when the organisation
// does not exist.
func (s *Service) CreateKey(tx *storage.Tx, kr KeyRequest) (*storage.APIKey, string, error) {
	if _, err := tx.FindOrg(kr.Org); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, "", fmt.Errorf("organisation %q does not exist", kr.Org)
		}
		return nil, "", err
	}
	value := NewKeyValue(kr.Env)
	hash := sha256.Sum256([]byte(value))
	key := &storage.APIKey{ID: storage.NewID("key", tx.Now()), Org: kr.Org, Env: kr.Env, Name: kr.Name, Scopes: kr.Scopes,
		Hash: hash[:], Prefix: value[:12], Last4: value[len(value)-4:], CreatedAt: tx.Now()}
	if err := tx.CreateAPIKey(key); err != nil {
		return nil, "", err
	}
	tx.OnCommit(s.keys.invalidate)
	return key, value, nil
}

// IssueKey is CreateKey in a transaction of its own, for `eudr admin
// create-key`; it fails as CreateKey does, or when the store does.
func (s *Service) IssueKey(ctx context.Context, kr KeyRequest) (*storage.APIKey, string, error) {
	var key *storage.APIKey
	var value string
	err := s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		var err error
		key, value, err = s.CreateKey(tx, kr)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	return key, value, nil
}

// RotateKey gives the organisation's key id a new value in the caller's
// transaction and returns the record and the value; the old value is
// refused with 403 KEY_ROTATED from then on. It returns apierr.NotFound,
// writing nothing, for a key of another organisation or a revoked one.
func (s *Service) RotateKey(tx *storage.Tx, org, id string) (*storage.APIKey, string, error) {
	key, err := findOwnKey(tx, org, id)
	if err != nil {
		return nil, "", err
	}
	value := NewKeyValue(key.Env)
	hash := sha256.Sum256([]byte(value))
	now := tx.Now()
	key.Hash, key.Prefix, key.Last4, key.RotatedAt = hash[:], value[:12], value[len(value)-4:], &now
	if err := tx.UpdateAPIKey(key); err != nil {
		return nil, "", err
	}
	tx.OnCommit(s.keys.invalidate)
	return key, value, nil
}

// RevokeKey ends the organisation's key id in the caller's transaction: its
// values are refused (401) and it is no longer listed. It returns
// apierr.NotFound, writing nothing, for a key of another organisation or
// one already revoked.
func (s *Service) RevokeKey(tx *storage.Tx, org, id string) error {
	key, err := findOwnKey(tx, org, id)
	if err != nil {
		return err
	}
	now := tx.Now()
	key.RevokedAt = &now
	if err := tx.UpdateAPIKey(key); err != nil {
		return err
	}
	tx.OnCommit(s.keys.invalidate)
	return nil
}

// Keys returns the organisation's keys that are not revoked, newest first
// (ordered by ID descending), or the store's error.
func (s *Service) Keys(ctx context.Context, org string) ([]*storage.APIKey, error) {
	var keys []*storage.APIKey
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		keys, err = tx.FindAPIKeys(org)
		return err
	})
	return keys, err
}

// findOwnKey is the organisation's key id, or apierr.NotFound when it is
// another organisation's, revoked or unknown.
func findOwnKey(tx *storage.Tx, org, id string) (*storage.APIKey, error) {
	key, err := tx.FindAPIKey(id)
	if errors.Is(err, storage.ErrNotFound) || err == nil && (key.Org != org || key.RevokedAt != nil) {
		return nil, apierr.NotFound{Kind: "API key", ID: id}
	}
	return key, err
}
