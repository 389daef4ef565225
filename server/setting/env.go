package setting

import (
	"slices"
	"sort"
	"strings"

	"github.com/rs/zerolog"
)

// The EUDR_ variables that are no setting which the binary reads itself:
// the sandbox and key `eudr webhooks listen` calls, unless its flags say.
const (
	EnvURL    = "EUDR_URL"     // the sandbox listener's URL (--url)
	EnvAPIKey = "EUDR_API_KEY" // a sandbox API key (--api-key)
)

// notSettings are the EUDR_ variables that are no setting but are set on
// purpose, for the client commands of the binary, for scripts and for
// tests, often in the shell that runs the appliance too; they are passed
// over without a warning. This is the one list of them
// (docs/configuration.md names them).
var notSettings = map[string]string{
	EnvURL:                  "eudr webhooks listen, examples/walkthrough.sh: the sandbox listener's URL",
	EnvAPIKey:               "eudr webhooks listen: the sandbox API key it calls with",
	"EUDR_WAIT":             "examples/walkthrough.sh: how long to wait for a job",
	"EUDR_SCREENSHOT_DIR":   "client scripts: where screenshots go",
	"EUDR_LOAD_SECONDS":     "load_test.go: how long a load test runs",
	"EUDR_LOAD_BARE_SERVER": "load_test.go: the server process a load test starts",
}

// NotSettings lists, sorted, the EUDR_ variables Unknown passes over
// although they name no setting: those client-side scripts and tests read.
func NotSettings() []string {
	names := make([]string, 0, len(notSettings))
	for n := range notSettings {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// UnknownVar is an EUDR_ variable that is no setting, and the setting's
// variable it most likely misspells ("" when none is close).
type UnknownVar struct {
	Name       string
	Suggestion string
}

// Unknown lists, sorted, the EUDR_ variables of environ that name no key
// of defaults (a typo such as EUDR_SHUTDOWN_TIMOUT), except those of
// NotSettings.
func Unknown(defaults map[string]any, environ []string) []UnknownVar {
	var out []UnknownVar
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "EUDR_") || envKey(defaults, name) != "" || notSettings[name] != "" {
			continue
		}
		out = append(out, UnknownVar{Name: name, Suggestion: closest(strings.ToUpper(name), defaults, EnvName)})
	}
	slices.SortFunc(out, func(a, b UnknownVar) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(out, func(a, b UnknownVar) bool { return a.Name == b.Name })
}

// LogUnknown warns, in one line, of the EUDR_ variables of environ that
// name no key of defaults, with the setting each most likely meant. Only
// names are logged, never values.
func LogUnknown(l zerolog.Logger, defaults map[string]any, environ []string) {
	unknown := Unknown(defaults, environ)
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

// closest is the key of defaults whose form (EnvName, or the key itself)
// is nearest to s (upper case), in that form; "" when none is within a
// few edits.
func closest(s string, defaults map[string]any, form func(key string) string) string {
	keys := make([]string, 0, len(defaults))
	for k := range defaults {
		keys = append(keys, k)
	}
	sort.Strings(keys) // ties go to the first
	best, bestDist := "", max(2, len(s)/6)+1
	for _, k := range keys {
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
