package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

type loginResponse struct {
	Token     string `json:"token"`
	ExpiresAt string `json:"expiresAt"`
}

// handleLogin checks a user's password and answers a login token
// (account.Login).
func (a *App) handleLogin(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req account.LoginRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := apierr.Merge(decoded, req.Validate()); err != nil {
		writeError(w, r, err)
		return
	}
	token, exp, err := a.accounts.Login(r.Context(), req.Username, req.Password)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, loginResponse{Token: token, ExpiresAt: storage.FormatTime(exp)})
}
