// Package setting reads settings the way the appliance takes them: the
// embedded defaults, then a YAML file, then EUDR_ environment variables,
// decoded into the caller's struct with every problem listed at once, one
// a line, each naming its key and variable; and it tells which EUDR_
// variables name no setting, with the one each most likely misspells. It
// knows no setting itself: the caller (package server, the only reader of
// the configuration) gives the defaults and the checks.
package setting

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"
)

// Load reads defaults (every key, dotted, with its default value), then
// file (if not empty), then the EUDR_ variables of environ (os.Environ()
// form) into a T, whose fields carry mapstructure tags. Unknown keys in
// the file and bad values fail with every problem listed: values that
// cannot be read as their type and those problems finds in the rest
// (values that can be read but are out of bounds) alike. EUDR_ variables
// that name no key are ignored (Unknown lists them). Durations are written
// with their unit; lists in variables are comma-separated.
func Load[T any](defaults map[string]any, file string, environ []string, problems func(*T) []error) (*T, error) {
	v := viper.New()
	for k, val := range defaults {
		v.SetDefault(k, val)
	}
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return nil, fmt.Errorf("read config %s: %w", file, err)
		}
	}
	// Viper's AutomaticEnv reads the process environment; the environment is
	// passed in instead (tests, and no hidden globals), so bind it by hand.
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "EUDR_") {
			continue
		}
		key := envKey(defaults, name)
		if key == "" {
			continue // not a setting: Unknown tells of it
		}
		if _, isList := defaults[key].([]string); isList {
			v.Set(key, splitList(val))
		} else {
			v.Set(key, val)
		}
	}
	var out T
	if err := v.UnmarshalExact(&out, decodeHook); err != nil {
		return nil, errors.Join(append(decodeProblems(defaults, err), checkRest(v, defaults, err, problems)...)...)
	}
	if errs := problems(&out); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &out, nil
}

// EnvName is the environment variable that overrides key k.
func EnvName(k string) string {
	return "EUDR_" + strings.ToUpper(strings.ReplaceAll(k, ".", "_"))
}

// envKey maps EUDR_RATE_LIMIT_PER_SECOND to rate_limit.per_second by
// finding the key of defaults whose env name matches; "" if none does.
func envKey(defaults map[string]any, name string) string {
	for k := range defaults {
		if EnvName(k) == name {
			return k
		}
	}
	return ""
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

// decodeHook reads durations with their units and lists from strings.
var decodeHook = viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
	durationHook,
	mapstructure.StringToSliceHookFunc(","),
))

// durationHook decodes a duration: a string with its unit ("30s", "1m30s",
// "24h") or a time.Duration (the defaults). A bare number is refused, from
// the file as from the environment: to time.Duration 30 is 30 nanoseconds,
// never what was meant.
func durationHook(_, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeOf(time.Duration(0)) {
		return data, nil
	}
	switch v := data.(type) {
	case time.Duration:
		return v, nil
	case string:
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("%q is not a duration: write it with its unit, such as 30s, 5m or 1h", v)
		}
		return d, nil
	default:
		return nil, fmt.Errorf("%v is not a duration: write it with its unit, such as %vs", data, data)
	}
}

// decodeProblems are the problems of a failed decode, one error a line:
// "key (VARIABLE): what is wrong", and for an unknown key of the file the
// key it most likely misspells.
func decodeProblems(defaults map[string]any, err error) []error {
	var out []error
	for _, e := range decodeErrors(err) {
		name, cause := e.Name(), errors.Unwrap(e)
		if keys, ok := strings.CutPrefix(cause.Error(), "has invalid keys: "); ok {
			for _, k := range strings.Split(keys, ", ") {
				if name != "" {
					k = name + "." + k
				}
				msg := "not a setting"
				if s := closest(strings.ToUpper(k), defaults, func(key string) string { return key }); s != "" {
					msg += fmt.Sprintf(" (did you mean %s?)", s)
				}
				out = append(out, fmt.Errorf("%s: %s", k, msg))
			}
			continue
		}
		out = append(out, fmt.Errorf("%s (%s): %s", name, EnvName(keyOf(name)), readable(cause)))
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

// keyOf is the key a decoded name belongs to.
func keyOf(name string) string { return elementIndex.ReplaceAllString(name, "") }

// checkRest checks what could be decoded of settings that failed to
// decode (decodeErr), each value that could not be read taken from the
// defaults instead, so that every bad value is listed at once rather than
// those of the other kind after the first ones are mended. It lists
// nothing when the rest cannot be decoded either.
func checkRest[T any](v *viper.Viper, defaults map[string]any, decodeErr error, problems func(*T) []error) []error {
	for _, e := range decodeErrors(decodeErr) {
		if def, ok := defaults[keyOf(e.Name())]; ok {
			v.Set(keyOf(e.Name()), def)
		}
	}
	var rest T
	if v.Unmarshal(&rest, decodeHook) != nil { // unknown keys are listed already
		return nil
	}
	return problems(&rest)
}
