package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

type keyCreateRequest struct {
	Name        string   `json:"name"`
	Environment string   `json:"environment"`
	Scopes      []string `json:"scopes"`
}

// keyResponse is a key as listed; keyCreatedResponse adds the value, shown
// only on create and rotate.
type keyResponse struct {
	KeyID       string   `json:"keyId"`
	Name        string   `json:"name"`
	Environment string   `json:"environment"`
	Scopes      []string `json:"scopes"`
	Prefix      string   `json:"prefix"`
	Last4       string   `json:"last4"`
	CreatedAt   string   `json:"createdAt"`
	RotatedAt   *string  `json:"rotatedAt"`
	LastUsedAt  *string  `json:"lastUsedAt"`
}

type keyCreatedResponse struct {
	KeyID       string   `json:"keyId"`
	Name        string   `json:"name"`
	Environment string   `json:"environment"`
	Scopes      []string `json:"scopes"`
	Key         string   `json:"key"`
	CreatedAt   string   `json:"createdAt"`
}

const maxKeyNameLen = 100

// KeyRequest is a validated request for a new key.
type KeyRequest struct {
	Org    string
	Env    storage.Environment
	Name   string
	Scopes []string
}

// ParseKeyRequest validates the fields of a key request as the API and the
// `eudr admin create-key` command take them.
func ParseKeyRequest(org, name, env string, scopes []string) (KeyRequest, error) {
	var probs apierr.Problems
	if utf8.RuneCountInString(name) > maxKeyNameLen {
		probs.Add(apierr.DetailInvalidValue, "name", fmt.Sprintf("must be at most %d characters", maxKeyNameLen))
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

func (a *App) handleKeysCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req keyCreateRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	kr, err := ParseKeyRequest(tenantFrom(r.Context()).Org, req.Name, req.Environment, req.Scopes)
	if err := mergeProblems(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		key, value, err := createKey(tx, kr)
		if err != nil {
			return reply{}, err
		}
		return a.keyReply(key, value), nil
	})
}

// keyReply answers with the key value, shown once: a replay of the request
// answers the same record with the value redacted, since it is not kept.
// The key cache is cleared once the change is committed.
func (a *App) keyReply(key *storage.APIKey, value string) reply {
	resp := keyCreatedResponse{KeyID: key.ID, Name: key.Name, Environment: string(key.Env), Scopes: key.Scopes,
		Key: value, CreatedAt: storage.FormatTime(key.CreatedAt)}
	redacted := resp
	redacted.Key = key.Prefix + strings.Repeat("*", len(value)-len(key.Prefix)-4) + key.Last4
	return reply{status: http.StatusOK, body: resp, replay: redacted, onCommit: a.keyCache.invalidate}
}

// CreateKey makes a new key and returns its record and its value, which is
// not stored (only its SHA-256 is). `eudr admin create-key` uses it.
func (a *App) CreateKey(ctx context.Context, kr KeyRequest) (*storage.APIKey, string, error) {
	var key *storage.APIKey
	var value string
	err := a.db.Update(ctx, func(tx *storage.Tx) error {
		var err error
		key, value, err = createKey(tx, kr)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	a.keyCache.invalidate()
	return key, value, nil
}

func createKey(tx *storage.Tx, kr KeyRequest) (*storage.APIKey, string, error) {
	if _, err := tx.FindOrg(kr.Org); err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, "", fmt.Errorf("organisation %q does not exist", kr.Org)
		}
		return nil, "", err
	}
	value := newKeyValue(kr.Env)
	hash := sha256.Sum256([]byte(value))
	key := &storage.APIKey{ID: storage.NewID("key", tx.Now()), Org: kr.Org, Env: kr.Env, Name: kr.Name, Scopes: kr.Scopes,
		Hash: hash[:], Prefix: value[:12], Last4: value[len(value)-4:], CreatedAt: tx.Now()}
	return key, value, tx.CreateAPIKey(key)
}

// newKeyValue is the environment's prefix and 32 base62 characters from
// crypto/rand (rejection sampling keeps them uniform).
func newKeyValue(env storage.Environment) string {
	var sb strings.Builder
	sb.WriteString(keyPrefix(env))
	buf := make([]byte, 64)
	for sb.Len() < len(keyPrefix(env))+keyBodyLen {
		if _, err := rand.Read(buf); err != nil {
			panic(err)
		}
		for _, b := range buf {
			if b < 248 && sb.Len() < len(keyPrefix(env))+keyBodyLen { // 248 = 4*62
				sb.WriteByte(base62Chars[b%62])
			}
		}
	}
	return sb.String()
}

func (a *App) handleKeysList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var keys []*storage.APIKey
	err = a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		keys, err = tx.FindAPIKeys(tenantFrom(r.Context()).Org)
		return err
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]keyResponse, 0, len(keys))
	for _, k := range keys {
		if t, ok := a.usage.pending(k.ID); ok && (k.LastUsedAt == nil || t.After(*k.LastUsedAt)) {
			k.LastUsedAt = &t
		}
		out = append(out, keyResponse{KeyID: k.ID, Name: k.Name, Environment: string(k.Env), Scopes: k.Scopes,
			Prefix: k.Prefix, Last4: k.Last4, CreatedAt: storage.FormatTime(k.CreatedAt),
			RotatedAt: storage.FormatTimePtr(k.RotatedAt), LastUsedAt: storage.FormatTimePtr(k.LastUsedAt)})
	}
	writePage(w, r, out, page, func(k keyResponse) string { return k.KeyID })
}

func (a *App) handleKeysRotate(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		key, value, err := rotateKey(tx, tenantFrom(r.Context()).Org, ps.ByName("keyId"))
		if err != nil {
			return reply{}, err
		}
		return a.keyReply(key, value), nil
	})
}

// rotateKey gives a key a new value; the old value is then refused with 403
// KEY_ROTATED. Keys of other organisations and revoked keys are 404.
func rotateKey(tx *storage.Tx, org, id string) (*storage.APIKey, string, error) {
	key, err := findOwnKey(tx, org, id)
	if err != nil {
		return nil, "", err
	}
	value := newKeyValue(key.Env)
	hash := sha256.Sum256([]byte(value))
	now := tx.Now()
	key.Hash, key.Prefix, key.Last4, key.RotatedAt = hash[:], value[:12], value[len(value)-4:], &now
	return key, value, tx.UpdateAPIKey(key)
}

func (a *App) handleKeysRevoke(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	err := a.db.Update(r.Context(), func(tx *storage.Tx) error {
		key, err := findOwnKey(tx, tenantFrom(r.Context()).Org, ps.ByName("keyId"))
		if err != nil {
			return err
		}
		now := tx.Now()
		key.RevokedAt = &now
		return tx.UpdateAPIKey(key)
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	a.keyCache.invalidate()
	writeNoContent(w)
}

func findOwnKey(tx *storage.Tx, org, id string) (*storage.APIKey, error) {
	key, err := tx.FindAPIKey(id)
	if errors.Is(err, storage.ErrNotFound) || err == nil && (key.Org != org || key.RevokedAt != nil) {
		return nil, apierr.NotFound{Kind: "API key", ID: id}
	}
	return key, err
}
