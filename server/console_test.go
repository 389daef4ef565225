package server

import (
	"bytes"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/consoleui"
	"github.com/eudr/eudr/storage"
)

// consoleLinkRE finds the URLs the console's page loads, links to or hands
// its scripts.
var consoleLinkRE = regexp.MustCompile(`(?:src|href|data-api|data-maplibre-worker|data-basemap)="([^"]*)"`)

func TestConsole_Page(t *testing.T) {
	ta := newTestApp(t)
	for _, env := range []storage.Environment{storage.Production, storage.Sandbox} {
		for _, path := range []string{"/console", "/console/"} {
			w, name := getPage(t, ta, env, path)
			csp := w.Header().Get("Content-Security-Policy")
			checkConsolePolicy(t, name, csp)
			if !bytes.Equal(w.Body.Bytes(), operatorConsole.Page(string(env), consoleui.NoSession).Data) {
				t.Errorf("%s: body is not the %s page", name, env)
			}
		}
		// Each listener's page says which environment it shows.
		page := string(operatorConsole.Page(string(env), consoleui.NoSession).Data)
		if !strings.Contains(page, `<body class="env-`+string(env)+`"`) {
			t.Errorf("the %s page does not mark its environment", env)
		}
		if u := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+`).FindString(page); u != "" {
			t.Errorf("the %s page names another origin: %s", env, u)
		}
		if strings.Contains(page, "<script>") || regexp.MustCompile(`\son[a-z]+=`).MatchString(page) {
			t.Errorf("the %s page has an inline script or event handler", env)
		}
	}
}

// checkConsolePolicy holds the console's Content-Security-Policy to "this
// appliance only", with the data: and blob: images and the worker MapLibre
// needs, and no inline code at all.
func checkConsolePolicy(t *testing.T, name, csp string) {
	t.Helper()
	if !strings.HasPrefix(csp, "default-src 'self';") {
		t.Errorf("%s: Content-Security-Policy %q does not start with default-src 'self'", name, csp)
	}
	for _, d := range []string{"script-src 'self';", "style-src 'self';", "connect-src 'self'", "worker-src 'self'",
		"img-src 'self' data: blob:", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, d) {
			t.Errorf("%s: Content-Security-Policy %q lacks %s", name, csp, d)
		}
	}
	for _, directive := range strings.Split(csp, ";") {
		fields := strings.Fields(directive)
		for _, source := range fields[1:] {
			switch source {
			case "'self'", "'none'":
			case "data:", "blob:":
				if fields[0] != "img-src" {
					t.Errorf("%s: %s allowed in %s", name, source, fields[0])
				}
			default:
				t.Errorf("%s: Content-Security-Policy allows %s in %s", name, source, fields[0])
			}
		}
	}
}

func TestConsole_Files(t *testing.T) {
	ta := newTestApp(t)
	wantType := map[string]string{
		".js":      "text/javascript; charset=utf-8",
		".css":     "text/css; charset=utf-8",
		".svg":     "image/svg+xml",
		".geojson": "application/geo+json",
		".txt":     "text/plain; charset=utf-8",
	}
	served := map[string]bool{}
	for _, l := range consoleLinkRE.FindAllStringSubmatch(string(operatorConsole.Page("sandbox", consoleui.NoSession).Data), -1) {
		u := l[1]
		name, ok := strings.CutPrefix(u, "/console/")
		if !ok {
			if u != "/api/v1/enterprise" && u != "/docs" && u != "/console#/overview" {
				t.Errorf("the page links to %s", u)
			}
			continue
		}
		w := ta.serve(storage.Sandbox, newRequest("GET", u, ""))
		if w.Code != http.StatusOK {
			t.Errorf("GET %s: status %d, want 200; body %s", u, w.Code, w.Body)
			continue
		}
		ext := name[strings.LastIndex(name, "."):]
		served[ext] = true
		if ct := w.Header().Get("Content-Type"); ct != wantType[ext] {
			t.Errorf("GET %s: Content-Type %q, want %q", u, ct, wantType[ext])
		}
		wantCache := "public, max-age=31536000, immutable"
		if ext == ".txt" {
			wantCache = "no-cache"
		}
		if cc := w.Header().Get("Cache-Control"); cc != wantCache {
			t.Errorf("GET %s: Cache-Control %q, want %q", u, cc, wantCache)
		}
		if w.Header().Get("X-Content-Type-Options") != "nosniff" || w.Body.Len() == 0 {
			t.Errorf("GET %s: nosniff %q, %d bytes", u, w.Header().Get("X-Content-Type-Options"), w.Body.Len())
		}
	}
	for ext := range wantType {
		if !served[ext] {
			t.Errorf("no %s file linked from the page was served", ext)
		}
	}
	for _, u := range []string{"/console/app.js", "/console/app.000000000000.js", "/console/page.html", "/console/x/y"} {
		wantError(t, ta.do("GET", u, ""), http.StatusNotFound, apierr.CodeNotFound, "")
	}
}

// The page says whether its request carried the listener's session cookie
// (whose session the page then asks for), so that the console keeps
// nothing in the browser's storage, or may have had it held back (a link
// from another site); caches are told it varies by both.
func TestConsole_PageSessionMark(t *testing.T) {
	ta := newTestApp(t)
	for _, env := range []storage.Environment{storage.Production, storage.Sandbox} {
		for _, tc := range []struct {
			cookie    *http.Cookie
			fetchSite string // Sec-Fetch-Site
			want      string
		}{
			{nil, "", `data-session=""`},
			{nil, "same-origin", `data-session=""`},
			{nil, "none", `data-session=""`}, // typed in: a Strict cookie goes with it
			{&http.Cookie{Name: sessionCookie(env), Value: "stale"}, "", `data-session="1"`},
			{&http.Cookie{Name: "unrelated", Value: "x"}, "", `data-session=""`},
			// A link on another site: the browser held a Strict cookie back.
			{nil, "cross-site", `data-session="maybe"`},
		} {
			r := newRequest("GET", "/console", "")
			if tc.cookie != nil {
				r.AddCookie(tc.cookie)
			}
			if tc.fetchSite != "" {
				r.Header.Set("Sec-Fetch-Site", tc.fetchSite)
			}
			w := ta.serve(env, r)
			if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), tc.want) {
				t.Errorf("%s with cookie %v, Sec-Fetch-Site %q: status %d, want a page with %s", env, tc.cookie, tc.fetchSite, w.Code, tc.want)
			}
			if v := w.Header().Get("Vary"); v != "Cookie, Sec-Fetch-Site" {
				t.Errorf("%s: Vary %q, want Cookie, Sec-Fetch-Site", env, v)
			}
		}
	}
	// The other listener's cookie is not this one's session.
	w := ta.withCookie(storage.Sandbox, &http.Cookie{Name: sessionCookie(storage.Production), Value: "x"}, "GET", "/console", "")
	if !strings.Contains(w.Body.String(), `data-session=""`) {
		t.Errorf("the sandbox page took the production cookie for its session")
	}
}
