package server

import (
	_ "embed"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"
)

// openAPIDocument is the OpenAPI 3.1 description of every route in routes.go,
// embedded so the binary serves the reference of exactly its own API.
//
//go:embed openapi.json
var openAPIDocument []byte

// OpenAPIDocument returns the embedded OpenAPI document.
func OpenAPIDocument() []byte { return openAPIDocument }

func handleOpenAPI(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(openAPIDocument)))
	w.WriteHeader(http.StatusOK)
	w.Write(openAPIDocument)
}
