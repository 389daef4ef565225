// Package docsui holds the files of the API reference served at /docs: the
// page, its script and style sheet (ours), and Swagger UI, which renders the
// OpenAPI document (vendored in swagger-ui/ by vendor.sh, at the version and
// checksums recorded in swagger-ui/VERSION).
//
// Everything is embedded, so the reference works on an appliance without
// network access. The server package serves the files; this package only
// names them. A script or style sheet is published under a name that
// carries a hash of its content (swagger-ui-bundle.1a2b3c4d5e6f.js), so
// browsers may keep it for a year and still see a new one after an upgrade.
package docsui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html"
	"path"
	"strings"
)

//go:embed page.html eudr-docs.js eudr-docs.css eudr-logo.svg
//go:embed swagger-ui/swagger-ui-bundle.js swagger-ui/swagger-ui.css
//go:embed swagger-ui/swagger-ui-bundle.js.LICENSE.txt swagger-ui/LICENSE swagger-ui/NOTICE swagger-ui/VERSION
var files embed.FS

// SwaggerUIVersion is the vendored Swagger UI's version, as the page shows it.
const SwaggerUIVersion = "5.35.0"

// File is one file served under /docs/.
type File struct {
	Name string // the last path segment it is served under
	Data []byte
	// Immutable is set when Name carries the content's hash: the file
	// under that name never changes.
	Immutable bool
}

// Reference is the page and every file it uses.
type Reference struct {
	Page  []byte
	files map[string]File
}

// File returns the file served as /docs/<name>.
func (r *Reference) File(name string) (File, bool) {
	f, ok := r.files[name]
	return f, ok
}

// Files lists every file served under /docs/, the page excluded.
func (r *Reference) Files() []File {
	out := make([]File, 0, len(r.files))
	for _, f := range r.files {
		out = append(out, f)
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
		name := hashedName(path.Base(src), data)
		r.files[name] = File{Name: name, Data: data, Immutable: true}
		fill = append(fill, "{{"+path.Base(src)+"}}", html.EscapeString(prefix+"/"+name))
	}
	for name, src := range plain {
		data, err := files.ReadFile(src)
		if err != nil {
			return nil, err
		}
		r.files[name] = File{Name: name, Data: data}
	}
	page, err := files.ReadFile("page.html")
	if err != nil {
		return nil, err
	}
	r.Page = []byte(strings.NewReplacer(fill...).Replace(string(page)))
	if i := bytes.Index(r.Page, []byte("{{")); i >= 0 {
		return nil, fmt.Errorf("page.html: unknown placeholder at %q", r.Page[i:min(i+40, len(r.Page))])
	}
	return r, nil
}

// hashedName puts the first 12 hex digits of data's SHA-256 before the
// extension: swagger-ui.css -> swagger-ui.0123456789ab.css.
func hashedName(base string, data []byte) string {
	sum := sha256.Sum256(data)
	ext := path.Ext(base)
	return strings.TrimSuffix(base, ext) + "." + hex.EncodeToString(sum[:6]) + ext
}
