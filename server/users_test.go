package server

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
)

type userCreated struct {
	Username       string `json:"username"`
	Org            string `json:"org"`
	Role           string `json:"role"`
	ApplianceAdmin bool   `json:"applianceAdmin"`
	Password       string `json:"password"`
}

// createUser creates a user through the API with token and returns the
// answer; it fails the test unless the answer is 200.
func (ta *testApp) createUser(token, body, idemKey string) userCreated {
	ta.tb.Helper()
	w := ta.do("POST", enterprisePrefix+"/users", body, "Authorization", "Bearer "+token, "Idempotency-Key", idemKey)
	if w.Code != http.StatusOK {
		ta.tb.Fatalf("create user %s: got %d %s, want 200", body, w.Code, w.Body)
	}
	var uc userCreated
	mustDecode(ta.tb, w, &uc)
	return uc
}

func TestUsers_CreateListDelete(t *testing.T) {
	ta := newTestApp(t)
	root := ta.adminToken()
	bearer := func(token string) []string { return []string{"Authorization", "Bearer " + token} }
	usersPath := enterprisePrefix + "/users"

	reader := ta.createUser(root, `{"username":"rita","role":"reader"}`, "u1")
	if reader.Org != defaultOrg || reader.Role != "reader" || reader.ApplianceAdmin || len(reader.Password) < 20 {
		t.Errorf("created: got %+v, want a reader of %s with a password", reader, defaultOrg)
	}
	t.Run("ReplayRedactsPassword", func(t *testing.T) {
		w := ta.do("POST", usersPath, `{"username":"rita","role":"reader"}`, append(bearer(root), "Idempotency-Key", "u1")...)
		var again userCreated
		mustDecode(t, w, &again)
		if w.Code != 200 || again.Username != "rita" || again.Password == reader.Password || again.Password != "********" {
			t.Errorf("replay: got %d %+v, want the user with the password redacted", w.Code, again)
		}
	})
	t.Run("Exists", func(t *testing.T) {
		w := ta.do("POST", usersPath, `{"username":"rita","role":"admin"}`, append(bearer(root), "Idempotency-Key", "u2")...)
		wantError(t, w, http.StatusConflict, apierr.CodeConflict, apierr.DetailUserExists)
	})
	t.Run("Invalid", func(t *testing.T) {
		w := ta.do("POST", usersPath, `{"username":"a b","role":"owner","extra":1}`, append(bearer(root), "Idempotency-Key", "u3")...)
		got := detailSet(wantError(t, w, http.StatusBadRequest, apierr.CodeValidationFailed, "").Details)
		if !got["INVALID_VALUE username"] || !got["INVALID_VALUE role"] || !got["UNKNOWN_FIELD extra"] {
			t.Errorf("details: got %v", got)
		}
	})

	// An organisation admin manages its own organisation only.
	orgAdmin := ta.createUser(root, `{"org":"acme","username":"oscar","role":"admin"}`, "u4")
	oscar := ta.login("oscar", orgAdmin.Password)
	t.Run("OrgAdminOwnOrg", func(t *testing.T) {
		u := ta.createUser(oscar, `{"username":"olga","role":"reader"}`, "o1")
		if u.Org != "acme" {
			t.Errorf("org admin's user: org %q, want acme", u.Org)
		}
		w := ta.do("GET", usersPath, "", bearer(oscar)...)
		var users []userResponse
		mustDecode(t, w, &users)
		if len(users) != 2 || users[0].Username != "olga" || users[1].Username != "oscar" {
			t.Errorf("list: got %+v, want olga and oscar", users)
		}
	})
	t.Run("OrgAdminOtherOrg", func(t *testing.T) {
		w := ta.do("POST", usersPath, `{"org":"default","username":"x1","role":"reader"}`, append(bearer(oscar), "Idempotency-Key", "o2")...)
		wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, apierr.DetailApplianceAdminRequired)
		w = ta.do("POST", usersPath, `{"username":"x2","role":"admin","applianceAdmin":true}`, append(bearer(oscar), "Idempotency-Key", "o3")...)
		wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, apierr.DetailApplianceAdminRequired)
		w = ta.do("GET", usersPath+"?org=default", "", bearer(oscar)...)
		wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, apierr.DetailApplianceAdminRequired)
		w = ta.do("DELETE", usersPath+"/rita", "", bearer(oscar)...)
		wantError(t, w, http.StatusNotFound, apierr.CodeNotFound, "")
	})
	t.Run("ApplianceAdminAnyOrg", func(t *testing.T) {
		w := ta.do("GET", usersPath+"?org=*", "", bearer(root)...)
		var users []userResponse
		mustDecode(t, w, &users)
		if w.Code != 200 || len(users) != 4 {
			t.Errorf("list all: got %d %+v, want 4 users", w.Code, users)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		w := ta.do("DELETE", usersPath+"/"+adminUsername, "", bearer(root)...)
		wantError(t, w, http.StatusConflict, apierr.CodeConflict, apierr.DetailCannotDeleteSelf)
		w = ta.do("DELETE", usersPath+"/olga", "", bearer(root)...)
		if w.Code != http.StatusNoContent {
			t.Fatalf("delete olga: got %d %s", w.Code, w.Body)
		}
		body, _ := json.Marshal(account.LoginRequest{Username: "olga", Password: "whatever"})
		if w := ta.do("POST", enterprisePrefix+"/auth/login", string(body)); w.Code != http.StatusUnauthorized {
			t.Errorf("login of a deleted user: got %d, want 401", w.Code)
		}
	})
}

