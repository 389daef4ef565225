package config

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"go.yaml.in/yaml/v3"

	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/setting"
)

// writeConfigFile writes a YAML config file in a temp dir.
func writeConfigFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "eudr.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustLoad(t *testing.T, file string, environ []string) *Config {
	t.Helper()
	cfg, err := Load(file, environ)
	if err != nil {
		t.Fatalf("Load(%q, %q): %v", file, environ, err)
	}
	return cfg
}

func TestLoadConfig_Defaults(t *testing.T) {
	// Variables that are not EUDR_ settings are ignored.
	for name, environ := range map[string][]string{
		"NoEnv":        nil,
		"OtherVars":    {"HOME=/root", "DATA_DIR=/elsewhere", "RATE_LIMIT_PER_SECOND=1"},
		"UnknownEUDR_": {"EUDR_NOT_A_SETTING=1", "EUDR_=x", "EUDR_DATA_DIR_X=/elsewhere"},
		"NoEquals":     {"EUDR_DATA_DIR"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := mustLoad(t, "", environ)
			for _, c := range []struct {
				name      string
				got, want any
			}{
				{"data_dir", cfg.DataDir, "./data"},
				{"admin_password", cfg.AdminPassword, ""},
				{"shutdown_timeout", cfg.ShutdownTimeout, 30 * time.Second},
				{"log.level", cfg.Log.Level, "info"},
				{"log.format", cfg.Log.Format, "auto"},
				{"production.listen", cfg.Production.Listen, "127.0.0.1:8080"},
				{"production.tls", cfg.Production.TLS, TLSConfig{}},
				{"sandbox.listen", cfg.Sandbox.Listen, "127.0.0.1:8081"},
				{"sandbox.tls", cfg.Sandbox.TLS, TLSConfig{}},
				{"auth.token_ttl", cfg.Auth.TokenTTL, time.Hour},
				{"rate_limit.per_second", cfg.RateLimit.PerSecond, 100.0},
				{"rate_limit.burst", cfg.RateLimit.Burst, 100},
				{"rate_limit.ip_per_second", cfg.RateLimit.IPPerSecond, 20.0},
				{"rate_limit.ip_burst", cfg.RateLimit.IPBurst, 40},
				{"idempotency.ttl", cfg.Idempotency.TTL, 24 * time.Hour},
				{"idempotency.sweep_interval", cfg.Idempotency.SweepInterval, 10 * time.Minute},
				{"limits.max_body_bytes", cfg.Limits.MaxBodyBytes, int64(32 << 20)},
				{"webhooks.timeout", cfg.Webhooks.Timeout, 10 * time.Second},
				{"eu_system.sandbox_windows", cfg.EUSystem.SandboxWindows(), euis.EUWindows},
				{"webhooks.lease", cfg.Webhooks.Lease, time.Minute},
				{"len(trusted_proxies)", len(cfg.TrustedProxies), 0},
			} {
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
				}
			}
		})
	}
}

