package webasset

import (
	"regexp"
	"testing"
)

func TestHashedName(t *testing.T) {
	a, b := HashedName("app.js", []byte("a")), HashedName("app.js", []byte("b"))
	if a == b {
		t.Errorf("two contents, one name %q", a)
	}
	if !regexp.MustCompile(`^app\.[0-9a-f]{12}\.js$`).MatchString(a) {
		t.Errorf("HashedName = %q, want app.<12 hex>.js", a)
	}
	if a != HashedName("app.js", []byte("a")) {
		t.Error("one content, two names")
	}
}

func TestNew(t *testing.T) {
	f := New("app.0123456789ab.js", ".js", []byte("x"), CacheForever, "default-src 'self'")
	for k, want := range map[string]string{
		"Content-Type": "text/javascript; charset=utf-8", "Content-Length": "1", "Cache-Control": CacheForever,
		"Content-Security-Policy": "default-src 'self'", "X-Content-Type-Options": "nosniff",
	} {
		if f.Header[k] != want {
			t.Errorf("%s = %q, want %q", k, f.Header[k], want)
		}
	}
}
