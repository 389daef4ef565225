package server

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/metrics"
	"github.com/eudr/eudr/server/risk"
	"github.com/eudr/eudr/server/setting"
)

// Config is every setting of the appliance. config.example.yaml documents each
// key; EUDR_ + the key upper-cased with dots as underscores overrides it.
type Config struct {
	DataDir         string         `mapstructure:"data_dir"`
	AdminPassword   string         `mapstructure:"admin_password"`
	ShutdownTimeout time.Duration  `mapstructure:"shutdown_timeout"`
	Log             LogConfig      `mapstructure:"log"`
	Production      ListenConfig   `mapstructure:"production"`
	Sandbox         ListenConfig   `mapstructure:"sandbox"`
	Auth            AuthConfig     `mapstructure:"auth"`
	RateLimit       RateConfig     `mapstructure:"rate_limit"`
	Idempotency     IdemConfig     `mapstructure:"idempotency"`
	Limits          LimitsConfig   `mapstructure:"limits"`
	TrustedProxies  []string       `mapstructure:"trusted_proxies"`
	Webhooks        WebhookConfig  `mapstructure:"webhooks"`
	Jobs            JobsConfig     `mapstructure:"jobs"`
	Risk            RiskConfig     `mapstructure:"risk"`
	Ledger          LedgerConfig   `mapstructure:"ledger"`
	EUSystem        EUSystemConfig `mapstructure:"eu_system"`
	Reports         ReportsConfig  `mapstructure:"reports"`
	Layers          LayersConfig   `mapstructure:"layers"`
	Metrics         MetricsConfig  `mapstructure:"metrics"`
}

// MetricsConfig sets the Prometheus metrics listener (metrics.Listen).
type MetricsConfig struct {
	Listen string `mapstructure:"listen"` // host:port of GET /metrics; "" turns it off
	PProf  bool   `mapstructure:"pprof"`  // also serve /debug/pprof/ there
}

// LayersConfig sets where raster reference layers may be imported from
// through the API and how much memory reading them may use.
type LayersConfig struct {
	// RasterRoot is the folder under which POST /layers may name a raster
	// layer's tiles ("": rasters in the data dir). `eudr layers import
	// --raster DIR` takes any folder.
	RasterRoot string `mapstructure:"raster_root"`
	// RasterCacheMB bounds the decoded raster blocks kept in memory.
	RasterCacheMB int `mapstructure:"raster_cache_mb"`
}

// rasterRoot is the raster root folder's path.
func (c LayersConfig) rasterRoot(dataDir string) string {
	if c.RasterRoot != "" {
		return c.RasterRoot
	}
	return filepath.Join(dataDir, "rasters")
}

// ReportsConfig sets where archive reports are written and how long they
// are kept.
type ReportsConfig struct {
	// Dir holds the report files ("": reports in the data dir).
	Dir string `mapstructure:"dir"`
	// Retention is how long a READY report's file is kept after it was
	// written; 0 keeps it until deleted by hand.
	Retention time.Duration `mapstructure:"retention"`
}

// dir is the reports directory's path.
func (c ReportsConfig) dir(dataDir string) string {
	if c.Dir != "" {
		return c.Dir
	}
	return filepath.Join(dataDir, "reports")
}

// LedgerConfig sets the verifiable ledger.
type LedgerConfig struct {
	// KeyName names the checkpoint signing key when it is first created
	// (it is part of the key, so later changes have no effect).
	KeyName string `mapstructure:"key_name"`
	// KeyFile holds the signing key, outside the store ("": ledger-signing.key
	// in the data dir).
	KeyFile string `mapstructure:"key_file"`
	// ConsensusTimeout is how long a shipment link may wait to be
	// anchored under a signed checkpoint before its job fails with
	// LEDGER_CONSENSUS_TIMEOUT.
	ConsensusTimeout time.Duration `mapstructure:"consensus_timeout"`
}

