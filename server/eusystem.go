package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/queue/netguard"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
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
	// networks are allowed either way. See endpointProblem.
	AllowPrivateEndpoints bool `mapstructure:"allow_private_endpoints"`
}

// Endpoint names credentials may give instead of a URL.
const (
	endpointProduction = "production"
	endpointAcceptance = "acceptance"
)

// endpointOf is the URL credentials' endpoint stands for: "" and
// "production" are Endpoint, "acceptance" AcceptanceEndpoint, anything
// else the URL itself.
func (c EUSystemConfig) endpointOf(e string) string {
	switch e {
	case "", endpointProduction:
		return c.Endpoint
	case endpointAcceptance:
		return c.AcceptanceEndpoint
	}
	return e
}

// Where the EU system client may send depends on who set the endpoint
// (README, "EU system credentials"). Every request carries a UsernameToken
// made from the organisation's key, and the answer may end up in a job's
// error, so an endpoint is a target for the token and for requests into
// the appliance's network.
//
//   - eu_system.endpoint and acceptance_endpoint are the operator's: an http
//     or https URL. Plain http is for the relay of an air-gapped site, on
//     this machine or its network, which the operator answers for.
//   - A URL given with PUT /credentials/eu-system is whoever holds a write
//     key's: https only, so that the token goes over TLS to a host that
//     proves its name. A stored one that breaks this (set before the rule)
//     fails a submission before anything is sent.
//   - Neither carries a user name or password: it would be sent as Basic
//     authentication beside the token, and shown as effectiveEndpoint.
//   - Every request, whoever set its endpoint, dials through the address
//     guard (euis.NewHTTPClient): loopback, link-local (the cloud metadata
//     services), multicast and unspecified addresses are refused unless
//     eu_system.allow_private_endpoints; private networks (RFC 1918) are
//     allowed, as for webhooks. An address literal the guard would refuse
//     is refused when the endpoint is set, a configured one at start with
//     localhost names too (no DNS at start), and for credentials a name
//     that resolves to one as well; the dial-time check is the one that
//     holds.

// Issues of a refused endpoint.
const (
	issueEndpointURL     = `must be "production", "acceptance" or an https URL without user name or password`
	issueEndpointAddress = "is or resolves to a loopback, link-local, multicast or unspecified address, which the EU system client does not connect to"
)

// isNamedEndpoint reports whether credentials' endpoint names a configured
// URL rather than giving one.
func isNamedEndpoint(e string) bool {
	return e == "" || e == endpointProduction || e == endpointAcceptance
}

