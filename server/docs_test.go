package server

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// getPage asks env's listener for the HTML page at path with no
// credential and checks it is served as a page: 200, HTML, revalidated.
// It answers the response and the name of the request, for messages.
func getPage(t *testing.T, ta *testApp, env storage.Environment, path string) (*httptest.ResponseRecorder, string) {
	t.Helper()
	w := ta.serve(env, newRequest("GET", path, ""))
	name := string(env) + " GET " + path
	if w.Code != http.StatusOK {
		t.Fatalf("%s: status %d, want 200 without a key; body %s", name, w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("%s: Content-Type %q, want text/html; charset=utf-8", name, ct)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("%s: Cache-Control %q, want no-cache", name, cc)
	}
	return w, name
}

// docsLinkRE finds the URLs the page loads or links to.
var docsLinkRE = regexp.MustCompile(`(?:src|href|data-openapi-url)="([^"]*)"`)

func TestAPIReference_Page(t *testing.T) {
	ta := newTestApp(t)
	for _, env := range []storage.Environment{storage.Production, storage.Sandbox} {
		for _, path := range []string{"/docs", "/docs/"} {
			w, name := getPage(t, ta, env, path)
			checkDocsPolicy(t, name, w.Header().Get("Content-Security-Policy"))
			if !bytes.Equal(w.Body.Bytes(), docsReference.Page().Data) {
				t.Errorf("%s: body is not the page", name)
			}
		}
	}

	page := string(docsReference.Page().Data)
	if !strings.Contains(page, "<title>eudr API reference</title>") {
		t.Error("the page's title is not \"eudr API reference\"")
	}
	// Nothing of another origin: no absolute URL at all, and every link
	// a path on this appliance.
	if u := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+`).FindString(page); u != "" {
		t.Errorf("the page names another origin: %s", u)
	}
	links := docsLinkRE.FindAllStringSubmatch(page, -1)
	if len(links) < 5 {
		t.Fatalf("the page links to %d URLs, want its scripts, styles, icon and the document", len(links))
	}
	sawDoc := false
	for _, l := range links {
		u := l[1]
		if !strings.HasPrefix(u, "/") || strings.HasPrefix(u, "//") {
			t.Errorf("the page links to %q, not a path on this appliance", u)
		}
		sawDoc = sawDoc || (l[0] == `data-openapi-url="/api/v1/openapi.json"`)
	}
	if !sawDoc {
		t.Error("the page does not point the viewer at /api/v1/openapi.json")
	}
}

// checkDocsPolicy holds a Content-Security-Policy to "this appliance only":
// every fetch directive names 'self', 'none' or data: images, nothing else.
func checkDocsPolicy(t *testing.T, name, csp string) {
	t.Helper()
	if !strings.HasPrefix(csp, "default-src 'self';") {
		t.Errorf("%s: Content-Security-Policy %q does not start with default-src 'self'", name, csp)
	}
	for _, d := range []string{"script-src 'self'", "connect-src 'self'", "img-src 'self' data:", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, d) {
			t.Errorf("%s: Content-Security-Policy %q lacks %s", name, csp, d)
		}
	}
	for _, directive := range strings.Split(csp, ";") {
		fields := strings.Fields(directive)
		for _, source := range fields[1:] {
			switch source {
			case "'self'", "'none'", "'unsafe-inline'":
			case "data:":
				if fields[0] != "img-src" {
					t.Errorf("%s: data: allowed in %s", name, fields[0])
				}
			default:
				t.Errorf("%s: Content-Security-Policy allows %s in %s", name, source, fields[0])
			}
		}
		if slices.Contains(fields[1:], "'unsafe-inline'") && fields[0] != "style-src" {
			t.Errorf("%s: inline code allowed in %s", name, fields[0])
		}
	}
}

func TestAPIReference_Files(t *testing.T) {
	ta := newTestApp(t)
	wantType := map[string]string{
		".js":  "text/javascript; charset=utf-8",
		".css": "text/css; charset=utf-8",
		".svg": "image/svg+xml",
	}
	served := 0
	for _, l := range docsLinkRE.FindAllStringSubmatch(string(docsReference.Page().Data), -1) {
		u := l[1]
		if !strings.HasPrefix(u, "/docs/") {
			continue
		}
		w := ta.serve(storage.Production, newRequest("GET", u, ""))
		if w.Code != http.StatusOK {
			t.Errorf("GET %s: status %d, want 200; body %s", u, w.Code, w.Body)
			continue
		}
		served++
		ext := u[strings.LastIndex(u, "."):]
		ct := w.Header().Get("Content-Type")
		switch ext {
		case ".txt":
			if ct != "text/plain; charset=utf-8" {
				t.Errorf("GET %s: Content-Type %q, want text/plain; charset=utf-8", u, ct)
			}
			if cc := w.Header().Get("Cache-Control"); cc != "no-cache" {
				t.Errorf("GET %s: Cache-Control %q, want no-cache (its name carries no hash)", u, cc)
			}
		default:
			if ct != wantType[ext] {
				t.Errorf("GET %s: Content-Type %q, want %q", u, ct, wantType[ext])
			}
			if cc := w.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
				t.Errorf("GET %s: Cache-Control %q, want a year, immutable", u, cc)
			}
		}
		if w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no X-Content-Type-Options: nosniff", u)
		}
		if w.Body.Len() == 0 {
			t.Errorf("GET %s: empty body", u)
		}
	}
	// Swagger UI's bundle and style sheet, ours, the logo, three licence texts.
	if served < 8 {
		t.Errorf("%d files of the page served, want at least 8", served)
	}

	bundle := ""
	for _, f := range docsReference.Files() {
		if strings.HasPrefix(f.Name, "swagger-ui-bundle.") && strings.HasSuffix(f.Name, ".js") {
			bundle = f.Name
		}
	}
	if bundle == "" {
		t.Fatal("no swagger-ui-bundle.<hash>.js among the files")
	}
	w := ta.serve(storage.Sandbox, newRequest("HEAD", "/docs/"+bundle, ""))
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("HEAD /docs/%s: status %d, Content-Type %q", bundle, w.Code, w.Header().Get("Content-Type"))
	}

	// A name the page does not use, an older hash among them, is a 404
	// envelope like any unknown path.
	for _, u := range []string{"/docs/swagger-ui-bundle.js", "/docs/swagger-ui-bundle.000000000000.js", "/docs/page.html", "/docs/x/y"} {
		wantError(t, ta.do("GET", u, ""), http.StatusNotFound, apierr.CodeNotFound, "")
	}
}
