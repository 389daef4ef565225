package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/storage"
)

// Path prefixes of the API.
const (
	enterprisePrefix = "/api/v1/enterprise"
	eudrPrefix       = enterprisePrefix + "/eudr"
)

// route is one endpoint: what it requires of the caller and its handler.
type route struct {
	method string
	path   string // httprouter syntax: /suppliers/:erpVendorId
	auth   authPolicy
	idem   idemPolicy
	handle httprouter.Handle
}

// routes is the whole API, in one place. The OpenAPI document must describe
// every entry (TestOpenAPI_CoversEveryRoute).
func (a *App) routes() []route {
	return []route{
		{"GET", "/livez", authNone, idemNone, a.handleLivez},
		{"GET", "/readyz", authNone, idemNone, a.handleReadyz},
		{"GET", "/api/v1/openapi.json", authNone, idemNone, handleOpenAPI},

		{"POST", enterprisePrefix + "/auth/login", authNone, idemNone, a.handleLogin},
		{"GET", enterprisePrefix + "/api-keys", authAdmin, idemNone, a.handleKeysList},
		{"POST", enterprisePrefix + "/api-keys", authAdmin, idemRequired, a.handleKeysCreate},
		{"POST", enterprisePrefix + "/api-keys/:keyId/rotate", authAdmin, idemOptional, a.handleKeysRotate},
		{"DELETE", enterprisePrefix + "/api-keys/:keyId", authAdmin, idemNone, a.handleKeysRevoke},
		{"GET", enterprisePrefix + "/admin/backup", authAdmin, idemNone, a.handleBackup},

		{"GET", eudrPrefix + "/health", authKey, idemNone, a.handleHealth},
		{"GET", eudrPrefix + "/suppliers", authKey, idemNone, a.handleSuppliersList},
		{"POST", eudrPrefix + "/suppliers", authKey, idemRequired, a.handleSuppliersUpsert},
		{"GET", eudrPrefix + "/suppliers/:erpVendorId", authKey, idemNone, a.handleSuppliersGet},
		{"DELETE", eudrPrefix + "/suppliers/:erpVendorId", authKey, idemNone, a.handleSuppliersDelete},
	}
}

// router builds one environment's router. Trailing-slash and case-fixing
// redirects are off: a wrong path is a 404 envelope, not a 301.
func (a *App) router(env storage.Environment) http.Handler {
	rt := httprouter.New()
	rt.RedirectTrailingSlash = false
	rt.RedirectFixedPath = false
	rt.HandleOPTIONS = true // 200 with Allow, which the 405 answers advertise
	rt.HandleMethodNotAllowed = true
	rt.NotFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, notFound("route "+r.URL.Path))
	})
	rt.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, &Error{Status: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed,
			Message: "method " + r.Method + " is not allowed on " + r.URL.Path + "; see the Allow header"})
	})
	for _, rte := range a.routes() {
		rt.Handle(rte.method, rte.path, a.wrap(rte))
		if rte.method == http.MethodGet {
			rt.Handle(http.MethodHead, rte.path, a.wrap(rte)) // net/http drops the body
		}
	}
	return rt
}

// wrap applies a route's auth policy and idempotency around its handler.
func (a *App) wrap(rte route) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		infoFrom(r.Context()).route = rte.path
		if err := authorize(rte.auth, infoFrom(r.Context()).who, r.Method); err != nil {
			writeError(w, r, err)
			return
		}
		if err := a.tooLarge(r); err != nil {
			writeError(w, r, err)
			return
		}
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rte.handle(w, r, ps) })
		if rte.idem == idemNone {
			h(w, r)
			return
		}
		a.idempotent(rte.idem, h).ServeHTTP(w, r)
	}
}
