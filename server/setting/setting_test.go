package setting_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/setting"
)

type settings struct {
	Name    string        `mapstructure:"name"`
	Workers int           `mapstructure:"workers"`
	Timeout time.Duration `mapstructure:"timeout"`
	Hosts   []string      `mapstructure:"hosts"`
	Limits  struct {
		Burst int `mapstructure:"burst"`
	} `mapstructure:"limits"`
}

var defaults = map[string]any{"name": "app", "workers": 4, "timeout": "10s", "hosts": []string{"a"}, "limits.burst": 5}

// problems are the bounds of settings.
func problems(s *settings) []error {
	var errs []error
	if s.Workers < 1 {
		errs = append(errs, errors.New("workers (EUDR_WORKERS): must be at least 1"))
	}
	if s.Name == "" {
		errs = append(errs, errors.New("name (EUDR_NAME): must not be empty"))
	}
	return errs
}

func TestLoad(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(file, []byte("workers: 2\nlimits:\n  burst: 9\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := setting.Load(defaults, file, []string{"EUDR_TIMEOUT=1m", "EUDR_HOSTS=b, c", "EUDR_LIMITS_BURST=7", "OTHER=1"}, problems)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "app" || s.Workers != 2 || s.Timeout != time.Minute || !slices.Equal(s.Hosts, []string{"b", "c"}) || s.Limits.Burst != 7 {
		t.Errorf("got %+v: want the defaults, then the file, then the variables", s)
	}
}

// Every problem is listed at once: values that cannot be read and values
// out of bounds, from the file and the environment, one a line; a value
// that cannot be read is not also reported as out of bounds.
func TestLoad_EveryProblem(t *testing.T) {
	file := filepath.Join(t.TempDir(), "s.yaml")
	if err := os.WriteFile(file, []byte("workers: many\ntimeout: 30\nlimits:\n  burts: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := setting.Load(defaults, file, []string{"EUDR_NAME="}, problems)
	if err == nil {
		t.Fatal("got no error")
	}
	got := strings.Split(err.Error(), "\n")
	want := []string{
		`limits.burts: not a setting (did you mean limits.burst?)`,
		`name (EUDR_NAME): must not be empty`,
		`timeout (EUDR_TIMEOUT): 30 is not a duration: write it with its unit, such as 30s`,
		`workers (EUDR_WORKERS): "many" is not a whole number`,
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestUnknown(t *testing.T) {
	got := setting.Unknown(defaults, []string{"EUDR_WORKRES=3", "EUDR_NAME=x", "EUDR_ZZZZZZZZZZ=1", "EUDR_URL=http://x", "HOME=/"})
	want := []setting.UnknownVar{{Name: "EUDR_WORKRES", Suggestion: "EUDR_WORKERS"}, {Name: "EUDR_ZZZZZZZZZZ"}}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
