package server

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/account"
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

// handleKeysCreate makes a key of the caller's organisation
// (account.CreateKey) and answers its value, once.
func (a *App) handleKeysCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req keyCreateRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	kr, err := account.ParseKeyRequest(tenantFrom(r.Context()).Org, req.Name, req.Environment, req.Scopes)
	if err := apierr.Merge(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		key, value, err := a.accounts.CreateKey(tx, kr)
		if err != nil {
			return reply{}, err
		}
		return keyReply(key, value), nil
	})
}

// keyReply answers with the key value, shown once: a replay of the request
// answers the same record with the value redacted, since it is not kept.
func keyReply(key *storage.APIKey, value string) reply {
	resp := keyCreatedResponse{KeyID: key.ID, Name: key.Name, Environment: string(key.Env), Scopes: key.Scopes,
		Key: value, CreatedAt: storage.FormatTime(key.CreatedAt)}
	redacted := resp
	redacted.Key = key.Prefix + strings.Repeat("*", len(value)-len(key.Prefix)-4) + key.Last4
	return reply{status: http.StatusOK, body: resp, replay: redacted}
}

// handleKeysList lists the caller's organisation's keys (account.Keys),
// with the uses not yet recorded in the store.
func (a *App) handleKeysList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	keys, err := a.accounts.Keys(r.Context(), tenantFrom(r.Context()).Org)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]keyResponse, 0, len(keys))
	for _, k := range keys {
		if t, ok := a.usage.Pending(k.ID); ok && (k.LastUsedAt == nil || t.After(*k.LastUsedAt)) {
			k.LastUsedAt = &t
		}
		out = append(out, keyResponse{KeyID: k.ID, Name: k.Name, Environment: string(k.Env), Scopes: k.Scopes,
			Prefix: k.Prefix, Last4: k.Last4, CreatedAt: storage.FormatTime(k.CreatedAt),
			RotatedAt: storage.FormatTimePtr(k.RotatedAt), LastUsedAt: storage.FormatTimePtr(k.LastUsedAt)})
	}
	writePage(w, r, out, page, func(k keyResponse) string { return k.KeyID })
}

// handleKeysRotate gives a key a new value (account.RotateKey) and answers
// it, once.
func (a *App) handleKeysRotate(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		key, value, err := a.accounts.RotateKey(tx, tenantFrom(r.Context()).Org, ps.ByName("keyId"))
		if err != nil {
			return reply{}, err
		}
		return keyReply(key, value), nil
	})
}

// handleKeysRevoke ends a key (account.RevokeKey).
func (a *App) handleKeysRevoke(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	err := a.db.Update(r.Context(), func(tx *storage.Tx) error {
		return a.accounts.RevokeKey(tx, tenantFrom(r.Context()).Org, ps.ByName("keyId"))
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}
