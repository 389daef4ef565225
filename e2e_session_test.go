package main_test

// End-to-end test of console sessions: a user made by `eudr admin
// create-user` signs in with a browser's cookie handling (net/http's
// cookie jar), reads, is refused a write as a reader, and signs out.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"
)

// browser is an HTTP client that keeps cookies as a browser does.
type browser struct {
	t      *testing.T
	client *http.Client
}

func newBrowser(t *testing.T) *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, client: &http.Client{Jar: jar}}
}

// do sends a request and returns the status and the decoded JSON body (nil
// when there is none).
func (b *browser) do(method, url, body string, hdr ...string) (int, map[string]any) {
	b.t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		b.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := b.client.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(data) > 0 && data[0] == '{' {
		if err := json.Unmarshal(data, &out); err != nil {
			b.t.Fatalf("%s %s: %v in %s", method, url, err, data)
		}
	}
	return resp.StatusCode, out
}

func firstDetail(body map[string]any) string {
	details, _ := body["details"].([]any)
	if len(details) == 0 {
		return ""
	}
	d, _ := details[0].(map[string]any)
	code, _ := d["code"].(string)
	return code
}

func TestSession_ReaderWithCookieJar(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	p.Stop(t)
	res := runCLI(t, p.DataDir, nil, "admin", "create-user", "--username", "rita", "--role", "reader")
	password := strings.TrimSpace(res.Stdout)
	if res.Code != 0 || password == "" {
		t.Fatalf("create-user: exit %d, stdout %q, stderr %q", res.Code, res.Stdout, res.Stderr)
	}
	p = p.Restart(t)
	session := p.SandboxURL + enterpriseAPI + "/auth/session"

	b := newBrowser(t)
	if code, _ := b.do("GET", session, ""); code != http.StatusUnauthorized {
		t.Errorf("before sign-in: got %d, want 401", code)
	}
	code, sess := b.do("POST", session, `{"username":"rita","password":"`+password+`"}`)
	if code != http.StatusOK || sess["role"] != "reader" || sess["environment"] != "sandbox" || sess["csrfToken"] == "" {
		t.Fatalf("sign in: got %d %v", code, sess)
	}
	csrf, _ := sess["csrfToken"].(string)

	if code, body := b.do("GET", p.SandboxURL+eudrAPI+"/suppliers", ""); code != http.StatusOK {
		t.Errorf("reader reads suppliers: got %d %v", code, body)
	}
	supplier, _ := json.Marshal(supplierBody("s-1", "Coop"))
	code, body := b.do("POST", p.SandboxURL+eudrAPI+"/suppliers", string(supplier), "Idempotency-Key", "k1", "X-CSRF-Token", csrf)
	if code != http.StatusForbidden || firstDetail(body) != "SCOPE_REQUIRED" {
		t.Errorf("reader writes: got %d %v, want 403 SCOPE_REQUIRED", code, body)
	}
	// The cookie is the sandbox listener's: production sees no session.
	if code, _ := b.do("GET", p.ProductionURL+enterpriseAPI+"/auth/session", ""); code != http.StatusUnauthorized {
		t.Errorf("sandbox session on production: got %d, want 401", code)
	}

	if code, body := b.do("DELETE", session, "", "X-CSRF-Token", csrf); code != http.StatusNoContent {
		t.Fatalf("sign out: got %d %v", code, body)
	}
	if code, _ := b.do("GET", p.SandboxURL+eudrAPI+"/suppliers", ""); code != http.StatusUnauthorized {
		t.Errorf("after sign-out: got %d, want 401", code)
	}
}