// endpointProblem says what is wrong with a URL endpoint, or nil: schemes
// are the ones it may use ("https" for one given through the API), and an
// address literal the guard refuses is refused unless
// AllowPrivateEndpoints. Names are not resolved here.
func (c EUSystemConfig) endpointProblem(field, endpoint string, schemes ...string) *apierr.Detail {
	u, err := url.Parse(endpoint)
	if err != nil || !slices.Contains(schemes, u.Scheme) || u.Hostname() == "" || u.User != nil || u.Opaque != "" {
		return &apierr.Detail{Code: apierr.DetailInvalidValue, Field: field, Issue: issueEndpointURL}
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && netguard.Refused(ip) && !c.AllowPrivateEndpoints {
		return &apierr.Detail{Code: apierr.DetailTargetNotAllowed, Field: field, Issue: issueEndpointAddress}
	}
	return nil
}

// checkConfigEndpoint is the problem of eu_system.endpoint or
// acceptance_endpoint, or "". At start a localhost name (RFC 6761: always
// loopback) counts as a loopback address; no other name is looked up, so
// that a start does not wait on DNS: one that resolves to a refused
// address fails each submission when the client connects.
func (c EUSystemConfig) checkConfigEndpoint(endpoint string) string {
	d := c.endpointProblem("", endpoint, "https", "http")
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

// sandboxCredentials stand in for credentials in the sandbox, whose
// simulated EU system ignores them.
var sandboxCredentials = euis.Credentials{Username: "sandbox", AuthKey: "sandbox", ClientID: euis.AcceptanceClientID,
	Endpoint: "https://sandbox.invalid/tracesnt"}

// openEUSystem makes the clients of the two environments: the SOAP client
// for production, the simulator (its records in the store) for the
// sandbox; and loads the key that seals credentials.
func (a *App) openEUSystem() error {
	s, err := loadSealer(a.cfg.EUSystem.keyFile(a.cfg.DataDir))
	if err != nil {
		return fmt.Errorf("eu_system.key_file: %w", err)
	}
	a.sealer = s
	a.euClients = map[storage.Environment]euis.Client{
		storage.Production: euis.NewSOAPClient(euis.NewHTTPClient(euis.HTTPOptions{AllowPrivate: a.cfg.EUSystem.AllowPrivateEndpoints,
			Timeout: a.cfg.EUSystem.Timeout}), euis.SOAPOptions{Now: a.now}),
		storage.Sandbox: euis.NewSimulator(simStore{a.db}, euis.SimOptions{Delay: a.cfg.EUSystem.SandboxDelay, Now: a.now}),
	}
	return nil
}

// euClient is the EU system of env.
func (a *App) euClient(env storage.Environment) euis.Client { return a.euClients[env] }

// euCredentials returns the tenant's EU system credentials, unsealed; the
// sandbox needs none. Production without them, or with a URL endpoint
// stored before the rules of endpointProblem that breaks them, is 422
// EU_SYSTEM_NOT_CONFIGURED: nothing is sent.
func (a *App) euCredentials(tx *storage.Tx, t storage.Tenant) (euis.Credentials, error) {
	if t.Env == storage.Sandbox {
		return sandboxCredentials, nil
	}
	c, err := tx.FindEUCredentials(t)
	if errors.Is(err, storage.ErrNotFound) {
		return euis.Credentials{}, &apierr.Error{Status: http.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
			Message: "the EU information system is not configured: PUT /credentials/eu-system first",
			Details: []apierr.Detail{{Code: apierr.DetailEUSystemNotConfigured, Field: "credentials",
				Issue: "no EU system credentials for this organisation in production"}}}
	}
	if err != nil {
		return euis.Credentials{}, err
	}
	if !isNamedEndpoint(c.Endpoint) {
		if d := a.cfg.EUSystem.endpointProblem("credentials.endpoint", c.Endpoint, "https"); d != nil {
			return euis.Credentials{}, &apierr.Error{Status: http.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
				Message: "the EU system endpoint stored with the credentials is refused: it " + d.Issue + "; PUT /credentials/eu-system again",
				Details: []apierr.Detail{{Code: apierr.DetailEUSystemNotConfigured, Field: d.Field, Issue: "the stored endpoint " + d.Issue}}}
		}
	}
	key, err := a.sealer.open(c.SealedAuthKey, t.String())
	if err != nil {
		return euis.Credentials{}, err
	}
	return euis.Credentials{Username: c.Username, AuthKey: string(key), ClientID: c.ClientID,
		Endpoint: a.cfg.EUSystem.endpointOf(c.Endpoint)}, nil
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

type credentialsRequest struct {
	Username *string `json:"username"`
	AuthKey  *string `json:"authKey"`
	ClientID *string `json:"clientId"`
	Endpoint *string `json:"endpoint"`
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

// validate checks the request; an endpoint URL by the rules of
// endpointProblem, its host resolved unless private endpoints are allowed.
func (req *credentialsRequest) validate(ctx context.Context, cfg EUSystemConfig) (euis.Credentials, error) {
	var probs apierr.Problems
	var cr euis.Credentials
	for _, f := range []struct {
		field string
		v     *string
		dst   *string
	}{{"username", req.Username, &cr.Username}, {"authKey", req.AuthKey, &cr.AuthKey}, {"clientId", req.ClientID, &cr.ClientID}} {
		switch {
		case f.v == nil || *f.v == "":
			probs.Add(apierr.DetailRequired, f.field, "is required")
		case len(*f.v) > 256:
			probs.Add(apierr.DetailInvalidValue, f.field, "must be at most 256 characters")
		default:
			*f.dst = *f.v
		}
	}
	cr.Endpoint = cfg.endpointOf("")
	if req.Endpoint != nil {
		cr.Endpoint = cfg.endpointOf(*req.Endpoint)
		if !isNamedEndpoint(*req.Endpoint) {
			d := cfg.endpointProblem("endpoint", *req.Endpoint, "https")
			if d == nil && !cfg.AllowPrivateEndpoints && errors.Is(netguard.CheckTarget(ctx, *req.Endpoint), netguard.ErrTargetNotAllowed) {
				d = &apierr.Detail{Code: apierr.DetailTargetNotAllowed, Field: "endpoint", Issue: issueEndpointAddress}
			}
			if d != nil {
				probs = append(probs, *d)
			}
		}
	}
	return cr, probs.Err()
}

func toCredentialsResponse(c *storage.EUCredentials, cfg EUSystemConfig) credentialsResponse {
	return credentialsResponse{Username: c.Username, ClientID: c.ClientID, Endpoint: storage.Optional(c.Endpoint),
		AuthKeySet: len(c.SealedAuthKey) > 0, UpdatedAt: storage.FormatTime(c.UpdatedAt), EffectiveEndpoint: cfg.endpointOf(c.Endpoint)}
}

// handleCredentialsPut stores the tenant's EU system credentials, the auth
// key sealed with AES-256-GCM under the key file (eu_system.key_file).
func (a *App) handleCredentialsPut(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req credentialsRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	cr, err := req.validate(r.Context(), a.cfg.EUSystem)
	if err := mergeProblems(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	c := &storage.EUCredentials{Username: cr.Username, ClientID: cr.ClientID, SealedAuthKey: a.sealer.seal([]byte(cr.AuthKey), t.String())}
	if req.Endpoint != nil {
		c.Endpoint = *req.Endpoint
	}
	err = a.db.Update(r.Context(), func(tx *storage.Tx) error {
		c.UpdatedAt = tx.Now()
		return tx.PutEUCredentials(t, c)
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, toCredentialsResponse(c, a.cfg.EUSystem))
}

func (a *App) handleCredentialsGet(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var c *storage.EUCredentials
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		c, err = tx.FindEUCredentials(tenantFrom(r.Context()))
		return err
	})
	if errors.Is(err, storage.ErrNotFound) {
		err = apierr.NotFound{Kind: "EU system credentials"}
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, toCredentialsResponse(c, a.cfg.EUSystem))
}
