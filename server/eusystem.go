package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"time"

	"github.com/julienschmidt/httprouter"

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
		storage.Production: euis.NewSOAPClient(&http.Client{Timeout: a.cfg.EUSystem.Timeout}, euis.SOAPOptions{Now: a.now}),
		storage.Sandbox:    euis.NewSimulator(simStore{a.db}, euis.SimOptions{Delay: a.cfg.EUSystem.SandboxDelay, Now: a.now}),
	}
	return nil
}

// euClient is the EU system of env.
func (a *App) euClient(env storage.Environment) euis.Client { return a.euClients[env] }

// euCredentials returns the tenant's EU system credentials, unsealed; the
// sandbox needs none. Production without them is 422
// EU_SYSTEM_NOT_CONFIGURED.
func (a *App) euCredentials(tx *storage.Tx, t storage.Tenant) (euis.Credentials, error) {
	if t.Env == storage.Sandbox {
		return sandboxCredentials, nil
	}
	c, err := tx.FindEUCredentials(t)
	if errors.Is(err, storage.ErrNotFound) {
		return euis.Credentials{}, &Error{Status: http.StatusUnprocessableEntity, Code: CodeBusinessRule,
			Message: "the EU information system is not configured: PUT /credentials/eu-system first",
			Details: []Detail{{Code: DetailEUSystemNotConfigured, Field: "credentials",
				Issue: "no EU system credentials for this organisation in production"}}}
	}
	if err != nil {
		return euis.Credentials{}, err
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

func (req *credentialsRequest) validate(cfg EUSystemConfig) (euis.Credentials, error) {
	var probs Problems
	var cr euis.Credentials
	for _, f := range []struct {
		field string
		v     *string
		dst   *string
	}{{"username", req.Username, &cr.Username}, {"authKey", req.AuthKey, &cr.AuthKey}, {"clientId", req.ClientID, &cr.ClientID}} {
		switch {
		case f.v == nil || *f.v == "":
			probs.Add(DetailRequired, f.field, "is required")
		case len(*f.v) > 256:
			probs.Add(DetailInvalidValue, f.field, "must be at most 256 characters")
		default:
			*f.dst = *f.v
		}
	}
	cr.Endpoint = cfg.endpointOf("")
	if req.Endpoint != nil {
		cr.Endpoint = cfg.endpointOf(*req.Endpoint)
	}
	if u, err := url.Parse(cr.Endpoint); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		probs.Add(DetailInvalidValue, "endpoint", `must be "production", "acceptance" or an http(s) URL`)
	}
	return cr, probs.Err()
}

func toCredentialsResponse(c *storage.EUCredentials, cfg EUSystemConfig) credentialsResponse {
	return credentialsResponse{Username: c.Username, ClientID: c.ClientID, Endpoint: optional(c.Endpoint),
		AuthKeySet: len(c.SealedAuthKey) > 0, UpdatedAt: formatTime(c.UpdatedAt), EffectiveEndpoint: cfg.endpointOf(c.Endpoint)}
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
	cr, err := req.validate(a.cfg.EUSystem)
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
		err = notFound("EU system credentials")
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, toCredentialsResponse(c, a.cfg.EUSystem))
}
