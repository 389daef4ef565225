package server

import (
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
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
		{"GET", "/docs", authNone, idemNone, handleDocs},
		{"GET", "/docs/", authNone, idemNone, handleDocs},
		{"GET", "/docs/:file", authNone, idemNone, handleDocs},
		{"GET", "/console", authNone, idemNone, handleConsole},
		{"GET", "/console/", authNone, idemNone, handleConsole},
		{"GET", "/console/:file", authNone, idemNone, handleConsole},

		{"POST", enterprisePrefix + "/auth/login", authNone, idemNone, a.handleLogin},
		{"POST", enterprisePrefix + "/auth/session", authNone, idemNone, a.handleSessionCreate},
		{"GET", enterprisePrefix + "/auth/session", authSession, idemNone, a.handleSessionGet},
		{"DELETE", enterprisePrefix + "/auth/session", authSession, idemNone, a.handleSessionDelete},
		{"GET", enterprisePrefix + "/auth/whoami", authKey, idemNone, a.handleWhoami},
		{"GET", enterprisePrefix + "/api-keys", authAdmin, idemNone, a.handleKeysList},
		{"POST", enterprisePrefix + "/api-keys", authAdmin, idemRequired, a.handleKeysCreate},
		{"POST", enterprisePrefix + "/api-keys/:keyId/rotate", authAdmin, idemOptional, a.handleKeysRotate},
		{"DELETE", enterprisePrefix + "/api-keys/:keyId", authAdmin, idemNone, a.handleKeysRevoke},
		{"GET", enterprisePrefix + "/users", authAdmin, idemNone, a.handleUsersList},
		{"POST", enterprisePrefix + "/users", authAdmin, idemRequired, a.handleUsersCreate},
		{"DELETE", enterprisePrefix + "/users/:username", authAdmin, idemNone, a.handleUsersDelete},
		{"GET", enterprisePrefix + "/admin/backup", authAppliance, idemNone, a.handleBackup},
		{"POST", enterprisePrefix + "/layers", authAppliance, idemRequired, a.handleLayersCreate},
		{"DELETE", enterprisePrefix + "/layers/:layerId", authAppliance, idemNone, a.handleLayersDelete},

		{"GET", eudrPrefix + "/health", authKey, idemNone, a.handleHealth},
		{"GET", eudrPrefix + "/suppliers", authKey, idemNone, a.handleSuppliersList},
		{"POST", eudrPrefix + "/suppliers", authKey, idemRequired, a.handleSuppliersUpsert},
		{"GET", eudrPrefix + "/suppliers/:erpVendorId", authKey, idemNone, a.handleSuppliersGet},
		{"DELETE", eudrPrefix + "/suppliers/:erpVendorId", authKey, idemNone, a.handleSuppliersDelete},

		{"GET", eudrPrefix + "/layers", authKey, idemNone, a.handleLayersList},
		{"GET", eudrPrefix + "/layers/:layerId/tiles/:z/:x/:y.png", authKey, idemNone, a.handleMapTile},
		{"GET", eudrPrefix + "/layers/:layerId/features", authKey, idemNone, a.handleLayerFeatures},

		{"GET", eudrPrefix + "/polygons", authKey, idemNone, a.handlePolygonsList},
		{"POST", eudrPrefix + "/polygons", authKey, idemRequired, a.handlePolygonsCreate},
		// Repairing stores nothing: like POST /evidence/verify, no Idempotency-Key.
		{"POST", eudrPrefix + "/polygons/repair", authKey, idemNone, a.handlePolygonsRepair},
		{"GET", eudrPrefix + "/polygons/export", authKey, idemNone, a.handlePolygonsExport},
		{"GET", eudrPrefix + "/polygons/:polygonId", authKey, idemNone, a.handlePolygonsGet},
		{"DELETE", eudrPrefix + "/polygons/:polygonId", authKey, idemNone, a.handlePolygonsDelete},
		{"GET", eudrPrefix + "/polygons/:polygonId/status", authKey, idemNone, a.handlePolygonsStatus},
		{"GET", eudrPrefix + "/polygons/:polygonId/evidence", authKey, idemNone, a.handlePolygonsEvidence},
		{"GET", eudrPrefix + "/polygons/:polygonId/report.pdf", authKey, idemNone, a.handlePolygonsReportPDF},

		{"GET", eudrPrefix + "/batches", authKey, idemNone, a.handleBatchesList},
		{"POST", eudrPrefix + "/batches", authKey, idemRequired, a.handleBatchesCreate},
		{"GET", eudrPrefix + "/batches/:batchId", authKey, idemNone, a.handleBatchesGet},
		{"GET", eudrPrefix + "/batches/:batchId/risk-assessment", authKey, idemNone, a.handleBatchesRiskAssessment},
		{"GET", eudrPrefix + "/batches/:batchId/report.pdf", authKey, idemNone, a.handleBatchesReportPDF},

		{"GET", eudrPrefix + "/shipments", authKey, idemNone, a.handleShipmentsList},
		{"POST", eudrPrefix + "/shipments/link", authKey, idemRequired, a.handleShipmentLink},
		{"GET", eudrPrefix + "/shipments/:shipmentId", authKey, idemNone, a.handleShipmentGet},

		{"GET", eudrPrefix + "/declarations/dds", authKey, idemNone, a.handleDDSList},
		{"POST", eudrPrefix + "/declarations/dds", authKey, idemRequired, a.handleDDSCreate},
		{"GET", eudrPrefix + "/declarations/dds/:ddsId", authKey, idemNone, a.handleDDSGet},
		{"GET", eudrPrefix + "/declarations/dds/:ddsId/report.pdf", authKey, idemNone, a.handleDDSReportPDF},
		{"POST", eudrPrefix + "/declarations/dds/:ddsId/submit", authKey, idemRequired, a.handleDDSSubmit},
		{"POST", eudrPrefix + "/declarations/dds/:ddsId/revoke", authKey, idemRequired, a.handleDDSRevoke},
		{"POST", eudrPrefix + "/declarations/dds/:ddsId/amend", authKey, idemRequired, a.handleDDSAmend},
		{"POST", eudrPrefix + "/declarations/references/lookup", authKey, idemRequired, a.handleDDSReferenceLookup},
		{"GET", eudrPrefix + "/declarations/references/:referenceNumber", authKey, idemNone, a.handleDDSReferenceGet},
		{"GET", eudrPrefix + "/declarations/sd", authKey, idemNone, a.handleSDList},
		{"POST", eudrPrefix + "/declarations/sd", authKey, idemRequired, a.handleSDCreate},
		{"GET", eudrPrefix + "/declarations/sd/:sdId", authKey, idemNone, a.handleSDGet},
		{"POST", eudrPrefix + "/declarations/sd/:sdId/withdraw", authKey, idemRequired, a.handleSDWithdraw},
		{"POST", eudrPrefix + "/declarations/sd/:sdId/update", authKey, idemRequired, a.handleSDUpdate},
		{"POST", eudrPrefix + "/declarations/sd-references/lookup", authKey, idemRequired, a.handleSDLookup},
		{"GET", eudrPrefix + "/declarations/sd-references/:referenceNumber", authKey, idemNone, a.handleSDLookupGet},
		{"GET", eudrPrefix + "/credentials/eu-system", authKey, idemNone, a.handleCredentialsGet},
		{"PUT", eudrPrefix + "/credentials/eu-system", authKey, idemNone, a.handleCredentialsPut},

		{"GET", eudrPrefix + "/jobs", authKey, idemNone, a.handleJobsList},
		{"GET", eudrPrefix + "/jobs/:jobId", authKey, idemNone, a.handleJobsGet},
		{"GET", eudrPrefix + "/jobs/:jobId/results", authKey, idemNone, a.handleJobResults},

		{"GET", eudrPrefix + "/ledger/checkpoint", authKey, idemNone, a.handleLedgerCheckpoint},
		{"GET", eudrPrefix + "/ledger/public-key", authKey, idemNone, a.handleLedgerPublicKey},
		{"GET", eudrPrefix + "/ledger/entries/:index", authKey, idemNone, a.handleLedgerEntry},
		{"GET", eudrPrefix + "/ledger/proofs/inclusion", authKey, idemNone, a.handleLedgerInclusion},
		{"GET", eudrPrefix + "/ledger/proofs/consistency", authKey, idemNone, a.handleLedgerConsistency},
		{"POST", eudrPrefix + "/evidence/verify", authKeyRead, idemNone, a.handleEvidenceVerify},
		{"POST", eudrPrefix + "/reports/archive", authKey, idemRequired, a.handleReportsArchive},
		// Checking a report or evidence stores nothing: no Idempotency-Key,
		// and the read scope (an auditor's key checks a copy).
		{"POST", eudrPrefix + "/reports/verify", authKeyRead, idemNone, a.handleReportsVerify},
		{"GET", eudrPrefix + "/reports/:reportId", authKey, idemNone, a.handleReportsGet},
		{"GET", eudrPrefix + "/reports/:reportId/download", authKey, idemNone, a.handleReportsDownload},

		{"GET", eudrPrefix + "/webhooks", authKey, idemNone, a.handleWebhooksList},
		{"POST", eudrPrefix + "/webhooks", authKey, idemRequired, a.handleWebhooksCreate},
		{"DELETE", eudrPrefix + "/webhooks/:webhookId", authKey, idemNone, a.handleWebhooksDelete},
		{"POST", eudrPrefix + "/webhooks/:webhookId/rotate-secret", authKey, idemOptional, a.handleWebhooksRotate},
		{"POST", eudrPrefix + "/webhooks/:webhookId/ping", authKey, idemOptional, a.handleWebhooksPing},
		{"GET", eudrPrefix + "/webhooks/:webhookId/deliveries", authKey, idemNone, a.handleWebhooksDeliveries},
		{"GET", eudrPrefix + "/webhooks/dlq", authKey, idemNone, a.handleDLQList},
		{"DELETE", eudrPrefix + "/webhooks/dlq", authKey, idemNone, a.handleDLQAckBulk},
		{"POST", eudrPrefix + "/webhooks/dlq/replay-bulk", authKey, idemOptional, a.handleDLQReplayBulk},
		{"POST", eudrPrefix + "/webhooks/dlq/:eventId/replay", authKey, idemOptional, a.handleDLQReplay},
		{"DELETE", eudrPrefix + "/webhooks/dlq/:eventId", authKey, idemNone, a.handleDLQAck},

		{"POST", sandboxOnlyPrefix + "/events", authKey, idemRequired, a.handleSandboxEvent},
		{"POST", sandboxOnlyPrefix + "/jobs", authKey, idemRequired, a.handleSandboxJob},
		{"POST", sandboxOnlyPrefix + "/webhook-listener-certificate", authKey, idemNone, a.handleListenerCertificate},
	}
}

