package main_test

// End-to-end tests of routing: 404 on unknown paths and ids, environment
// isolation, 405 with its Allow header, and X-Trace-Id echoed or made.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

func TestRouting_NotFoundMethodAndTrace(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	pk := p.CreateKey(t, production)

	t.Run("UnknownPath", func(t *testing.T) {
		for _, path := range []string{"/nope", "/api/v1/enterprise/eudr/nope", "/api/v2/enterprise/eudr/health", "/api/v1/enterprise/eudr/health/"} {
			apitest.WantError(t, apitest.Do(t, "GET", p.SandboxURL+path, apitest.WithKey(sk.Key), nil), http.StatusNotFound, "NOT_FOUND")
			apitest.WantError(t, apitest.Do(t, "GET", p.ProductionURL+path, nil, nil), http.StatusNotFound, "NOT_FOUND")
		}
	})
	t.Run("UnknownSupplier", func(t *testing.T) {
		apitest.WantError(t, apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/no-such-vendor", apitest.WithKey(sk.Key), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "DELETE", p.SandboxURL+eudrAPI+"/suppliers/no-such-vendor", apitest.WithKey(sk.Key), nil), http.StatusNotFound, "NOT_FOUND")
	})
	t.Run("UnknownKeyID", func(t *testing.T) {
		jwt := p.Login(t)
		apitest.WantError(t, apitest.Do(t, "DELETE", p.SandboxURL+enterpriseAPI+"/api-keys/key_00000000000000000000000000", apitest.Bearer(jwt), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "POST", p.SandboxURL+enterpriseAPI+"/api-keys/key_00000000000000000000000000/rotate", apitest.Bearer(jwt), nil), http.StatusNotFound, "NOT_FOUND")
	})
	t.Run("EnvironmentIsolation", func(t *testing.T) {
		s := mustCreateSupplier(t, p.SandboxURL, sk.Key, "iso-1", "Sandbox Only Ltd")
		apitest.WantError(t, apitest.Do(t, "GET", p.ProductionURL+eudrAPI+"/suppliers/iso-1", apitest.WithKey(pk.Key), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "DELETE", p.ProductionURL+eudrAPI+"/suppliers/iso-1", apitest.WithKey(pk.Key), nil), http.StatusNotFound, "NOT_FOUND")
		var list []supplier
		apitest.Do(t, "GET", p.ProductionURL+eudrAPI+"/suppliers", apitest.WithKey(pk.Key), nil).WantStatus(t, http.StatusOK).Decode(t, &list)
		if len(list) != 0 {
			t.Errorf("production lists %d suppliers, want none: %+v", len(list), list)
		}
		var got supplier
		apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/iso-1", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK).Decode(t, &got)
		if got.SupplierID != s.SupplierID {
			t.Errorf("sandbox supplierId %q, want %q", got.SupplierID, s.SupplierID)
		}
		// The same erpVendorId in production is a separate mapping.
		live := mustCreateSupplier(t, p.ProductionURL, pk.Key, "iso-1", "Production Ltd")
		if live.SupplierID == s.SupplierID {
			t.Errorf("production and sandbox share supplierId %q", s.SupplierID)
		}
		apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/iso-1", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK).Decode(t, &got)
		if got.Name != "Sandbox Only Ltd" {
			t.Errorf("sandbox name %q after a production upsert, want it unchanged", got.Name)
		}
	})
	t.Run("MethodNotAllowed", func(t *testing.T) {
		cases := []struct {
			method, path string
			allow        []string
			notAllow     string
		}{
			{"PUT", eudrAPI + "/suppliers", []string{"GET", "POST"}, "PUT"},
			{"PATCH", eudrAPI + "/suppliers/v1", []string{"GET", "DELETE"}, "PATCH"},
			{"DELETE", "/livez", []string{"GET"}, "DELETE"},
			{"GET", enterpriseAPI + "/auth/login", []string{"POST"}, "GET"},
		}
		for _, c := range cases {
			r := apitest.Do(t, c.method, p.SandboxURL+c.path, apitest.WithKey(sk.Key), nil)
			apitest.WantError(t, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
			allow := r.Header.Get("Allow")
			for _, m := range c.allow {
				if !strings.Contains(allow, m) {
					t.Errorf("%s: Allow %q lacks %s", r.Request, allow, m)
				}
			}
			if strings.Contains(allow, c.notAllow) {
				t.Errorf("%s: Allow %q lists the refused method", r.Request, allow)
			}
		}
	})
	t.Run("AllowListsOnlyAllowedMethods", func(t *testing.T) {
		r := apitest.Do(t, "PUT", p.SandboxURL+eudrAPI+"/suppliers", apitest.WithKey(sk.Key), nil)
		for _, m := range strings.Split(r.Header.Get("Allow"), ",") {
			m = strings.TrimSpace(m)
			if m == "" || m == "GET" || m == "POST" {
				continue
			}
			if got := apitest.Do(t, m, p.SandboxURL+eudrAPI+"/suppliers", apitest.WithKey(sk.Key), nil); got.Status == http.StatusMethodNotAllowed {
				t.Errorf("a 405's Allow header (%q) lists %s, yet %s on the same path answers 405", r.Header.Get("Allow"), m, m)
			}
		}
	})
	t.Run("TraceID", func(t *testing.T) {
		h := p.SandboxURL + eudrAPI + "/health"
		a := apitest.Do(t, "GET", h, apitest.WithKey(sk.Key), nil)
		b := apitest.Do(t, "GET", h, apitest.WithKey(sk.Key), nil)
		if !apitest.NewTraceIDPattern.MatchString(a.Header.Get("X-Trace-Id")) || a.Header.Get("X-Trace-Id") == b.Header.Get("X-Trace-Id") {
			t.Errorf("generated trace ids %q and %q, want two different 32-hex ids", a.Header.Get("X-Trace-Id"), b.Header.Get("X-Trace-Id"))
		}
		for _, c := range []struct {
			sent string
			echo bool
		}{
			{"abc-123", true},
			{"A.b_C-9", true},
			{strings.Repeat("x", 128), true},
			{strings.Repeat("x", 129), false},
			{strings.Repeat("a", 200), false},
			{"has space", false},
			{"bad/char", false},
			{"ünïcode", false},
		} {
			trace := apitest.Hdr("X-Trace-Id", c.sent)
			for _, r := range []*apitest.Response{
				apitest.Do(t, "GET", h, apitest.Merge(apitest.WithKey(sk.Key), trace), nil),                                                      // 200
				apitest.Do(t, "GET", h, trace, nil),                                                                                              // 401
				apitest.Do(t, "GET", p.SandboxURL+"/nope", trace, nil),                                                                           // 404
				apitest.Do(t, "PUT", p.SandboxURL+"/livez", trace, nil),                                                                          // 405
				apitest.Do(t, "POST", p.SandboxURL+eudrAPI+"/suppliers", apitest.Merge(apitest.WithKey(sk.Key), trace), supplierBody("tr", "T")), // 400
			} {
				got := r.Header.Get("X-Trace-Id")
				if c.echo && got != c.sent {
					t.Errorf("%s with X-Trace-Id %q: got %q, want it echoed", r.Request, c.sent, got)
				}
				if !c.echo && (got == c.sent || !apitest.NewTraceIDPattern.MatchString(got)) {
					t.Errorf("%s with invalid X-Trace-Id %.20q: got %q, want a new 32-hex id", r.Request, c.sent, got)
				}
			}
		}
		// The echoed id is the request's trace_id in the log.
		found := false
		for _, l := range p.Logs() {
			if l["message"] == "request" && l["trace_id"] == "abc-123" && l["status"] == float64(200) && l["key_id"] == sk.KeyID {
				found = true
			}
		}
		if !found {
			t.Errorf("no request log line with trace_id abc-123, status 200 and key_id %s", sk.KeyID)
		}
	})
}