// RiskConfig sets the screening verdict thresholds (API.md section 4).
type RiskConfig struct {
	MaxScore            int     `mapstructure:"max_score"`
	OverlapThresholdPct float64 `mapstructure:"overlap_threshold_pct"`
	// LossThresholdPct and LossThresholdHa bound the forest lost after the
	// cutoff that raster layers may find on a plot (geo.Rules).
	LossThresholdPct float64 `mapstructure:"loss_threshold_pct"`
	LossThresholdHa  float64 `mapstructure:"loss_threshold_ha"`
	// CountryBenchmarkFile replaces the embedded country benchmark
	// (Implementing Regulation (EU) 2025/1093) when set; see
	// risk.ParseBenchmark for its shape.
	CountryBenchmarkFile string `mapstructure:"country_benchmark_file"`
}

// benchmark reads the country benchmark batches are assessed with: the
// file of risk.country_benchmark_file, or the embedded one.
func (c RiskConfig) benchmark() (*risk.Benchmark, error) {
	if c.CountryBenchmarkFile == "" {
		return risk.DefaultBenchmark(), nil
	}
	data, err := os.ReadFile(c.CountryBenchmarkFile)
	if err != nil {
		return nil, err
	}
	return risk.ParseBenchmark(data)
}

// rules are the screening rules the config sets.
func (c RiskConfig) rules() geo.Rules {
	r := geo.DefaultRules()
	r.MaxRiskScore, r.OverlapThresholdPct = c.MaxScore, c.OverlapThresholdPct
	r.LossThresholdPct, r.LossThresholdHa = c.LossThresholdPct, c.LossThresholdHa
	return r
}

// WebhookConfig sets how events are delivered.
type WebhookConfig struct {
	RetrySchedule              []time.Duration `mapstructure:"retry_schedule"`
	SandboxRetrySchedule       []time.Duration `mapstructure:"sandbox_retry_schedule"`
	AllowPrivateTargets        bool            `mapstructure:"allow_private_targets"`
	SandboxAllowPrivateTargets bool            `mapstructure:"sandbox_allow_private_targets"`
	CAFile                     string          `mapstructure:"ca_file"`
	Timeout                    time.Duration   `mapstructure:"timeout"`
	// Lease is how long a claim holds a delivery being sent: a delivery
	// claimed by a process that was killed goes out again when it lapses,
	// counted from the claim. It exceeds Timeout by at least
	// webhookLeaseMargin, so a send that is slow but alive is not claimed
	// and sent a second time.
	Lease     time.Duration `mapstructure:"lease"`
	Workers   int           `mapstructure:"workers"`
	PerTarget int           `mapstructure:"per_target"`
}

// webhookLeaseMargin is how much longer than webhooks.timeout a delivery's
// claim must last: room to record the outcome of a send that took the
// whole timeout.
const webhookLeaseMargin = 5 * time.Second

// JobsConfig sets the job runner.
type JobsConfig struct {
	Workers int           `mapstructure:"workers"`
	Lease   time.Duration `mapstructure:"lease"`
}

// LogConfig selects the log level and format.
type LogConfig struct {
	Level  string `mapstructure:"level"`
	Format string `mapstructure:"format"` // auto, json, console
}

// ListenConfig is one environment's listener.
type ListenConfig struct {
	Listen string    `mapstructure:"listen"`
	TLS    TLSConfig `mapstructure:"tls"`
}

// TLSConfig enables HTTPS on a listener when both files are set.
type TLSConfig struct {
	CertFile string `mapstructure:"cert_file"`
	KeyFile  string `mapstructure:"key_file"`
}

// AuthConfig holds login settings.
type AuthConfig struct {
	TokenTTL time.Duration `mapstructure:"token_ttl"`
	// SessionIdle ends a console session unused for that long;
	// SessionMax ends any at that age.
	SessionIdle time.Duration `mapstructure:"session_idle"`
	SessionMax  time.Duration `mapstructure:"session_max"`
}

// RateConfig sets the token buckets per key and per client IP.
type RateConfig struct {
	PerSecond   float64 `mapstructure:"per_second"`
	Burst       int     `mapstructure:"burst"`
	IPPerSecond float64 `mapstructure:"ip_per_second"`
	IPBurst     int     `mapstructure:"ip_burst"`
}

// IdemConfig sets how long Idempotency-Key records live.
type IdemConfig struct {
	TTL           time.Duration `mapstructure:"ttl"`
	SweepInterval time.Duration `mapstructure:"sweep_interval"`
}

