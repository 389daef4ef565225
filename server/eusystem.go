package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/dds"
)

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
	writeJSON(w, r, http.StatusOK, dds.ViewCredentials(c, a.dds.EndpointURL(c.Endpoint)))
}

func (a *App) handleCredentialsGet(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	c, err := a.dds.FindCredentials(r.Context(), tenantFrom(r.Context()))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, dds.ViewCredentials(c, a.dds.EndpointURL(c.Endpoint)))
}
