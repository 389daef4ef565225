package account_test

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/eudr/eudr/server/account"
)

func TestHashPassword(t *testing.T) {
	hash, err := account.HashPassword("s3cret pässword")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hash, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("HashPassword: got %q, want an argon2id PHC string with m=19456,t=2,p=1", hash)
	}
	if !account.CheckPassword(hash, "s3cret pässword") {
		t.Error("CheckPassword(hash, same password): got false, want true")
	}
	for _, wrong := range []string{"", "s3cret password", "s3cret pässword ", "S3cret pässword"} {
		if account.CheckPassword(hash, wrong) {
			t.Errorf("CheckPassword(hash, %q): got true, want false", wrong)
		}
	}
	again, _ := account.HashPassword("s3cret pässword")
	if again == hash {
		t.Error("HashPassword twice: got the same string, want a fresh salt each time")
	}
}

func TestCheckPassword(t *testing.T) {
	bc, err := bcrypt.GenerateFromPassword([]byte("legacy password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	argon, _ := account.HashPassword("pw")
	parts := strings.Split(argon, "$")
	for _, tc := range []struct {
		name     string
		hash, pw string
		want     bool
	}{
		{"Bcrypt", string(bc), "legacy password", true},
		{"BcryptWrong", string(bc), "legacy passwort", false},
		{"BcryptMalformed", "$2a$10$tooshort", "legacy password", false},
		{"Argon2id", argon, "pw", true},
		{"Empty", "", "", false},
		{"Plaintext", "pw", "pw", false},
		{"OtherAlgorithm", "$argon2i$" + strings.Join(parts[2:], "$"), "pw", false},
		{"WrongVersion", "$argon2id$v=16$" + strings.Join(parts[3:], "$"), "pw", false},
		{"MissingPart", strings.Join(parts[:5], "$"), "pw", false},
		{"ExtraPart", argon + "$x", "pw", false},
		{"BadParams", strings.Join([]string{"", "argon2id", "v=19", "m=x,t=2,p=1", parts[4], parts[5]}, "$"), "pw", false},
		{"BadSalt", strings.Join([]string{"", "argon2id", "v=19", parts[3], "!!!", parts[5]}, "$"), "pw", false},
		{"BadKey", strings.Join([]string{"", "argon2id", "v=19", parts[3], parts[4], "!!!"}, "$"), "pw", false},
		{"EmptyKey", strings.Join([]string{"", "argon2id", "v=19", parts[3], parts[4], ""}, "$"), "pw", false},
		{"OtherParamsSameKey", strings.Join([]string{"", "argon2id", "v=19", "m=19456,t=3,p=1", parts[4], parts[5]}, "$"), "pw", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := account.CheckPassword(tc.hash, tc.pw); got != tc.want {
				t.Errorf("CheckPassword(%q, %q): got %v, want %v", tc.hash, tc.pw, got, tc.want)
			}
		})
	}
}