// A reader signs in and is refused key and user management; an
// organisation admin who is no appliance administrator is refused what
// affects the whole appliance.
func TestUsers_RoleRefusals(t *testing.T) {
	ta := newTestApp(t)
	root := ta.adminToken()
	reader := ta.createUser(root, `{"username":"rita","role":"reader"}`, "u1")
	orgAdmin := ta.createUser(root, `{"username":"oscar","role":"admin"}`, "u2")
	readerToken := ta.login("rita", reader.Password)
	adminToken := ta.login("oscar", orgAdmin.Password)

	for _, c := range []struct {
		name, method, path, body string
		token, detail            string
	}{
		{"ReaderListsKeys", "GET", "/api-keys", "", readerToken, apierr.DetailAdminRequired},
		{"ReaderCreatesKey", "POST", "/api-keys", `{"environment":"sandbox"}`, readerToken, apierr.DetailAdminRequired},
		{"ReaderRevokesKey", "DELETE", "/api-keys/key_x", "", readerToken, apierr.DetailAdminRequired},
		{"ReaderCreatesUser", "POST", "/users", `{"username":"x","role":"reader"}`, readerToken, apierr.DetailAdminRequired},
		{"ReaderBackup", "GET", "/admin/backup", "", readerToken, apierr.DetailAdminRequired},
		{"OrgAdminBackup", "GET", "/admin/backup", "", adminToken, apierr.DetailApplianceAdminRequired},
		{"OrgAdminImportsLayer", "POST", "/layers", layerBody("protected_area", testLayerFeatures, ""), adminToken, apierr.DetailApplianceAdminRequired},
		{"OrgAdminDeletesLayer", "DELETE", "/layers/lay_x", "", adminToken, apierr.DetailApplianceAdminRequired},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := ta.do(c.method, enterprisePrefix+c.path, c.body, "Authorization", "Bearer "+c.token, "Idempotency-Key", c.name)
			e := wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, c.detail)
			if e.Message != apierr.MsgForbidden {
				t.Errorf("message: got %q, want the fixed %q", e.Message, apierr.MsgForbidden)
			}
		})
	}
	t.Run("OrgAdminManagesKeys", func(t *testing.T) {
		w := ta.do("POST", enterprisePrefix+"/api-keys", `{"environment":"sandbox"}`, "Authorization", "Bearer "+adminToken, "Idempotency-Key", "k1")
		if w.Code != http.StatusOK {
			t.Errorf("org admin creates a key: got %d %s", w.Code, w.Body)
		}
	})
}
