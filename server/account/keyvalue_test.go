package account_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/storage"
)

func TestNewKeyValue(t *testing.T) {
	for _, tc := range []struct {
		env     storage.Environment
		pattern *regexp.Regexp
	}{
		{storage.Production, regexp.MustCompile(`^sk_live_[0-9A-Za-z]{32}$`)},
		{storage.Sandbox, regexp.MustCompile(`^sk_test_[0-9A-Za-z]{32}$`)},
	} {
		t.Run(string(tc.env), func(t *testing.T) {
			const n = 2000
			seen := map[string]bool{}
			chars := map[rune]int{}
			for range n {
				v := account.NewKeyValue(tc.env)
				if !tc.pattern.MatchString(v) {
					t.Fatalf("NewKeyValue(%s): got %q, want %s", tc.env, v, tc.pattern)
				}
				if !account.WellFormedKey(v) {
					t.Fatalf("WellFormedKey(NewKeyValue(%s) = %q): got false", tc.env, v)
				}
				if seen[v] {
					t.Fatalf("NewKeyValue(%s): got %q twice in %d draws", tc.env, v, n)
				}
				seen[v] = true
				for _, c := range v[8:] {
					chars[c]++
				}
			}
			// 64,000 characters drawn uniformly from 62: each about 1032
			// times. A biased or shortened alphabet shows up here.
			if len(chars) != 62 {
				t.Errorf("distinct characters in %d keys: got %d, want all 62", n, len(chars))
			}
			for c, k := range chars {
				if k < 800 || k > 1300 {
					t.Errorf("character %q: drawn %d times in %d, want about 1032", c, k, n*32)
				}
			}
		})
	}
}

func TestWellFormedKey(t *testing.T) {
	body := "0123456789ABCDEFGHIJKLMNOPQRSTUV" // 32 base62
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"sk_test_" + body, true},
		{"sk_live_" + body, true},
		{"sk_test_" + strings.Repeat("z", 32), true},
		{"", false},
		{"sk_test_", false},
		{"sk_test_" + body[:31], false},       // truncated
		{"sk_test_" + body + "W", false},      // too long
		{"sk_prod_" + body, false},            // unknown prefix
		{"SK_TEST_" + body, false},            // prefix is case-sensitive
		{"sk_test" + body + "x", false},       // no underscore
		{"sk_test_" + body[:31] + "-", false}, // not base62
		{"sk_test_" + body[:31] + "_", false},
		{"sk_test_" + body[:31] + "é", false},
		{"sk_test_" + body[:31] + " ", false},
		{" sk_test_" + body, false},
		{body, false},
	} {
		if got := account.WellFormedKey(tc.in); got != tc.want {
			t.Errorf("WellFormedKey(%q): got %v, want %v", tc.in, got, tc.want)
		}
	}
}