// sandboxOnlyPrefix holds routes that exist on the sandbox listener only
// (production answers 404): test tools that touch nothing real.
const sandboxOnlyPrefix = eudrPrefix + "/sandbox"

// subtrees are path prefixes served by routers of their own. httprouter
// cannot hold a static segment and a parameter at the same place
// (/webhooks/dlq next to /webhooks/:webhookId, /webhooks/dlq/replay-bulk
// next to /webhooks/dlq/:eventId, /polygons/export next to
// /polygons/:polygonId); each subtree takes the routes under its prefix,
// longest prefix first, and requests are dispatched the same way.
var subtrees = []string{eudrPrefix + "/webhooks/dlq/replay-bulk", eudrPrefix + "/webhooks/dlq", eudrPrefix + "/polygons/export"}

// underPrefix reports whether path is prefix or below it.
func underPrefix(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// treeMux dispatches a request to the router of its subtree, or the main one.
type treeMux struct {
	prefixes []string
	trees    []*httprouter.Router
	main     *httprouter.Router
}

func (m *treeMux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for i, p := range m.prefixes {
		if underPrefix(r.URL.Path, p) {
			m.trees[i].ServeHTTP(w, r)
			return
		}
	}
	m.main.ServeHTTP(w, r)
}

// router builds one environment's routers. Trailing-slash and case-fixing
// redirects are off: a wrong path is a 404 envelope, not a 301.
func (a *App) router(env storage.Environment) http.Handler {
	m := &treeMux{prefixes: subtrees, main: newRouter()}
	for range subtrees {
		m.trees = append(m.trees, newRouter())
	}
	for _, rte := range a.routes() {
		if underPrefix(rte.path, sandboxOnlyPrefix) && env != storage.Sandbox {
			continue
		}
		rt := m.main
		for i, p := range subtrees {
			if underPrefix(rte.path, p) {
				rt = m.trees[i]
				break
			}
		}
		rt.Handle(rte.method, rte.path, a.wrap(rte))
		if rte.method == http.MethodGet {
			rt.Handle(http.MethodHead, rte.path, a.wrap(rte)) // net/http drops the body
		}
	}
	return m
}

func newRouter() *httprouter.Router {
	rt := httprouter.New()
	rt.RedirectTrailingSlash = false
	rt.RedirectFixedPath = false
	rt.HandleOPTIONS = true // 200 with Allow, which the 405 answers advertise
	rt.HandleMethodNotAllowed = true
	rt.NotFound = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, apierr.NotFound{Kind: "route", ID: r.URL.Path})
	})
	rt.MethodNotAllowed = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, &apierr.Error{Status: http.StatusMethodNotAllowed, Code: apierr.CodeMethodNotAllowed,
			Message: "method " + r.Method + " is not allowed on " + r.URL.Path + "; see the Allow header"})
	})
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
