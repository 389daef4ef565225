package apitest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The API's path prefixes.
const (
	// EUDRAPI prefixes the EUDR endpoints (health, suppliers, polygons, ...).
	EUDRAPI = "/api/v1/enterprise/eudr"
	// EnterpriseAPI prefixes login, API key management and admin endpoints.
	EnterpriseAPI = "/api/v1/enterprise"
)

// httpClient does not follow redirects: the API never sends one, and a
// redirect must show up as a failure.
var httpClient = &http.Client{
	Timeout:       15 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Response is one HTTP answer, read in full.
type Response struct {
	Request string // "METHOD URL", for messages
	Status  int
	Header  http.Header
	Body    []byte
}

// Hdr builds a header map from name, value pairs.
func Hdr(kv ...string) map[string]string {
	if len(kv)%2 != 0 {
		panic("apitest.Hdr: odd number of arguments")
	}
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// WithKey is the canonical API key header.
func WithKey(key string) map[string]string { return Hdr("X-API-Key", key) }

// Bearer is an Authorization: Bearer header.
func Bearer(token string) map[string]string { return Hdr("Authorization", "Bearer "+token) }

// Merge combines header maps; later ones win.
func Merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// Do sends one request and reads the answer. body is nil (none), a string or
// []byte (sent as is, with Content-Length), an io.Reader (sent chunked), or
// anything else (sent as JSON). A body gets Content-Type application/json
// unless headers name one; a header with value "" is not sent.
//
// It checks what every response must carry (see CheckCommon) and fails t on
// a transport error.
func Do(t testing.TB, method, url string, headers map[string]string, body any) *Response {
	t.Helper()
	r, err := TryDo(t, method, url, headers, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TryDo is Do returning a transport error instead of failing t, so it can
// run in goroutines other than the test's (it reports only with t.Errorf).
func TryDo(t testing.TB, method, url string, headers map[string]string, body any) (*Response, error) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = struct{ io.Reader }{b} // hide the type: no Content-Length, chunked
	default:
		js, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("encode request body: %v", err)
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", method, url, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read body: %v", method, url, err)
	}
	r := &Response{Request: method + " " + url, Status: resp.StatusCode, Header: resp.Header, Body: data}
	r.CheckCommon(t, req)
	return r, nil
}

// Login posts username and password to baseURL's login endpoint, fails t
// unless the answer is 200 with a token, and returns the token.
func Login(t testing.TB, baseURL, username, password string) string {
	t.Helper()
	r := Do(t, "POST", baseURL+EnterpriseAPI+"/auth/login", nil, map[string]string{"username": username, "password": password})
	r.WantStatus(t, http.StatusOK)
	var out struct {
		Token     string `json:"token"`
		ExpiresAt string `json:"expiresAt"`
	}
	r.Decode(t, &out)
	if out.Token == "" {
		t.Fatalf("login: no token in %s", r.Body)
	}
	return out.Token
}

// APIKey is the answer to POST /api-keys and /rotate.
type APIKey struct {
	KeyID       string   `json:"keyId"`
	Name        string   `json:"name"`
	Environment string   `json:"environment"`
	Scopes      []string `json:"scopes"`
	Key         string   `json:"key"`
	CreatedAt   string   `json:"createdAt"`
}

// CreateKey creates an API key of env ("sandbox" or "production") through
// baseURL's API with the login token jwt; no scopes means the default (read
// and write).
func CreateKey(t testing.TB, baseURL, jwt, env string, scopes ...string) APIKey {
	t.Helper()
	body := map[string]any{"name": "e2e " + env, "environment": env}
	if len(scopes) > 0 {
		body["scopes"] = scopes
	}
	r := Do(t, "POST", baseURL+EnterpriseAPI+"/api-keys", Merge(Bearer(jwt), Hdr("Idempotency-Key", NewIdemKey())), body)
	r.WantStatus(t, http.StatusOK)
	var k APIKey
	r.Decode(t, &k)
	if k.Key == "" || k.KeyID == "" {
		t.Fatalf("create key: no key or keyId in %s", r.Body)
	}
	return k
}

// NewIdemKey is a fresh Idempotency-Key.
func NewIdemKey() string { return "idem-" + RandHex(12) }

// RandHex is n random bytes in hex.
func RandHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// RandBase62 is n random base62 characters (the body of a key value).
func RandBase62(n int) string {
	const chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return string(b)
}
