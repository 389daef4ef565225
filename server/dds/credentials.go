package dds

import (
	"context"
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/eudr/eudr/queue/netguard"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// CredentialsRequest is the body of PUT /credentials/eu-system: a
// web-service user's access to the EU system, and the endpoint to use
// ("production", "acceptance" or an https URL; production when absent).
type CredentialsRequest struct {
	Username *string `json:"username"`
	AuthKey  *string `json:"authKey"`
	ClientID *string `json:"clientId"`
	Endpoint *string `json:"endpoint"`
	// OperatorAccessIdentifier is sent in the BodyIdentity header of the
	// statement service's calls: the operator a client filing for several
	// acts for. Absent: no header.
	OperatorAccessIdentifier *string `json:"operatorAccessIdentifier"`
}

// maxCredentialLen bounds each field of the credentials.
const maxCredentialLen = 256

// ValidateCredentials checks req and returns every problem found as one
// apierr 400: each field required and bounded, an endpoint URL by the
// endpoint rules (see Endpoints), its host name resolved unless private
// endpoints are allowed.
func (s *Service) ValidateCredentials(ctx context.Context, req *CredentialsRequest) error {
	probs := req.fieldProblems()
	if e := req.Endpoint; e != nil && !isNamedEndpoint(*e) {
		d := s.o.Endpoints.Problem("endpoint", *e, "https")
		if d == nil && !s.o.Endpoints.AllowPrivate && errors.Is(netguard.CheckTarget(ctx, *e), netguard.ErrTargetNotAllowed) {
			d = &apierr.Detail{Code: apierr.DetailTargetNotAllowed, Field: "endpoint", Issue: IssueEndpointAddress}
		}
		if d != nil {
			probs = append(probs, *d)
		}
	}
	return probs.Err()
}

// fieldProblems are the problems of the request's fields but the endpoint.
func (req *CredentialsRequest) fieldProblems() apierr.Problems {
	var probs apierr.Problems
	for _, f := range []struct {
		field string
		v     *string
	}{{"username", req.Username}, {"authKey", req.AuthKey}, {"clientId", req.ClientID}} {
		switch {
		case f.v == nil || *f.v == "":
			probs.Add(apierr.DetailRequired, f.field, "is required")
		case len(*f.v) > maxCredentialLen:
			probs.Add(apierr.DetailInvalidValue, f.field, fmt.Sprintf("must be at most %d characters", maxCredentialLen))
		}
	}
	if id := req.OperatorAccessIdentifier; id != nil && !isAccessIdentifier(*id) {
		probs.Add(apierr.DetailInvalidValue, "operatorAccessIdentifier",
			fmt.Sprintf("must be 1 to %d printable characters without spaces, as the EU system assigned it", euis.MaxOperatorAccessIdentifierLen))
	}
	return probs
}

// isAccessIdentifier reports whether s fits OperatorAccessIdentifierType
// (an xs:token of at most 16 characters), spaces refused altogether: an
// identifier the EC administrator assigns has none.
func isAccessIdentifier(s string) bool {
	if s == "" || utf8.RuneCountInString(s) > euis.MaxOperatorAccessIdentifierLen {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// PutCredentials replaces the tenant's credentials with req, which passed
// ValidateCredentials, the auth key sealed (AES-256-GCM, bound to the
// tenant), and returns what it stored. It refuses missing fields as
// ValidateCredentials does (an endpoint is checked again when it is
// used), and otherwise fails only when the store does.
func (s *Service) PutCredentials(ctx context.Context, t storage.Tenant, req *CredentialsRequest) (*storage.EUCredentials, error) {
	if err := req.fieldProblems().Err(); err != nil {
		return nil, err
	}
	c := &storage.EUCredentials{Username: *req.Username, ClientID: *req.ClientID,
		SealedAuthKey: s.o.Sealer.Seal([]byte(*req.AuthKey), t.String())}
	if req.Endpoint != nil {
		c.Endpoint = *req.Endpoint
	}
	if req.OperatorAccessIdentifier != nil {
		c.OperatorAccessIdentifier = *req.OperatorAccessIdentifier
	}
	err := s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		c.UpdatedAt = tx.Now()
		return tx.PutEUCredentials(t, c)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// FindCredentials returns the tenant's credentials as stored (the auth
// key sealed), or apierr.NotFound.
func (s *Service) FindCredentials(ctx context.Context, t storage.Tenant) (*storage.EUCredentials, error) {
	var c *storage.EUCredentials
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		c, err = tx.FindEUCredentials(t)
		return err
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, apierr.NotFound{Kind: "EU system credentials"}
	}
	return c, err
}

// EndpointURL is the URL a stored endpoint stands for (see Endpoints.URL).
func (s *Service) EndpointURL(endpoint string) string { return s.o.Endpoints.URL(endpoint) }

// SandboxCredentials stand in for credentials in the sandbox, whose
// simulated EU system ignores them.
var SandboxCredentials = euis.Credentials{Username: "sandbox", AuthKey: "sandbox", ClientID: euis.AcceptanceClientID,
	Endpoint: "https://sandbox.invalid/tracesnt"}

// credentials returns the tenant's credentials to call the EU system
// with, unsealed; the sandbox needs none. Production without them, or
// with a URL endpoint stored before the endpoint rules that breaks them,
// is 422 EU_SYSTEM_NOT_CONFIGURED: nothing is sent.
func (s *Service) credentials(tx *storage.Tx, t storage.Tenant) (euis.Credentials, error) {
	if t.Env == storage.Sandbox {
		return SandboxCredentials, nil
	}
	c, err := tx.FindEUCredentials(t)
	if errors.Is(err, storage.ErrNotFound) {
		return euis.Credentials{}, &apierr.Error{Status: apierr.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
			Message: "the EU information system is not configured: PUT /credentials/eu-system first",
			Details: []apierr.Detail{{Code: apierr.DetailEUSystemNotConfigured, Field: "credentials",
				Issue: "no EU system credentials for this organisation in production"}}}
	}
	if err != nil {
		return euis.Credentials{}, err
	}
	if !isNamedEndpoint(c.Endpoint) {
		if d := s.o.Endpoints.Problem("credentials.endpoint", c.Endpoint, "https"); d != nil {
			return euis.Credentials{}, &apierr.Error{Status: apierr.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
				Message: "the EU system endpoint stored with the credentials is refused: it " + d.Issue + "; PUT /credentials/eu-system again",
				Details: []apierr.Detail{{Code: apierr.DetailEUSystemNotConfigured, Field: d.Field, Issue: "the stored endpoint " + d.Issue}}}
		}
	}
	key, err := s.o.Sealer.Open(c.SealedAuthKey, t.String())
	if err != nil {
		return euis.Credentials{}, err
	}
	return euis.Credentials{Username: c.Username, AuthKey: string(key), ClientID: c.ClientID,
		Endpoint: s.o.Endpoints.URL(c.Endpoint), OperatorAccessIdentifier: c.OperatorAccessIdentifier}, nil
}
