// Package consoleui holds the files of the operator console served at
// /console: the page, our ES modules and style sheet, and what they use from
// outside, vendored by vendor.sh at the versions and checksums recorded in
// each directory's VERSION: MapLibre GL JS (maplibre/), Preact with htm
// (preact/) and the Natural Earth country borders of the base map
// (basemap/).
//
// Everything is embedded, so the console works on an appliance without
// network access: no CDN, no web font, no tile server. This package names
// each file and the headers it is served with; the server package serves
// them. Scripts, style sheets and data are published under names that carry
// a hash of their content (app.1a2b3c4d5e6f.js), so browsers may keep them
// for a year and still see new ones after an upgrade. Our modules import
// each other by their plain names ("./api.js"); New rewrites those imports
// to the hashed names, since an import map would be an inline script.
package consoleui

import (
	"bytes"
	"embed"
	"fmt"
	"html"
	"path"
	"strings"

	"github.com/eudr/eudr/server/webasset"
)

//go:embed page.html app.js api.js ui.js map.js upload.js proof.js plot.js pages.js trade.js sd.js webhooks.js admin.js style.css logo.svg
//go:embed maplibre/maplibre-gl-csp.js maplibre/maplibre-gl-csp-worker.js maplibre/maplibre-gl.css maplibre/LICENSE.txt maplibre/VERSION
//go:embed preact/standalone.module.js preact/LICENSE preact/preact-LICENSE preact/VERSION
//go:embed basemap/countries.geojson basemap/world-atlas-LICENSE basemap/VERSION
var files embed.FS

// Versions of what vendor.sh takes, as the page shows them.
const (
	MapLibreVersion   = "5.24.1"
	HTMVersion        = "3.1.1"
	WorldAtlasVersion = "2.0.2"
)

// Policy is the Content-Security-Policy of every answer under /console.
// Scripts, styles, data and workers come from the appliance alone, and no
// script is inline. MapLibre draws into a canvas and reads images back as
// data: and blob: URLs (img-src); its worker is a file of its own
// (worker-src 'self'), not a blob.
const Policy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' data: blob:; font-src 'self'; connect-src 'self'; worker-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// File is a page or one file the pages use, with the headers it is served
// with.
type File = webasset.File

// Console is the page of each environment and every file the pages use.
type Console struct {
	files map[string]File // by name
	pages map[pageKey]File
}

// Session is what the request for a page tells of a console session,
// which the page tells its scripts (data-session): whether to ask the
// appliance who is signed in. A page never signed in does not ask (the
// answer would be a 401), and nothing is kept in the browser's storage
// to remember a session by.
type Session string

const (
	// NoSession: no session cookie, and none held back.
	NoSession Session = ""
	// SessionCookie: the request carried the listener's session cookie.
	SessionCookie Session = "1"
	// SessionMaybe: a navigation from another site, which a browser sends
	// without a SameSite=Strict cookie: a session may exist all the same,
	// and the page's own request for it carries the cookie.
	SessionMaybe Session = "maybe"
)

var sessions = []Session{NoSession, SessionCookie, SessionMaybe}

// pageKey names a page: its environment and its Session mark.
type pageKey struct {
	env     string
	session Session
}

// File returns the file served as /console/<name>, or for "" the page of
// env ("production" or "sandbox") with its session mark.
func (c *Console) File(env, name string, session Session) (File, bool) {
	if name == "" {
		f, ok := c.pages[pageKey{env, session}]
		return f, ok
	}
	f, ok := c.files[name]
	return f, ok
}

// Page is the HTML page of the console on env's listener.
func (c *Console) Page(env string, session Session) File { return c.pages[pageKey{env, session}] }

// Files lists every file served under /console/, the pages excluded.
func (c *Console) Files() []File {
	out := make([]File, 0, len(c.files))
	for _, f := range c.files {
		out = append(out, f)
	}
	return out
}

