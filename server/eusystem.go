package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/storage"
)

// credentialsResponse shows stored credentials without the auth key.
type credentialsResponse struct {
	Username   string  `json:"username"`
	ClientID   string  `json:"clientId"`
	Endpoint   *string `json:"endpoint"`
	AuthKeySet bool    `json:"authKeySet"`
	// OperatorAccessIdentifier is sent in the BodyIdentity header.
	OperatorAccessIdentifier *string `json:"operatorAccessIdentifier"`
	UpdatedAt                string  `json:"updatedAt"`
	// EffectiveEndpoint is the URL Endpoint stands for.
	EffectiveEndpoint string `json:"effectiveEndpoint"`
}

func toCredentialsResponse(c *storage.EUCredentials, effective string) credentialsResponse {
	return credentialsResponse{Username: c.Username, ClientID: c.ClientID, Endpoint: storage.Optional(c.Endpoint),
		AuthKeySet: len(c.SealedAuthKey) > 0, OperatorAccessIdentifier: storage.Optional(c.OperatorAccessIdentifier), UpdatedAt: storage.FormatTime(c.UpdatedAt), EffectiveEndpoint: effective}
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
