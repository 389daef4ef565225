package server

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// EUDR_ variables that name no setting are listed, with the setting each
// most likely misspells; settings, other variables and those the
// project's scripts read on purpose are not.
func TestUnknownEnv(t *testing.T) {
	got := UnknownEnv([]string{
		"EUDR_SHUTDOWN_TIMOUT=5s",     // a letter missing
		"EUDR_RATELIMIT_BURST=3",      // an underscore missing
		"EUDR_data_dir=/srv",          // lower case
		"EUDR_FROBNICATE=1",           // nothing like a setting
		"EUDR_SHUTDOWN_TIMOUT=6s",     // twice: listed once
		"EUDR_SHUTDOWN_TIMEOUT=30s",   // a setting
		"EUDR_ADMIN_PASSWORD=secret1", // a setting too
		"EUDR_URL=http://127.0.0.1:8081",
		"EUDR_API_KEY=sk_test_x",
		"EUDR_SCREENSHOT_DIR=/tmp", // read by scripts
		"PATH=/usr/bin",
		"eudr_data_dir=/srv",
		"EUDR_NOEQUALS",
	})
	want := []UnknownVar{
		{"EUDR_FROBNICATE", ""},
		{"EUDR_NOEQUALS", ""},
		{"EUDR_RATELIMIT_BURST", "EUDR_RATE_LIMIT_BURST"},
		{"EUDR_SHUTDOWN_TIMOUT", "EUDR_SHUTDOWN_TIMEOUT"},
		{"EUDR_data_dir", "EUDR_DATA_DIR"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("UnknownEnv:\n got %+v\nwant %+v", got, want)
	}
	if got := UnknownEnv([]string{"EUDR_DATA_DIR=/srv", "HOME=/root"}); len(got) != 0 {
		t.Errorf("UnknownEnv of settings only: got %+v, want none", got)
	}
	// The variables passed over in silence are documented.
	doc, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range notSettings {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("%s is not named in docs/configuration.md", name)
		}
	}
}

// One warning lists them all; the values, which may be secrets, are not
// in it.
func TestLogUnknownEnv(t *testing.T) {
	var logs bytes.Buffer
	LogUnknownEnv(zerolog.New(&logs), []string{"EUDR_ADMIN_PASSWROD=hunter2-secret", "EUDR_SHUTDOWN_TIMOUT=5s", "EUDR_FROBNICATE=1"})
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("got %d lines, want one: %s", len(lines), logs.String())
	}
	var l struct {
		Level      string            `json:"level"`
		Variables  []string          `json:"variables"`
		DidYouMean map[string]string `json:"did_you_mean"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &l); err != nil {
		t.Fatal(err)
	}
	if l.Level != "warn" || !slices.Equal(l.Variables, []string{"EUDR_ADMIN_PASSWROD", "EUDR_FROBNICATE", "EUDR_SHUTDOWN_TIMOUT"}) ||
		len(l.DidYouMean) != 2 || l.DidYouMean["EUDR_ADMIN_PASSWROD"] != "EUDR_ADMIN_PASSWORD" || l.DidYouMean["EUDR_SHUTDOWN_TIMOUT"] != "EUDR_SHUTDOWN_TIMEOUT" {
		t.Errorf("got %s", lines[0])
	}
	if strings.Contains(logs.String(), "hunter2") {
		t.Error("a variable's value is in the log")
	}

	logs.Reset()
	LogUnknownEnv(zerolog.New(&logs), []string{"EUDR_DATA_DIR=/srv", "EUDR_URL=http://x"})
	if logs.Len() != 0 {
		t.Errorf("no unknown variable: got %s, want no line", logs.String())
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"SHUTDOWN_TIMOUT", "SHUTDOWN_TIMEOUT", 1}, {"RATELIMIT", "RATE_LIMIT", 1}, {"same", "same", 0},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// Every bad value is listed at once, whether it could not be read (a word
// for a number, a duration without its unit, an unknown key) or was read
// and is out of bounds, from the file and the environment together. A
// value that could not be read is not reported a second time as out of
// bounds.
func TestLoadConfig_EveryProblemListed(t *testing.T) {
	file := writeConfigFile(t, "rate_limit:\n  burst: many\n  per_secnod: 5\nlimits:\n  max_features: 0\nwebhooks:\n  retry_schedule: [1m, 5]\n")
	_, err := LoadConfig(file, []string{"EUDR_LOG_LEVEL=loud", "EUDR_JOBS_LEASE=5", "EUDR_SHUTDOWN_TIMEOUT=-1s"})
	if err == nil {
		t.Fatal("LoadConfig: got nil error")
	}
	lines := strings.Split(err.Error(), "\n")
	for _, want := range []string{
		`rate_limit.burst (EUDR_RATE_LIMIT_BURST): "many" is not a whole number`,
		`rate_limit.per_secnod: not a setting (did you mean rate_limit.per_second?)`,
		`webhooks.retry_schedule[1] (EUDR_WEBHOOKS_RETRY_SCHEDULE): 5 is not a duration`,
		`jobs.lease (EUDR_JOBS_LEASE): "5" is not a duration`,
		`log.level (EUDR_LOG_LEVEL): must be debug, info, warn or error, not "loud"`,
		`limits.max_features (EUDR_LIMITS_MAX_FEATURES): must be from 1 to`,
		`shutdown_timeout (EUDR_SHUTDOWN_TIMEOUT): must be positive`,
	} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, want) }) {
			t.Errorf("no line %q in:\n%s", want, err)
		}
	}
	if len(lines) != 7 {
		t.Errorf("got %d lines, want 7 (one per problem):\n%s", len(lines), err)
	}
}