func TestLoadConfig_File(t *testing.T) {
	t.Run("OverridesDefaults", func(t *testing.T) {
		file := writeConfigFile(t, `
data_dir: /var/lib/eudr
production:
  listen: 0.0.0.0:9443
rate_limit:
  per_second: 5
idempotency:
  ttl: 48h
trusted_proxies: [10.0.0.0/8, 192.168.0.0/16]
`)
		cfg := mustLoad(t, file, nil)
		if cfg.DataDir != "/var/lib/eudr" {
			t.Errorf("data_dir: got %q, want /var/lib/eudr", cfg.DataDir)
		}
		if cfg.Production.Listen != "0.0.0.0:9443" {
			t.Errorf("production.listen: got %q, want 0.0.0.0:9443", cfg.Production.Listen)
		}
		if cfg.RateLimit.PerSecond != 5 {
			t.Errorf("rate_limit.per_second: got %v, want 5", cfg.RateLimit.PerSecond)
		}
		if cfg.Idempotency.TTL != 48*time.Hour {
			t.Errorf("idempotency.ttl: got %v, want 48h", cfg.Idempotency.TTL)
		}
		if want := []string{"10.0.0.0/8", "192.168.0.0/16"}; !slices.Equal(cfg.TrustedProxies, want) {
			t.Errorf("trusted_proxies: got %q, want %q", cfg.TrustedProxies, want)
		}
		// Keys the file does not name keep their defaults, also beside
		// overridden siblings.
		if cfg.RateLimit.Burst != 100 {
			t.Errorf("rate_limit.burst: got %d, want default 100", cfg.RateLimit.Burst)
		}
		if cfg.Sandbox.Listen != "127.0.0.1:8081" {
			t.Errorf("sandbox.listen: got %q, want default 127.0.0.1:8081", cfg.Sandbox.Listen)
		}
	})

	t.Run("EnvOverridesFile", func(t *testing.T) {
		file := writeConfigFile(t, `
production:
  listen: 0.0.0.0:9443
rate_limit:
  per_second: 5
  burst: 7
trusted_proxies: [172.16.0.0/12]
`)
		cfg := mustLoad(t, file, []string{
			"EUDR_RATE_LIMIT_PER_SECOND=50",
			"EUDR_PRODUCTION_LISTEN=127.0.0.1:7000",
			"EUDR_TRUSTED_PROXIES=10.0.0.0/8, 192.168.0.0/16,,",
			"EUDR_IDEMPOTENCY_TTL=36h",
			"EUDR_LIMITS_MAX_BODY_BYTES=4096",
		})
		if cfg.RateLimit.PerSecond != 50 {
			t.Errorf("rate_limit.per_second: got %v, want 50 (env)", cfg.RateLimit.PerSecond)
		}
		if cfg.RateLimit.Burst != 7 {
			t.Errorf("rate_limit.burst: got %d, want 7 (file)", cfg.RateLimit.Burst)
		}
		if cfg.Production.Listen != "127.0.0.1:7000" {
			t.Errorf("production.listen: got %q, want 127.0.0.1:7000 (env)", cfg.Production.Listen)
		}
		if want := []string{"10.0.0.0/8", "192.168.0.0/16"}; !slices.Equal(cfg.TrustedProxies, want) {
			t.Errorf("trusted_proxies: got %q, want %q (env, comma list)", cfg.TrustedProxies, want)
		}
		if cfg.Idempotency.TTL != 36*time.Hour {
			t.Errorf("idempotency.ttl: got %v, want 36h (env)", cfg.Idempotency.TTL)
		}
		if cfg.Limits.MaxBodyBytes != 4096 {
			t.Errorf("limits.max_body_bytes: got %d, want 4096 (env)", cfg.Limits.MaxBodyBytes)
		}
	})

	t.Run("NestedEnvKeys", func(t *testing.T) {
		dir := t.TempDir()
		cert, key := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
		for _, f := range []string{cert, key} {
			if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		cfg := mustLoad(t, "", []string{"EUDR_SANDBOX_TLS_CERT_FILE=" + cert, "EUDR_SANDBOX_TLS_KEY_FILE=" + key,
			"EUDR_LOG_LEVEL=debug", "EUDR_AUTH_TOKEN_TTL=2h"})
		if cfg.Sandbox.TLS != (TLSConfig{CertFile: cert, KeyFile: key}) {
			t.Errorf("sandbox.tls: got %+v, want cert %s key %s", cfg.Sandbox.TLS, cert, key)
		}
		if cfg.Production.TLS != (TLSConfig{}) {
			t.Errorf("production.tls: got %+v, want empty", cfg.Production.TLS)
		}
		if cfg.Log.Level != "debug" {
			t.Errorf("log.level: got %q, want debug", cfg.Log.Level)
		}
		if cfg.Auth.TokenTTL != 2*time.Hour {
			t.Errorf("auth.token_ttl: got %v, want 2h", cfg.Auth.TokenTTL)
		}
	})

	t.Run("UnknownKeyFails", func(t *testing.T) {
		for name, text := range map[string]string{
			"TopLevel": "data_dir: /tmp/x\nlisten: 127.0.0.1:1\n",
			"Nested":   "rate_limit:\n  per_secnod: 5\n",
		} {
			t.Run(name, func(t *testing.T) {
				_, err := Load(writeConfigFile(t, text), nil)
				if err == nil {
					t.Fatalf("Load(%q): got nil error, want one naming the unknown key", text)
				}
				if want := map[string]string{"TopLevel": "listen", "Nested": "per_secnod"}[name]; !strings.Contains(err.Error(), want) {
					t.Errorf("error: got %q, want it to name %q", err, want)
				}
			})
		}
	})

	t.Run("MissingFileFails", func(t *testing.T) {
		if _, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), nil); err == nil {
			t.Error("Load(missing file): got nil error, want one")
		}
	})

	t.Run("MalformedYAMLFails", func(t *testing.T) {
		if _, err := Load(writeConfigFile(t, "rate_limit: [unclosed\n"), nil); err == nil {
			t.Error("Load(malformed YAML): got nil error, want one")
		}
	})

	t.Run("BadEnvNumberFails", func(t *testing.T) {
		if _, err := Load("", []string{"EUDR_RATE_LIMIT_BURST=many"}); err == nil {
			t.Error("Load(EUDR_RATE_LIMIT_BURST=many): got nil error, want one")
		}
	})
}

