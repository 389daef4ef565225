// Package docsui holds the files of the API reference served at /docs: the
// page, its script and style sheet (ours), and Swagger UI, which renders the
// OpenAPI document (vendored in swagger-ui/ by vendor.sh, at the version and
// checksums recorded in swagger-ui/VERSION).
//
// Everything is embedded, so the reference works on an appliance without
// network access. This package names each file and the headers it is
// served with; the server package serves them. A script, style sheet or
// image is published under a name that carries a hash of its content
// (swagger-ui-bundle.1a2b3c4d5e6f.js), so browsers may keep it for a year
// and still see a new one after an upgrade.
package docsui

import (
	"bytes"
	"embed"
	"fmt"
	"html"
	"path"
	"strings"

	"github.com/eudr/eudr/server/webasset"
)

//go:embed page.html eudr-docs.js eudr-docs.css eudr-logo.svg
//go:embed swagger-ui/swagger-ui-bundle.js swagger-ui/swagger-ui.css
//go:embed swagger-ui/swagger-ui-bundle.js.LICENSE.txt swagger-ui/LICENSE swagger-ui/NOTICE swagger-ui/VERSION
var files embed.FS

// SwaggerUIVersion is the vendored Swagger UI's version, as the page shows it.
const SwaggerUIVersion = "5.35.0"

// Policy is the Content-Security-Policy of every answer under /docs. It lets
// the page load scripts, styles, images and data from the appliance alone:
// the reference works air-gapped, and no request of it leaves the machine.
// Inline styles are allowed because Swagger UI sets style attributes
// (scripts stay external); data: images are the icons its style sheet
// carries inline.
const Policy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// File is the page or one file it uses, with the headers it is served with.
type File = webasset.File

// Reference is the page and every file it uses.
type Reference struct {
	files map[string]File // by name; the page under ""
}

// File returns the file served as /docs/<name>, or the page for "".
func (r *Reference) File(name string) (File, bool) {
	f, ok := r.files[name]
	return f, ok
}

// Page is the HTML page of the reference.
func (r *Reference) Page() File { return r.files[""] }

// Files lists every file served under /docs/, the page excluded.
func (r *Reference) Files() []File {
	out := make([]File, 0, len(r.files))
	for name, f := range r.files {
		if name != "" {
			out = append(out, f)
		}
	}
	return out
}

// hashed are the files the page links to, published under hashed names.
var hashed = []string{"swagger-ui/swagger-ui-bundle.js", "swagger-ui/swagger-ui.css", "eudr-docs.js", "eudr-docs.css", "eudr-logo.svg"}

// plain are served under their own names: the licences of the bundle, which
// its first line points to (swagger-ui-bundle.js.LICENSE.txt, next to it),
// and the record of what was vendored.
var plain = map[string]string{
	"swagger-ui-bundle.js.LICENSE.txt": "swagger-ui/swagger-ui-bundle.js.LICENSE.txt",
	"swagger-ui-LICENSE.txt":           "swagger-ui/LICENSE",
	"swagger-ui-NOTICE.txt":            "swagger-ui/NOTICE",
	"swagger-ui-VERSION.txt":           "swagger-ui/VERSION",
}

// New builds the reference: the page served at prefix (as "/docs"), with
// every file it links to under prefix + "/", pointing the viewer at
// openAPIURL.
func New(prefix, openAPIURL string) (*Reference, error) {
	r := &Reference{files: map[string]File{}}
	// page.html's {{name}} placeholders, filled by plain replacement:
	// html/template would make the linker keep every exported method of
	// the program (it calls methods by reflection), a megabyte of code.
	fill := []string{
		"{{prefix}}", html.EscapeString(prefix),
		"{{openapi-url}}", html.EscapeString(openAPIURL),
		"{{swagger-ui-version}}", SwaggerUIVersion,
	}
	for _, src := range hashed {
		data, err := files.ReadFile(src)
		if err != nil {
			return nil, err
		}
		name := webasset.HashedName(path.Base(src), data)
		r.files[name] = webasset.New(name, path.Ext(src), data, webasset.CacheForever, Policy)
		fill = append(fill, "{{"+path.Base(src)+"}}", html.EscapeString(prefix+"/"+name))
	}
	for name, src := range plain {
		data, err := files.ReadFile(src)
		if err != nil {
			return nil, err
		}
		r.files[name] = webasset.New(name, ".txt", data, webasset.CacheRevalidate, Policy)
	}
	page, err := files.ReadFile("page.html")
	if err != nil {
		return nil, err
	}
	page = []byte(strings.NewReplacer(fill...).Replace(string(page)))
	if i := bytes.Index(page, []byte("{{")); i >= 0 {
		return nil, fmt.Errorf("page.html: unknown placeholder at %q", page[i:min(i+40, len(page))])
	}
	r.files[""] = webasset.New("", ".html", page, webasset.CacheRevalidate, Policy)
	return r, nil
}

// Must is New's reference, or a panic: the files are embedded, so New fails
// for a broken build only, which the tests of this package catch.
func Must(r *Reference, err error) *Reference {
	if err != nil {
		panic("API reference: " + err.Error())
	}
	return r
}
