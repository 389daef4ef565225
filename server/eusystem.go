package server

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/queue/netguard"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/storage"
)

// EUSystemConfig sets how statements are filed with the EU information
// system (TRACES NT).
type EUSystemConfig struct {
	// Endpoint is the EU system's base URL (production, or a relay of an
	// air-gapped site); AcceptanceEndpoint its acceptance (training)
	// environment's. Credentials choose one ("production", "acceptance")
	// or name a URL of their own.
	Endpoint           string `mapstructure:"endpoint"`
	AcceptanceEndpoint string `mapstructure:"acceptance_endpoint"`
	// KeyFile holds the key that seals stored credentials, outside the
	// store ("": eu-credentials.key in the data dir).
	KeyFile string `mapstructure:"key_file"`
	// PollSchedule is the delays between status polls of a filed statement
	// in production (the last one repeats); SandboxPollSchedule the
	// sandbox's.
	PollSchedule        []time.Duration `mapstructure:"poll_schedule"`
	SandboxPollSchedule []time.Duration `mapstructure:"sandbox_poll_schedule"`
	// SandboxDelay is how long the sandbox's simulated EU system takes to
	// validate or reject a statement.
	SandboxDelay time.Duration `mapstructure:"sandbox_delay"`
	// Timeout bounds one call to the EU system.
	Timeout time.Duration `mapstructure:"timeout"`
	// AllowPrivateEndpoints lets calls reach loopback, link-local,
	// multicast and unspecified addresses: a relay on this machine. Private
	// networks are allowed either way. See dds.Endpoints.
	AllowPrivateEndpoints bool `mapstructure:"allow_private_endpoints"`
}

// endpoints are the configured endpoints and the rule for private ones.
func (c EUSystemConfig) endpoints() dds.Endpoints {
	return dds.Endpoints{Production: c.Endpoint, Acceptance: c.AcceptanceEndpoint, AllowPrivate: c.AllowPrivateEndpoints}
}

// checkConfigEndpoint is the problem of eu_system.endpoint or
// acceptance_endpoint, or "": the endpoint rules of dds.Endpoints, with
// http allowed. At start a localhost name (RFC 6761: always loopback)
// counts as a loopback address; no other name is looked up, so that a
// start does not wait on DNS: one that resolves to a refused address fails
// each submission when the client connects.
func (c EUSystemConfig) checkConfigEndpoint(endpoint string) string {
	d := c.endpoints().Problem("", endpoint, "https", "http")
	if u, err := url.Parse(endpoint); d == nil && err == nil && netguard.LocalhostName(u.Hostname()) && !c.AllowPrivateEndpoints {
		d = &apierr.Detail{Code: apierr.DetailTargetNotAllowed}
	}
	switch {
	case d == nil:
		return ""
	case d.Code == apierr.DetailTargetNotAllowed:
		return "is a loopback, link-local, multicast or unspecified address, or a localhost name: set eu_system.allow_private_endpoints to reach a relay there"
	}
	return "must be an http(s) URL without user name or password"
}

func (c EUSystemConfig) keyFile(dataDir string) string {
	if c.KeyFile != "" {
		return c.KeyFile
	}
	return filepath.Join(dataDir, "eu-credentials.key")
}

// simStore keeps the sandbox simulator's records in the store.
type simStore struct{ db *storage.DB }

func (s simStore) Get(key string) ([]byte, error) {
	var v []byte
	err := s.db.View(context.Background(), func(tx *storage.Tx) error {
		v = tx.SimRecord(key)
		return nil
	})
	return v, err
}

func (s simStore) Put(key string, v []byte) error {
	return s.db.Update(context.Background(), func(tx *storage.Tx) error { return tx.PutSimRecord(key, v) })
}

// credentialsResponse shows stored credentials without the auth key.
type credentialsResponse struct {
	Username   string  `json:"username"`
	ClientID   string  `json:"clientId"`
	Endpoint   *string `json:"endpoint"`
	AuthKeySet bool    `json:"authKeySet"`
	UpdatedAt  string  `json:"updatedAt"`
	// EffectiveEndpoint is the URL Endpoint stands for.
	EffectiveEndpoint string `json:"effectiveEndpoint"`
}

func toCredentialsResponse(c *storage.EUCredentials, effective string) credentialsResponse {
	return credentialsResponse{Username: c.Username, ClientID: c.ClientID, Endpoint: storage.Optional(c.Endpoint),
		AuthKeySet: len(c.SealedAuthKey) > 0, UpdatedAt: storage.FormatTime(c.UpdatedAt), EffectiveEndpoint: effective}
}

// handleCredentialsPut stores the tenant's EU system credentials, the auth
// key sealed (dds.PutCredentials).
func (a *App) handleCredentialsPut(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req dds.CredentialsRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := apierr.Merge(decoded, a.dds.ValidateCredentials(r.Context(), &req)); err != nil {
		writeError(w, r, err)
		return
	}
	c, err := a.dds.PutCredentials(r.Context(), tenantFrom(r.Context()), &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, toCredentialsResponse(c, a.dds.EndpointURL(c.Endpoint)))
}

func (a *App) handleCredentialsGet(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	c, err := a.dds.FindCredentials(r.Context(), tenantFrom(r.Context()))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, toCredentialsResponse(c, a.dds.EndpointURL(c.Endpoint)))
}
