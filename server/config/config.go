// Package config holds every setting of the appliance: the Config struct,
// its embedded defaults, loading from a YAML file and EUDR_* variables, and
// the checks that refuse a bad value with every problem listed. Only the
// server package reads a Config; it hands each package the plain values it
// needs in that package's Options.
package config

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/queue/netguard"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/risk"
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

// RasterRootPath is the raster root folder's path.
func (c LayersConfig) RasterRootPath(dataDir string) string {
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
	// BatchPlotPages is the most plots a batch's PDF report gives a page
	// each (with its map); a larger batch lists its plots in a table.
	BatchPlotPages int `mapstructure:"batch_plot_pages"`
}

// Path is the reports directory's path.
func (c ReportsConfig) Path(dataDir string) string {
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

// RiskConfig sets the screening verdict thresholds (docs/screening.md).
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

// Benchmark reads the country benchmark batches are assessed with: the
// file of risk.country_benchmark_file, or the embedded one.
func (c RiskConfig) Benchmark() (*risk.Benchmark, error) {
	if c.CountryBenchmarkFile == "" {
		return risk.DefaultBenchmark(), nil
	}
	data, err := os.ReadFile(c.CountryBenchmarkFile)
	if err != nil {
		return nil, err
	}
	return risk.ParseBenchmark(data)
}

// Rules are the screening rules the config sets.
func (c RiskConfig) Rules() geo.Rules {
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
	// WebhookLeaseMargin, so a send that is slow but alive is not claimed
	// and sent a second time.
	Lease     time.Duration `mapstructure:"lease"`
	Workers   int           `mapstructure:"workers"`
	PerTarget int           `mapstructure:"per_target"`
}

// WebhookLeaseMargin is how much longer than webhooks.timeout a delivery's
// claim must last: room to record the outcome of a send that took the
// whole timeout.
const WebhookLeaseMargin = 5 * time.Second

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

// MaxFeaturesCeiling is the highest limits.max_features: polygon IDs give
// the feature index six digits.
const MaxFeaturesCeiling = 1_000_000

// KeyPath is the signing key file's path.
func (c LedgerConfig) KeyPath(dataDir string) string {
	if c.KeyFile != "" {
		return c.KeyFile
	}
	return filepath.Join(dataDir, "ledger-signing.key")
}

// ValidKeyName reports whether s can name a signed-note key: printable
// ASCII without spaces or '+' (golang.org/x/mod/sumdb/note), kept short.
func ValidKeyName(s string) bool {
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

// EUSystemConfig sets how statements are filed with the EU information
// system (TRACES NT).
type EUSystemConfig struct {
	// Endpoint is the EU system's base URL (production, or a relay of an
	// air-gapped site); AcceptanceEndpoint its acceptance (training)
	// environment's. Credentials choose one ("production", "acceptance")
	// or name a URL of their own.
	Endpoint           string `mapstructure:"endpoint"`
	AcceptanceEndpoint string `mapstructure:"acceptance_endpoint"`
	// KeyFile holds the key that seals stored credentials, outside the
	// store ("": eu-credentials.key in the data dir).
	KeyFile string `mapstructure:"key_file"`
	// PollSchedule is the delays between status polls of a filed statement
	// in production (the last one repeats); SandboxPollSchedule the
	// sandbox's.
	PollSchedule        []time.Duration `mapstructure:"poll_schedule"`
	SandboxPollSchedule []time.Duration `mapstructure:"sandbox_poll_schedule"`
	// SandboxDelay is how long the sandbox's simulated EU system takes to
	// validate or reject a statement.
	SandboxDelay time.Duration `mapstructure:"sandbox_delay"`
	// SandboxAmendWindow is how long after submission a statement can be
	// withdrawn or amended in the sandbox, SandboxAmendExtension how much
	// longer it can be amended on a justified request: the EU system's 72
	// hours and 8 days by default, shorter to try them out (SandboxWindows).
	// Production always keeps the EU system's.
	SandboxAmendWindow    time.Duration `mapstructure:"sandbox_amend_window"`
	SandboxAmendExtension time.Duration `mapstructure:"sandbox_amend_extension"`
	// Timeout bounds one call to the EU system.
	Timeout time.Duration `mapstructure:"timeout"`
	// AllowPrivateEndpoints lets calls reach loopback, link-local,
	// multicast and unspecified addresses: a relay on this machine. Private
	// networks are allowed either way. See dds.Endpoints.
	AllowPrivateEndpoints bool `mapstructure:"allow_private_endpoints"`
	// CAFile and PinnedSHA256 say how the certificate of Endpoint's host
	// is checked, when the system roots will not do: the CAs its chain
	// must lead to, or digests of the certificate (or of its key) it must
	// be; AcceptanceCAFile and AcceptancePinnedSHA256 the same for
	// AcceptanceEndpoint's host. See euis.Trust. Nothing turns the check
	// off.
	CAFile                 string   `mapstructure:"ca_file"`
	PinnedSHA256           []string `mapstructure:"pinned_sha256"`
	AcceptanceCAFile       string   `mapstructure:"acceptance_ca_file"`
	AcceptancePinnedSHA256 []string `mapstructure:"acceptance_pinned_sha256"`
}

// SandboxWindows are the sandbox's periods of withdrawal and amendment,
// for its simulated EU system and the appliance's own checks.
func (c EUSystemConfig) SandboxWindows() euis.Windows {
	return euis.Windows{Amend: c.SandboxAmendWindow, Extension: c.SandboxAmendExtension}
}

// Trust loads how the EU system client checks the certificates of the
// production and acceptance endpoints' hosts (euis.HTTPOptions.Trust), or
// says what is wrong and under which key. Two endpoints on one host and
// port (a relay serving both) must not be given different settings: the
// certificate is the host's.
func (c EUSystemConfig) Trust() (trusts []euis.Trust, key string, err error) {
	for _, env := range []struct {
		prefix, endpoint, caFile string
		pins                     []string
	}{
		{"eu_system.", c.Endpoint, c.CAFile, c.PinnedSHA256},
		{"eu_system.acceptance_", c.AcceptanceEndpoint, c.AcceptanceCAFile, c.AcceptancePinnedSHA256},
	} {
		t, err := euis.LoadTrust(env.endpoint, env.caFile, env.pins)
		if err != nil {
			if env.caFile == "" {
				return nil, env.prefix + "pinned_sha256", err
			}
			return nil, env.prefix + "ca_file", err
		}
		trusts = append(trusts, t)
	}
	same := c.CAFile == c.AcceptanceCAFile && slices.Equal(c.PinnedSHA256, c.AcceptancePinnedSHA256)
	if euis.SameHost(c.Endpoint, c.AcceptanceEndpoint) && !same {
		return nil, "eu_system.acceptance_ca_file", errors.New("the acceptance endpoint is on the production endpoint's host, whose certificate is one: give it the same acceptance_ca_file and acceptance_pinned_sha256 as ca_file and pinned_sha256")
	}
	return trusts, "", nil
}

func (c EUSystemConfig) Endpoints() dds.Endpoints {
	return dds.Endpoints{Production: c.Endpoint, Acceptance: c.AcceptanceEndpoint, AllowPrivate: c.AllowPrivateEndpoints}
}

// checkConfigEndpoint is the problem of eu_system.endpoint or
// acceptance_endpoint, or "": the endpoint rules of dds.Endpoints, with
// http allowed. At start a localhost name (RFC 6761: always loopback)
// counts as a loopback address; no other name is looked up, so that a
// start does not wait on DNS: one that resolves to a refused address fails
// each submission when the client connects.
func (c EUSystemConfig) checkConfigEndpoint(endpoint string) string {
	d := c.Endpoints().Problem("", endpoint, "https", "http")
	if u, err := url.Parse(endpoint); d == nil && err == nil && netguard.LocalhostName(u.Hostname()) && !c.AllowPrivateEndpoints {
		d = &apierr.Detail{Code: apierr.DetailTargetNotAllowed}
	}
	switch {
	case d == nil:
		return ""
	case d.Code == apierr.DetailTargetNotAllowed:
		return "is a loopback, link-local, multicast or unspecified address, or a localhost name: set eu_system.allow_private_endpoints to reach a relay there"
	}
	return "must be an http(s) URL without user name or password"
}

func (c EUSystemConfig) KeyPath(dataDir string) string {
	if c.KeyFile != "" {
		return c.KeyFile
	}
	return filepath.Join(dataDir, "eu-credentials.key")
}
