package server

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/rs/zerolog"
	"github.com/spf13/viper"
)

// Settings from the environment, and what LoadConfig makes of values it
// cannot read.

// envKey maps EUDR_RATE_LIMIT_PER_SECOND to rate_limit.per_second by finding
// the known key whose env name matches; "" if none does.
func envKey(name string) string {
	for k := range defaults {
		if EnvName(k) == name {
			return k
		}
	}
	return ""
}

// EnvName is the environment variable that overrides config key k.
func EnvName(k string) string {
	return "EUDR_" + strings.ToUpper(strings.ReplaceAll(k, ".", "_"))
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// notSettings are the EUDR_ variables that are no setting but are set on
// purpose for client-side scripts and tests, often in the shell that runs
// the appliance too; it ignores them without a warning. This is the one
// list of them (docs/configuration.md names them).
var notSettings = map[string]string{
	"EUDR_URL":              "examples/walkthrough.sh: the sandbox listener's URL",
	"EUDR_WAIT":             "examples/walkthrough.sh: how long to wait for a job",
	"EUDR_API_KEY":          "client scripts: the API key they call with",
	"EUDR_SCREENSHOT_DIR":   "client scripts: where screenshots go",
	"EUDR_LOAD_SECONDS":     "load_test.go: how long a load test runs",
	"EUDR_LOAD_BARE_SERVER": "load_test.go: the server process a load test starts",
}

// UnknownVar is an EUDR_ variable that is no setting, and the setting's
// variable it most likely misspells ("" when none is close).
type UnknownVar struct {
	Name       string
	Suggestion string
}

// UnknownEnv lists, sorted, the EUDR_ variables of environ that LoadConfig
// ignores because they name no setting (a typo such as
// EUDR_SHUTDOWN_TIMOUT), except those of notSettings.
func UnknownEnv(environ []string) []UnknownVar {
	var out []UnknownVar
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "EUDR_") || envKey(name) != "" || notSettings[name] != "" {
			continue
		}
		out = append(out, UnknownVar{Name: name, Suggestion: closestEnvName(name)})
	}
	slices.SortFunc(out, func(a, b UnknownVar) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b UnknownVar) bool { return a.Name == b.Name })
}

// LogUnknownEnv warns, in one line, of the EUDR_ variables of environ that
// are no setting, with the setting each most likely meant.
func LogUnknownEnv(l zerolog.Logger, environ []string) {
	unknown := UnknownEnv(environ)
	if len(unknown) == 0 {
		return
	}
	names := make([]string, len(unknown))
	meant := zerolog.Dict()
	for i, u := range unknown {
		names[i] = u.Name
		if u.Suggestion != "" {
			meant = meant.Str(u.Name, u.Suggestion)
		}
	}
	l.Warn().Strs("variables", names).Dict("did_you_mean", meant).
		Msg("EUDR_ variables that are no setting are ignored")
}

// closestEnvName is the variable of the setting nearest to name (edit
// distance, letter case aside), or "" when none is near enough to be what
// was meant.
func closestEnvName(name string) string {
	return closest(strings.ToUpper(name), func(k string) string { return EnvName(k) })
}

// closest is the default key whose form (EnvName, or the key itself) is
// nearest to s, in that form; "" when none is within a few edits.
func closest(s string, form func(key string) string) string {
	best, bestDist := "", max(2, len(s)/6)+1
	for _, k := range DefaultKeys() { // sorted: ties go to the first
		if d := editDistance(s, strings.ToUpper(form(k))); d < bestDist {
			best, bestDist = form(k), d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// decodeProblems are the problems of a failed decode, one error a line:
// "key (VARIABLE): what is wrong", and for an unknown key of the file the
// setting it most likely misspells.
func decodeProblems(err error) []error {
	var out []error
	for _, e := range decodeErrors(err) {
		name, cause := e.Name(), errors.Unwrap(e)
		if keys, ok := strings.CutPrefix(cause.Error(), "has invalid keys: "); ok {
			for _, k := range strings.Split(keys, ", ") {
				if name != "" {
					k = name + "." + k
				}
				msg := "not a setting"
				if s := closest(strings.ToUpper(k), func(key string) string { return key }); s != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", s)
				}
				out = append(out, fmt.Errorf("%s: %s", k, msg))
			}
			continue
		}
		out = append(out, fmt.Errorf("%s (%s): %s", name, EnvName(settingOf(name)), readable(cause)))
	}
	if len(out) == 0 { // not mapstructure's: say it as it is
		out = append(out, fmt.Errorf("config: %w", err))
	}
	return out
}

// readable says what is wrong with a value that could not be read as its
// type in words, rather than in strconv's.
func readable(cause error) string {
	var pe *mapstructure.ParseError
	if !errors.As(cause, &pe) {
		return cause.Error()
	}
	want := map[reflect.Kind]string{reflect.Bool: "true or false", reflect.Float32: "a number", reflect.Float64: "a number"}[pe.Expected.Kind()]
	if pe.Expected.CanInt() || pe.Expected.CanUint() {
		want = "a whole number"
	}
	if want == "" {
		return cause.Error()
	}
	return fmt.Sprintf("%q is not %s", fmt.Sprint(pe.Value), want)
}

// decodeErrors are the per-key errors of a failed decode.
func decodeErrors(err error) []*mapstructure.DecodeError {
	var out []*mapstructure.DecodeError
	switch u := err.(type) {
	case *mapstructure.DecodeError:
		out = append(out, u)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			out = append(out, decodeErrors(e)...)
		}
	case interface{ Unwrap() error }:
		out = decodeErrors(u.Unwrap())
	}
	return out
}

// elementIndex matches the index of a list element in a decoded name
// (webhooks.retry_schedule[1]).
var elementIndex = regexp.MustCompile(`\[\d+\]`)

// settingOf is the setting a decoded name belongs to.
func settingOf(name string) string { return elementIndex.ReplaceAllString(name, "") }

// checkRest validates what could be decoded of a config that failed to
// decode (decodeErr), each value that could not be read taken from the
// defaults instead, so that every bad value is listed at once rather than
// those of the other kind after the first ones are mended. It lists
// nothing when the rest cannot be decoded either.
func checkRest(v *viper.Viper, decodeErr error) []error {
	for _, e := range decodeErrors(decodeErr) {
		if def, ok := defaults[settingOf(e.Name())]; ok {
			v.Set(settingOf(e.Name()), def)
		}
	}
	var cfg Config
	if v.Unmarshal(&cfg, decodeHook) != nil { // unknown keys are listed already
		return nil
	}
	return cfg.problems()
}
