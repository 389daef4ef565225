package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

type userCreateRequest struct {
	Org            string `json:"org"`
	Username       string `json:"username"`
	Role           string `json:"role"`
	ApplianceAdmin bool   `json:"applianceAdmin"`
}

// userResponse is a user as listed; userCreatedResponse adds the password,
// shown only on create.
type userResponse struct {
	Username       string `json:"username"`
	Org            string `json:"org"`
	Role           string `json:"role"`
	ApplianceAdmin bool   `json:"applianceAdmin"`
	CreatedAt      string `json:"createdAt"`
}

type userCreatedResponse struct {
	Username       string `json:"username"`
	Org            string `json:"org"`
	Role           string `json:"role"`
	ApplianceAdmin bool   `json:"applianceAdmin"`
	CreatedAt      string `json:"createdAt"`
	Password       string `json:"password"`
}

func userOf(u *storage.User) userResponse {
	return userResponse{Username: u.Username, Org: u.Org, Role: u.Role, ApplianceAdmin: u.ApplianceAdmin,
		CreatedAt: storage.FormatTime(u.CreatedAt)}
}

// caller is the signed-in user of a request that passed authAdmin.
func caller(r *http.Request) *storage.User { return infoFrom(r.Context()).who.user }

// handleUsersCreate makes a user (account.CreateUser) of the caller's
// organisation, or of any for an appliance administrator, and answers its
// generated password, once.
func (a *App) handleUsersCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req userCreateRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	me := caller(r)
	if req.Org == "" {
		req.Org = me.Org
	}
	ur, err := account.ParseUserRequest(req.Org, req.Username, req.Role, req.ApplianceAdmin)
	if err := apierr.Merge(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	if err := account.MayCreate(me, ur); err != nil {
		writeError(w, r, err)
		return
	}
	password, hash, err := account.NewPassword() // slow: before the transaction
	if err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		u, err := a.accounts.CreateUser(tx, ur, hash)
		if err != nil {
			return reply{}, err
		}
		// The password is not kept: a replay answers the same user with
		// it redacted, as a key's value is.
		resp := userCreatedResponse{Username: u.Username, Org: u.Org, Role: u.Role, ApplianceAdmin: u.ApplianceAdmin,
			CreatedAt: storage.FormatTime(u.CreatedAt), Password: password}
		redacted := resp
		redacted.Password = "********"
		return reply{status: http.StatusOK, body: resp, replay: redacted}, nil
	})
}

// handleUsersList lists the users of the caller's organisation, or of
// ?org= (account.UsersFor).
func (a *App) handleUsersList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	users, err := a.accounts.UsersFor(r.Context(), caller(r), r.URL.Query().Get("org"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]userResponse, 0, len(users))
	for _, u := range users {
		out = append(out, userOf(u))
	}
	writeJSON(w, r, http.StatusOK, out)
}

// handleUsersDelete removes a user (account.DeleteUser).
func (a *App) handleUsersDelete(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	err := a.db.Update(r.Context(), func(tx *storage.Tx) error {
		return a.accounts.DeleteUser(tx, caller(r), ps.ByName("username"))
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}