func TestConfig_Validate(t *testing.T) {
	dir := t.TempDir()
	cert := filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(cert, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		mutate  func(c *Config)
		wantKey string // "" means valid
	}{
		{"Defaults", func(c *Config) {}, ""},
		{"EmptyDataDir", func(c *Config) { c.DataDir = "" }, "data_dir"},
		{"ZeroShutdownTimeout", func(c *Config) { c.ShutdownTimeout = 0 }, "shutdown_timeout"},
		{"BadLogLevel", func(c *Config) { c.Log.Level = "loud" }, "log.level"},
		{"BadLogFormat", func(c *Config) { c.Log.Format = "xml" }, "log.format"},
		{"EmptyProductionListen", func(c *Config) { c.Production.Listen = "" }, "production.listen"},
		{"EmptySandboxListen", func(c *Config) { c.Sandbox.Listen = "" }, "sandbox.listen"},
		{"SameListen", func(c *Config) { c.Sandbox.Listen = c.Production.Listen }, "sandbox.listen"},
		{"SameListenPortZero", func(c *Config) { c.Production.Listen, c.Sandbox.Listen = "127.0.0.1:0", "127.0.0.1:0" }, ""},
		{"CertWithoutKey", func(c *Config) { c.Production.TLS.CertFile = cert }, "production.tls"},
		{"MissingCertFile", func(c *Config) {
			c.Sandbox.TLS = TLSConfig{CertFile: filepath.Join(dir, "nope.pem"), KeyFile: cert}
		}, "sandbox.tls.cert_file"},
		{"TLSBothFiles", func(c *Config) { c.Sandbox.TLS = TLSConfig{CertFile: cert, KeyFile: cert} }, ""},
		{"ShortTokenTTL", func(c *Config) { c.Auth.TokenTTL = 59 * time.Second }, "auth.token_ttl"},
		{"TokenTTLOneMinute", func(c *Config) { c.Auth.TokenTTL = time.Minute }, ""},
		{"ZeroRate", func(c *Config) { c.RateLimit.PerSecond = 0 }, "rate_limit.per_second"},
		{"ZeroBurst", func(c *Config) { c.RateLimit.Burst = 0 }, "rate_limit.per_second"},
		{"NegativeIPRate", func(c *Config) { c.RateLimit.IPPerSecond = -1 }, "rate_limit.ip_per_second"},
		{"ZeroIPBurst", func(c *Config) { c.RateLimit.IPBurst = 0 }, "rate_limit.ip_per_second"},
		{"ShortIdempotencyTTL", func(c *Config) { c.Idempotency.TTL = 59 * time.Minute }, "idempotency.ttl"},
		{"ZeroSweepInterval", func(c *Config) { c.Idempotency.SweepInterval = 0 }, "idempotency.sweep_interval"},
		{"TinyBodyLimit", func(c *Config) { c.Limits.MaxBodyBytes = 1023 }, "limits.max_body_bytes"},
		{"BodyLimit1024", func(c *Config) { c.Limits.MaxBodyBytes = 1024 }, ""},
		{"BadProxy", func(c *Config) { c.TrustedProxies = []string{"10.0.0.0/8", "10.0.0.1"} }, "trusted_proxies"},
		{"BatchPlotPages100", func(c *Config) { c.Reports.BatchPlotPages = 100 }, ""},
		{"BatchPlotPagesOver100", func(c *Config) { c.Reports.BatchPlotPages = 101 }, "reports.batch_plot_pages"},
		{"NegativeBatchPlotPages", func(c *Config) { c.Reports.BatchPlotPages = -1 }, "reports.batch_plot_pages"},
		// The metrics listener: host:port with a number, or "" for none;
		// never an API listener's address (it has no auth).
		{"MetricsOff", func(c *Config) { c.Metrics.Listen = "" }, ""},
		{"MetricsAnyInterface", func(c *Config) { c.Metrics.Listen = ":9100" }, ""},
		{"MetricsNoPort", func(c *Config) { c.Metrics.Listen = "127.0.0.1" }, "metrics.listen"},
		{"MetricsNamedPort", func(c *Config) { c.Metrics.Listen = "127.0.0.1:http" }, "metrics.listen"},
		{"MetricsPortTooHigh", func(c *Config) { c.Metrics.Listen = "127.0.0.1:65536" }, "metrics.listen"},
		{"MetricsOnAPIListener", func(c *Config) { c.Metrics.Listen = c.Sandbox.Listen }, "metrics.listen"},
		{"MetricsPortZero", func(c *Config) {
			c.Production.Listen, c.Sandbox.Listen, c.Metrics.Listen = "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
		}, ""},
		// A delivery's claim outlasts its send by 5 s, else a slow send
		// would be claimed and sent again while it is still under way.
		{"WebhookLeaseTimeoutPlus5s", func(c *Config) { c.Webhooks.Lease = c.Webhooks.Timeout + 5*time.Second }, ""},
		{"WebhookLeaseTooShort", func(c *Config) { c.Webhooks.Lease = c.Webhooks.Timeout + 5*time.Second - time.Millisecond }, "webhooks.lease"},
		{"WebhookLeaseBelowTimeout", func(c *Config) { c.Webhooks.Lease = 5 * time.Second }, "webhooks.lease"},
		{"WebhookTimeoutOutgrowsLease", func(c *Config) { c.Webhooks.Timeout = time.Minute }, "webhooks.lease"},
		{"WebhookLongTimeoutLongLease", func(c *Config) { c.Webhooks.Timeout, c.Webhooks.Lease = time.Minute, 2*time.Minute }, ""},
		// The sandbox's periods of withdrawal and amendment: shorter than
		// the EU system's, never longer; the extension may be none.
		{"SandboxAmendWindow3s", func(c *Config) { c.EUSystem.SandboxAmendWindow = 3 * time.Second }, ""},
		{"SandboxAmendWindowZero", func(c *Config) { c.EUSystem.SandboxAmendWindow = 0 }, "eu_system.sandbox_amend_window"},
		{"SandboxAmendWindowOverEU", func(c *Config) { c.EUSystem.SandboxAmendWindow = 73 * time.Hour }, "eu_system.sandbox_amend_window"},
		{"SandboxAmendExtensionZero", func(c *Config) { c.EUSystem.SandboxAmendExtension = 0 }, ""},
		{"SandboxAmendExtensionNegative", func(c *Config) { c.EUSystem.SandboxAmendExtension = -time.Second }, "eu_system.sandbox_amend_extension"},
		{"SandboxAmendExtensionOverEU", func(c *Config) { c.EUSystem.SandboxAmendExtension = 193 * time.Hour }, "eu_system.sandbox_amend_extension"},
		// The operator's EU system endpoints: http is allowed (a relay of
		// an air-gapped site), a user name or password is not, and a
		// loopback or link-local address needs allow_private_endpoints.
		{"EUEndpointHTTPRelay", func(c *Config) { c.EUSystem.Endpoint = "http://10.0.0.5:8080/tracesnt" }, ""},
		{"EUEndpointFTP", func(c *Config) { c.EUSystem.Endpoint = "ftp://relay.example/tracesnt" }, "eu_system.endpoint"},
		{"EUEndpointUserinfo", func(c *Config) { c.EUSystem.Endpoint = "https://user:pw@relay.example/tracesnt" }, "eu_system.endpoint"},
		{"EUEndpointLoopback", func(c *Config) { c.EUSystem.AcceptanceEndpoint = "http://127.0.0.1:9000/tracesnt" }, "eu_system.acceptance_endpoint"},
		{"EUEndpointMetadata", func(c *Config) { c.EUSystem.Endpoint = "http://169.254.169.254/latest" }, "eu_system.endpoint"},
		{"EUEndpointLoopbackAllowed", func(c *Config) {
			c.EUSystem.Endpoint, c.EUSystem.AllowPrivateEndpoints = "http://[::1]:9000/tracesnt", true
		}, ""},
		// localhost names (RFC 6761) count as loopback without a DNS
		// lookup; other names are not looked up at start.
		{"EUEndpointLocalhost", func(c *Config) { c.EUSystem.Endpoint = "http://localhost:9000/tracesnt" }, "eu_system.endpoint"},
		{"EUEndpointUnderLocalhost", func(c *Config) { c.EUSystem.AcceptanceEndpoint = "https://relay.LocalHost./tracesnt" }, "eu_system.acceptance_endpoint"},
		{"EUEndpointLocalhostAllowed", func(c *Config) {
			c.EUSystem.Endpoint, c.EUSystem.AllowPrivateEndpoints = "http://localhost:9000/tracesnt", true
		}, ""},
		{"EUEndpointName", func(c *Config) { c.EUSystem.Endpoint = "https://relay.example.invalid/tracesnt" }, ""},
		{"EUEndpointThisNetwork", func(c *Config) { c.EUSystem.Endpoint = "http://0.1.2.3:9000/tracesnt" }, "eu_system.endpoint"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustLoad(t, "", nil)
			tc.mutate(cfg)
			err := cfg.Validate()
			if tc.wantKey == "" {
				if err != nil {
					t.Fatalf("Validate: got %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: got nil, want an error naming %s", tc.wantKey)
			}
			if !strings.Contains(err.Error(), tc.wantKey) || !strings.Contains(err.Error(), EnvName(tc.wantKey)) {
				t.Errorf("Validate: got %q, want it to name %s and its variable", err, tc.wantKey)
			}
		})
	}

	t.Run("EveryProblemAtOnce", func(t *testing.T) {
		_, err := Load("", []string{
			"EUDR_DATA_DIR=",
			"EUDR_LOG_LEVEL=loud",
			"EUDR_LOG_FORMAT=xml",
			"EUDR_RATE_LIMIT_PER_SECOND=0",
			"EUDR_IDEMPOTENCY_TTL=1m",
			"EUDR_AUTH_TOKEN_TTL=1s",
			"EUDR_LIMITS_MAX_BODY_BYTES=10",
			"EUDR_TRUSTED_PROXIES=10.0.0.0/8,not-a-cidr",
			"EUDR_SANDBOX_LISTEN=127.0.0.1:8080",
			"EUDR_METRICS_LISTEN=metrics-host",
		})
		if err == nil {
			t.Fatal("LoadConfig with ten bad values: got nil error")
		}
		for _, key := range []string{"data_dir", "log.level", "log.format", "rate_limit.per_second", "idempotency.ttl",
			"auth.token_ttl", "limits.max_body_bytes", "trusted_proxies", `"not-a-cidr"`, "sandbox.listen",
			"EUDR_RATE_LIMIT_PER_SECOND", "EUDR_METRICS_LISTEN", `"metrics-host"`} {
			if !strings.Contains(err.Error(), key) {
				t.Errorf("error does not mention %s: got %q", key, err)
			}
		}
		if n := strings.Count(err.Error(), "\n") + 1; n != 10 {
			t.Errorf("problems listed: got %d, want 10: %q", n, err)
		}
	})

	t.Run("MetricsFromEnv", func(t *testing.T) {
		cfg := mustLoad(t, "", nil)
		if cfg.Metrics.Listen != "127.0.0.1:9090" || cfg.Metrics.PProf {
			t.Errorf("defaults: got %+v, want 127.0.0.1:9090 without pprof", cfg.Metrics)
		}
		cfg = mustLoad(t, "", []string{"EUDR_METRICS_LISTEN=", "EUDR_METRICS_PPROF=true"})
		if cfg.Metrics.Listen != "" || !cfg.Metrics.PProf {
			t.Errorf("EUDR_METRICS_LISTEN= EUDR_METRICS_PPROF=true: got %+v, want the listener off, pprof on", cfg.Metrics)
		}
	})

	// The shortest delivery lease the default timeout allows, as the
	// end-to-end tests set it, and one below it with the reason.
	t.Run("WebhookLeaseFromEnv", func(t *testing.T) {
		if cfg := mustLoad(t, "", []string{"EUDR_WEBHOOKS_LEASE=15s"}); cfg.Webhooks.Lease != 15*time.Second {
			t.Errorf("EUDR_WEBHOOKS_LEASE=15s: got %s", cfg.Webhooks.Lease)
		}
		_, err := Load("", []string{"EUDR_WEBHOOKS_LEASE=14s"})
		if err == nil || !strings.Contains(err.Error(), "EUDR_WEBHOOKS_LEASE") || !strings.Contains(err.Error(), "at least webhooks.timeout + 5s (15s), not 14s") ||
			!strings.Contains(err.Error(), "sent twice") {
			t.Errorf("EUDR_WEBHOOKS_LEASE=14s: got %v", err)
		}
	})
}

