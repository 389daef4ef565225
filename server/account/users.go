package account

import (
	"context"
	"errors"
	"fmt"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// RoleReader is the role that may sign in and read, and never write.
const RoleReader = "reader"

// maxNameLen bounds usernames and organisation ids.
const maxNameLen = 64

// UserRequest is a validated request for a new user.
type UserRequest struct {
	Org            string
	Username       string
	Role           string
	ApplianceAdmin bool
}

// ParseUserRequest validates the fields of a user request as the API and
// `eudr admin create-user` take them. It returns every problem found as
// one apierr 400.
func ParseUserRequest(org, username, role string, applianceAdmin bool) (UserRequest, error) {
	var probs apierr.Problems
	checkName(&probs, "org", org)
	checkName(&probs, "username", username)
	switch role {
	case "":
		probs.Add(apierr.DetailRequired, "role", "is required: admin or reader")
	case RoleAdmin, RoleReader:
	default:
		probs.Add(apierr.DetailInvalidValue, "role", fmt.Sprintf("must be admin or reader, not %q", apierr.Cut(role, 40)))
	}
	if applianceAdmin && role == RoleReader {
		probs.Add(apierr.DetailInvalidValue, "applianceAdmin", "an appliance administrator must have the admin role")
	}
	if err := probs.Err(); err != nil {
		return UserRequest{}, err
	}
	return UserRequest{Org: org, Username: username, Role: role, ApplianceAdmin: applianceAdmin}, nil
}

// checkName accepts 1-64 characters of [A-Za-z0-9._-] starting with a
// letter or digit: names that read the same in a URL path, a log line and
// a shell.
func checkName(probs *apierr.Problems, field, v string) {
	if v == "" {
		probs.Add(apierr.DetailRequired, field, "is required")
		return
	}
	ok := len(v) <= maxNameLen
	for i := 0; ok && i < len(v); i++ {
		c := v[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		ok = alnum || i > 0 && (c == '.' || c == '_' || c == '-')
	}
	if !ok {
		probs.Add(apierr.DetailInvalidValue, field,
			fmt.Sprintf("must be 1-%d letters, digits, '.', '_' or '-', starting with a letter or digit", maxNameLen))
	}
}

// NewPassword returns a random password and its hash. Hashing is slow
// (argon2id): call it before the write transaction of CreateUser.
func NewPassword() (password, hash string, err error) {
	password = randomPassword()
	hash, err = HashPassword(password)
	return password, hash, err
}

// CreateUser stores a new user with the password hash of NewPassword in
// the caller's transaction, and its organisation when that is new. It
// returns an apierr 409 USER_EXISTS, writing nothing, when the username
// is taken (usernames are unique across organisations: a user signs in
// with its name alone).
func (s *Service) CreateUser(tx *storage.Tx, ur UserRequest, hash string) (*storage.User, error) {
	if _, err := tx.FindUser(ur.Username); err == nil {
		return nil, apierr.Conflict(apierr.DetailUserExists, "username", fmt.Sprintf("user %q exists", ur.Username))
	} else if !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	if _, err := tx.FindOrg(ur.Org); errors.Is(err, storage.ErrNotFound) {
		if err := tx.PutOrg(&storage.Org{ID: ur.Org, CreatedAt: tx.Now()}); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	u := &storage.User{Username: ur.Username, Org: ur.Org, Role: ur.Role, ApplianceAdmin: ur.ApplianceAdmin,
		PasswordHash: hash, CreatedAt: tx.Now()}
	if err := tx.PutUser(u); err != nil {
		return nil, err
	}
	return u, nil
}

// AddUser is CreateUser with a new password in a transaction of its own,
// for `eudr admin create-user`; it returns the password, shown once.
func (s *Service) AddUser(ctx context.Context, ur UserRequest) (string, error) {
	password, hash, err := NewPassword()
	if err != nil {
		return "", err
	}
	err = s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		_, err := s.CreateUser(tx, ur, hash)
		return err
	})
	if err != nil {
		return "", err
	}
	return password, nil
}

// MayCreate refuses, with a 403 APPLIANCE_ADMIN_REQUIRED, an actor who is
// no appliance administrator and asks for a user of another organisation
// or for another appliance administrator.
func MayCreate(actor *storage.User, ur UserRequest) error {
	if err := mayManageOrg(actor, ur.Org, "org"); err != nil {
		return err
	}
	if ur.ApplianceAdmin && !actor.ApplianceAdmin {
		e := apierr.Forbidden(apierr.DetailApplianceAdminRequired, "only an appliance administrator makes another one")
		e.Details[0].Field = "applianceAdmin"
		return e
	}
	return nil
}

// mayManageOrg refuses an actor who is no appliance administrator and names
// another organisation than its own, at field.
func mayManageOrg(actor *storage.User, org, field string) error {
	if org == actor.Org || actor.ApplianceAdmin {
		return nil
	}
	e := apierr.Forbidden(apierr.DetailApplianceAdminRequired, "only an appliance administrator manages the users of another organisation")
	e.Details[0].Field = field
	return e
}

// UsersFor returns the users actor asks for with org (the query parameter
// org): its own organisation's when org is "", another's (appliance
// administrator only, else 403) or every one's for "*", by username.
func (s *Service) UsersFor(ctx context.Context, actor *storage.User, org string) ([]*storage.User, error) {
	switch org {
	case "":
		org = actor.Org
	case "*":
		if err := mayManageOrg(actor, "", "query.org"); err != nil {
			return nil, err
		}
		org = ""
	default:
		if err := mayManageOrg(actor, org, "query.org"); err != nil {
			return nil, err
		}
	}
	return s.Users(ctx, org)
}

// Users returns the users of an organisation, or of all when org is "",
// by username.
func (s *Service) Users(ctx context.Context, org string) ([]*storage.User, error) {
	var users []*storage.User
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		users, err = tx.FindUsers(org)
		return err
	})
	return users, err
}

