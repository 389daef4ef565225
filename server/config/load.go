package config

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/metrics"
	"github.com/eudr/eudr/server/setting"
)

// defaults are the embedded settings: `eudr serve` with no file runs on them.
var defaults = map[string]any{
	"data_dir":                           "./data",
	"admin_password":                     "",
	"shutdown_timeout":                   "30s",
	"log.level":                          "info",
	"log.format":                         "auto",
	"production.listen":                  "127.0.0.1:8080",
	"production.tls.cert_file":           "",
	"production.tls.key_file":            "",
	"sandbox.listen":                     "127.0.0.1:8081",
	"sandbox.tls.cert_file":              "",
	"sandbox.tls.key_file":               "",
	"auth.token_ttl":                     "1h",
	"auth.session_idle":                  "30m",
	"auth.session_max":                   "12h",
	"rate_limit.per_second":              100,
	"rate_limit.burst":                   100,
	"rate_limit.ip_per_second":           20,
	"rate_limit.ip_burst":                40,
	"idempotency.ttl":                    "24h",
	"idempotency.sweep_interval":         "10m",
	"limits.max_body_bytes":              32 << 20,
	"limits.max_features":                10000,
	"risk.max_score":                     50,
	"risk.overlap_threshold_pct":         0.0,
	"risk.country_benchmark_file":        "",
	"risk.loss_threshold_pct":            10.0,
	"risk.loss_threshold_ha":             0.5,
	"layers.raster_root":                 "",
	"layers.raster_cache_mb":             64,
	"ledger.key_name":                    "eudr-appliance",
	"ledger.key_file":                    "",
	"eu_system.endpoint":                 "https://eudr.webcloud.ec.europa.eu/tracesnt",
	"eu_system.acceptance_endpoint":      "https://acceptance.eudr.webcloud.ec.europa.eu/tracesnt",
	"eu_system.key_file":                 "",
	"eu_system.ca_file":                  "",
	"eu_system.pinned_sha256":            []string{},
	"eu_system.acceptance_ca_file":       "",
	"eu_system.acceptance_pinned_sha256": []string{},
	"eu_system.poll_schedule":            []string{"30m", "1h", "2h", "4h"},
	"eu_system.sandbox_poll_schedule":    []string{"1s", "2s", "3s", "5s"},
	"eu_system.sandbox_delay":            "3s",
	"eu_system.sandbox_amend_window":     "72h",
	"eu_system.sandbox_amend_extension":  "192h",
	"eu_system.timeout":                  "2m",
	"ledger.consensus_timeout":           "30s",
	"reports.dir":                        "",
	"reports.retention":                  "720h",
	"reports.batch_plot_pages":           25,
	"trusted_proxies":                    []string{},
	"metrics.listen":                     "127.0.0.1:9090",
	"metrics.pprof":                      false,

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

// Load reads the embedded defaults, then file (if not empty), then the
// EUDR_* variables of environ (os.Environ() form). Unknown keys in the file
// and invalid values fail with every problem listed, one a line, each
// naming its key and variable (setting.Load). EUDR_ variables that are no
// setting are ignored here; UnknownEnv lists them.
func Load(file string, environ []string) (*Config, error) {
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
	if _, err := ParseLevel(c.Log.Level); err != nil {
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
		bad("idempotency.ttl", "must be at least 1h (the API promises clients 24h)")
	}
	if c.Idempotency.SweepInterval <= 0 {
		bad("idempotency.sweep_interval", "must be positive")
	}
	if c.Limits.MaxBodyBytes < 1024 {
		bad("limits.max_body_bytes", "must be at least 1024")
	}
	if c.Limits.MaxFeatures < 1 || c.Limits.MaxFeatures > MaxFeaturesCeiling {
		bad("limits.max_features", "must be from 1 to %d", MaxFeaturesCeiling)
	}
	if !ValidKeyName(c.Ledger.KeyName) {
		bad("ledger.key_name", "must be 1-64 printable characters without spaces or '+'")
	}
	for key, e := range map[string]string{"eu_system.endpoint": c.EUSystem.Endpoint, "eu_system.acceptance_endpoint": c.EUSystem.AcceptanceEndpoint} {
		if issue := c.EUSystem.checkConfigEndpoint(e); issue != "" {
			bad(key, "%s", issue)
		}
	}
	if _, key, err := c.EUSystem.Trust(); err != nil {
		bad(key, "%v", err)
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
	// The sandbox may shorten the EU's periods, so that they can be tried
	// out on the wall clock, but not lengthen them: what works there must
	// work in production.
	if w := c.EUSystem.SandboxAmendWindow; w <= 0 || w > euis.AmendWindow {
		bad("eu_system.sandbox_amend_window", "must be more than 0 and at most %s (the EU system's), not %s", euis.AmendWindow, w)
	}
	if e := c.EUSystem.SandboxAmendExtension; e < 0 || e > euis.AmendExtension {
		bad("eu_system.sandbox_amend_extension", "must be from 0 to %s (the EU system's), not %s", euis.AmendExtension, e)
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
	if c.Reports.BatchPlotPages < 0 || c.Reports.BatchPlotPages > 100 {
		bad("reports.batch_plot_pages", "must be from 0 to 100")
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
	if _, err := c.Risk.Benchmark(); err != nil {
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
		bad("webhooks.timeout", "must be between 0 and 1m (the API promises receivers 10s)")
	}
	if c.Webhooks.Lease < c.Webhooks.Timeout+WebhookLeaseMargin {
		bad("webhooks.lease", "must be at least webhooks.timeout + %s (%s), not %s: a send still under way when its claim lapses would be claimed and sent twice",
			WebhookLeaseMargin, c.Webhooks.Timeout+WebhookLeaseMargin, c.Webhooks.Lease)
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

// ParseLevel reads log.level: debug, info, warn or error.
func ParseLevel(s string) (zerolog.Level, error) {
	switch s {
	case "debug":
		return zerolog.DebugLevel, nil
	case "info":
		return zerolog.InfoLevel, nil
	case "warn":
		return zerolog.WarnLevel, nil
	case "error":
		return zerolog.ErrorLevel, nil
	}
	return zerolog.NoLevel, fmt.Errorf("must be debug, info, warn or error, not %q", s)
}
