package risk

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/eudr/eudr/geo"
)

// Country risk classes of Article 29 of Regulation (EU) 2023/1115.
const (
	CountryLow      = "low"
	CountryStandard = "standard"
	CountryHigh     = "high"
)

// Scores of the country classes in the country_benchmark factor.
const (
	ScoreCountryLow      = 0
	ScoreCountryStandard = 25
	ScoreCountryHigh     = 100
)

//go:embed data/country_benchmark.json
var defaultBenchmarkJSON []byte

// Benchmark is a country benchmark: the countries of high and of standard
// risk; every other country is of low risk.
type Benchmark struct {
	// Version names the act (or the operator's edition) the lists come from.
	Version string
	// Source says where the lists come from.
	Source string
	// Date is the date of the act, YYYY-MM-DD.
	Date string
	// SHA256 is the hex SHA-256 of the file the benchmark was read from.
	SHA256   string
	High     []string // sorted
	Standard []string // sorted
	classes  map[string]string
}

// benchmarkFile is the shape of a benchmark file.
type benchmarkFile struct {
	Version  string   `json:"version"`
	Source   string   `json:"source"`
	Date     string   `json:"date"`
	Notes    string   `json:"notes"`
	High     []string `json:"high"`
	Standard []string `json:"standard"`
}

// DefaultBenchmark returns the benchmark embedded in the binary
// (Implementing Regulation (EU) 2025/1093).
func DefaultBenchmark() *Benchmark {
	b, err := ParseBenchmark(defaultBenchmarkJSON)
	if err != nil {
		panic("risk: embedded country benchmark: " + err.Error()) // a test parses it
	}
	return b
}

// ParseBenchmark reads a benchmark file: a JSON object with "version",
// "source", "date" (YYYY-MM-DD), "high" and "standard" (arrays of ISO
// 3166-1 alpha-2 codes) and an optional "notes". It returns every problem
// found: an unknown member, a missing or malformed one, a code that is not
// a country, a country listed twice or in both lists.
func ParseBenchmark(data []byte) (*Benchmark, error) {
	var f benchmarkFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("country benchmark: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("country benchmark: data after the JSON object")
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if strings.TrimSpace(f.Version) == "" {
		bad("version is required")
	}
	if strings.TrimSpace(f.Source) == "" {
		bad("source is required")
	}
	if _, err := time.Parse(time.DateOnly, f.Date); err != nil {
		bad("date %q is not a date YYYY-MM-DD", f.Date)
	}
	if f.High == nil {
		bad("high is required (an array, empty if no country is of high risk)")
	}
	if f.Standard == nil {
		bad("standard is required (an array, empty if no country is of standard risk)")
	}
	classes := map[string]string{}
	for _, l := range []struct {
		class string
		codes []string
	}{{CountryHigh, f.High}, {CountryStandard, f.Standard}} {
		for i, c := range l.codes {
			switch prev, seen := classes[c]; {
			case !geo.IsCountryCode(c):
				bad("%s[%d] %q is not an ISO 3166-1 alpha-2 country code (upper case)", l.class, i, c)
			case seen && prev == l.class:
				bad("%s[%d] %s is listed twice", l.class, i, c)
			case seen:
				bad("%s[%d] %s is also listed as %s risk", l.class, i, c, prev)
			default:
				classes[c] = l.class
			}
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("country benchmark: %w", errors.Join(errs...))
	}
	sum := sha256.Sum256(data)
	b := &Benchmark{Version: f.Version, Source: f.Source, Date: f.Date, SHA256: hex.EncodeToString(sum[:]),
		High: slices.Sorted(slices.Values(f.High)), Standard: slices.Sorted(slices.Values(f.Standard)), classes: classes}
	return b, nil
}

// Class returns the risk class of a country: CountryHigh, CountryStandard,
// or CountryLow for any other code.
func (b *Benchmark) Class(country string) string {
	if c, ok := b.classes[country]; ok {
		return c
	}
	return CountryLow
}

// classScore is the country_benchmark score of a class.
func classScore(class string) int {
	switch class {
	case CountryHigh:
		return ScoreCountryHigh
	case CountryStandard:
		return ScoreCountryStandard
	default:
		return ScoreCountryLow
	}
}