// DeleteUser removes username in the caller's transaction on behalf of
// actor. An appliance administrator may delete a user of any
// organisation, an organisation's admin only one of its own (another's is
// apierr.NotFound, as if it did not exist). It refuses, writing nothing,
// the actor itself (409 CANNOT_DELETE_SELF) and the last appliance
// administrator (409 LAST_APPLIANCE_ADMIN). The user's login tokens end
// with the record.
func (s *Service) DeleteUser(tx *storage.Tx, actor *storage.User, username string) error {
	u, err := tx.FindUser(username)
	if errors.Is(err, storage.ErrNotFound) || err == nil && u.Org != actor.Org && !actor.ApplianceAdmin {
		return apierr.NotFound{Kind: "user", ID: username}
	}
	if err != nil {
		return err
	}
	if u.Username == actor.Username {
		return apierr.Conflict(apierr.DetailCannotDeleteSelf, "username", "a user cannot delete itself")
	}
	if u.ApplianceAdmin {
		all, err := tx.FindUsers("")
		if err != nil {
			return err
		}
		n := 0
		for _, o := range all {
			if o.ApplianceAdmin {
				n++
			}
		}
		if n <= 1 {
			return apierr.Conflict(apierr.DetailLastApplianceAdmin, "username", "the last appliance administrator cannot be deleted")
		}
	}
	return tx.DeleteUser(username)
}

// upgradeApplianceAdmin makes, on a store made before there were
// appliance administrators, the first admin (AdminUsername of DefaultOrg)
// one, so that somebody may still take backups and import layers. A store
// with an appliance administrator, or without that admin, is left alone.
func upgradeApplianceAdmin(tx *storage.Tx) error {
	users, err := tx.FindUsers("")
	if err != nil {
		return err
	}
	for _, u := range users {
		if u.ApplianceAdmin {
			return nil
		}
	}
	u, err := tx.FindUser(AdminUsername)
	if errors.Is(err, storage.ErrNotFound) || err == nil && (u.Org != DefaultOrg || u.Role != RoleAdmin) {
		return nil
	}
	if err != nil {
		return err
	}
	u.ApplianceAdmin = true
	return tx.PutUser(u)
}
