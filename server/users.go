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

// orgAllowed refuses an organisation admin who names another
// organisation: only an appliance administrator acts on any.
func orgAllowed(u *storage.User, org, field string) error {
	if org == u.Org || u.ApplianceAdmin {
		return nil
	}
	e := apierr.Forbidden(apierr.DetailApplianceAdminRequired,
		"only an appliance administrator manages the users of another organisation")
	e.Details[0].Field = field
	return e
}

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
	if err := orgAllowed(me, ur.Org, "org"); err != nil {
		writeError(w, r, err)
		return
	}
	if ur.ApplianceAdmin && !me.ApplianceAdmin {
		e := apierr.Forbidden(apierr.DetailApplianceAdminRequired, "only an appliance administrator makes another one")
		e.Details[0].Field = "applianceAdmin"
		writeError(w, r, e)
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

// handleUsersList lists the users of the caller's organisation; an
// appliance administrator may name another with ?org=, or every one with
// ?org=*.
func (a *App) handleUsersList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	me := caller(r)
	org := r.URL.Query().Get("org")
	switch org {
	case "":
		org = me.Org
	case "*":
		if !me.ApplianceAdmin {
			writeError(w, r, orgAllowed(me, org, "query.org"))
			return
		}
		org = ""
	default:
		if err := orgAllowed(me, org, "query.org"); err != nil {
			writeError(w, r, err)
			return
		}
	}
	users, err := a.accounts.Users(r.Context(), org)
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
