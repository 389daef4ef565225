package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/docsui"
)

// docsReference is the API reference for browsers, built once from embedded
// files: GET /docs and /docs/ answer its page, /docs/<file> what the page
// uses. No authentication, like the document itself.
var docsReference = docsui.Must(docsui.New("/docs", "/api/v1/openapi.json"))

func handleDocs(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	f, ok := docsReference.File(ps.ByName("file")) // "" is the page
	if !ok {
		writeError(w, r, apierr.NotFound{Kind: "route", ID: r.URL.Path})
		return
	}
	for name, value := range f.Header {
		w.Header().Set(name, value)
	}
	w.WriteHeader(http.StatusOK)
	w.Write(f.Data)
}
