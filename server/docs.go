package server

import (
	"net/http"
	"path"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/docsui"
)

// The API reference: GET /docs (and /docs/) is a page that renders the
// OpenAPI document with the Swagger UI embedded in the binary; /docs/<file>
// serves what the page uses. No authentication, like the document itself.
const (
	docsPath   = "/docs"
	openAPIURL = "/api/v1/openapi.json"
)

// docsReference is built once from embedded files; the tests of docsui and
// of this file fail when it cannot be, so a panic at start cannot ship.
var docsReference = mustReference(docsui.New(docsPath, openAPIURL))

func mustReference(r *docsui.Reference, err error) *docsui.Reference {
	if err != nil {
		panic("API reference: " + err.Error())
	}
	return r
}

// docsPolicy lets the page load scripts, styles, images and data from the
// appliance alone: the reference works air-gapped, and no request of it
// leaves the machine. Inline styles are allowed because Swagger UI sets
// style attributes (scripts stay external); data: images are the icons
// its style sheet carries inline.
const docsPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// docsTypes are the content types of the files under /docs/, by extension.
var docsTypes = map[string]string{
	".js":  "text/javascript; charset=utf-8",
	".css": "text/css; charset=utf-8",
	".svg": "image/svg+xml",
	".txt": "text/plain; charset=utf-8",
}

func handleDocsPage(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	// The page names its scripts and styles by content hash: revalidate
	// it, so an upgraded appliance's page (and through it the new files)
	// is seen at once.
	writeDocsFile(w, "text/html; charset=utf-8", "no-cache", docsReference.Page)
}

func handleDocsFile(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	f, ok := docsReference.File(ps.ByName("file"))
	ctype := docsTypes[path.Ext(f.Name)]
	if !ok || ctype == "" {
		writeError(w, r, apierr.NotFound{Kind: "route", ID: r.URL.Path})
		return
	}
	cache := "no-cache"
	if f.Immutable {
		cache = "public, max-age=31536000, immutable"
	}
	writeDocsFile(w, ctype, cache, f.Data)
}

func writeDocsFile(w http.ResponseWriter, ctype, cache string, data []byte) {
	h := w.Header()
	h.Set("Content-Type", ctype)
	h.Set("Content-Length", strconv.Itoa(len(data)))
	h.Set("Cache-Control", cache)
	h.Set("Content-Security-Policy", docsPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusOK)
	w.Write(data)
}