// LimitsConfig bounds request sizes.
type LimitsConfig struct {
	MaxBodyBytes int64 `mapstructure:"max_body_bytes"`
	MaxFeatures  int   `mapstructure:"max_features"`
}

// maxFeaturesCeiling is the highest limits.max_features: polygon IDs give
// the feature index six digits.
const maxFeaturesCeiling = 1_000_000

// defaults are the embedded settings: `eudr serve` with no file runs on them.
var defaults = map[string]any{
	"data_dir":                        "./data",
	"admin_password":                  "",
	"shutdown_timeout":                "30s",
	"log.level":                       "info",
	"log.format":                      "auto",
	"production.listen":               "127.0.0.1:8080",
	"production.tls.cert_file":        "",
	"production.tls.key_file":         "",
	"sandbox.listen":                  "127.0.0.1:8081",
	"sandbox.tls.cert_file":           "",
	"sandbox.tls.key_file":            "",
	"auth.token_ttl":                  "1h",
	"auth.session_idle":               "30m",
	"auth.session_max":                "12h",
	"rate_limit.per_second":           100,
	"rate_limit.burst":                100,
	"rate_limit.ip_per_second":        20,
	"rate_limit.ip_burst":             40,
	"idempotency.ttl":                 "24h",
	"idempotency.sweep_interval":      "10m",
	"limits.max_body_bytes":           32 << 20,
	"limits.max_features":             10000,
	"risk.max_score":                  50,
	"risk.overlap_threshold_pct":      0.0,
	"risk.country_benchmark_file":     "",
	"risk.loss_threshold_pct":         10.0,
	"risk.loss_threshold_ha":          0.5,
	"layers.raster_root":              "",
	"layers.raster_cache_mb":          64,
	"ledger.key_name":                 "eudr-appliance",
	"ledger.key_file":                 "",
	"eu_system.endpoint":              "https://eudr.webcloud.ec.europa.eu/tracesnt",
	"eu_system.acceptance_endpoint":   "https://acceptance.eudr.webcloud.ec.europa.eu/tracesnt",
	"eu_system.key_file":              "",
	"eu_system.poll_schedule":         []string{"30m", "1h", "2h", "4h"},
	"eu_system.sandbox_poll_schedule": []string{"1s", "2s", "3s", "5s"},
	"eu_system.sandbox_delay":         "3s",
	"eu_system.timeout":               "2m",
	"ledger.consensus_timeout":        "30s",
	"reports.dir":                     "",
	"reports.retention":               "720h",
	"trusted_proxies":                 []string{},
	"metrics.listen":                  "127.0.0.1:9090",
	"metrics.pprof":                   false,

	"eu_system.allow_private_endpoints":      false,
	"webhooks.retry_schedule":                []string{"30s", "2m", "10m", "1h"},
	"webhooks.sandbox_retry_schedule":        []string{"1s", "2s", "4s", "8s"},
	"webhooks.allow_private_targets":         false,
	"webhooks.sandbox_allow_private_targets": true,
	"webhooks.ca_file":                       "",
	"webhooks.timeout":                       "10s",
	"webhooks.lease":                         "1m",
	"webhooks.workers":                       256,
	"webhooks.per_target":                    8,
	"jobs.workers":                           4,
	"jobs.lease":                             "1m",
}

