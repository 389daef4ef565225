package account_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

func TestLoginRequest_Validate(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  account.LoginRequest
		want []string // "code field"
	}{
		{"Complete", account.LoginRequest{Username: "admin", Password: "pw"}, nil},
		{"Empty", account.LoginRequest{}, []string{"REQUIRED username", "REQUIRED password"}},
		{"NoPassword", account.LoginRequest{Username: "admin"}, []string{"REQUIRED password"}},
		{"NoUsername", account.LoginRequest{Password: "pw"}, []string{"REQUIRED username"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.Validate()
			if tc.want == nil {
				if err != nil {
					t.Errorf("Validate: got %v, want nil", err)
				}
				return
			}
			e := wantAPIError(t, err, apierr.StatusBadRequest, "")
			var got []string
			for _, d := range e.Details {
				got = append(got, d.Code+" "+d.Field)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("details: got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestService_Login(t *testing.T) {
	b, s := newService(t, account.Options{AdminPassword: adminPassword, TokenTTL: 2 * time.Hour})
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	token, exp, err := s.Login(ctx, account.AdminUsername, adminPassword)
	if err != nil {
		t.Fatal(err)
	}
	if want := start.Add(2 * time.Hour); !exp.Equal(want) {
		t.Errorf("expiry: got %v, want %v (now + TokenTTL)", exp, want)
	}
	var claims jwt.MapClaims
	if _, _, err := jwt.NewParser().ParseUnverified(token, &claims); err != nil {
		t.Fatal(err)
	}
	if claims["iss"] != "eudr" || claims["sub"] != account.AdminUsername || claims["iat"] != float64(start.Unix()) ||
		claims["exp"] != float64(start.Add(2*time.Hour).Unix()) {
		t.Errorf("claims: got %v, want iss eudr, sub admin, iat now, exp now + 2h", claims)
	}
	if u, err := s.VerifyToken(ctx, token); err != nil || u.Username != account.AdminUsername || u.Org != account.DefaultOrg {
		t.Errorf("VerifyToken of a fresh token: got %+v, %v; want the admin", u, err)
	}

	t.Run("BadCredentials", func(t *testing.T) {
		for name, creds := range map[string][2]string{
			"WrongPassword": {account.AdminUsername, "wrong"},
			"UnknownUser":   {"nobody", adminPassword},
			"EmptyPassword": {account.AdminUsername, ""},
		} {
			token, _, err := s.Login(ctx, creds[0], creds[1])
			e := wantAPIError(t, err, apierr.StatusUnauthorized, apierr.DetailInvalidCredentials)
			if e.Code != apierr.CodeUnauthorized || e.Message != apierr.MsgUnauthorized || token != "" ||
				len(e.Details) != 1 || e.Details[0].Issue != "the username or password is wrong" {
				t.Errorf("%s: got %s %q %+v, token %q; want UNAUTHORIZED %q saying the username or password is wrong, and no token",
					name, e.Code, e.Message, e.Details, token, apierr.MsgUnauthorized)
			}
		}
	})

	t.Run("PasswordVersionClaim", func(t *testing.T) {
		// After a change of password the token carries the new version
		// (pwv): that is what lets a later change end it.
		if _, _, err := s.ResetPassword(ctx, account.AdminUsername); err != nil {
			t.Fatal(err)
		}
		b.Update(t, func(tx *storage.Tx) error {
			u, err := tx.FindUser(account.AdminUsername)
			if err != nil {
				return err
			}
			if u.PasswordHash, err = account.HashPassword("known again"); err != nil {
				return err
			}
			return tx.PutUser(u)
		})
		token := login(t, s, account.AdminUsername, "known again")
		var claims jwt.MapClaims
		if _, _, err := jwt.NewParser().ParseUnverified(token, &claims); err != nil {
			t.Fatal(err)
		}
		if claims["pwv"] != float64(2) {
			t.Errorf("pwv after two password changes: got %v, want 2", claims["pwv"])
		}
	})

	t.Run("Expiry", func(t *testing.T) {
		token := login(t, s, account.AdminUsername, "known again")
		for _, tc := range []struct {
			advance time.Duration
			ok      bool
		}{
			{2*time.Hour - time.Minute, true},
			{time.Minute + 4*time.Second, true}, // past expiry, within the 5s leeway
			{2 * time.Second, false},
		} {
			b.Clock.Advance(tc.advance)
			_, err := s.VerifyToken(ctx, token)
			if tc.ok && err != nil {
				t.Errorf("at %v: got %v, want the token accepted", b.Clock.Now().Sub(start), err)
			}
			if !tc.ok {
				wantAPIError(t, err, apierr.StatusUnauthorized, "")
			}
		}
	})
}

func TestService_VerifyToken_Foreign(t *testing.T) {
	tokenKey := []byte("the key of this store, 32 bytes.")
	b, s := newService(t, account.Options{AdminPassword: adminPassword, TokenKey: tokenKey})
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	now := b.Clock.Now()
	claims := jwt.RegisteredClaims{Issuer: "eudr", Subject: "admin",
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}
	sign := func(m jwt.SigningMethod, c jwt.Claims, key any) string {
		t.Helper()
		s, err := jwt.NewWithClaims(m, c).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	otherIssuer, noExp, ghost := claims, claims, claims
	otherIssuer.Issuer = "someone"
	noExp.ExpiresAt = nil
	ghost.Subject = "ghost"
	good := sign(jwt.SigningMethodHS256, claims, tokenKey)

	_, other := newBootstrapped(t) // another store, another key
	fromOtherStore := login(t, other, account.AdminUsername, adminPassword)

	for name, token := range map[string]string{
		"OtherKey":     sign(jwt.SigningMethodHS256, claims, []byte("another key of 32 bytes.........")),
		"AlgNone":      sign(jwt.SigningMethodNone, claims, jwt.UnsafeAllowNoneSignatureType),
		"HS512":        sign(jwt.SigningMethodHS512, claims, tokenKey),
		"OtherIssuer":  sign(jwt.SigningMethodHS256, otherIssuer, tokenKey),
		"NoExpiry":     sign(jwt.SigningMethodHS256, noExp, tokenKey),
		"UnknownUser":  sign(jwt.SigningMethodHS256, ghost, tokenKey),
		"OtherStore":   fromOtherStore,
		"Garbage":      "not.a.jwt",
		"Empty":        "",
		"TamperedSig":  good[:len(good)-2] + "xx",
		"TamperedBody": tamperExpiry(t, good),
	} {
		t.Run(name, func(t *testing.T) {
			u, err := s.VerifyToken(context.Background(), token)
			e := wantAPIError(t, err, apierr.StatusUnauthorized, "")
			if u != nil || e.Message != apierr.MsgUnauthorized {
				t.Errorf("got user %v, message %q; want none and %q", u, e.Message, apierr.MsgUnauthorized)
			}
		})
	}
	// The control: the same claims signed with the store's key pass.
	if u, err := s.VerifyToken(context.Background(), good); err != nil || u.Username != "admin" {
		t.Errorf("token with the store's key: got %v, %v; want the admin", u, err)
	}
}

// tamperExpiry changes the payload of a signed token without re-signing it.
func tamperExpiry(t *testing.T, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	m["exp"] = m["exp"].(float64) + 1e6
	b, _ := json.Marshal(m)
	parts[1] = base64.RawURLEncoding.EncodeToString(b)
	return strings.Join(parts, ".")
}
