package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/consoleui"
	"github.com/eudr/eudr/server/docsui"
)

// docsReference is the API reference for browsers, built once from embedded
// files: GET /docs and /docs/ answer its page, /docs/<file> what the page
// uses. No authentication, like the document itself.
var docsReference = docsui.Must(docsui.New("/docs", "/api/v1/openapi.json"))

// operatorConsole is the console at /console, likewise; its data is the API's.
var operatorConsole = consoleui.Must(consoleui.New("/console", enterprisePrefix))

func handleDocs(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	f, ok := docsReference.File(ps.ByName("file")) // "" is the page
	writeEmbedded(w, r, f.Header, f.Data, ok)
}

func handleConsole(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	env := infoFrom(r.Context()).env
	// The page says whether a session cookie came with it, or may have
	// been held back; whether that session lives is for the page to ask
	// (GET /auth/session).
	session := consoleui.NoSession
	if _, err := r.Cookie(sessionCookie(env)); err == nil {
		session = consoleui.SessionCookie
	} else if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		session = consoleui.SessionMaybe
	}
	f, ok := operatorConsole.File(string(env), ps.ByName("file"), session)
	writeEmbedded(w, r, f.Header, f.Data, ok)
}

// writeEmbedded answers a file of the binary with its package's headers.
func writeEmbedded(w http.ResponseWriter, r *http.Request, header map[string]string, data []byte, ok bool) {
	if !ok {
		writeError(w, r, apierr.NotFound{Kind: "route", ID: r.URL.Path})
		return
	}
	for name, value := range header {
		w.Header().Set(name, value)
	}
	w.Write(data) // 200
}