func TestEnvName(t *testing.T) {
	for k, want := range map[string]string{
		"data_dir":              "EUDR_DATA_DIR",
		"rate_limit.per_second": "EUDR_RATE_LIMIT_PER_SECOND",
		"webhooks.ca_file":      "EUDR_WEBHOOKS_CA_FILE",
		"sandbox.tls.cert_file": "EUDR_SANDBOX_TLS_CERT_FILE",
	} {
		if got := EnvName(k); got != want {
			t.Errorf("EnvName(%q): got %q, want %q", k, got, want)
		}
	}
}

// configLeafKeys lists the dotted mapstructure keys of every leaf of Config.
func configLeafKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		key := prefix + f.Tag.Get("mapstructure")
		if f.Type.Kind() == reflect.Struct {
			keys = append(keys, configLeafKeys(f.Type, key+".")...)
			continue
		}
		keys = append(keys, key)
	}
	return keys
}

func TestDefaultKeys(t *testing.T) {
	keys := DefaultKeys()
	if !sort.StringsAreSorted(keys) {
		t.Errorf("DefaultKeys: got %q, want sorted", keys)
	}
	// A Config field without a default cannot be overridden by EUDR_ (envKey
	// knows only the keys of the defaults), so each must have one.
	fields := configLeafKeys(reflect.TypeOf(Config{}), "")
	sort.Strings(fields)
	if !slices.Equal(keys, fields) {
		t.Errorf("DefaultKeys: got %q, want the keys of Config's fields %q", keys, fields)
	}
	// Every key can be set from the environment.
	for _, k := range keys {
		if u := UnknownEnv([]string{EnvName(k) + "=x"}); len(u) != 0 {
			t.Errorf("%s is not taken for %s: %+v", EnvName(k), k, u)
		}
	}
}