// DefaultKeys lists every config key, sorted (config.example.yaml must
// document each).
func DefaultKeys() []string {
	keys := make([]string, 0, len(defaults))
	for k := range defaults {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// LoadConfig reads the embedded defaults, then file (if not empty), then the
// EUDR_* variables of environ (os.Environ() form). Unknown keys in the file
// and invalid values fail with every problem listed, one a line, each
// naming its key and variable (setting.Load). EUDR_ variables that are no
// setting are ignored here; UnknownEnv lists them.
func LoadConfig(file string, environ []string) (*Config, error) {
	return setting.Load(defaults, file, environ, (*Config).problems)
}

// EnvName is the environment variable that overrides config key k.
func EnvName(k string) string { return setting.EnvName(k) }

// UnknownEnv lists, sorted, the EUDR_ variables of environ that are no
// setting, each with the one it most likely misspells.
func UnknownEnv(environ []string) []setting.UnknownVar { return setting.Unknown(defaults, environ) }

// LogUnknownEnv warns, in one line, of the EUDR_ variables of environ
// that are no setting.
func LogUnknownEnv(l zerolog.Logger, environ []string) { setting.LogUnknown(l, defaults, environ) }

// Validate returns every problem of the settings at once.
func (c *Config) Validate() error { return errors.Join(c.problems()...) }

// problems are the problems of the settings, one error each.
func (c *Config) problems() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s (%s): %s", key, EnvName(key), fmt.Sprintf(format, args...)))
	}
	if c.DataDir == "" {
		bad("data_dir", "must not be empty")
	}
	if c.ShutdownTimeout <= 0 {
		bad("shutdown_timeout", "must be positive")
	}
	if _, err := parseLevel(c.Log.Level); err != nil {
		bad("log.level", "%v", err)
	}
	switch c.Log.Format {
	case "auto", "json", "console":
	default:
		bad("log.format", "must be auto, json or console, not %q", c.Log.Format)
	}
	for _, l := range []struct {
		name string
		cfg  ListenConfig
	}{{"production", c.Production}, {"sandbox", c.Sandbox}} {
		if l.cfg.Listen == "" {
			bad(l.name+".listen", "must not be empty")
		}
		if (l.cfg.TLS.CertFile == "") != (l.cfg.TLS.KeyFile == "") {
			bad(l.name+".tls", "cert_file and key_file go together")
		}
		for key, f := range map[string]string{"cert_file": l.cfg.TLS.CertFile, "key_file": l.cfg.TLS.KeyFile} {
			if f == "" {
				continue
			}
			if _, err := os.Stat(f); err != nil {
				bad(l.name+".tls."+key, "%v", err)
			}
		}
	}
	if c.Production.Listen != "" && c.Production.Listen == c.Sandbox.Listen && !strings.HasSuffix(c.Production.Listen, ":0") {
		bad("sandbox.listen", "must differ from production.listen")
	}
	if err := metrics.CheckListen(c.Metrics.Listen, c.Production.Listen, c.Sandbox.Listen); err != nil {
		bad("metrics.listen", "%v", err)
	}
	if c.Auth.TokenTTL < time.Minute {
		bad("auth.token_ttl", "must be at least 1m")
	}
	if c.Auth.SessionIdle < time.Minute {
		bad("auth.session_idle", "must be at least 1m")
	}
	if c.Auth.SessionMax < c.Auth.SessionIdle {
		bad("auth.session_max", "must be at least auth.session_idle")
	}
	if c.RateLimit.PerSecond <= 0 || c.RateLimit.Burst < 1 {
		bad("rate_limit.per_second", "per_second must be positive and burst at least 1")
	}
	if c.RateLimit.IPPerSecond <= 0 || c.RateLimit.IPBurst < 1 {
		bad("rate_limit.ip_per_second", "ip_per_second must be positive and ip_burst at least 1")
	}
	if c.Idempotency.TTL < time.Hour {
		bad("idempotency.ttl", "must be at least 1h (API.md promises 24h)")
	}
	if c.Idempotency.SweepInterval <= 0 {
		bad("idempotency.sweep_interval", "must be positive")
	}
	if c.Limits.MaxBodyBytes < 1024 {
		bad("limits.max_body_bytes", "must be at least 1024")
	}
	if c.Limits.MaxFeatures < 1 || c.Limits.MaxFeatures > maxFeaturesCeiling {
		bad("limits.max_features", "must be from 1 to %d", maxFeaturesCeiling)
	}
	if !validKeyName(c.Ledger.KeyName) {
		bad("ledger.key_name", "must be 1-64 printable characters without spaces or '+'")
	}
	for key, e := range map[string]string{"eu_system.endpoint": c.EUSystem.Endpoint, "eu_system.acceptance_endpoint": c.EUSystem.AcceptanceEndpoint} {
		if issue := c.EUSystem.checkConfigEndpoint(e); issue != "" {
			bad(key, "%s", issue)
		}
	}
	for key, sched := range map[string][]time.Duration{"eu_system.poll_schedule": c.EUSystem.PollSchedule,
		"eu_system.sandbox_poll_schedule": c.EUSystem.SandboxPollSchedule} {
		if len(sched) == 0 {
			bad(key, "must list at least one delay")
		}
		for _, d := range sched {
			if d <= 0 {
				bad(key, "delays must be positive, not %s", d)
			}
		}
	}
	if c.EUSystem.SandboxDelay <= 0 || c.EUSystem.SandboxDelay > time.Hour {
		bad("eu_system.sandbox_delay", "must be between 0 and 1h")
	}
	if c.EUSystem.Timeout <= 0 {
		bad("eu_system.timeout", "must be positive")
	}
	if c.Ledger.ConsensusTimeout < time.Second {
		bad("ledger.consensus_timeout", "must be at least 1s")
	}
	if c.Reports.Retention != 0 && c.Reports.Retention < time.Hour {
		bad("reports.retention", "must be 0 (keep files) or at least 1h")
	}
	if c.Risk.MaxScore < 0 || c.Risk.MaxScore > 100 {
		bad("risk.max_score", "must be from 0 to 100")
	}
	if !(c.Risk.OverlapThresholdPct >= 0 && c.Risk.OverlapThresholdPct < 100) {
		bad("risk.overlap_threshold_pct", "must be at least 0 and below 100")
	}
	if !(c.Risk.LossThresholdPct >= 0 && c.Risk.LossThresholdPct < 100) {
		bad("risk.loss_threshold_pct", "must be at least 0 and below 100")
	}
	if !(c.Risk.LossThresholdHa >= 0) || math.IsInf(c.Risk.LossThresholdHa, 1) {
		bad("risk.loss_threshold_ha", "must be a finite area of at least 0")
	}
	if c.Layers.RasterCacheMB < 1 || c.Layers.RasterCacheMB > 1<<16 {
		bad("layers.raster_cache_mb", "must be from 1 to 65536")
	}
	if _, err := c.Risk.benchmark(); err != nil {
		bad("risk.country_benchmark_file", "%v", err)
	}
	for key, sched := range map[string][]time.Duration{"webhooks.retry_schedule": c.Webhooks.RetrySchedule,
		"webhooks.sandbox_retry_schedule": c.Webhooks.SandboxRetrySchedule} {
		if len(sched) != queue.MaxAttempts-1 {
			bad(key, "must list %d delays (five attempts in all), not %d", queue.MaxAttempts-1, len(sched))
		}
		for _, d := range sched {
			if d <= 0 {
				bad(key, "delays must be positive, not %s", d)
			}
		}
	}
	if c.Webhooks.CAFile != "" {
		if _, err := os.Stat(c.Webhooks.CAFile); err != nil {
			bad("webhooks.ca_file", "%v", err)
		}
	}
	if c.Webhooks.Timeout <= 0 || c.Webhooks.Timeout > time.Minute {
		bad("webhooks.timeout", "must be between 0 and 1m (SPEC.md: receivers answer within 10s)")
	}
	if c.Webhooks.Lease < c.Webhooks.Timeout+webhookLeaseMargin {
		bad("webhooks.lease", "must be at least webhooks.timeout + %s (%s), not %s: a send still under way when its claim lapses would be claimed and sent twice",
			webhookLeaseMargin, c.Webhooks.Timeout+webhookLeaseMargin, c.Webhooks.Lease)
	}
	if c.Webhooks.Workers < 1 || c.Webhooks.PerTarget < 1 {
		bad("webhooks.workers", "workers and per_target must be at least 1")
	}
	if c.Jobs.Workers < 1 {
		bad("jobs.workers", "must be at least 1")
	}
	if c.Jobs.Lease < 10*time.Second {
		bad("jobs.lease", "must be at least 10s")
	}
	for _, p := range c.TrustedProxies {
		if _, err := netip.ParsePrefix(p); err != nil {
			bad("trusted_proxies", "%q is not a CIDR prefix", p)
		}
	}
	return errs
}

// keyFile is the signing key file's path.
func (c LedgerConfig) keyFile(dataDir string) string {
	if c.KeyFile != "" {
		return c.KeyFile
	}
	return filepath.Join(dataDir, "ledger-signing.key")
}

// validKeyName reports whether s can name a signed-note key: printable
// ASCII without spaces or '+' (golang.org/x/mod/sumdb/note), kept short.
func validKeyName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '+' {
			return false
		}
	}
	return true
}