// hashed are the files published under hashed names, in an order where a
// module comes after every module it imports.
var hashed = []string{
	"maplibre/maplibre-gl-csp.js", "maplibre/maplibre-gl-csp-worker.js", "maplibre/maplibre-gl.css",
	"preact/standalone.module.js", "basemap/countries.geojson",
	"api.js", "ui.js", "map.js", "upload.js", "proof.js", "plot.js", "pages.js", "trade.js", "sd.js", "webhooks.js", "admin.js", "app.js", "style.css", "logo.svg",
}

// plain are served under their own names: the licences and the records of
// what was vendored.
var plain = map[string]string{
	"maplibre-LICENSE.txt":    "maplibre/LICENSE.txt",
	"maplibre-VERSION.txt":    "maplibre/VERSION",
	"htm-LICENSE.txt":         "preact/LICENSE",
	"preact-LICENSE.txt":      "preact/preact-LICENSE",
	"preact-VERSION.txt":      "preact/VERSION",
	"world-atlas-LICENSE.txt": "basemap/world-atlas-LICENSE",
	"basemap-VERSION.txt":     "basemap/VERSION",
}

// Environments are the listeners the console has a page for.
var Environments = []string{"production", "sandbox"}

// New builds the console: a page per environment served at prefix (as
// "/console"), with every file it uses under prefix + "/", calling the API
// under apiPrefix (as "/api/v1/enterprise").
func New(prefix, apiPrefix string) (*Console, error) {
	c := &Console{files: map[string]File{}, pages: map[pageKey]File{}}
	// page.html's {{name}} placeholders, filled by plain replacement:
	// html/template would make the linker keep every exported method of
	// the program (it calls methods by reflection), a megabyte of code.
	fill := []string{
		"{{prefix}}", html.EscapeString(prefix),
		"{{api-prefix}}", html.EscapeString(apiPrefix),
		"{{maplibre-version}}", MapLibreVersion,
		"{{htm-version}}", HTMVersion,
		"{{world-atlas-version}}", WorldAtlasVersion,
	}
	var imports []string // "./plain.js" -> "./hashed.js", for the modules after
	for _, src := range hashed {
		data, err := files.ReadFile(src)
		if err != nil {
			return nil, err
		}
		base := path.Base(src)
		if path.Ext(base) == ".js" && len(imports) > 0 {
			data = []byte(strings.NewReplacer(imports...).Replace(string(data)))
		}
		name := webasset.HashedName(base, data)
		c.files[name] = webasset.New(name, path.Ext(base), data, webasset.CacheForever, Policy)
		fill = append(fill, "{{"+base+"}}", html.EscapeString(prefix+"/"+name))
		imports = append(imports, `"./`+base+`"`, `"./`+name+`"`)
	}
	for name, src := range plain {
		data, err := files.ReadFile(src)
		if err != nil {
			return nil, err
		}
		c.files[name] = webasset.New(name, ".txt", data, webasset.CacheRevalidate, Policy)
	}
	page, err := files.ReadFile("page.html")
	if err != nil {
		return nil, err
	}
	for _, env := range Environments {
		for _, session := range sessions {
			p := []byte(strings.NewReplacer(append(fill, "{{environment}}", env, "{{session}}", string(session))...).Replace(string(page)))
			if i := bytes.Index(p, []byte("{{")); i >= 0 {
				return nil, fmt.Errorf("page.html: unknown placeholder at %q", p[i:min(i+40, len(p))])
			}
			f := webasset.New("", ".html", p, webasset.CacheRevalidate, Policy)
			f.Header["Vary"] = "Cookie, Sec-Fetch-Site" // the page differs with the session cookie
			c.pages[pageKey{env, session}] = f
		}
	}
	return c, nil
}

// Must is New's console, or a panic: the files are embedded, so New fails
// for a broken build only, which the tests of this package catch.
func Must(c *Console, err error) *Console {
	if err != nil {
		panic("operator console: " + err.Error())
	}
	return c
}