// flattenYAML turns nested mappings into dotted keys.
func flattenYAML(prefix string, v any, out map[string]any) {
	m, ok := v.(map[string]any)
	if !ok {
		out[prefix] = v
		return
	}
	for k, sub := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		flattenYAML(key, sub, out)
	}
}

func TestLoadConfig_Example(t *testing.T) {
	const path = "../../config.example.yaml"
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("Loads", func(t *testing.T) {
		mustLoad(t, path, nil)
	})

	t.Run("DocumentsEveryKey", func(t *testing.T) {
		var doc map[string]any
		if err := yaml.Unmarshal(text, &doc); err != nil {
			t.Fatalf("parse %s: %v", path, err)
		}
		flat := map[string]any{}
		flattenYAML("", doc, flat)
		for _, k := range DefaultKeys() {
			if _, ok := flat[k]; !ok {
				t.Errorf("%s: key %s missing", path, k)
			}
		}
		for k := range flat {
			if _, ok := defaults[k]; !ok {
				t.Errorf("%s: key %s is not a setting", path, k)
			}
		}
	})

	t.Run("CommentsEveryKey", func(t *testing.T) {
		// Each leaf key line is preceded by a comment line.
		lines := strings.Split(string(text), "\n")
		for i, line := range lines {
			trimmed := strings.TrimSpace(line)
			if trimmed == "" || strings.HasPrefix(trimmed, "#") || strings.HasSuffix(trimmed, ":") {
				continue // blank, comment, or a section header
			}
			if i == 0 || !strings.HasPrefix(strings.TrimSpace(lines[i-1]), "#") {
				t.Errorf("%s line %d %q: got no comment line above, want one", path, i+1, trimmed)
			}
		}
	})

	t.Run("SetsExactlyTheDefaults", func(t *testing.T) {
		got := mustLoad(t, path, nil)
		want := mustLoad(t, "", nil)
		if len(got.TrustedProxies) == 0 && len(want.TrustedProxies) == 0 {
			got.TrustedProxies, want.TrustedProxies = nil, nil // [] and nil say the same
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Load(%s):\n got %+v\nwant %+v (no file)", path, got, want)
		}
	})
}

// A duration is written with its unit. A bare number, which
// time.Duration would take as nanoseconds, is refused from the file and
// from the environment alike, and every bad value is listed at once.
func TestLoadConfig_DurationsNeedUnits(t *testing.T) {
	file := writeConfigFile(t, "shutdown_timeout: 30\nwebhooks:\n  timeout: 10\n  retry_schedule: [1m, 5]\n")
	_, err := Load(file, nil)
	if err == nil {
		t.Fatal("durations without units were accepted")
	}
	for _, want := range []string{"shutdown_timeout", "webhooks.timeout", "webhooks.retry_schedule", "30 is not a duration", "10 is not a duration", "such as 30s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	for _, env := range [][]string{{"EUDR_SHUTDOWN_TIMEOUT=30"}, {"EUDR_WEBHOOKS_RETRY_SCHEDULE=1m,5"}, {"EUDR_AUTH_TOKEN_TTL=soon"}} {
		if _, err := Load("", env); err == nil || !strings.Contains(err.Error(), "write it with its unit") {
			t.Errorf("%v: got %v, want the bare duration refused", env, err)
		}
	}
	cfg := mustLoad(t, writeConfigFile(t, "shutdown_timeout: 45s\nwebhooks:\n  retry_schedule: [1m, 90s, 10m, 1h]\n"), []string{"EUDR_AUTH_TOKEN_TTL= 2h"})
	if cfg.ShutdownTimeout != 45*time.Second || !slices.Equal(cfg.Webhooks.RetrySchedule, []time.Duration{time.Minute, 90 * time.Second, 10 * time.Minute, time.Hour}) || cfg.Auth.TokenTTL != 2*time.Hour {
		t.Errorf("durations with units: %v %v %v", cfg.ShutdownTimeout, cfg.Webhooks.RetrySchedule, cfg.Auth.TokenTTL)
	}
}

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
	want := []setting.UnknownVar{
		{Name: "EUDR_FROBNICATE", Suggestion: ""},
		{Name: "EUDR_NOEQUALS", Suggestion: ""},
		{Name: "EUDR_RATELIMIT_BURST", Suggestion: "EUDR_RATE_LIMIT_BURST"},
		{Name: "EUDR_SHUTDOWN_TIMOUT", Suggestion: "EUDR_SHUTDOWN_TIMEOUT"},
		{Name: "EUDR_data_dir", Suggestion: "EUDR_DATA_DIR"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("UnknownEnv:\n got %+v\nwant %+v", got, want)
	}
	if got := UnknownEnv([]string{"EUDR_DATA_DIR=/srv", "HOME=/root"}); len(got) != 0 {
		t.Errorf("UnknownEnv of settings only: got %+v, want none", got)
	}
	// The variables passed over in silence are documented.
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range setting.NotSettings() {
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

// Every bad value is listed at once, whether it could not be read (a word
// for a number, a duration without its unit, an unknown key) or was read
// and is out of bounds, from the file and the environment together. A
// value that could not be read is not reported a second time as out of
// bounds.
func TestLoadConfig_EveryProblemListed(t *testing.T) {
	file := writeConfigFile(t, "rate_limit:\n  burst: many\n  per_secnod: 5\nlimits:\n  max_features: 0\nwebhooks:\n  retry_schedule: [1m, 5]\n")
	_, err := Load(file, []string{"EUDR_LOG_LEVEL=loud", "EUDR_JOBS_LEASE=5", "EUDR_SHUTDOWN_TIMEOUT=-1s"})
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

// TestLoadConfig_EUTrust: the certificate settings of each EU system
// environment load into the client's trust, from a file or the
// environment (a list of pins separated by commas), and bad ones are
// refused at start under their own key.
func TestLoadConfig_EUTrust(t *testing.T) {
	srv := httptest.NewTLSServer(nil)
	srv.Close()
	caFile := filepath.Join(t.TempDir(), "eu-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	pin1, pin2 := strings.Repeat("ab", 32), strings.Repeat("CD:", 31)+"CD"
	cfg := mustLoad(t, "", []string{"EUDR_EU_SYSTEM_ACCEPTANCE_CA_FILE=" + caFile, "EUDR_EU_SYSTEM_PINNED_SHA256=" + pin1 + "," + pin2})
	trusts, key, err := cfg.EUSystem.Trust()
	if err != nil {
		t.Fatalf("Trust: %s: %v", key, err)
	}
	if len(trusts) != 2 || trusts[0].Endpoint != cfg.EUSystem.Endpoint || len(trusts[0].Pins) != 2 || trusts[0].Roots != nil ||
		trusts[1].Endpoint != cfg.EUSystem.AcceptanceEndpoint || trusts[1].Roots == nil || len(trusts[1].Pins) != 0 {
		t.Errorf("Trust: %+v, want production pinned twice and acceptance with the CA file", trusts)
	}

	for _, tc := range []struct {
		name    string
		environ []string
		wantKey string
	}{
		{"BadPin", []string{"EUDR_EU_SYSTEM_PINNED_SHA256=" + strings.Repeat("ab", 20)}, "eu_system.pinned_sha256"},
		{"BadAcceptancePin", []string{"EUDR_EU_SYSTEM_ACCEPTANCE_PINNED_SHA256=sha256"}, "eu_system.acceptance_pinned_sha256"},
		{"MissingCAFile", []string{"EUDR_EU_SYSTEM_ACCEPTANCE_CA_FILE=" + caFile + ".absent"}, "eu_system.acceptance_ca_file"},
		{"CAFileAndPin", []string{"EUDR_EU_SYSTEM_CA_FILE=" + caFile, "EUDR_EU_SYSTEM_PINNED_SHA256=" + pin1}, "eu_system.ca_file"},
		{"OneHostTwoSettings", []string{"EUDR_EU_SYSTEM_ACCEPTANCE_ENDPOINT=https://EUDR.webcloud.ec.europa.eu/acceptance",
			"EUDR_EU_SYSTEM_ACCEPTANCE_CA_FILE=" + caFile}, "eu_system.acceptance_ca_file"},
		// The same host, named with its default port and a trailing dot.
		{"OneHostSpeltTwoWays", []string{"EUDR_EU_SYSTEM_ACCEPTANCE_ENDPOINT=https://eudr.webcloud.ec.europa.eu.:443/acceptance",
			"EUDR_EU_SYSTEM_ACCEPTANCE_CA_FILE=" + caFile}, "eu_system.acceptance_ca_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("", tc.environ)
			if err == nil || !strings.Contains(err.Error(), tc.wantKey) {
				t.Errorf("Load: %v, want an error naming %s", err, tc.wantKey)
			}
		})
	}
	// One host with the same settings for both (a relay) is fine.
	if _, err := Load("", []string{"EUDR_EU_SYSTEM_ACCEPTANCE_ENDPOINT=https://eudr.webcloud.ec.europa.eu/acceptance",
		"EUDR_EU_SYSTEM_CA_FILE=" + caFile, "EUDR_EU_SYSTEM_ACCEPTANCE_CA_FILE=" + caFile}); err != nil {
		t.Errorf("one host, one CA file for both: %v", err)
	}
}
