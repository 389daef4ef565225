package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"
	"golang.org/x/mod/sumdb/note"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/server/report"
	"github.com/eudr/eudr/server/risk"
	"github.com/eudr/eudr/server/shipment"
	"github.com/eudr/eudr/server/webhook"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// The tests in this file hold server/openapi.json to the code: every route of
// routes() is described and nothing else, the document is well formed, its
// schemas say what the Go types and validators do, and the responses of a
// real appliance conform to it.

// openAPIMethods are the operation keys of an OpenAPI Path Item.
var openAPIMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// loadOpenAPI parses the embedded document.
func loadOpenAPI(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(OpenAPIDocument(), &doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	return doc
}

// oaRoutes is the real route table. routes() only takes method values, so
// an App without a store will do.
func oaRoutes(t *testing.T) (rs []route) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("(&App{}).routes() panicked: %v", p)
		}
	}()
	return (&App{}).routes()
}

var oaRouteParamRE = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

// openAPIPath turns httprouter's /a/:id into OpenAPI's /a/{id}.
func openAPIPath(p string) string { return oaRouteParamRE.ReplaceAllString(p, "{$1}") }

// oaOperation is one operation of the document.
type oaOperation struct {
	method string // upper case
	path   string // OpenAPI syntax
	item   map[string]any
	op     map[string]any
}

func (o oaOperation) String() string { return o.method + " " + o.path }

func oaOperations(t *testing.T, doc map[string]any) []oaOperation {
	t.Helper()
	paths, ok := doc["paths"].(map[string]any)
	if !ok {
		t.Fatal("openapi.json has no paths object")
	}
	var ops []oaOperation
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		item, ok := paths[p].(map[string]any)
		if !ok {
			t.Errorf("paths[%q] is not an object", p)
			continue
		}
		for _, m := range openAPIMethods {
			if v, ok := item[m]; ok {
				op, ok := v.(map[string]any)
				if !ok {
					t.Errorf("%s %s is not an object", strings.ToUpper(m), p)
					continue
				}
				ops = append(ops, oaOperation{method: strings.ToUpper(m), path: p, item: item, op: op})
			}
		}
	}
	return ops
}

func oaFindOperation(t *testing.T, doc map[string]any, method, path string) map[string]any {
	t.Helper()
	for _, o := range oaOperations(t, doc) {
		if o.method == method && o.path == path {
			return o.op
		}
	}
	t.Fatalf("openapi.json has no operation %s %s", method, path)
	return nil
}

// oaPointer resolves an RFC 6901 pointer ("/components/schemas/Error").
func oaPointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// oaResolve resolves a local reference ("#/components/...").
func oaResolve(doc map[string]any, ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	return oaPointer(doc, ref[1:])
}

// oaDeref follows the $ref of a Reference Object (response, parameter,
// header) to the object it names.
func oaDeref(t *testing.T, doc map[string]any, v any) map[string]any {
	t.Helper()
	for range 10 {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("expected an object, got %T", v)
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		if v, ok = oaResolve(doc, ref); !ok {
			t.Fatalf("$ref %q does not resolve", ref)
		}
	}
	t.Fatal("$ref chain too long")
	return nil
}

func TestOpenAPI_CoversEveryRoute(t *testing.T) {
	doc := loadOpenAPI(t)
	documented := map[string]bool{}
	for _, o := range oaOperations(t, doc) {
		documented[o.String()] = true
	}
	served := map[string]bool{}
	for _, rte := range oaRoutes(t) {
		name := rte.method + " " + openAPIPath(rte.path)
		if served[name] {
			t.Errorf("route %s (%s %s) appears twice in routes()", name, rte.method, rte.path)
		}
		served[name] = true
		if !documented[name] {
			t.Errorf("route %s %s is not in openapi.json: add paths[%q].%s", rte.method, rte.path,
				openAPIPath(rte.path), strings.ToLower(rte.method))
		}
	}
	for name := range documented {
		if !served[name] {
			t.Errorf("openapi.json describes %s, which no route in routes() serves", name)
		}
	}
}

func TestOpenAPI_Valid(t *testing.T) {
	doc := loadOpenAPI(t)

	t.Run("NoDuplicateKeys", func(t *testing.T) {
		dec := json.NewDecoder(bytes.NewReader(OpenAPIDocument()))
		if err := oaCheckDuplicateKeys(dec, ""); err != nil {
			t.Error(err)
		}
	})

	t.Run("Header", func(t *testing.T) {
		if got := doc["openapi"]; got != "3.1.0" {
			t.Errorf("openapi: got %v, want 3.1.0", got)
		}
		info, _ := doc["info"].(map[string]any)
		if got := info["title"]; got != "eudr EUDR compliance API" {
			t.Errorf("info.title: got %v, want %q", got, "eudr EUDR compliance API")
		}
		if got := info["version"]; got != "1.0" {
			t.Errorf("info.version: got %v, want 1.0", got)
		}
		var urls []string
		servers, _ := doc["servers"].([]any)
		for _, s := range servers {
			sm, _ := s.(map[string]any)
			u, _ := sm["url"].(string)
			urls = append(urls, u)
			if d, _ := sm["description"].(string); !strings.Contains(d, "listener decides the environment") {
				t.Errorf("server %s: the description should say that the listener decides the environment", u)
			}
		}
		if want := []string{"http://127.0.0.1:8080", "http://127.0.0.1:8081"}; !slices.Equal(urls, want) {
			t.Errorf("servers: got %v, want %v", urls, want)
		}
	})

	t.Run("RefsResolve", func(t *testing.T) {
		oaWalk(doc, "", func(ptr string, v any) {
			m, ok := v.(map[string]any)
			if !ok {
				return
			}
			ref, ok := m["$ref"].(string)
			if !ok {
				return
			}
			if !strings.HasPrefix(ref, "#/") {
				t.Errorf("%s: $ref %q points outside the document", ptr, ref)
				return
			}
			if _, ok := oaResolve(doc, ref); !ok {
				t.Errorf("%s: $ref %q does not resolve", ptr, ref)
			}
		})
	})

	tags := map[string]bool{}
	for _, tg := range doc["tags"].([]any) {
		tags[tg.(map[string]any)["name"].(string)] = true
	}
	schemes, _ := doc["components"].(map[string]any)["securitySchemes"].(map[string]any)
	ids := map[string]string{}
	templateParam := regexp.MustCompile(`\{([^}]+)\}`)

	for _, o := range oaOperations(t, doc) {
		t.Run(o.String(), func(t *testing.T) {
			id, _ := o.op["operationId"].(string)
			switch {
			case id == "":
				t.Error("no operationId")
			case ids[id] != "":
				t.Errorf("operationId %q is also used by %s", id, ids[id])
			default:
				ids[id] = o.String()
			}
			for _, k := range []string{"summary", "description"} {
				if s, _ := o.op[k].(string); strings.TrimSpace(s) == "" {
					t.Errorf("no %s", k)
				}
			}
			opTags, _ := o.op["tags"].([]any)
			if len(opTags) == 0 {
				t.Error("no tags")
			}
			for _, tg := range opTags {
				if !tags[fmt.Sprint(tg)] {
					t.Errorf("tag %v is not declared in the top-level tags", tg)
				}
			}

			sec, ok := o.op["security"].([]any)
			if !ok {
				t.Error("no security (use [] for none)")
			}
			for _, req := range sec {
				for name := range req.(map[string]any) {
					if _, ok := schemes[name]; !ok {
						t.Errorf("security scheme %q is not in components.securitySchemes", name)
					}
				}
			}

			// Parameters: unique by (in, name); every path template
			// variable declared as a required path parameter and
			// every path parameter in the template.
			params := map[string]map[string]any{}
			for level, src := range []map[string]any{o.item, o.op} {
				seen := map[string]bool{}
				list, _ := src["parameters"].([]any)
				for _, p := range list {
					pm := oaDeref(t, doc, p)
					key := fmt.Sprint(pm["in"]) + ":" + fmt.Sprint(pm["name"])
					if seen[key] {
						t.Errorf("parameter %s declared twice (level %d)", key, level)
					}
					seen[key] = true
					params[key] = pm
				}
			}
			inTemplate := map[string]bool{}
			for _, m := range templateParam.FindAllStringSubmatch(o.path, -1) {
				inTemplate[m[1]] = true
				p, ok := params["path:"+m[1]]
				if !ok {
					t.Errorf("path parameter {%s} is not declared", m[1])
					continue
				}
				if p["required"] != true {
					t.Errorf("path parameter {%s} must be required", m[1])
				}
			}
			for key := range params {
				if name, ok := strings.CutPrefix(key, "path:"); ok && !inTemplate[name] {
					t.Errorf("path parameter %q is not in the path template", name)
				}
			}

			responses, _ := o.op["responses"].(map[string]any)
			var has2xx, hasErr bool
			for code, rv := range responses {
				resp := oaDeref(t, doc, rv)
				if d, _ := resp["description"].(string); d == "" {
					t.Errorf("response %s has no description", code)
				}
				hdrs, _ := resp["headers"].(map[string]any)
				for _, h := range []string{"X-Trace-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
					if _, ok := hdrs[h]; !ok {
						t.Errorf("response %s does not declare the %s header", code, h)
					}
				}
				switch {
				case strings.HasPrefix(code, "2"):
					has2xx = true
				case strings.HasPrefix(code, "4"), strings.HasPrefix(code, "5"):
					if !oaUsesErrorEnvelope(doc, resp) {
						t.Errorf("response %s does not use the Error envelope (#/components/schemas/Error)", code)
						continue
					}
					hasErr = true
					if code == "423" || code == "429" {
						if _, ok := hdrs["Retry-After"]; !ok {
							t.Errorf("response %s does not declare Retry-After", code)
						}
					}
				default:
					t.Errorf("response key %q: want an explicit status code", code)
				}
			}
			if !has2xx {
				t.Error("no 2xx response")
			}
			if !hasErr {
				t.Error("no 4xx/5xx response with the Error envelope")
			}
		})
	}
}

// oaUsesErrorEnvelope reports whether a response's JSON schema is the Error
// schema or narrows it with allOf.
func oaUsesErrorEnvelope(doc map[string]any, resp map[string]any) bool {
	schema, ok := oaPointer(resp, "/content/application~1json/schema")
	if !ok {
		return false
	}
	const errRef = "#/components/schemas/Error"
	m, _ := schema.(map[string]any)
	if m["$ref"] == errRef {
		return true
	}
	all, _ := m["allOf"].([]any)
	for _, s := range all {
		if sm, _ := s.(map[string]any); sm["$ref"] == errRef {
			return true
		}
	}
	return false
}

// oaWalk calls fn on every value of v with its JSON pointer.
func oaWalk(v any, ptr string, fn func(ptr string, v any)) {
	fn(ptr, v)
	switch c := v.(type) {
	case map[string]any:
		for k, x := range c {
			oaWalk(x, ptr+"/"+strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"), fn)
		}
	case []any:
		for i, x := range c {
			oaWalk(x, ptr+"/"+strconv.Itoa(i), fn)
		}
	}
}

// oaCheckDuplicateKeys fails on an object with a repeated member name, which
// encoding/json would silently collapse.
func oaCheckDuplicateKeys(dec *json.Decoder, path string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			k := kt.(string)
			if seen[k] {
				return fmt.Errorf("%s: member %q appears twice", path, k)
			}
			seen[k] = true
			if err := oaCheckDuplicateKeys(dec, path+"/"+k); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	case json.Delim('['):
		for i := 0; dec.More(); i++ {
			if err := oaCheckDuplicateKeys(dec, path+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
		_, err = dec.Token()
	}
	return err
}

// TestOpenAPI_RoutePolicies checks what each route requires of its caller
// (auth policy, idempotency) against the operation's security and headers.
func TestOpenAPI_RoutePolicies(t *testing.T) {
	doc := loadOpenAPI(t)
	for _, rte := range oaRoutes(t) {
		path := openAPIPath(rte.path)
		t.Run(rte.method+" "+path, func(t *testing.T) {
			op := oaFindOperation(t, doc, rte.method, path)

			var want []any
			switch rte.auth {
			case authNone:
				want = []any{}
			case authKey:
				scope := []any{requiredScope(rte.method)}
				want = []any{map[string]any{"ApiKeyHeader": scope}, map[string]any{"ApiKeyBearer": scope}}
			case authAdmin:
				want = []any{map[string]any{"LoginJWT": []any{account.RoleAdmin}}}
			}
			if got := op["security"]; !reflect.DeepEqual(got, want) {
				t.Errorf("security: got %v, want %v", got, want)
			}

			responses := op["responses"].(map[string]any)
			mustHave := []string{"429", "500"}
			if rte.auth != authNone {
				mustHave = append(mustHave, "401", "403")
			}
			if rte.idem != idemNone {
				mustHave = append(mustHave, "400", "409", "413", "423")
			}
			for _, code := range mustHave {
				if _, ok := responses[code]; !ok {
					t.Errorf("no %s response", code)
				}
			}

			var idem map[string]any
			var hasLimit, hasCursor bool
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				pm := oaDeref(t, doc, p)
				switch {
				case pm["in"] == "header" && pm["name"] == "Idempotency-Key":
					idem = pm
				case pm["in"] == "query" && pm["name"] == "limit":
					hasLimit = true
				case pm["in"] == "query" && pm["name"] == "cursor":
					hasCursor = true
				}
			}
			if hasCursor && !hasLimit {
				t.Error("declares cursor without limit")
			}
			switch rte.idem {
			case idemNone:
				if idem != nil {
					t.Error("declares Idempotency-Key, which the route does not take")
				}
			case idemOptional, idemRequired:
				if idem == nil {
					t.Fatal("does not declare the Idempotency-Key header")
				}
				if got, want := idem["required"] == true, rte.idem == idemRequired; got != want {
					t.Errorf("Idempotency-Key required: got %v, want %v", got, want)
				}
			}
			if desc, _ := op["description"].(string); rte.idem != idemNone && !strings.Contains(desc, "Idempotency-Key") {
				t.Error("the description does not say whether Idempotency-Key is required")
			}

			for code, rv := range responses {
				if !strings.HasPrefix(code, "2") {
					continue
				}
				hdrs, _ := oaDeref(t, doc, rv)["headers"].(map[string]any)
				if _, ok := hdrs["Idempotent-Replayed"]; ok != (rte.idem != idemNone) {
					t.Errorf("response %s: declares Idempotent-Replayed: %v, want %v", code, ok, rte.idem != idemNone)
				}
				_, link := hdrs["Link"]
				_, next := hdrs["X-Next-Cursor"]
				if link != hasCursor || next != hasCursor {
					t.Errorf("response %s: Link/X-Next-Cursor declared %v/%v; a paged list (cursor parameter: %v) has both", code, link, next, hasCursor)
				}
			}
			if hasLimit {
				if _, ok := responses["400"]; !ok {
					t.Error("a list with limit answers 400 for a bad limit")
				}
			}

			// A sandbox-only route is served by the sandbox listener
			// alone: its path names that server, and production's 404
			// is documented. Every other route is on both listeners.
			item, _ := oaPointer(doc, "/paths/"+strings.ReplaceAll(path, "/", "~1"))
			servers, overridden := item.(map[string]any)["servers"].([]any)
			if _, ok := op["servers"]; ok {
				t.Error("servers belong on the path item, not the operation")
			}
			if underPrefix(rte.path, sandboxOnlyPrefix) {
				var urls []string
				for _, s := range servers {
					u, _ := s.(map[string]any)["url"].(string)
					urls = append(urls, u)
				}
				if want := []string{oaSandboxServer}; !slices.Equal(urls, want) {
					t.Errorf("sandbox-only route: path servers %v, want %v", urls, want)
				}
				if _, ok := responses["404"]; !ok {
					t.Error("sandbox-only route: no 404 response for the production listener")
				}
				for _, k := range []string{"summary", "description"} {
					if s, _ := op[k].(string); !strings.Contains(strings.ToLower(s), "sandbox") {
						t.Errorf("sandbox-only route: the %s does not say so", k)
					}
				}
			} else if overridden {
				t.Error("servers overridden on a route both listeners serve")
			}
		})
	}
}

// oaSandboxServer is the sandbox listener's entry in the document's servers.
const oaSandboxServer = "http://127.0.0.1:8081"

// Documents the server assembles from more than one Go value, as the Go
// types that encode to the same members (TestOpenAPI_MatchesCode checks
// that they do).
type (
	// oaServedEvidence is the answer of GET /polygons/{polygonId}/evidence:
	// the stored polygon.Evidence with the "ledger" member anchor.WithProof
	// appends.
	oaServedEvidence struct {
		polygon.Evidence
		Ledger *anchor.DocumentLedger `json:"ledger"`
	}
	// oaScreeningEntry and oaShipmentEntry are ledger entries as stored:
	// the fields anchored and the "prev" member ledger.Append adds.
	oaScreeningEntry struct {
		anchor.ScreeningEntry
		Prev string `json:"prev"`
	}
	oaShipmentEntry struct {
		anchor.ShipmentEntry
		Prev string `json:"prev"`
	}
)

// TestOpenAPI_MatchesCode checks the schemas against the Go types and the
// validators they describe.
func TestOpenAPI_MatchesCode(t *testing.T) {
	doc := loadOpenAPI(t)

	t.Run("ErrorCodes", func(t *testing.T) {
		codes, details := oaErrorCodeConstants(t)
		got := oaStrings(oaMust(t, doc, "/components/schemas/Error/properties/code/enum"))
		sort.Strings(got)
		sort.Strings(codes)
		if !slices.Equal(got, codes) {
			t.Errorf("Error.code enum: got %v, want the Code* constants of apierr %v", got, codes)
		}
		desc := oaMust(t, doc, "/components/schemas/ErrorDetail/description").(string)
		intro := oaMust(t, doc, "/info/description").(string)
		for _, d := range details {
			if !strings.Contains(desc, "`"+d+"`") {
				t.Errorf("detail code %s is not listed in ErrorDetail's description", d)
			}
			if !strings.Contains(intro, "`"+d+"`") {
				t.Errorf("detail code %s is not listed in the error table of info.description", d)
			}
		}
	})

	t.Run("Structs", func(t *testing.T) {
		cases := []struct {
			v        any
			schema   string
			response bool
		}{
			{account.LoginRequest{}, "LoginRequest", false},
			{loginResponse{}, "LoginResponse", true},
			{keyCreateRequest{}, "ApiKeyCreateRequest", false},
			{keyResponse{}, "ApiKey", true},
			{keyCreatedResponse{}, "ApiKeyWithValue", true},
			{batch.SupplierRequest{}, "SupplierRequest", false},
			{supplierResponse{}, "Supplier", true},
			{healthResponse{}, "Health", true},
			{storeHealth{}, "StoreHealth", true},
			{probeResponse{}, "ProbeStatus", true},
			{apierr.Error{}, "Error", true},
			{apierr.Detail{}, "ErrorDetail", true},
			{webhook.Request{}, "WebhookRequest", false},
			{webhookResponse{}, "Webhook", true},
			{secretResponse{}, "WebhookSecret", true},
			{attemptResponse{}, "WebhookDelivery", true},
			{dlqListResponse{}, "DlqList", true},
			{dlqMessage{}, "DlqMessage", true},
			{webhook.EventIDsRequest{}, "DlqEventIds", false},
			{jobResponse{}, "Job", true},
			{progressBody{}, "JobProgress", true},
			{jobErrorBody{}, "JobError", true},
			{jobAttemptBody{}, "JobAttempt", true},
			{storage.JobError{}, "JobError", true},
			{event.JobFailedData{}, "JobFailedData", true},
			{sandboxEventRequest{}, "SandboxEventRequest", false},
			{sandboxEventResponse{}, "SandboxEventResponse", true},
			{sandboxJobRequest{}, "SandboxJobRequest", false},
			{jobAcceptedResponse{}, "JobAccepted", true},
			{layer.ImportRequest{}, "LayerImportRequest", false},
			{layerResponse{}, "Layer", true},
			{coverageSummary{}, "LayerCoverage", true},
			{polygonsAcceptedResponse{}, "PolygonsAccepted", true},
			{polygonResponse{}, "Polygon", true},
			{riskBody{}, "PolygonRisk", true},
			{polygon.Risk{}, "PolygonRisk", true},
			{polygonStatusResponse{}, "PolygonStatus", true},
			{oaServedEvidence{}, "PolygonEvidence", true},
			{anchor.DocumentLedger{}, "PolygonEvidenceLedger", true},
			{polygon.EvidenceRules{}, "PolygonEvidenceRules", true},
			{polygon.EvidenceLayer{}, "PolygonEvidenceLayer", true},
			{polygon.EvidenceOverlap{}, "PolygonEvidenceOverlap", true},
			{polygon.Result{}, "PolygonJobResult", true},
			{event.PolygonVerifiedData{}, "PolygonVerifiedData", true},
			{event.PolygonFailedData{}, "PolygonFailedData", true},
			{batch.Request{}, "BatchRequest", false},
			{batch.QuantityRequest{}, "BatchQuantityRequest", false},
			{batchAcceptedResponse{}, "BatchAccepted", true},
			{batchResponse{}, "Batch", true},
			{batchQuantityBody{}, "BatchQuantity", true},
			{batch.JobResult{}, "BatchJobResult", true},
			{risk.Factor{}, "RiskFactor", true},
			{risk.CountryFactorInputs{}, "CountryFactorInputs", true},
			{risk.CountryPlotsInputs{}, "CountryPlots", true},
			{risk.PlotFactorInputs{}, "PlotFactorInputs", true},
			{risk.SupplierFactorInputs{}, "SupplierFactorInputs", true},
			{batch.RiskAssessment{}, "RiskAssessment", true},
			{batch.DataVersions{}, "RiskDataVersions", true},
			{batch.DataSet{}, "RiskDataSet", true},
			{event.BatchRiskAssessedData{}, "BatchRiskAssessedData", true},
			{shipment.LinkRequest{}, "ShipmentLinkRequest", false},
			{shipmentLinkAccepted{}, "ShipmentLinkAccepted", true},
			{shipmentResponse{}, "Shipment", true},
			{event.ShipmentLinkedData{}, "ShipmentLinkedData", true},
			{checkpointResponse{}, "LedgerCheckpoint", true},
			{publicKeyResponse{}, "LedgerPublicKey", true},
			{entryResponse{}, "LedgerEntry", true},
			{oaScreeningEntry{}, "LedgerEntryPolygonScreened", true},
			{oaShipmentEntry{}, "LedgerEntryShipmentLinked", true},
			{inclusionResponse{}, "LedgerInclusionProof", true},
			{consistencyResponse{}, "LedgerConsistencyProof", true},
			{anchor.Proof{}, "LedgerProof", true},
			{evidenceVerifyResponse{}, "EvidenceVerification", true},
			{dds.DraftRequest{}, "DdsRequest", false},
			{dds.Reference{}, "DdsReference", true},
			{ddsResponse{}, "Dds", true},
			{ddsChangeBody{}, "DdsChange", true},
			{ddsSubmissionBody{}, "DdsSubmission", true},
			{dds.Payload{}, "DdsStatement", true},
			{dds.PayloadOperator{}, "DdsStatementOperator", true},
			{dds.PayloadCommodity{}, "DdsStatementCommodity", true},
			{dds.PayloadProducer{}, "DdsStatementProducer", true},
			{ddsSubmitAccepted{}, "JobAccepted", true},
			{event.DDSSubmittedData{}, "DdsSubmittedData", true},
			{event.DDSValidatedData{}, "DdsValidatedData", true},
			{event.DDSRejectedData{}, "DdsRejectedData", true},
			{oaDDSEntry{}, "LedgerEntryDdsStatus", true},
			{dds.CredentialsRequest{}, "CredentialsRequest", false},
			{credentialsResponse{}, "Credentials", true},
			{report.ArchiveRequest{}, "ArchiveRequest", false},
			{archiveAccepted{}, "ArchiveAccepted", true},
			{reportResponse{}, "Report", true},
			{event.ReportReadyData{}, "ReportReadyData", true},
			{report.Manifest{}, "ArchiveManifest", true},
			{report.ManifestFile{}, "ArchiveManifestFile", true},
			{report.DDSLedgerLine{}, "ArchiveDdsLedger", true},
			{report.DDSLedgerEntry{}, "ArchiveDdsLedgerEntry", true},
			{report.Checkpoint{}, "LedgerCheckpoint", true},
			{report.PublicKey{}, "LedgerPublicKey", true},
		}
		for _, c := range cases {
			t.Run(c.schema, func(t *testing.T) {
				oaCheckStruct(t, doc, reflect.TypeOf(c.v), c.schema, c.response)
			})
		}

		// The stand-in types decode what the server assembles, member
		// for member: the evidence with its ledger member, the entries
		// with prev.
		reason := geo.ReasonSelfIntersection
		evidence, err := ledger.CanonicalJSON(polygon.Evidence{FailureReason: &reason, Layers: []polygon.EvidenceLayer{}, Overlaps: []polygon.EvidenceOverlap{}})
		if err != nil {
			t.Fatal(err)
		}
		served, err := anchor.WithProof(nil, storage.Tenant{}, evidence, nil)
		if err != nil {
			t.Fatal(err)
		}
		screened, err := ledger.Canonical(anchor.ScreeningEntry{Type: anchor.EntryPolygonScreened}, "")
		if err != nil {
			t.Fatal(err)
		}
		linked, err := ledger.Canonical(anchor.ShipmentEntry{Type: anchor.EntryShipmentLinked, BillOfLading: "BL", ContainerNumbers: []string{"CSQU3054383"},
			PortOfEntry: "NLRTM", ETA: "2026-12-01"}, strings.Repeat("0", 64))
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range []struct {
			data []byte
			v    any
		}{{served, &oaServedEvidence{}}, {screened, &oaScreeningEntry{}}, {linked, &oaShipmentEntry{}}} {
			dec := json.NewDecoder(bytes.NewReader(a.data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(a.v); err != nil {
				t.Errorf("%T does not decode %s: %v", a.v, a.data, err)
				continue
			}
			again, err := ledger.CanonicalJSON(a.v)
			var want map[string]any
			json.Unmarshal(a.data, &want)
			if canon, _ := ledger.CanonicalJSON(want); err != nil || !bytes.Equal(again, canon) {
				t.Errorf("%T encodes %s, the server %s", a.v, again, canon)
			}
		}
	})

	t.Run("Constraints", func(t *testing.T) {
		const sr = "/components/schemas/SupplierRequest/properties/"
		const resp = "/content/application~1json/schema/allOf/1/properties/message/const"
		const pp = "/components/schemas/PolygonFeatureProperties/properties/"
		checks := []struct {
			ptr  string
			want any
		}{
			{sr + "erpVendorId/pattern", batch.ERPVendorIDPattern.String()},
			{sr + "euOperatorUuid/pattern", euis.UUIDPattern.String()},
			{sr + "eori/pattern", batch.EORIPattern.String()},
			{sr + "name/maxLength", float64(batch.MaxSupplierNameLen)},
			{sr + "role/enum", []any{batch.RoleOperator, batch.RoleTrader, nil}},
			{sr + "role/default", batch.RoleOperator},
			{"/components/schemas/Supplier/properties/erpVendorId/pattern", batch.ERPVendorIDPattern.String()},
			{"/components/schemas/Supplier/properties/eori/pattern", batch.EORIPattern.String()},
			{"/components/parameters/ErpVendorId/schema/pattern", batch.ERPVendorIDPattern.String()},
			{"/components/schemas/ApiKeyCreateRequest/properties/name/maxLength", float64(account.MaxKeyNameLen)},
			{"/components/schemas/ApiKeyCreateRequest/properties/scopes/default", []any{account.ScopeRead, account.ScopeWrite}},
			{"/components/schemas/Scope/enum", []any{account.ScopeRead, account.ScopeWrite}},
			{"/components/schemas/Environment/enum", []any{string(storage.Production), string(storage.Sandbox)}},
			{"/components/parameters/Limit/schema/minimum", float64(1)},
			{"/components/parameters/Limit/schema/maximum", float64(maxPageLimit)},
			{"/components/parameters/Limit/schema/default", float64(defaultPageLimit)},
			{"/components/parameters/IdempotencyKeyRequired/schema/maxLength", float64(maxIdempotencyKeyLen)},
			{"/components/parameters/IdempotencyKeyOptional/schema/maxLength", float64(maxIdempotencyKeyLen)},
			{"/components/schemas/Error/properties/message/maxLength", float64(maxEchoedText)},
			{"/components/schemas/ErrorDetail/properties/field/maxLength", float64(maxEchoedField)},
			{"/components/schemas/ErrorDetail/properties/issue/maxLength", float64(maxEchoedText)},
			{"/components/responses/Unauthorized" + resp, apierr.MsgUnauthorized},
			{"/components/responses/Forbidden" + resp, apierr.MsgForbidden},
			{"/components/schemas/EventType/enum", oaAnys(event.Subscribable...)},
			{"/components/schemas/AnyEventType/enum", oaAnys(append(slices.Clone(event.Subscribable), event.WebhookPing)...)},
			{"/components/schemas/WebhookRequest/properties/targetUrl/maxLength", float64(webhook.MaxTargetURLLen)},
			{"/components/schemas/WebhookRequest/properties/targetUrl/pattern", "^https://"},
			{"/components/schemas/Webhook/properties/status/const", webhookStatusRegistered},
			{"/components/schemas/WebhookDelivery/properties/errorClass/enum", oaAnys("", queue.ErrorClassTimeout,
				queue.ErrorClassConnection, queue.ErrorClassTLS, queue.ErrorClassTargetNotAllowed, queue.ErrorClassHTTPStatus, queue.ErrorClassRedirect)},
			{"/components/schemas/WebhookDelivery/properties/attempt/maximum", float64(queue.MaxAttempts - 1)},
			{"/components/schemas/WebhookEnvelope/properties/attempt/maximum", float64(queue.MaxAttempts - 1)},
			{"/components/schemas/DlqMessage/properties/attempts/maximum", float64(queue.MaxAttempts)},
			{"/components/schemas/Job/properties/status/enum", oaAnys(storage.JobQueued, storage.JobRunning, storage.JobCompleted, storage.JobFailed)},
			{"/components/schemas/DdsSubmission/properties/status/enum", oaAnys(storage.JobQueued, storage.JobRunning, storage.JobFailed)},
			{"/components/parameters/DeliveryLimit/schema/maximum", float64(maxPageLimit)},
			{"/components/parameters/DeliveryLimit/schema/default", float64(defaultPageLimit)},
			{"/components/parameters/DlqLimit/schema/maximum", float64(webhook.MaxDLQLimit)},
			{"/components/parameters/DlqLimit/schema/default", float64(webhook.DefaultDLQLimit)},
			{"/components/parameters/DlqReplayLimit/schema/maximum", float64(webhook.MaxDLQLimit)},
			{"/components/schemas/SandboxJobRequest/properties/items/maximum", float64(maxSandboxItems)},
			{"/components/schemas/SandboxJobRequest/properties/itemMillis/maximum", float64(maxSandboxItemMillis)},
			{"/components/schemas/SandboxJobRequest/properties/failAtItem/maximum", float64(maxSandboxItems - 1)},
			{"/components/schemas/EudrStatus/enum", oaAnys(geo.StatusCompliant, geo.StatusHighRisk, geo.StatusFailed)},
			{"/components/schemas/Commodity/enum", oaAnys(geo.Commodities()...)},
			{pp + "producerName/maxLength", float64(geo.MaxNameLen)},
			{pp + "productionPlace/maxLength", float64(geo.MaxNameLen)},
			{pp + "externalId/maxLength", float64(geo.MaxExternalIDLen)},
			{"/components/schemas/PolygonEvidence/properties/engineVersion/examples", []any{geo.EngineVersion}},
			{"/components/schemas/Polygon/properties/geometryType/enum", oaAnys(geo.TypePolygon, geo.TypeMultiPolygon, geo.TypePoint, geo.TypeMultiPoint)},
			{"/components/schemas/Job/allOf/0/if/properties/type/const", work.PolygonIngestion},
			{"/components/schemas/Job/allOf/0/then/properties/results/items/$ref", "#/components/schemas/PolygonJobResult"},
			{"/components/schemas/Job/allOf/1/if/properties/type/const", work.BatchRiskAssessment},
			{"/components/schemas/Job/allOf/1/then/properties/results/items/$ref", "#/components/schemas/BatchJobResult"},
			{"/components/schemas/BatchStatus/enum", oaAnys(storage.BatchAssessing, storage.BatchVerified, storage.BatchHighRisk)},
			{"/components/schemas/BatchJobResult/properties/status/enum", oaAnys(storage.BatchVerified, storage.BatchHighRisk)},
			{"/components/schemas/RiskLevel/enum", oaAnys(risk.LevelNegligible, risk.LevelNotNegligible)},
			{"/components/schemas/RiskFactorName/enum", oaAnys(risk.FactorCountryBenchmark, risk.FactorPlotRisk, risk.FactorSupplierHistory)},
			{"/components/schemas/CountryPlots/properties/riskClass/enum", oaAnys(risk.CountryLow, risk.CountryStandard, risk.CountryHigh)},
			{"/components/schemas/HsCode/pattern", risk.HSCodePattern.String()},
			{"/components/schemas/SupplementaryUnitType/enum", oaAnys(batch.SupplementaryUnitTypes...)},
			{"/components/schemas/BatchRequest/properties/polygonIds/maxItems", float64(batch.MaxPolygons)},
			{"/components/schemas/BatchRequest/properties/batchReference/maxLength", float64(batch.MaxReferenceLen)},
			{"/components/schemas/BatchRequest/properties/supplierId/pattern", batch.ERPVendorIDPattern.String()},
			{"/components/schemas/BatchQuantityRequest/properties/netMassKg/exclusiveMaximum", float64(batch.MaxQuantity)},
			{"/components/schemas/BatchQuantityRequest/properties/supplementaryUnit/exclusiveMaximum", float64(batch.MaxQuantity)},
			{"/components/schemas/RiskAssessment/properties/engineVersion/examples", []any{risk.EngineVersion}},
			{"/components/schemas/ShipmentId/pattern", shipment.IDPattern.String()},
			{"/components/schemas/ShipmentLinkRequest/properties/shipmentId/$ref", "#/components/schemas/ShipmentId"},
			{"/components/schemas/ContainerNumber/pattern", shipment.ContainerPattern.String()},
			{"/components/schemas/ShipmentLinkRequest/properties/containerNumbers/items/$ref", "#/components/schemas/ContainerNumber"},
			{"/components/schemas/ShipmentLinkRequest/properties/containerNumbers/maxItems", float64(shipment.MaxContainers)},
			{"/components/schemas/UnLocode/pattern", shipment.UNLOCODEPattern.String()},
			{"/components/schemas/Shipment/properties/portOfEntry/pattern", shipment.UNLOCODEPattern.String()},
			{"/components/schemas/ShipmentLinkRequest/properties/billOfLading/maxLength", float64(shipment.MaxBillOfLadingLen)},
			{"/components/schemas/ShipmentLinkStatus/enum", oaAnys(storage.LinkPending, storage.LinkLinked, storage.LinkFailed)},
			{"/components/schemas/Shipment/allOf/0/if/properties/status/const", storage.LinkLinked},
			{"/components/schemas/Job/properties/ledgerProofs/items/$ref", "#/components/schemas/LedgerProof"},
			{"/components/schemas/Job/allOf/2/if/properties/type/const", work.ShipmentLink},
			{"/components/schemas/LedgerEntryPolygonScreened/properties/type/const", anchor.EntryPolygonScreened},
			{"/components/schemas/LedgerEntryShipmentLinked/properties/type/const", anchor.EntryShipmentLinked},
			{"/components/schemas/EvidenceVerification/properties/steps/items/enum", oaAnys(polygon.StepDocument, polygon.StepEntry,
				polygon.StepInclusion, polygon.StepCheckpoint, polygon.StepLog)},
			{"/components/schemas/LedgerEntry/properties/data/contentSchema/$ref", "#/components/schemas/LedgerEntryData"},
			{"/components/schemas/PolygonEvidenceLedger/properties/data/contentSchema/$ref", "#/components/schemas/LedgerEntryPolygonScreened"},
			{"/components/schemas/DdsStatus/enum", oaAnys(storage.DDSDraft, storage.DDSSubmitted, storage.DDSValidated, storage.DDSRejected, storage.DDSRevoked)},
			{"/components/schemas/ActivityType/enum", oaAnys(euis.ActivityImport, euis.ActivityExport, euis.ActivityDomestic)},
			{"/components/schemas/DdsRequest/properties/batchIds/maxItems", float64(dds.MaxBatches)},
			{"/components/schemas/DdsRequest/properties/operatorUuid/pattern", euis.UUIDPattern.String()},
			{"/components/schemas/DdsRequest/properties/internalReference/maxLength", float64(euis.MaxInternalReferenceLen)},
			{"/components/schemas/DdsStatement/properties/internalReferenceNumber/maxLength", float64(euis.MaxInternalReferenceLen)},
			{"/components/schemas/DdsStatement/properties/operatorRole/const", euis.RoleOperator},
			{"/components/schemas/LedgerEntryDdsStatus/properties/type/const", anchor.EntryDDSStatus},
			{"/components/schemas/Job/allOf/3/if/properties/type/const", work.DDSSubmission},
			{"/components/schemas/DdsRejectedData/properties/reasons/examples", []any{oaAnys(euis.ReasonOperatorUUIDMismatch)}},
			{"/components/schemas/ReportStatus/enum", oaAnys(storage.ReportPending, storage.ReportReady, storage.ReportFailed, storage.ReportExpired)},
			{"/components/schemas/ArchiveManifest/properties/format/const", report.Format},
			{"/components/schemas/Job/allOf/4/if/properties/type/const", work.ArchiveReport},
			{"/components/schemas/Job/allOf/4/then/properties/results/items/$ref", "#/components/schemas/ReportReadyData"},
		}
		for _, c := range checks {
			if got := oaMust(t, doc, c.ptr); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: got %#v, want %#v", c.ptr, got, c.want)
			}
		}
	})

	t.Run("JobTypes", func(t *testing.T) {
		for _, ptr := range []string{"/components/schemas/Job/properties/type/description", "/components/schemas/JobFailedData/properties/type/description"} {
			for _, typ := range []string{work.PolygonIngestion, work.BatchRiskAssessment, work.ShipmentLink, work.DDSSubmission, work.ArchiveReport, work.SandboxTest} {
				if d, _ := oaMust(t, doc, ptr).(string); !strings.Contains(d, "`"+typ+"`") {
					t.Errorf("%s does not list the job type %s", ptr, typ)
				}
			}
		}
		// The job error codes, where JobError's code is described.
		for _, code := range []string{apierr.JobFailed, apierr.JobLedgerConsensusTimeout} {
			if d, _ := oaMust(t, doc, "/components/schemas/JobError/properties/code/description").(string); !strings.Contains(d, "`"+code+"`") {
				t.Errorf("JobError's code does not list %s", code)
			}
		}
	})

	// Every failureReason the geo package can give (its Reason* constants)
	// is in the FailureReason enum, with a sentence of its own.
	t.Run("FailureReasons", func(t *testing.T) {
		var reasons []string
		for name, v := range oaStringConstants(t, filepath.Join("..", "geo", "*.go")) {
			if strings.HasPrefix(name, "Reason") {
				reasons = append(reasons, v)
			}
		}
		if len(reasons) == 0 {
			t.Fatal("found no Reason* constants in the geo package")
		}
		got := oaStrings(oaMust(t, doc, "/components/schemas/FailureReason/enum"))
		sort.Strings(got)
		sort.Strings(reasons)
		if !slices.Equal(got, reasons) {
			t.Errorf("FailureReason enum: got %v, want the Reason* constants of the geo package %v", got, reasons)
		}
		desc := oaMust(t, doc, "/components/schemas/FailureReason/description").(string)
		for _, r := range reasons {
			if !strings.Contains(desc, "- `"+r+"`: ") {
				t.Errorf("reason %s has no sentence in FailureReason's description", r)
			}
		}
	})

	// The detail codes of the GeoJSON parser (the geo package's Code*
	// constants) are listed where the server's are, and in the 400 of
	// POST /polygons.
	t.Run("GeoDetailCodes", func(t *testing.T) {
		var codes []string
		for name, v := range oaStringConstants(t, filepath.Join("..", "geo", "*.go")) {
			if strings.HasPrefix(name, "Code") {
				codes = append(codes, v)
			}
		}
		if len(codes) == 0 {
			t.Fatal("found no Code* constants in the geo package")
		}
		sort.Strings(codes)
		post := oaFindOperation(t, doc, "POST", eudrPrefix+"/polygons")
		texts := map[string]string{
			"ErrorDetail's description": oaMust(t, doc, "/components/schemas/ErrorDetail/description").(string),
			"info.description":          oaMust(t, doc, "/info/description").(string),
			"the 400 of POST /polygons": oaMust(t, post, "/responses/400/description").(string),
		}
		for where, text := range texts {
			for _, c := range codes {
				if !strings.Contains(text, "`"+c+"`") {
					t.Errorf("detail code %s is not listed in %s", c, where)
				}
			}
		}
	})

	t.Run("Countries", func(t *testing.T) {
		got := oaStrings(oaMust(t, doc, "/components/schemas/CountryCode/enum"))
		for _, c := range got {
			if !geo.IsCountryCode(c) {
				t.Errorf("CountryCode enum has %q, which geo.IsCountryCode refuses", c)
			}
		}
		accepted := 0
		for a := 'A'; a <= 'Z'; a++ {
			for b := 'A'; b <= 'Z'; b++ {
				if geo.IsCountryCode(string([]rune{a, b})) {
					accepted++
				}
			}
		}
		if len(got) != accepted {
			t.Errorf("CountryCode enum has %d codes, geo.IsCountryCode accepts %d", len(got), accepted)
		}
		// The EU's countries: exactly what a statement's countries may be.
		var eu []string
		for a := 'A'; a <= 'Z'; a++ {
			for b := 'A'; b <= 'Z'; b++ {
				if c := string([]rune{a, b}); euis.IsEUCountry(c) {
					eu = append(eu, c)
				}
			}
		}
		if got := oaStrings(oaMust(t, doc, "/components/schemas/EuCountryCode/enum")); !slices.Equal(slices.Sorted(slices.Values(got)), eu) {
			t.Errorf("EuCountryCode enum: got %v, want what euis.IsEUCountry accepts %v", got, eu)
		}
	})

	t.Run("Patterns", func(t *testing.T) {
		now := time.Date(2026, 11, 20, 10, 15, 30, 123456789, time.FixedZone("CET", 3600))
		secret, err := webhooksig.NewSecret()
		if err != nil {
			t.Fatal(err)
		}
		_, vkey, err := note.GenerateKey(rand.Reader, "eudr-appliance")
		if err != nil {
			t.Fatal(err)
		}
		matches := []struct {
			ptr   string
			value string
		}{
			{"/components/schemas/Timestamp/pattern", storage.FormatTime(now)},
			{"/components/schemas/Timestamp/pattern", storage.FormatTime(now.Truncate(time.Second))},
			{"/components/schemas/ApiKeyWithValue/properties/key/pattern", account.NewKeyValue(storage.Sandbox)},
			{"/components/schemas/ApiKeyWithValue/properties/key/pattern", account.NewKeyValue(storage.Production)},
			{"/components/schemas/ApiKey/properties/prefix/pattern", account.NewKeyValue(storage.Production)[:12]},
			{"/components/schemas/ApiKey/properties/keyId/pattern", storage.NewID("key", now)},
			{"/components/schemas/Supplier/properties/supplierId/pattern", storage.NewID("sup", now)},
			{"/components/schemas/WebhookId/pattern", storage.NewID("wh", now)},
			{"/components/schemas/EventId/pattern", storage.NewID("evt", now)},
			{"/components/schemas/JobId/pattern", storage.NewID("job", now)},
			{"/components/schemas/BatchId/pattern", storage.NewID("bat", now)},
			{"/components/schemas/LinkId/pattern", storage.NewID("lnk", now)},
			{"/components/schemas/DdsId/pattern", storage.NewID("dds", now)},
			{"/components/schemas/ReportId/pattern", storage.NewID("rpt", now)},
			{"/components/schemas/ReportReadyData/properties/downloadPath/pattern", reportDownloadPath(storage.NewID("rpt", now))},
			{"/components/schemas/LedgerPublicKey/properties/verifierKey/pattern", vkey},
			{"/components/schemas/LedgerPublicKey/properties/keyName/pattern", "eudr-appliance"},
			{"/components/schemas/PolygonId/pattern", storage.PolygonID(storage.NewID("job", now), 0)},
			{"/components/schemas/PolygonId/pattern", storage.PolygonID(storage.NewID("job", now), maxFeaturesCeiling-1)},
			{"/components/schemas/Webhook/properties/signingSecret/pattern", secret},
			{"/components/schemas/Webhook/properties/signingSecret/pattern", webhook.Redact(secret)},
			{"/components/parameters/ServiceSignature/schema/pattern", webhooksig.Sign(secret, []byte(`{}`))},
			{"/components/parameters/StandardWebhookSignature/schema/pattern", webhooksig.SignStandard(secret, storage.NewID("evt", now), now, []byte(`{}`))},
		}
		for _, m := range matches {
			re := regexp.MustCompile(oaMust(t, doc, m.ptr).(string))
			if !re.MatchString(m.value) {
				t.Errorf("%s does not match %q, which the server produces", m.ptr, m.value)
			}
		}

		// The header patterns accept exactly what the server accepts.
		idemRE := regexp.MustCompile(oaMust(t, doc, "/components/parameters/IdempotencyKeyRequired/schema/pattern").(string))
		traceRE := regexp.MustCompile(oaMust(t, doc, "/components/parameters/TraceId/schema/pattern").(string))
		for _, s := range []string{"a", "vendor-100234-v1", "a b", "x\x7f", "caf\u00e9", strings.Repeat("k", 255),
			strings.Repeat("k", 256), "~!@#$%^&*()", "trace.id_1-2", strings.Repeat("t", 128), strings.Repeat("t", 129)} {
			key, err := idempotencyKey(s)
			if got, want := idemRE.MatchString(s), err == nil && key == s; got != want {
				t.Errorf("Idempotency-Key %q: pattern matches %v, server accepts %v", s, got, want)
			}
			if got, want := traceRE.MatchString(s), validTraceID(s); got != want {
				t.Errorf("X-Trace-Id %q: pattern matches %v, server accepts %v", s, got, want)
			}
		}

		// EU reference and verification numbers: the patterns accept
		// what the EU client does.
		refRE := regexp.MustCompile(oaMust(t, doc, "/components/schemas/EuReferenceNumber/pattern").(string))
		verRE := regexp.MustCompile(oaMust(t, doc, "/components/schemas/EuVerificationNumber/pattern").(string))
		verMin, _ := oaMust(t, doc, "/components/schemas/EuVerificationNumber/minLength").(float64)
		verMax, _ := oaMust(t, doc, "/components/schemas/EuVerificationNumber/maxLength").(float64)
		for _, s := range []string{"26NL7XTVCZAQ2S", "S26FRNMNBSA96Q", "26nl7XTVCZAQ2S", "26NL7XTVCZAQ2", "26NL7XTVCZAQ2SX", "S26FRNMNBSA96QX", "2026NL7XTVCZAQ", "",
			"K7Q2M9XB", "abcde", "abcd", "a b c d e", strings.Repeat("v", 35), strings.Repeat("v", 36), "tab\tnumber"} {
			if got, want := refRE.MatchString(s), euis.IsReferenceNumber(s); got != want {
				t.Errorf("reference number %q: pattern matches %v, the EU client accepts %v", s, got, want)
			}
			n := float64(utf8.RuneCountInString(s))
			if got, want := verRE.MatchString(s) && n >= verMin && n <= verMax, euis.IsVerificationNumber(s); got != want {
				t.Errorf("verification number %q: pattern and length match %v, the EU client accepts %v", s, got, want)
			}
		}

		// A ledger key name: the pattern accepts exactly what the config
		// (and so the signed-note format) does.
		keyNameRE := regexp.MustCompile(oaMust(t, doc, "/components/schemas/LedgerPublicKey/properties/keyName/pattern").(string))
		for _, s := range []string{"", "eudr-appliance", "a+b", "a b", "caf\u00e9", "x\x7f", "~!@#$%^&*()", strings.Repeat("k", 64), strings.Repeat("k", 65)} {
			if got, want := keyNameRE.MatchString(s), validKeyName(s); got != want {
				t.Errorf("ledger.key_name %q: pattern matches %v, config accepts %v", s, got, want)
			}
		}

		// A feature's properties.supplierId: the pattern accepts exactly
		// what the GeoJSON parser does.
		sidRE := regexp.MustCompile(oaMust(t, doc, "/components/schemas/PolygonFeatureProperties/properties/supplierId/pattern").(string))
		for _, s := range []string{"", "100234", "V-1", "a.b_c-d", "-x", ".x", "a b", "caf\u00e9", strings.Repeat("s", 64), strings.Repeat("s", 65)} {
			body := collection(`{"type":"Feature","geometry":{"type":"Point","coordinates":[5.000000,6.000000]},` +
				`"properties":{"commodity":"cocoa","producerCountry":"GH","area":1,"supplierId":` + strconv.Quote(s) + `}}`)
			_, err := geo.ParseFeatureCollection([]byte(body), geo.ParseOptions{})
			if got, want := sidRE.MatchString(s), err == nil; got != want {
				t.Errorf("properties.supplierId %q: pattern matches %v, parser accepts %v (%v)", s, got, want, err)
			}
		}
	})

	// The deliveries: one webhook (OpenAPI 3.1 top-level webhooks) per
	// event type a delivery can carry, each declaring the signature
	// headers and the envelope with its type; the registration lists
	// the same as callbacks.
	t.Run("Webhooks", func(t *testing.T) {
		want := append(slices.Clone(event.Subscribable), event.WebhookPing)
		sort.Strings(want)
		hooks, _ := doc["webhooks"].(map[string]any)
		if got := slices.Sorted(maps.Keys(hooks)); !slices.Equal(got, want) {
			t.Errorf("webhooks: got %v, want %v", got, want)
		}
		cbs, _ := oaFindOperation(t, doc, "POST", eudrPrefix+"/webhooks")["callbacks"].(map[string]any)
		if got := slices.Sorted(maps.Keys(cbs)); !slices.Equal(got, want) {
			t.Errorf("createWebhook callbacks: got %v, want %v", got, want)
		}
		for _, ev := range want {
			t.Run(ev, func(t *testing.T) {
				item := oaDeref(t, doc, hooks[ev])
				if cb, ok := cbs[ev].(map[string]any); ok {
					if !reflect.DeepEqual(oaDeref(t, doc, cb["{$request.body#/targetUrl}"]), item) {
						t.Error("the createWebhook callback is not the same Path Item as the webhook")
					}
				}
				post, ok := item["post"].(map[string]any)
				if !ok {
					t.Fatal("no post operation")
				}
				params := map[string]map[string]any{}
				for _, p := range oaList(post["parameters"]) {
					pm := oaDeref(t, doc, p)
					if pm["in"] == "header" {
						params[fmt.Sprint(pm["name"])] = pm
					}
				}
				for _, h := range []string{webhooksig.HeaderSignature, webhooksig.HeaderEventID, webhooksig.HeaderEventType,
					webhooksig.HeaderWebhookID, webhooksig.HeaderWebhookTimestamp, webhooksig.HeaderWebhookSignature} {
					if p, ok := params[h]; !ok || p["required"] != true {
						t.Errorf("header %s is not declared as a required parameter", h)
					}
				}
				if got, _ := oaPointer(params[webhooksig.HeaderEventType], "/schema/const"); got != ev {
					t.Errorf("%s: const %v, want %s", webhooksig.HeaderEventType, got, ev)
				}
				body, ok := oaPointer(post, "/requestBody/content/application~1json/schema/allOf")
				if !ok {
					t.Fatal("the request body schema is not allOf [WebhookEnvelope, {...}]")
				}
				all := oaList(body)
				if len(all) != 2 || all[0].(map[string]any)["$ref"] != "#/components/schemas/WebhookEnvelope" {
					t.Errorf("request body: allOf %v does not start with WebhookEnvelope", oaShort(all))
				}
				if got, _ := oaPointer(all[len(all)-1], "/properties/eventType/const"); got != ev {
					t.Errorf("request body: eventType const %v, want %s", got, ev)
				}
				if _, ok := oaPointer(all[len(all)-1], "/properties/data/$ref"); !ok {
					t.Error("request body: data has no schema of its own")
				}
				if _, ok := oaPointer(post, "/responses/410"); !ok {
					t.Error("no 410 response (a 410 answer dead-letters the event)")
				}
			})
		}
	})
}

// oaAnys is a list as JSON decodes it.
func oaAnys(ss ...string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func oaMust(t *testing.T, doc map[string]any, ptr string) any {
	t.Helper()
	v, ok := oaPointer(doc, ptr)
	if !ok {
		t.Fatalf("openapi.json has nothing at %s", ptr)
	}
	return v
}

func oaStrings(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// oaErrorCodeConstants reads the values of the Code* and apierr.Detail* constants of
// the package (errors.go and the handlers' own, such as webhooks.go), so a
// new code cannot be forgotten here.
func oaErrorCodeConstants(t *testing.T) (codes, details []string) {
	t.Helper()
	for name, v := range oaStringConstants(t, "apierr/*.go") {
		switch {
		case strings.HasPrefix(name, "Code"):
			codes = append(codes, v)
		case strings.HasPrefix(name, "Detail"):
			details = append(details, v)
		}
	}
	if len(codes) == 0 || len(details) == 0 {
		t.Fatal("found no Code* or apierr.Detail* constants in the package")
	}
	return codes, details
}

// oaStringConstants returns the string constants declared with a literal
// value in the non-test Go files matching glob, by name.
func oaStringConstants(t *testing.T, glob string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					out[n.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	return out
}

// oaCheckStruct compares a component schema with the JSON encoding of a
// Go struct: the same members, of matching types; a response member is
// always present (required) and nullable exactly when it is a pointer.
// The members of an embedded struct are the struct's, as encoding/json has
// them.
func oaCheckStruct(t *testing.T, doc map[string]any, typ reflect.Type, name string, response bool) {
	t.Helper()
	schema := oaMust(t, doc, "/components/schemas/"+name).(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	if schema["additionalProperties"] != false {
		t.Errorf("additionalProperties: got %v, want false", schema["additionalProperties"])
	}
	required := map[string]bool{}
	for _, r := range oaStrings(schema["required"]) {
		required[r] = true
	}
	var fields []string
	for _, f := range oaJSONFields(typ) {
		tag := f.Tag.Get("json")
		jsonName, opts, _ := strings.Cut(tag, ",")
		if jsonName == "" {
			jsonName = f.Name
		}
		fields = append(fields, jsonName)
		prop, ok := props[jsonName]
		if !ok {
			t.Errorf("member %q (%s.%s) is not in the schema", jsonName, typ.Name(), f.Name)
			continue
		}
		types := oaSchemaTypes(t, doc, prop)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft == reflect.TypeFor[json.RawMessage]() {
			// Raw JSON: any value the handler puts there; the schema
			// must still say which.
			if len(types) == 0 {
				t.Errorf("member %q (raw JSON) has no type in the schema", jsonName)
			}
		} else if want := oaGoType(ft); !types[want] {
			t.Errorf("member %q: schema types %v do not include %s (Go %s)", jsonName, slices.Sorted(maps.Keys(types)), want, f.Type)
		}
		if response {
			if !required[jsonName] && !strings.Contains(opts, "omitempty") {
				t.Errorf("member %q is always sent, so it must be required", jsonName)
			}
			if isPtr := f.Type.Kind() == reflect.Pointer; types["null"] != isPtr {
				t.Errorf("member %q: nullable %v, but the Go field is %s", jsonName, types["null"], f.Type)
			}
		}
	}
	for p := range props {
		if !slices.Contains(fields, p) {
			t.Errorf("schema member %q is not a member of %s", p, typ.Name())
		}
	}
	for r := range required {
		if !slices.Contains(fields, r) {
			t.Errorf("required member %q is not a member of %s", r, typ.Name())
		}
	}
}

// oaJSONFields lists the fields of a struct that encoding/json encodes,
// those of embedded structs without a JSON name in their place.
func oaJSONFields(typ reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct && tag == "" {
			out = append(out, oaJSONFields(f.Type)...)
			continue
		}
		if f.IsExported() {
			out = append(out, f)
		}
	}
	return out
}

func oaGoType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	default:
		return "object"
	}
}

// oaSchemaTypes is the set of JSON types a schema allows, from type, const or
// enum, through $ref and allOf.
func oaSchemaTypes(t *testing.T, doc map[string]any, v any) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	s, _ := v.(map[string]any)
	if ref, ok := s["$ref"].(string); ok {
		target, ok := oaResolve(doc, ref)
		if !ok {
			t.Fatalf("$ref %q does not resolve", ref)
		}
		return oaSchemaTypes(t, doc, target)
	}
	switch ty := s["type"].(type) {
	case string:
		out[ty] = true
	case []any:
		for _, x := range ty {
			out[fmt.Sprint(x)] = true
		}
	}
	if len(out) > 0 {
		return out
	}
	if c, ok := s["const"]; ok {
		out[oaJSONType(c)] = true
	}
	for _, e := range oaList(s["enum"]) {
		out[oaJSONType(e)] = true
	}
	for _, sub := range append(oaList(s["allOf"]), oaList(s["anyOf"])...) {
		for k := range oaSchemaTypes(t, doc, sub) {
			out[k] = true
		}
	}
	if out["number"] {
		out["integer"] = true
	}
	return out
}

func oaList(v any) []any { l, _ := v.([]any); return l }

// TestOpenAPI_Examples checks every example of the document against the
// schema beside it.
func TestOpenAPI_Examples(t *testing.T) {
	doc := loadOpenAPI(t)
	sc := oaSchemaChecker{doc: doc}
	n := 0
	oaWalk(doc, "", func(ptr string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		if ex, ok := m["example"]; ok {
			if schema, ok := m["schema"]; ok {
				n++
				for _, e := range sc.check(schema, ex, ptr+"/example") {
					t.Error(e)
				}
			}
		}
		// Schema Objects carry a list of examples (Media Type Objects a map).
		if exs, ok := m["examples"].([]any); ok {
			for i, ex := range exs {
				n++
				for _, e := range sc.check(m, ex, fmt.Sprintf("%s/examples/%d", ptr, i)) {
					t.Error(e)
				}
			}
		}
	})
	if n == 0 {
		t.Error("found no examples to check")
	}
}

// oaSchemaChecker validates a JSON value against the subset of JSON Schema
// 2020-12 that openapi.json uses: boolean schemas, $ref, allOf, anyOf,
// if/then/else, type, const, enum, required, properties,
// additionalProperties (false or a schema), items, min/maxItems,
// min/maxProperties, min/maxLength, pattern, minimum, maximum. Other
// keywords are ignored.
type oaSchemaChecker struct{ doc map[string]any }

func (sc oaSchemaChecker) check(schema any, v any, at string) []string {
	if b, ok := schema.(bool); ok {
		if !b {
			return []string{fmt.Sprintf("%s: no value is allowed here, got %s", at, oaShort(v))}
		}
		return nil
	}
	s, ok := schema.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: schema is %T, not an object", at, schema)}
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	if ref, ok := s["$ref"].(string); ok {
		target, ok := oaResolve(sc.doc, ref)
		if !ok {
			fail("$ref %q does not resolve", ref)
		} else {
			errs = append(errs, sc.check(target, v, at)...)
		}
	}
	for _, sub := range oaList(s["allOf"]) {
		errs = append(errs, sc.check(sub, v, at)...)
	}
	if branches := oaList(s["anyOf"]); len(branches) > 0 {
		var first []string
		for i, sub := range branches {
			e := sc.check(sub, v, at)
			if len(e) == 0 {
				first = nil
				break
			}
			if i == 0 {
				first = e
			}
		}
		if first != nil {
			fail("matches no branch of anyOf; the first says: %s", strings.Join(first, "; "))
		}
	}
	if cond, ok := s["if"]; ok {
		branch := "else"
		if len(sc.check(cond, v, at)) == 0 {
			branch = "then"
		}
		if sub, ok := s[branch]; ok {
			errs = append(errs, sc.check(sub, v, at)...)
		}
	}
	if ty, ok := s["type"]; ok {
		allowed := oaStrings(ty)
		if s, ok := ty.(string); ok {
			allowed = []string{s}
		}
		got := oaJSONType(v)
		if !slices.Contains(allowed, got) && !(got == "integer" && slices.Contains(allowed, "number")) {
			fail("got %s %s, want type %v", got, oaShort(v), allowed)
			return errs
		}
	}
	if c, ok := s["const"]; ok && !reflect.DeepEqual(c, v) {
		fail("got %s, want %s", oaShort(v), oaShort(c))
	}
	if enum, ok := s["enum"].([]any); ok && !slices.ContainsFunc(enum, func(e any) bool { return reflect.DeepEqual(e, v) }) {
		fail("got %s, want one of %s", oaShort(v), oaShort(enum))
	}
	switch x := v.(type) {
	case string:
		n := float64(utf8.RuneCountInString(x))
		if min, ok := s["minLength"].(float64); ok && n < min {
			fail("%q is shorter than %v", x, min)
		}
		if max, ok := s["maxLength"].(float64); ok && n > max {
			fail("%q is longer than %v", x, max)
		}
		if p, ok := s["pattern"].(string); ok {
			re, err := regexp.Compile(p)
			if err != nil {
				fail("pattern %q: %v", p, err)
			} else if !re.MatchString(x) {
				fail("%q does not match %s", x, p)
			}
		}
	case float64:
		if min, ok := s["minimum"].(float64); ok && x < min {
			fail("%v is below %v", x, min)
		}
		if max, ok := s["maximum"].(float64); ok && x > max {
			fail("%v is above %v", x, max)
		}
	case []any:
		if min, ok := s["minItems"].(float64); ok && float64(len(x)) < min {
			fail("%d items, want at least %v", len(x), min)
		}
		if max, ok := s["maxItems"].(float64); ok && float64(len(x)) > max {
			fail("%d items, want at most %v", len(x), max)
		}
		if items, ok := s["items"]; ok {
			for i, it := range x {
				errs = append(errs, sc.check(items, it, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range oaStrings(s["required"]) {
			if _, ok := x[r]; !ok {
				fail("member %q is required", r)
			}
		}
		if min, ok := s["minProperties"].(float64); ok && float64(len(x)) < min {
			fail("%d members, want at least %v", len(x), min)
		}
		if max, ok := s["maxProperties"].(float64); ok && float64(len(x)) > max {
			fail("%d members, want at most %v", len(x), max)
		}
		for k, mv := range x {
			if ps, ok := props[k]; ok {
				errs = append(errs, sc.check(ps, mv, at+"."+k)...)
			} else if ap, ok := s["additionalProperties"].(map[string]any); ok {
				errs = append(errs, sc.check(ap, mv, at+"."+k)...)
			} else if s["additionalProperties"] == false {
				fail("member %q is not allowed", k)
			}
		}
	}
	return errs
}

func oaJSONType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func oaShort(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

// TestOpenAPI_Tidy keeps the file as json.Indent with two spaces writes it.
func TestOpenAPI_Tidy(t *testing.T) {
	src := OpenAPIDocument()
	var compact, tidy bytes.Buffer
	if err := json.Compact(&compact, src); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&tidy, compact.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	tidy.WriteByte('\n')
	if bytes.Equal(tidy.Bytes(), src) {
		return
	}
	got, want := strings.Split(string(src), "\n"), strings.Split(tidy.String(), "\n")
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("openapi.json is not indented with 2 spaces; line %d: got %q, want %q", i+1, got[i], want[i])
		}
	}
	t.Fatalf("openapi.json is not indented with 2 spaces (one trailing newline): %d lines, want %d", len(got), len(want))
}

func TestOpenAPI_Served(t *testing.T) {
	rec := httptest.NewRecorder()
	handleOpenAPI(rec, httptest.NewRequest("GET", "/api/v1/openapi.json", nil), nil)
	if rec.Code != http.StatusOK {
		t.Errorf("status: got %d, want 200", rec.Code)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
	if !bytes.Equal(rec.Body.Bytes(), OpenAPIDocument()) {
		t.Error("body is not the embedded document")
	}
}

// oaConformance drives a real appliance and checks every answer against the
// document: the status is listed for the operation, the required headers
// are present and valid, and the body matches the schema.
type oaConformance struct {
	t   *testing.T
	a   *App
	doc map[string]any
	sc  oaSchemaChecker
}

// oaCall is one request. op is the operation's path in the document, "" when
// no route matches (404, 405).
type oaCall struct {
	env            storage.Environment
	method, target string
	op             string
	body           string
	hdr            []string // name, value, ...
	want           int
}

type oaAnswer struct {
	rec  *httptest.ResponseRecorder
	body map[string]any
	list []any
}

// detail is the code of the first detail of an error answer.
func (an oaAnswer) detail() string {
	ds, _ := an.body["details"].([]any)
	if len(ds) == 0 {
		return ""
	}
	d, _ := ds[0].(map[string]any)
	return fmt.Sprint(d["code"])
}

func (c *oaConformance) do(cl oaCall) oaAnswer {
	t := c.t
	t.Helper()
	var body io.Reader
	if cl.body != "" {
		body = strings.NewReader(cl.body)
	}
	req := httptest.NewRequest(cl.method, cl.target, body)
	for i := 0; i+1 < len(cl.hdr); i += 2 {
		req.Header.Set(cl.hdr[i], cl.hdr[i+1])
	}
	env := cl.env
	if env == "" {
		env = storage.Sandbox
	}
	rec := httptest.NewRecorder()
	c.a.Handler(env).ServeHTTP(rec, req)
	name := fmt.Sprintf("%s %s (%s)", cl.method, cl.target, env)
	if rec.Code != cl.want {
		t.Errorf("%s: status %d, want %d; body %s", name, rec.Code, cl.want, rec.Body.String())
	}
	c.conform(name, cl, rec)
	var an oaAnswer
	an.rec = rec
	if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
		var v any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Errorf("%s: body is not JSON: %v", name, err)
		}
		an.body, _ = v.(map[string]any)
		an.list, _ = v.([]any)
	}
	return an
}

func (c *oaConformance) conform(name string, cl oaCall, rec *httptest.ResponseRecorder) {
	t := c.t
	t.Helper()
	var resp map[string]any
	if cl.op == "" {
		comp := map[int]string{http.StatusNotFound: "NotFound", http.StatusMethodNotAllowed: "MethodNotAllowed"}[rec.Code]
		if comp == "" {
			t.Errorf("%s: status %d without a route", name, rec.Code)
			return
		}
		resp = oaDeref(t, c.doc, map[string]any{"$ref": "#/components/responses/" + comp})
	} else {
		op := oaFindOperation(t, c.doc, cl.method, cl.op)
		rv, ok := op["responses"].(map[string]any)[strconv.Itoa(rec.Code)]
		if !ok {
			t.Errorf("%s: status %d is not documented for %s %s", name, rec.Code, cl.method, cl.op)
			return
		}
		resp = oaDeref(t, c.doc, rv)
	}

	hdrs, _ := resp["headers"].(map[string]any)
	for hn, hv := range hdrs {
		h := oaDeref(t, c.doc, hv)
		val := rec.Header().Get(hn)
		if val == "" {
			if h["required"] == true {
				t.Errorf("%s: %d answer lacks the %s header", name, rec.Code, hn)
			}
			continue
		}
		schema, _ := h["schema"].(map[string]any)
		var v any = val
		if schema["type"] == "integer" {
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				t.Errorf("%s: header %s: %q is not an integer", name, hn, val)
				continue
			}
			v = float64(n)
		}
		for _, e := range c.sc.check(schema, v, "header "+hn) {
			t.Errorf("%s: %s", name, e)
		}
	}

	content, _ := resp["content"].(map[string]any)
	if content == nil {
		if rec.Body.Len() != 0 {
			t.Errorf("%s: %d answer has a body, the document says none", name, rec.Code)
		}
		return
	}
	mt, _, _ := mime.ParseMediaType(rec.Header().Get("Content-Type"))
	media, ok := content[mt].(map[string]any)
	if !ok {
		t.Errorf("%s: Content-Type %q is not documented for %d", name, mt, rec.Code)
		return
	}
	if mt != "application/json" {
		return
	}
	var v any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Errorf("%s: body is not JSON: %v", name, err)
		return
	}
	for _, e := range c.sc.check(media["schema"], v, "body") {
		t.Errorf("%s: %d answer: %s", name, rec.Code, e)
	}
}

func TestOpenAPI_ResponsesMatchServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an appliance")
	}
	// A webhook receiver with a certificate of its own, which the
	// appliance trusts through webhooks.ca_file: /gone answers 410, every
	// other path 200.
	recv := &oaReceiver{}
	recvSrv := httptest.NewTLSServer(recv)
	t.Cleanup(recvSrv.Close)
	caFile := filepath.Join(t.TempDir(), "receiver-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: recvSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig("", []string{
		"EUDR_WEBHOOKS_CA_FILE=" + caFile,
		"EUDR_DATA_DIR=" + t.TempDir(),
		"EUDR_ADMIN_PASSWORD=openapi-password",
		"EUDR_RATE_LIMIT_PER_SECOND=100000",
		"EUDR_RATE_LIMIT_BURST=100000",
		"EUDR_RATE_LIMIT_IP_PER_SECOND=100000",
		"EUDR_RATE_LIMIT_IP_BURST=100000",
		"EUDR_LIMITS_MAX_BODY_BYTES=4096",
		"EUDR_LIMITS_MAX_FEATURES=5",
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := New(cfg, Options{Version: "openapi-test", Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	doc := loadOpenAPI(t)
	c := &oaConformance{t: t, a: a, doc: doc, sc: oaSchemaChecker{doc: doc}}

	const (
		login     = "/api/v1/enterprise/auth/login"
		keys      = "/api/v1/enterprise/api-keys"
		rotate    = "/api/v1/enterprise/api-keys/{keyId}/rotate"
		key       = "/api/v1/enterprise/api-keys/{keyId}"
		backup    = "/api/v1/enterprise/admin/backup"
		health    = "/api/v1/enterprise/eudr/health"
		suppliers = "/api/v1/enterprise/eudr/suppliers"
		supplier  = "/api/v1/enterprise/eudr/suppliers/{erpVendorId}"
	)
	jsonCT := []string{"Content-Type", "application/json"}
	with := oaWith

	// Probes and the document.
	c.do(oaCall{method: "GET", target: "/livez", op: "/livez", want: 200})
	c.do(oaCall{env: storage.Production, method: "GET", target: "/readyz", op: "/readyz", want: 200})
	an := c.do(oaCall{method: "GET", target: "/api/v1/openapi.json", op: "/api/v1/openapi.json", want: 200,
		hdr: []string{"X-Trace-Id", "my-trace.1"}})
	if got := an.rec.Header().Get("X-Trace-Id"); got != "my-trace.1" {
		t.Errorf("X-Trace-Id: got %q, want the request's my-trace.1", got)
	}

	// Login.
	an = c.do(oaCall{method: "POST", target: login, op: login, body: `{"user":"admin"}`, hdr: jsonCT, want: 400})
	if an.detail() != apierr.DetailRequired && an.detail() != apierr.DetailUnknownField {
		t.Errorf("login with a bad body: detail %q", an.detail())
	}
	c.do(oaCall{method: "POST", target: login, op: login, body: `{"username":"admin","password":"wrong"}`, hdr: jsonCT, want: 401})
	c.do(oaCall{method: "POST", target: login, op: login, body: `{"username":"admin","password":"x"}`,
		hdr: []string{"Content-Type", "text/plain"}, want: 415})
	c.do(oaCall{method: "POST", target: login, op: login, body: `{"username":"` + strings.Repeat("a", 5000) + `"}`, hdr: jsonCT, want: 413})
	an = c.do(oaCall{method: "POST", target: login, op: login, body: `{"username":"admin","password":"openapi-password"}`, hdr: jsonCT, want: 200})
	jwt := []string{"Authorization", "Bearer " + fmt.Sprint(an.body["token"])}

	// Key management.
	c.do(oaCall{method: "GET", target: keys, op: keys, want: 401})
	an = c.do(oaCall{method: "POST", target: keys, op: keys, body: `{"environment":"sandbox"}`, hdr: with(jwt, jsonCT...), want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("create key without Idempotency-Key: detail %q, want %s", an.detail(), apierr.DetailIdempotencyKeyMissing)
	}
	rwBody := `{"name":"rw","environment":"sandbox"}`
	an = c.do(oaCall{method: "POST", target: keys, op: keys, body: rwBody, hdr: with(jwt, "Idempotency-Key", "k-rw"), want: 200})
	rwKey, rwID := fmt.Sprint(an.body["key"]), fmt.Sprint(an.body["keyId"])
	an = c.do(oaCall{method: "POST", target: keys, op: keys, body: rwBody, hdr: with(jwt, "Idempotency-Key", "k-rw"), want: 200})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || !strings.Contains(fmt.Sprint(an.body["key"]), "*") {
		t.Errorf("replayed key creation: Idempotent-Replayed %q, key %v; want true and a redacted value",
			an.rec.Header().Get("Idempotent-Replayed"), an.body["key"])
	}
	c.do(oaCall{method: "POST", target: keys, op: keys, body: `{"environment":"production"}`, hdr: with(jwt, "Idempotency-Key", "k-rw"), want: 409})
	an = c.do(oaCall{method: "POST", target: keys, op: keys, body: `{"name":"ro","environment":"sandbox","scopes":["read"]}`,
		hdr: with(jwt, "Idempotency-Key", "k-ro"), want: 200})
	roKey, roID := fmt.Sprint(an.body["key"]), fmt.Sprint(an.body["keyId"])
	an = c.do(oaCall{method: "POST", target: keys, op: keys, body: `{"environment":"production","scopes":["write"]}`,
		hdr: with(jwt, "Idempotency-Key", "k-live"), want: 200})
	liveKey := fmt.Sprint(an.body["key"])
	an = c.do(oaCall{method: "POST", target: keys, op: keys, body: `{"environment":"staging","scopes":["admin"],"extra":1}`,
		hdr: with(jwt, "Idempotency-Key", "k-bad"), want: 400})
	an = c.do(oaCall{method: "POST", target: keys, op: keys, body: `{"environment":"staging","scopes":["read","admin"]}`,
		hdr: with(jwt, "Idempotency-Key", "k-bad"), want: 400})
	if ds, _ := an.body["details"].([]any); len(ds) != 2 {
		t.Errorf("create key with two problems: %d details, want 2", len(ds))
	}
	c.do(oaCall{method: "POST", target: keys, op: keys, body: `{"environment":"sandbox"}`,
		hdr: with(jwt, "Idempotency-Key", "bad key"), want: 400})
	an = c.do(oaCall{method: "GET", target: keys + "?limit=1", op: keys, hdr: jwt, want: 200})
	if len(an.list) != 1 || an.rec.Header().Get("Link") == "" || an.rec.Header().Get("X-Next-Cursor") == "" {
		t.Errorf("key list with limit=1: %d items, Link %q, X-Next-Cursor %q; want 1 item and both headers",
			len(an.list), an.rec.Header().Get("Link"), an.rec.Header().Get("X-Next-Cursor"))
	}
	c.do(oaCall{method: "GET", target: keys, op: keys, hdr: jwt, want: 200})
	c.do(oaCall{method: "GET", target: keys + "?limit=0", op: keys, hdr: jwt, want: 400})
	an = c.do(oaCall{method: "GET", target: keys, op: keys, hdr: []string{"X-API-Key", rwKey}, want: 403})
	if an.detail() != apierr.DetailJWTRequired {
		t.Errorf("API key on key management: detail %q, want %s", an.detail(), apierr.DetailJWTRequired)
	}

	// Health and environments.
	an = c.do(oaCall{method: "GET", target: health, op: health, hdr: []string{"X-API-Key", rwKey}, want: 200})
	if an.body["environment"] != "sandbox" {
		t.Errorf("health on the sandbox listener: environment %v", an.body["environment"])
	}
	c.do(oaCall{method: "GET", target: health, op: health, hdr: []string{"Authorization", "Bearer " + roKey}, want: 200})
	an = c.do(oaCall{env: storage.Production, method: "GET", target: health, op: health, hdr: []string{"X-API-Key", rwKey}, want: 403})
	if an.detail() != apierr.DetailWrongEnvironment {
		t.Errorf("sandbox key on production: detail %q, want %s", an.detail(), apierr.DetailWrongEnvironment)
	}
	an = c.do(oaCall{env: storage.Production, method: "GET", target: health, op: health, hdr: []string{"X-API-Key", liveKey}, want: 200})
	if an.body["environment"] != "production" {
		t.Errorf("health on the production listener: environment %v", an.body["environment"])
	}
	c.do(oaCall{method: "GET", target: health, op: health, hdr: jwt, want: 401})
	c.do(oaCall{method: "GET", target: health + "?api_key=" + rwKey, op: health, want: 401})

	// Suppliers.
	rw := []string{"X-API-Key", rwKey}
	ro := []string{"X-API-Key", roKey}
	sup1 := `{"erpVendorId":"100234","euOperatorUuid":"3F2B8A1E-6C4D-4E5F-9A7B-1C2D3E4F5A6B","name":" Cooperative ","country":"CI"}`
	an = c.do(oaCall{method: "POST", target: suppliers, op: suppliers, body: sup1, hdr: with(rw, "Idempotency-Key", "s-1"), want: 200})
	if an.body["eori"] != nil || an.body["role"] != batch.RoleOperator || an.body["name"] != "Cooperative" {
		t.Errorf("supplier defaults: eori %v, role %v, name %q", an.body["eori"], an.body["role"], an.body["name"])
	}
	an = c.do(oaCall{method: "POST", target: suppliers, op: suppliers, body: sup1, hdr: with(rw, "Idempotency-Key", "s-1"), want: 200})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" {
		t.Error("replayed supplier upsert lacks Idempotent-Replayed: true")
	}
	c.do(oaCall{method: "POST", target: suppliers, op: suppliers,
		body: `{"erpVendorId":"V-2","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6c","name":"Second","country":"BR","eori":"BR123","role":"TRADER"}`,
		hdr:  with(rw, "Idempotency-Key", "s-2"), want: 200})
	an = c.do(oaCall{method: "POST", target: suppliers, op: suppliers,
		body: `{"erpVendorId":"-x","euOperatorUuid":"nope","name":"  ","country":"ZZ","eori":"x","role":"BOSS","color":"red"}`,
		hdr:  with(rw, "Idempotency-Key", "s-bad"), want: 400})
	an = c.do(oaCall{method: "POST", target: suppliers, op: suppliers,
		body: `{"erpVendorId":"-x","euOperatorUuid":"nope","name":"  ","country":"ZZ","eori":"x","role":"BOSS"}`,
		hdr:  with(rw, "Idempotency-Key", "s-bad"), want: 400})
	if ds, _ := an.body["details"].([]any); len(ds) != 6 {
		t.Errorf("supplier with six bad members: %d details, want 6", len(ds))
	}
	c.do(oaCall{method: "POST", target: suppliers, op: suppliers, body: `{"erpVendorId":`, hdr: with(rw, "Idempotency-Key", "s-bad"), want: 400})
	c.do(oaCall{method: "POST", target: suppliers, op: suppliers, body: sup1, hdr: rw, want: 400})
	an = c.do(oaCall{method: "POST", target: suppliers, op: suppliers, body: sup1, hdr: with(ro, "Idempotency-Key", "s-ro"), want: 403})
	if an.detail() != apierr.DetailScopeRequired {
		t.Errorf("read-only key on a write: detail %q, want %s", an.detail(), apierr.DetailScopeRequired)
	}
	c.do(oaCall{method: "POST", target: suppliers, op: suppliers, body: sup1, hdr: with(rw, "Idempotency-Key", "s-xml", "Content-Type", "application/xml"), want: 415})

	// A request whose key is still in flight: 423.
	inflight := httptest.NewRequest("POST", suppliers, strings.NewReader(sup1))
	tenant := storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}
	err = a.db.Update(context.Background(), func(tx *storage.Tx) error {
		return tx.PutIdempotency(tenant, &storage.IdempotencyRecord{Key: "s-busy", Fingerprint: fingerprint(inflight, []byte(sup1)),
			State: storage.IdemInFlight, Owner: a.runID, CreatedAt: tx.Now(), ExpiresAt: tx.Now().Add(time.Hour)})
	})
	if err != nil {
		t.Fatal(err)
	}
	c.do(oaCall{method: "POST", target: suppliers, op: suppliers, body: sup1, hdr: with(rw, "Idempotency-Key", "s-busy"), want: 423})

	an = c.do(oaCall{method: "GET", target: suppliers + "?limit=1", op: suppliers, hdr: ro, want: 200})
	next := an.rec.Header().Get("X-Next-Cursor")
	if len(an.list) != 1 || next == "" || !strings.Contains(an.rec.Header().Get("Link"), `rel="next"`) {
		t.Errorf("supplier list with limit=1: %d items, X-Next-Cursor %q, Link %q", len(an.list), next, an.rec.Header().Get("Link"))
	}
	an = c.do(oaCall{method: "GET", target: suppliers + "?limit=1&cursor=" + next, op: suppliers, hdr: ro, want: 200})
	if len(an.list) != 1 || an.rec.Header().Get("Link") != "" {
		t.Errorf("last supplier page: %d items, Link %q; want 1 item and no Link", len(an.list), an.rec.Header().Get("Link"))
	}
	c.do(oaCall{method: "GET", target: suppliers + "?limit=1001", op: suppliers, hdr: ro, want: 400})
	c.do(oaCall{method: "GET", target: suppliers + "/100234", op: supplier, hdr: ro, want: 200})
	c.do(oaCall{method: "GET", target: suppliers + "/nope", op: supplier, hdr: ro, want: 404})
	c.do(oaCall{method: "DELETE", target: suppliers + "/100234", op: supplier, hdr: ro, want: 403})
	c.do(oaCall{method: "DELETE", target: suppliers + "/100234", op: supplier, hdr: rw, want: 204})
	c.do(oaCall{method: "DELETE", target: suppliers + "/100234", op: supplier, hdr: rw, want: 404})

	c.webhooks(recv, recvSrv.URL, rw, ro, []string{"X-API-Key", liveKey})

	// Rotation and revocation.
	an = c.do(oaCall{method: "POST", target: keys + "/" + rwID + "/rotate", op: rotate, hdr: jwt, want: 200})
	newKey := fmt.Sprint(an.body["key"])
	if an.body["keyId"] != rwID || newKey == rwKey {
		t.Errorf("rotate: keyId %v (want %s), value changed: %v", an.body["keyId"], rwID, newKey != rwKey)
	}
	an = c.do(oaCall{method: "GET", target: health, op: health, hdr: []string{"X-API-Key", rwKey}, want: 403})
	if an.detail() != apierr.DetailKeyRotated {
		t.Errorf("old value after rotate: detail %q, want %s", an.detail(), apierr.DetailKeyRotated)
	}
	c.do(oaCall{method: "GET", target: health, op: health, hdr: []string{"X-API-Key", newKey}, want: 200})
	c.do(oaCall{method: "POST", target: keys + "/" + rwID + "/rotate", op: rotate, hdr: with(jwt, "Idempotency-Key", "r-1"), want: 200})
	an = c.do(oaCall{method: "POST", target: keys + "/" + rwID + "/rotate", op: rotate, hdr: with(jwt, "Idempotency-Key", "r-1"), want: 200})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" {
		t.Error("replayed rotation lacks Idempotent-Replayed: true")
	}
	c.do(oaCall{method: "POST", target: keys + "/key_nope/rotate", op: rotate, hdr: jwt, want: 404})
	c.do(oaCall{method: "POST", target: keys + "/" + rwID + "/rotate", op: rotate, hdr: []string{"X-API-Key", liveKey}, want: 403})
	c.do(oaCall{method: "DELETE", target: keys + "/" + roID, op: key, hdr: jwt, want: 204})
	c.do(oaCall{method: "GET", target: health, op: health, hdr: ro, want: 401})
	c.do(oaCall{method: "DELETE", target: keys + "/" + roID, op: key, hdr: jwt, want: 404})
	c.do(oaCall{method: "DELETE", target: keys + "/" + roID, op: key, want: 401})

	// Backup.
	an = c.do(oaCall{method: "GET", target: backup, op: backup, hdr: jwt, want: 200})
	if n, _ := strconv.Atoi(an.rec.Header().Get("Content-Length")); n != an.rec.Body.Len() || n == 0 {
		t.Errorf("backup: Content-Length %q, body %d bytes", an.rec.Header().Get("Content-Length"), an.rec.Body.Len())
	}
	c.do(oaCall{method: "GET", target: backup, op: backup, hdr: []string{"X-API-Key", liveKey}, want: 403})
	c.do(oaCall{method: "GET", target: backup, op: backup, want: 401})

	// The router's own answers.
	an = c.do(oaCall{method: "PUT", target: suppliers, hdr: rw, want: 405})
	if an.rec.Header().Get("Allow") == "" {
		t.Error("405 without an Allow header")
	}
	c.do(oaCall{method: "PATCH", target: "/livez", want: 405})
	head := httptest.NewRecorder()
	a.Handler(storage.Sandbox).ServeHTTP(head, httptest.NewRequest("HEAD", "/livez", nil))
	if head.Code != 200 {
		t.Errorf("HEAD /livez: status %d, want 200 (GET routes answer HEAD)", head.Code)
	}
	c.do(oaCall{method: "GET", target: "/nope", want: 404})
	c.do(oaCall{method: "GET", target: suppliers + "/", hdr: rw, want: 404})

	// Rate limit: an empty bucket for unauthenticated callers.
	a.ipRate = newRateLimiter(0.001, 1)
	c.do(oaCall{method: "GET", target: "/livez", op: "/livez", want: 200})
	an = c.do(oaCall{method: "GET", target: "/livez", op: "/livez", want: 429})
	if an.rec.Header().Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
}

// oaReceiver is a webhook receiver that keeps every request it gets.
type oaReceiver struct {
	mu   sync.Mutex
	reqs []oaDelivery
}

type oaDelivery struct {
	path   string
	header http.Header
	body   []byte
}

func (rv *oaReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rv.mu.Lock()
	rv.reqs = append(rv.reqs, oaDelivery{path: r.URL.Path, header: r.Header.Clone(), body: body})
	rv.mu.Unlock()
	if r.URL.Path == "/gone" {
		http.Error(w, "gone", http.StatusGone)
		return
	}
	io.WriteString(w, "ok")
}

// find returns the last request that carried eventID.
func (rv *oaReceiver) find(eventID string) (oaDelivery, bool) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	for i := len(rv.reqs) - 1; i >= 0; i-- {
		if rv.reqs[i].header.Get(webhooksig.HeaderEventID) == eventID {
			return rv.reqs[i], true
		}
	}
	return oaDelivery{}, false
}

// atPath returns the requests to path, in the order they came.
func (rv *oaReceiver) atPath(path string) []oaDelivery {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	var out []oaDelivery
	for _, d := range rv.reqs {
		if d.path == path {
			out = append(out, d)
		}
	}
	return out
}

// findPath returns the first request to path.
func (rv *oaReceiver) findPath(path string) (oaDelivery, bool) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	for _, d := range rv.reqs {
		if d.path == path {
			return d, true
		}
	}
	return oaDelivery{}, false
}

// oaEventually polls cond for up to 10 seconds.
func oaEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// checkDelivery holds a request the appliance sent to a receiver to the
// document's webhook of its event type: the declared headers, the body
// schema, and both signatures made with secret.
func (c *oaConformance) checkDelivery(eventType string, d oaDelivery, secret string) map[string]any {
	t := c.t
	t.Helper()
	name := "delivery of " + eventType
	hook, ok := c.doc["webhooks"].(map[string]any)[eventType]
	if !ok {
		t.Errorf("%s: no webhook %q in the document", name, eventType)
		return nil
	}
	post, _ := oaDeref(t, c.doc, hook)["post"].(map[string]any)
	for _, p := range oaList(post["parameters"]) {
		pm := oaDeref(t, c.doc, p)
		if pm["in"] != "header" {
			continue
		}
		hn := fmt.Sprint(pm["name"])
		val := d.header.Get(hn)
		if val == "" {
			if pm["required"] == true {
				t.Errorf("%s: header %s missing", name, hn)
			}
			continue
		}
		schema, _ := pm["schema"].(map[string]any)
		var v any = val
		if schema["type"] == "integer" {
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				t.Errorf("%s: header %s: %q is not an integer", name, hn, val)
				continue
			}
			v = float64(n)
		}
		for _, e := range c.sc.check(schema, v, "header "+hn) {
			t.Errorf("%s: %s", name, e)
		}
	}
	if ct := d.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", name, ct)
	}
	var body map[string]any
	if err := json.Unmarshal(d.body, &body); err != nil {
		t.Errorf("%s: body is not a JSON object: %v", name, err)
		return nil
	}
	schema, _ := oaPointer(post, "/requestBody/content/application~1json/schema")
	for _, e := range c.sc.check(schema, body, "body") {
		t.Errorf("%s: %s", name, e)
	}
	if err := webhooksig.Verify(secret, d.body, d.header.Get(webhooksig.HeaderSignature)); err != nil {
		t.Errorf("%s: %s: %v", name, webhooksig.HeaderSignature, err)
	}
	if err := webhooksig.VerifyStandard(secret, d.header, d.body, webhooksig.DefaultTolerance, time.Now()); err != nil {
		t.Errorf("%s: Standard Webhooks signature: %v", name, err)
	}
	if got := d.header.Get(webhooksig.HeaderEventID); got != body["eventId"] || d.header.Get(webhooksig.HeaderWebhookID) != got {
		t.Errorf("%s: %s %q and webhook-id %q, body eventId %v; want all equal", name, webhooksig.HeaderEventID, got,
			d.header.Get(webhooksig.HeaderWebhookID), body["eventId"])
	}
	return body
}

// webhooks drives the webhook, DLQ, sandbox event and job routes: a sandbox
// key registers webhooks to the receiver at base (trusted through
// webhooks.ca_file), the dispatcher really delivers, /gone's 410 fills the
// DLQ.
func (c *oaConformance) webhooks(recv *oaReceiver, base string, rw, ro, live []string) {
	t := c.t
	t.Helper()
	const (
		webhooks   = eudrPrefix + "/webhooks"
		webhook    = webhooks + "/{webhookId}"
		rotate     = webhook + "/rotate-secret"
		ping       = webhook + "/ping"
		deliveries = webhook + "/deliveries"
		dlq        = webhooks + "/dlq"
		replayBulk = dlq + "/replay-bulk"
		replay     = dlq + "/{eventId}/replay"
		dlqEvent   = dlq + "/{eventId}"
		events     = eudrPrefix + "/sandbox/events"
		jobs       = eudrPrefix + "/sandbox/jobs"
		job        = eudrPrefix + "/jobs/{jobId}"
	)
	jsonCT := []string{"Content-Type", "application/json"}
	with, idem := oaWith, oaIdem
	tenant := storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}

	// The dispatcher sends queued deliveries (ping does not need it).
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		c.a.dispatcher.Run(ctx)
	}()
	defer func() { stop(); <-stopped }()

	an := c.do(oaCall{method: "GET", target: webhooks + "/dlq", op: dlq, hdr: ro, want: 200})
	if an.body["retrievedCount"] != 0.0 || len(oaList(an.body["messages"])) != 0 {
		t.Errorf("empty DLQ: got %v", an.body)
	}

	// Registration.
	okBody := `{"targetUrl":"` + base + `/ok","eventTypes":["polygon.verified","polygon.failed","polygon.verified"]}`
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, body: okBody, hdr: with(rw, jsonCT...), want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("register without Idempotency-Key: detail %q", an.detail())
	}
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, hdr: idem(rw, "w-bad"), want: 400,
		body: `{"targetUrl":"http://example.com/hook","eventTypes":["polygon.verified","webhook.ping"]}`})
	if ds := oaList(an.body["details"]); len(ds) != 2 || an.detail() != apierr.DetailInvalidValue {
		t.Errorf("plain HTTP and webhook.ping: details %v, want two INVALID_VALUE", oaShort(ds))
	}
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, hdr: idem(rw, "w-bad"), want: 400,
		body: `{"targetUrl":"https://example.com/hook","eventTypes":[]}`})
	if an.detail() != apierr.DetailRequired {
		t.Errorf("no event types: detail %q, want %s", an.detail(), apierr.DetailRequired)
	}
	c.do(oaCall{method: "POST", target: webhooks, op: webhooks, hdr: idem(rw, "w-bad"), want: 400,
		body: `{"targetUrl":"https://example.com/hook","eventTypes":["job.failed"],"secret":"x"}`})
	c.do(oaCall{method: "POST", target: webhooks, op: webhooks, body: okBody, hdr: idem(ro, "w-ro"), want: 403})
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, body: okBody, hdr: idem(rw, "w-1"), want: 200})
	okID, okSecret := fmt.Sprint(an.body["webhookId"]), fmt.Sprint(an.body["signingSecret"])
	if !strings.HasPrefix(okSecret, webhooksig.SecretPrefix) || strings.Contains(okSecret, "*") ||
		!reflect.DeepEqual(an.body["eventTypes"], []any{"polygon.verified", "polygon.failed"}) {
		t.Errorf("registration: secret %q, eventTypes %v", okSecret, an.body["eventTypes"])
	}
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, body: okBody, hdr: idem(rw, "w-1"), want: 200})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["signingSecret"] != okSecret || an.body["webhookId"] != okID {
		t.Errorf("replayed registration: Idempotent-Replayed %q, webhook %v, secret %v; want true and the first answer (%s, %s)",
			an.rec.Header().Get("Idempotent-Replayed"), an.body["webhookId"], an.body["signingSecret"], okID, okSecret)
	}
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, hdr: idem(rw, "w-2"), want: 409,
		body: `{"targetUrl":"` + base + `/ok","eventTypes":["job.failed","polygon.failed"]}`})
	if an.detail() != apierr.DetailWebhookDuplicate {
		t.Errorf("duplicate webhook: detail %q, want %s", an.detail(), apierr.DetailWebhookDuplicate)
	}
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, hdr: idem(rw, "w-3"), want: 200,
		body: `{"targetUrl":"` + base + `/gone","eventTypes":["job.failed"]}`})
	goneID := fmt.Sprint(an.body["webhookId"])
	an = c.do(oaCall{env: storage.Production, method: "POST", target: webhooks, op: webhooks, hdr: idem(live, "w-live"), want: 400,
		body: `{"targetUrl":"` + base + `/ok","eventTypes":["polygon.verified"]}`})
	if an.detail() != apierr.DetailTargetNotAllowed {
		t.Errorf("loopback target in production: detail %q, want %s", an.detail(), apierr.DetailTargetNotAllowed)
	}

	// Lists show the secrets redacted.
	an = c.do(oaCall{method: "GET", target: webhooks, op: webhooks, hdr: ro, want: 200})
	if len(an.list) != 2 {
		t.Errorf("webhook list: %d items, want 2", len(an.list))
	}
	for _, it := range an.list {
		if sec := fmt.Sprint(it.(map[string]any)["signingSecret"]); !strings.HasPrefix(sec, webhooksig.SecretPrefix+"****") {
			t.Errorf("webhook list shows the secret %q", sec)
		}
	}
	an = c.do(oaCall{method: "GET", target: webhooks + "?limit=1", op: webhooks, hdr: ro, want: 200})
	next := an.rec.Header().Get("X-Next-Cursor")
	if len(an.list) != 1 || next == "" || an.rec.Header().Get("Link") == "" {
		t.Errorf("webhook list with limit=1: %d items, X-Next-Cursor %q", len(an.list), next)
	}
	an = c.do(oaCall{method: "GET", target: webhooks + "?limit=1&cursor=" + next, op: webhooks, hdr: ro, want: 200})
	if len(an.list) != 1 || an.rec.Header().Get("Link") != "" {
		t.Errorf("last webhook page: %d items, Link %q", len(an.list), an.rec.Header().Get("Link"))
	}
	c.do(oaCall{method: "GET", target: webhooks + "?limit=x", op: webhooks, hdr: ro, want: 400})

	// Rotation: the new secret signs what follows.
	an = c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/rotate-secret", op: rotate, hdr: rw, want: 200})
	if an.body["webhookId"] != okID || an.body["signingSecret"] == okSecret {
		t.Errorf("rotate: %v; want webhook %s with a new secret", an.body, okID)
	}
	an = c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/rotate-secret", op: rotate, hdr: idem(rw, "rot-1"), want: 200})
	okSecret = fmt.Sprint(an.body["signingSecret"])
	an = c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/rotate-secret", op: rotate, hdr: idem(rw, "rot-1"), want: 200})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["signingSecret"] != okSecret {
		t.Errorf("replayed rotation: Idempotent-Replayed %q, secret %v; want true and the first answer's %s",
			an.rec.Header().Get("Idempotent-Replayed"), an.body["signingSecret"], okSecret)
	}
	c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/rotate-secret", op: rotate, hdr: idem(rw, "rot-1"),
		body: `{}`, want: 409})
	c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/rotate-secret", op: rotate, hdr: idem(rw, "bad key"), want: 400})
	c.do(oaCall{method: "POST", target: webhooks + "/wh_nope/rotate-secret", op: rotate, hdr: rw, want: 404})
	c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/rotate-secret", op: rotate, hdr: ro, want: 403})

	// Ping: sent now, {} whatever the answer, the attempt in the log.
	an = c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/ping", op: ping, hdr: rw, want: 200})
	if len(an.body) != 0 || an.rec.Body.String() != "{}\n" {
		t.Errorf("ping: body %q, want {}", an.rec.Body.String())
	}
	an = c.do(oaCall{method: "GET", target: webhooks + "/" + okID + "/deliveries", op: deliveries, hdr: ro, want: 200})
	if len(an.list) != 1 {
		t.Fatalf("deliveries after a ping: %d, want 1", len(an.list))
	}
	att := an.list[0].(map[string]any)
	if att["eventType"] != event.WebhookPing || att["status"] != 200.0 || att["errorClass"] != "" || att["nextRetry"] != nil ||
		att["responseBody"] != "ok" {
		t.Errorf("ping attempt: %v", att)
	}
	if d, ok := recv.find(fmt.Sprint(att["eventId"])); !ok {
		t.Error("the receiver got no ping")
	} else if env := c.checkDelivery(event.WebhookPing, d, okSecret); env != nil {
		if _, ok := env["nextRetry"]; ok || env["attempt"] != 0.0 || oaShort(env["data"]) != `{"webhookId":"`+okID+`"}` {
			t.Errorf("ping envelope: %s", d.body)
		}
	}
	c.do(oaCall{method: "POST", target: webhooks + "/" + goneID + "/ping", op: ping, hdr: idem(rw, "ping-1"), want: 200})
	c.do(oaCall{method: "POST", target: webhooks + "/wh_nope/ping", op: ping, hdr: rw, want: 404})
	c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/ping", op: ping, hdr: ro, want: 403})
	an = c.do(oaCall{method: "GET", target: webhooks + "/" + goneID + "/deliveries?limit=1", op: deliveries, hdr: ro, want: 200})
	if len(an.list) != 1 || an.list[0].(map[string]any)["status"] != 410.0 || an.list[0].(map[string]any)["deadLettered"] != false {
		t.Errorf("ping answered 410: %v; want status 410, not dead-lettered", oaShort(an.list))
	}
	c.do(oaCall{method: "GET", target: webhooks + "/" + okID + "/deliveries?limit=1001", op: deliveries, hdr: ro, want: 400})
	c.do(oaCall{method: "GET", target: webhooks + "/wh_nope/deliveries", op: deliveries, hdr: ro, want: 404})

	// Sandbox events go through the real pipeline; production has no such route.
	testJobID := storage.NewID("job", time.Now())
	verified := `{"eventType":"polygon.verified","data":{"jobId":"` + testJobID + `","polygonIds":["` + storage.PolygonID(testJobID, 0) + `"]}}`
	an = c.do(oaCall{method: "POST", target: events, op: events, body: verified, hdr: rw, want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("sandbox event without Idempotency-Key: detail %q", an.detail())
	}
	an = c.do(oaCall{method: "POST", target: events, op: events, body: `{"eventType":"webhook.ping","data":[1]}`, hdr: idem(rw, "e-bad"), want: 400})
	if ds := oaList(an.body["details"]); len(ds) != 2 {
		t.Errorf("sandbox event of a bad type and data: details %v, want 2", oaShort(ds))
	}
	c.do(oaCall{method: "POST", target: events, op: events, body: `{}`, hdr: idem(rw, "e-bad"), want: 400})
	c.do(oaCall{method: "POST", target: events, op: events, body: verified, hdr: idem(ro, "e-ro"), want: 403})
	an = c.do(oaCall{method: "POST", target: events, op: events, body: verified, hdr: idem(rw, "e-1"), want: 202})
	verifiedID := fmt.Sprint(an.body["eventId"])
	if an.body["deliveries"] != 1.0 {
		t.Errorf("polygon.verified: %v deliveries, want 1", an.body["deliveries"])
	}
	an = c.do(oaCall{method: "POST", target: events, op: events, body: verified, hdr: idem(rw, "e-1"), want: 202})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["eventId"] != verifiedID {
		t.Errorf("replayed sandbox event: Idempotent-Replayed %q, eventId %v", an.rec.Header().Get("Idempotent-Replayed"), an.body["eventId"])
	}
	an = c.do(oaCall{method: "POST", target: events, op: events, hdr: idem(rw, "e-2"), want: 202,
		body: `{"eventType":"job.failed","data":{"jobId":"` + storage.NewID("job", time.Now()) + `","type":"polygon_ingestion","error":{"code":"JOB_FAILED","message":"boom"}}}`})
	failedID := fmt.Sprint(an.body["eventId"])
	an = c.do(oaCall{method: "POST", target: events, op: events, body: `{"eventType":"report.ready"}`, hdr: idem(rw, "e-3"), want: 202})
	if an.body["deliveries"] != 0.0 {
		t.Errorf("report.ready nobody subscribed to: %v deliveries, want 0", an.body["deliveries"])
	}
	c.do(oaCall{env: storage.Production, method: "POST", target: events, op: events, body: verified, hdr: idem(live, "e-live"), want: 404})

	var d oaDelivery
	oaEventually(t, "the polygon.verified delivery", func() (ok bool) { d, ok = recv.find(verifiedID); return ok })
	if env := c.checkDelivery(event.PolygonVerified, d, okSecret); env != nil {
		if _, ok := env["nextRetry"]; !ok || env["attempt"] != 0.0 || d.path != "/ok" {
			t.Errorf("first delivery to %s: %s; want attempt 0 with nextRetry", d.path, d.body)
		}
	}

	// The DLQ: /gone's 410 dead-letters job.failed at once.
	deadLettered := func() bool {
		var n int
		err := c.a.db.View(context.Background(), func(tx *storage.Tx) error {
			dls, _, err := queue.FindDeadLetterPage(tx.Tx, event.Scope(tenant), queue.DLQFilter{EventIDs: []string{failedID}})
			n = len(dls)
			return err
		})
		return err == nil && n == 1
	}
	oaEventually(t, "job.failed in the DLQ", deadLettered)
	an = c.do(oaCall{method: "GET", target: dlq, op: dlq, hdr: ro, want: 200})
	msgs := oaList(an.body["messages"])
	if an.body["retrievedCount"] != 1.0 || len(msgs) != 1 {
		t.Fatalf("DLQ: %v, want one entry", an.body)
	}
	m := msgs[0].(map[string]any)
	if m["eventId"] != failedID || m["webhookId"] != goneID || m["lastStatus"] != 410.0 || m["attempts"] != 1.0 {
		t.Errorf("DLQ entry: %v", m)
	}
	for _, e := range c.sc.check(map[string]any{"$ref": "#/components/schemas/JobFailedData"}, m["data"], "DLQ data") {
		t.Error(e)
	}
	an = c.do(oaCall{method: "GET", target: dlq + "?eventType=polygon.verified&startDate=2020-01-01&endDate=2099-12-31T00:00:00Z&limit=5", op: dlq, hdr: ro, want: 200})
	if an.body["retrievedCount"] != 0.0 {
		t.Errorf("DLQ filtered to polygon.verified: %v", an.body)
	}
	an = c.do(oaCall{method: "GET", target: dlq + "?eventType=webhook.ping&startDate=yesterday&limit=0", op: dlq, hdr: ro, want: 400})
	if ds := oaList(an.body["details"]); len(ds) != 3 {
		t.Errorf("DLQ with three bad filters: details %v, want 3", oaShort(ds))
	}
	c.do(oaCall{method: "GET", target: dlq + "?startDate=2026-11-21&endDate=2026-11-20", op: dlq, hdr: ro, want: 400})
	an = c.do(oaCall{method: "GET", target: dlq + "?cursor=%21", op: dlq, hdr: ro, want: 400})
	if an.detail() != apierr.DetailInvalidValue || oaList(an.body["details"])[0].(map[string]any)["field"] != "query.cursor" {
		t.Errorf("DLQ with a malformed cursor: %v, want INVALID_VALUE at query.cursor", an.body)
	}

	// Replay and acknowledgement.
	c.do(oaCall{method: "POST", target: dlq + "/evt_nope/replay", op: replay, hdr: rw, want: 404})
	c.do(oaCall{method: "POST", target: dlq + "/" + failedID + "/replay", op: replay, hdr: ro, want: 403})
	an = c.do(oaCall{method: "POST", target: dlq + "/" + failedID + "/replay", op: replay, hdr: idem(rw, "dlq-1"), want: 200})
	if got := an.rec.Header().Get("X-Replayed-Count"); got != "1" {
		t.Errorf("replay: X-Replayed-Count %q, want 1", got)
	}
	an = c.do(oaCall{method: "POST", target: dlq + "/" + failedID + "/replay", op: replay, hdr: idem(rw, "dlq-1"), want: 200})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.rec.Header().Get("X-Replayed-Count") != "1" {
		t.Errorf("replayed replay: Idempotent-Replayed %q, X-Replayed-Count %q", an.rec.Header().Get("Idempotent-Replayed"),
			an.rec.Header().Get("X-Replayed-Count"))
	}
	oaEventually(t, "job.failed back in the DLQ", deadLettered)
	c.do(oaCall{method: "POST", target: replayBulk + "?eventType=nope", op: replayBulk, hdr: rw, want: 400})
	c.do(oaCall{method: "POST", target: replayBulk, op: replayBulk, body: `{"eventIds":"x"}`, hdr: rw, want: 400})
	c.do(oaCall{method: "POST", target: replayBulk, op: replayBulk, body: `{"eventIds":[]}`, hdr: with(rw, "Content-Type", "text/plain"), want: 415})
	an = c.do(oaCall{method: "POST", target: replayBulk, op: replayBulk, body: `{"eventIds":["evt_nope"]}`, hdr: with(rw, jsonCT...), want: 200})
	if got := an.rec.Header().Get("X-Replayed-Count"); got != "0" {
		t.Errorf("bulk replay of an unknown event: X-Replayed-Count %q, want 0", got)
	}
	an = c.do(oaCall{method: "POST", target: replayBulk + "?eventType=job.failed&endDate=2099-01-01", op: replayBulk, hdr: idem(rw, "dlq-bulk-1"), want: 200})
	if got := an.rec.Header().Get("X-Replayed-Count"); got != "1" {
		t.Errorf("bulk replay of job.failed: X-Replayed-Count %q, want 1", got)
	}
	oaEventually(t, "job.failed back in the DLQ", deadLettered)
	an = c.do(oaCall{method: "DELETE", target: dlq, op: dlq, body: `{}`, hdr: rw, want: 400})
	if an.detail() != apierr.DetailRequired {
		t.Errorf("bulk acknowledgement without eventIds: detail %q, want %s", an.detail(), apierr.DetailRequired)
	}
	an = c.do(oaCall{method: "DELETE", target: dlq, op: dlq, hdr: rw, want: 400})
	if an.detail() != apierr.DetailMalformedJSON {
		t.Errorf("bulk acknowledgement without a body: detail %q, want %s", an.detail(), apierr.DetailMalformedJSON)
	}
	c.do(oaCall{method: "DELETE", target: dlq, op: dlq, body: `{"eventIds":["evt_nope"]}`, hdr: ro, want: 403})
	an = c.do(oaCall{method: "DELETE", target: dlq, op: dlq, body: `{"eventIds":["evt_nope"]}`, hdr: rw, want: 204})
	if got := an.rec.Header().Get("X-Acknowledged-Count"); got != "0" {
		t.Errorf("bulk acknowledgement of an unknown event: X-Acknowledged-Count %q, want 0", got)
	}
	c.do(oaCall{method: "DELETE", target: dlq + "/evt_nope", op: dlqEvent, hdr: rw, want: 404})
	an = c.do(oaCall{method: "DELETE", target: dlq + "/" + failedID, op: dlqEvent, hdr: rw, want: 204})
	if got := an.rec.Header().Get("X-Acknowledged-Count"); got != "1" {
		t.Errorf("acknowledgement: X-Acknowledged-Count %q, want 1", got)
	}
	c.do(oaCall{method: "DELETE", target: dlq + "/" + failedID, op: dlqEvent, hdr: rw, want: 404})
	an = c.do(oaCall{method: "GET", target: webhooks + "/" + goneID + "/deliveries", op: deliveries, hdr: ro, want: 200})
	if len(an.list) == 0 || an.list[0].(map[string]any)["deadLettered"] != true {
		t.Errorf("deliveries of /gone: newest %v, want a dead-lettering attempt", oaShort(an.list))
	}

	// Deletion.
	c.do(oaCall{method: "DELETE", target: webhooks + "/" + goneID, op: webhook, hdr: ro, want: 403})
	c.do(oaCall{method: "DELETE", target: webhooks + "/" + goneID, op: webhook, hdr: rw, want: 204})
	c.do(oaCall{method: "DELETE", target: webhooks + "/" + goneID, op: webhook, hdr: rw, want: 404})
	c.do(oaCall{method: "GET", target: webhooks + "/" + goneID + "/deliveries", op: deliveries, hdr: ro, want: 404})

	// Sandbox test jobs: queued here, run by the job runner, followed with
	// GET /jobs; one fails and fires job.failed. Production has no such route.
	c.sandboxJobs(recv, base, rw, ro, live)

	// Polygons: queued jobs (Retry-After while not finished), screened
	// by the job runner, their polygons and events.
	c.polygons(recv, base, rw, ro, live)

	// Batches: registered from screened plots, assessed by the job
	// runner, their risk assessments and events; a polygon in use.
	c.batches(recv, base, rw, ro, live)

	// Shipments, the ledger and evidence: batches linked to shipments by
	// the job runner, their events; every ledger route checked as a
	// client would; evidence verified and tampered with.
	c.ledgerAndShipments(recv, base, rw, ro, live)

	// Due-diligence statements, the EU system credentials and archive
	// reports, on an appliance of their own whose clock the test moves.
	c.dds(recv, base)

	// Jobs: a fatal failure, answered without Retry-After.
	var failed *storage.Job
	err := c.a.db.Update(context.Background(), func(tx *storage.Tx) error {
		now := tx.Now()
		failed = &storage.Job{ID: storage.NewID("job", now), Type: "shipment_link", Status: storage.JobFailed,
			Progress: storage.JobProgress{Total: 1, Processed: 1, Failed: 1},
			Error:    &storage.JobError{Code: apierr.JobFailed, Message: "boom"}, CreatedAt: now, StartedAt: &now, CompletedAt: &now}
		return tx.PutJob(tenant, failed)
	})
	if err != nil {
		t.Fatal(err)
	}
	an = c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + failed.ID, op: job, hdr: ro, want: 200})
	if an.rec.Header().Get("Retry-After") != "" || an.body["error"] == nil {
		t.Errorf("failed job: Retry-After %q, error %v", an.rec.Header().Get("Retry-After"), an.body["error"])
	}
	c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/job_nope", op: job, hdr: ro, want: 404})
	c.do(oaCall{env: storage.Production, method: "GET", target: eudrPrefix + "/jobs/" + failed.ID, op: job, hdr: live, want: 404})
	c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + failed.ID, op: job, want: 401})
}

// sandboxJobs drives POST /sandbox/jobs and GET /jobs on the jobs it
// queues: validation, idempotency, the 202 with Location, a job followed
// from QUEUED to COMPLETED by the job runner (run here until it returns),
// and a job that fails at failAtItem, whose job.failed reaches a
// subscription of the receiver at base. It leaves no job queued.
func (c *oaConformance) sandboxJobs(recv *oaReceiver, base string, rw, ro, live []string) {
	t := c.t
	t.Helper()
	const (
		jobs = eudrPrefix + "/sandbox/jobs"
		job  = eudrPrefix + "/jobs/{jobId}"
	)
	with, idem := oaWith, oaIdem
	get := func(id string) oaAnswer {
		t.Helper()
		return c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + id, op: job, hdr: ro, want: 200})
	}
	progress := func(an oaAnswer) map[string]any { p, _ := an.body["progress"].(map[string]any); return p }

	// Validation: the Idempotency-Key first, then every problem of the body.
	an := c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{}`, hdr: rw, want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("sandbox job without Idempotency-Key: detail %q, want %s", an.detail(), apierr.DetailIdempotencyKeyMissing)
	}
	an = c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{"items":0,"itemMillis":1001,"failAtItem":-1,"extra":1}`,
		hdr: idem(rw, "j-bad"), want: 400})
	fields := map[string]string{}
	for _, dv := range oaList(an.body["details"]) {
		dm, _ := dv.(map[string]any)
		fields[fmt.Sprint(dm["field"])] = fmt.Sprint(dm["code"])
	}
	if want := map[string]string{"items": apierr.DetailInvalidValue, "itemMillis": apierr.DetailInvalidValue, "failAtItem": apierr.DetailInvalidValue,
		"extra": apierr.DetailUnknownField}; !maps.Equal(fields, want) {
		t.Errorf("sandbox job with four bad members: details %v, want %v", fields, want)
	}
	for _, body := range []string{`{"items":1001}`, `{"items":"ten"}`, `{"items":2.5}`, `{"items":3,"failAtItem":3}`, `{"itemMillis":-1}`} {
		an = c.do(oaCall{method: "POST", target: jobs, op: jobs, body: body, hdr: idem(rw, "j-bad"), want: 400})
		if ds := oaList(an.body["details"]); len(ds) != 1 || an.detail() != apierr.DetailInvalidValue {
			t.Errorf("sandbox job %s: details %v, want one INVALID_VALUE", body, oaShort(ds))
		}
	}
	c.do(oaCall{method: "POST", target: jobs, op: jobs, hdr: idem(rw, "j-bad"), want: 400})
	c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{}`, hdr: idem(ro, "j-ro"), want: 403})
	c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{}`, hdr: with(idem(rw, "j-xml"), "Content-Type", "application/xml"), want: 415})
	c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{}`, want: 401})
	c.do(oaCall{env: storage.Production, method: "POST", target: jobs, op: jobs, body: `{}`, hdr: idem(live, "j-live"), want: 404})

	// Accepted: 202 with the jobId and its path in Location; the job waits
	// QUEUED (the runner is not running yet) with the default item count.
	an = c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{}`, hdr: idem(rw, "j-1"), want: 202})
	defID, loc := fmt.Sprint(an.body["jobId"]), an.rec.Header().Get("Location")
	if loc != eudrPrefix+"/jobs/"+defID {
		t.Errorf("sandbox job: Location %q, want %s", loc, eudrPrefix+"/jobs/"+defID)
	}
	an = c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{}`, hdr: idem(rw, "j-1"), want: 202})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["jobId"] != defID || an.rec.Header().Get("Location") != loc {
		t.Errorf("replayed sandbox job: Idempotent-Replayed %q, jobId %v, Location %q; want true, %s, %s",
			an.rec.Header().Get("Idempotent-Replayed"), an.body["jobId"], an.rec.Header().Get("Location"), defID, loc)
	}
	c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{"items":2}`, hdr: idem(rw, "j-1"), want: 409})
	an = get(defID)
	defItems := oaMust(t, c.doc, "/components/schemas/SandboxJobRequest/properties/items/default")
	if an.body["status"] != storage.JobQueued || an.body["type"] != work.SandboxTest || an.rec.Header().Get("Retry-After") == "" ||
		progress(an)["total"] != defItems || progress(an)["processed"] != 0.0 || progress(an)["percent"] != 0.0 {
		t.Errorf("queued sandbox job: %v, Retry-After %q; want QUEUED %s of %v items with Retry-After",
			oaShort(an.body), an.rec.Header().Get("Retry-After"), work.SandboxTest, defItems)
	}

	// A job that fails at its second item, with a job.failed subscription.
	an = c.do(oaCall{method: "POST", target: eudrPrefix + "/webhooks", op: eudrPrefix + "/webhooks", hdr: idem(rw, "j-wh"), want: 200,
		body: `{"targetUrl":"` + base + `/jobs","eventTypes":["job.failed"]}`})
	secret := fmt.Sprint(an.body["signingSecret"])
	an = c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{"items":3,"itemMillis":0,"failAtItem":1}`, hdr: idem(rw, "j-2"), want: 202})
	failID := fmt.Sprint(an.body["jobId"])
	an = c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{"items":2,"itemMillis":1}`, hdr: idem(rw, "j-3"), want: 202})
	twoID := fmt.Sprint(an.body["jobId"])

	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := c.a.jobs.Run(ctx); err != nil {
			t.Errorf("job runner: %v", err)
		}
	}()
	oaEventually(t, "the sandbox jobs to finish", func() bool {
		return c.jobFinished(defID) && c.jobFinished(twoID) && c.jobFinished(failID)
	})
	stop()
	<-stopped

	for _, id := range []string{defID, twoID} {
		an = get(id)
		p := progress(an)
		if an.body["status"] != storage.JobCompleted || an.rec.Header().Get("Retry-After") != "" || p["percent"] != 100.0 ||
			p["processed"] != p["total"] || p["succeeded"] != p["total"] || p["failed"] != 0.0 || an.body["error"] != nil ||
			an.body["startedAt"] == nil || an.body["completedAt"] == nil {
			t.Errorf("completed sandbox job %s: %v, Retry-After %q", id, oaShort(an.body), an.rec.Header().Get("Retry-After"))
		}
	}
	an = get(failID)
	p, jerr := progress(an), an.body["error"]
	if an.body["status"] != storage.JobFailed || an.rec.Header().Get("Retry-After") != "" || p["processed"] != 1.0 || p["total"] != 3.0 ||
		p["percent"] != 100.0 {
		t.Errorf("failed sandbox job: %v, Retry-After %q; want FAILED after 1 of 3 items", oaShort(an.body), an.rec.Header().Get("Retry-After"))
	}
	if em, _ := jerr.(map[string]any); em["code"] != apierr.JobFailed || fmt.Sprint(em["message"]) == "" {
		t.Errorf("failed sandbox job: error %v, want code %s and a message", oaShort(jerr), apierr.JobFailed)
	}

	var d oaDelivery
	oaEventually(t, "the job.failed delivery", func() (ok bool) { d, ok = recv.findPath("/jobs"); return ok })
	if env := c.checkDelivery(event.JobFailed, d, secret); env != nil {
		data, _ := env["data"].(map[string]any)
		if env["eventType"] != event.JobFailed || data["jobId"] != failID || data["type"] != work.SandboxTest ||
			!reflect.DeepEqual(data["error"], jerr) {
			t.Errorf("job.failed of the sandbox job: %s; want jobId %s, type %s and the job's error %s", d.body, failID, work.SandboxTest, oaShort(jerr))
		}
	}

	// The job is the sandbox's: production does not know it.
	c.do(oaCall{env: storage.Production, method: "GET", target: eudrPrefix + "/jobs/" + defID, op: job, hdr: live, want: 404})
}

// jobFinished reports whether the sandbox job id is COMPLETED or FAILED.
func (c *oaConformance) jobFinished(id string) bool {
	var j *storage.Job
	err := c.a.db.View(context.Background(), func(tx *storage.Tx) error {
		var err error
		j, err = tx.FindJob(storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}, id)
		return err
	})
	return err == nil && (j.Status == storage.JobCompleted || j.Status == storage.JobFailed)
}

// oaPolygonOutcome is what a feature of a polygon request is screened to.
type oaPolygonOutcome struct {
	feature       string // the feature as sent
	status        string
	failureReason string // "" for none
}

// polygons drives POST /polygons and the polygon routes. With the job
// runner stopped: refusals (every problem of a collection at once, 413 for
// the body and for the feature count, 415, idempotency) and two accepted
// collections, whose jobs wait QUEUED with Retry-After. Then the runner
// screens them: the sandbox fixture rows and the geometry types and
// failure reasons of a second collection, whose polygons are listed (with
// filters and pages), read with their geometry, status and evidence, and
// deleted; and the polygon.verified and polygon.failed events of each job
// reach a subscription of the receiver at base. It leaves no job queued.
func (c *oaConformance) polygons(recv *oaReceiver, base string, rw, ro, live []string) {
	t := c.t
	t.Helper()
	const (
		polygons = eudrPrefix + "/polygons"
		polygon  = polygons + "/{polygonId}"
		status   = polygon + "/status"
		evidence = polygon + "/evidence"
		job      = eudrPrefix + "/jobs/{jobId}"
	)
	with, idem := oaWith, oaIdem
	geoJSON := func(h []string, key string) []string {
		return with(idem(h, key), "Content-Type", "application/geo+json")
	}
	problems := oaProblems
	ids := func(list []any) []string {
		var out []string
		for _, it := range list {
			out = append(out, fmt.Sprint(it.(map[string]any)["polygonId"]))
		}
		return out
	}
	feature := func(geometry, properties string) string {
		return `{"type":"Feature","geometry":` + geometry + `,"properties":` + properties + `}`
	}

	// The sandbox fixture rows (API.md section 4), and a bow tie.
	fixtures := []oaPolygonOutcome{
		{plot("defo", square(-61.5, -10.5, 0.001)), geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff},
		{plot("protected", square(-54.5, -4.5, 0.001)), geo.StatusHighRisk, geo.ReasonProtectedAreaOverlap},
		{plot("nodata", square(10.5, 10.5, 0.001)), geo.StatusFailed, geo.ReasonNoReferenceCoverage},
		{plot("clean", square(5.0, 6.0, 0.001)), geo.StatusCompliant, ""},
		{plot("bowtie", "[[[5.000000,6.000000],[5.001000,6.001000],[5.001000,6.000000],[5.000000,6.001000],[5.000000,6.000000]]]"),
			geo.StatusFailed, geo.ReasonSelfIntersection},
	}
	// The other geometry types and properties, sent as application/json.
	mixed := []oaPolygonOutcome{
		{feature(`{"type":"Point","coordinates":[5.100000,6.100000,12.5]}`,
			`{"commodity":"coffee","producerCountry":"GH","area":2,"producerName":"Kofi Mensah","productionPlace":"Ashanti","externalId":"point","note":"ignored"}`),
			geo.StatusCompliant, ""},
		{feature(`{"type":"MultiPoint","coordinates":[[5.200000,6.200000],[5.210000,6.210000]]}`,
			`{"commodity":"cattle","producerCountry":"BR","area":12,"supplierId":""}`),
			geo.StatusCompliant, ""},
		{feature(`{"type":"MultiPolygon","coordinates":[`+square(5.3, 6.3, 0.001)+`,`+square(-54.5, -4.5, 0.001)+`]}`,
			`{"commodity":"wood","producerCountry":"BR","externalId":"multi"}`),
			geo.StatusHighRisk, geo.ReasonProtectedAreaOverlap},
		{feature(`{"type":"Polygon","coordinates":`+square(5.4, 6.4, 0.001)+`}`,
			`{"commodity":"soya","producerCountry":"BR","area":100,"externalId":"area"}`),
			geo.StatusFailed, geo.ReasonAreaMismatch},
		{feature(`{"type":"Polygon","coordinates":[[[5.5,6.5],[5.51,6.5],[5.51,6.51],[5.5,6.51],[5.5,6.5]]]}`,
			`{"commodity":"rubber","producerCountry":"CI","externalId":"coarse"}`),
			geo.StatusFailed, geo.ReasonInsufficientPrecision},
	}
	body := func(fs []oaPolygonOutcome) string {
		var feats []string
		for _, f := range fs {
			feats = append(feats, f.feature)
		}
		return collection(feats...)
	}
	fixtureBody, mixedBody := body(fixtures), body(mixed)
	for _, b := range []string{fixtureBody, mixedBody} {
		var v any
		if err := json.Unmarshal([]byte(b), &v); err != nil {
			t.Fatal(err)
		}
		for _, e := range c.sc.check(map[string]any{"$ref": "#/components/schemas/PolygonFeatureCollection"}, v, "request") {
			t.Errorf("a collection the server accepts: %s", e)
		}
	}

	// Refusals: the Idempotency-Key first, then every problem at once.
	an := c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, hdr: with(rw, "Content-Type", "application/geo+json"), want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("polygons without Idempotency-Key: detail %q, want %s", an.detail(), apierr.DetailIdempotencyKeyMissing)
	}
	bad := collection(
		plot("ok", square(5, 6, 0.001)),
		feature(`{"type":"LineString","coordinates":[[0,0],[1,1]]}`, `{"commodity":"cocoa","producerCountry":"GH"}`),
		feature(`{"type":"Polygon","coordinates":[[[5.000000,6.000000],[5.001000,6.000000],[5.000000,6.000000]],`+
			`[[200.000000,6.000000],[5.001000,6.000000],[5.001000,6.001000],[5.000000,6.001000]]]}`,
			`{"commodity":"tea","producerCountry":"gh"}`),
		feature(`{"type":"Point","coordinates":[5.000000,6.000000]}`, `{"commodity":"cocoa","producerCountry":"GH","area":5}`),
		feature(`{"type":"MultiPoint","coordinates":[[5.000000,6.000000]]}`, `{"commodity":"cocoa"}`),
	)
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: bad, hdr: geoJSON(rw, "pol-bad"), want: 400})
	want := map[string]bool{
		geo.CodeInvalidGeometryType + " at features[1].geometry.type":                 true,
		geo.CodeInvalidRing + " at features[2].geometry.coordinates[0]":               true,
		geo.CodeInvalidCoordinateRange + " at features[2].geometry.coordinates[1][0]": true,
		geo.CodeInvalidCoordinateClosure + " at features[2].geometry.coordinates[1]":  true,
		geo.CodeInvalidValue + " at features[2].properties.commodity":                 true,
		geo.CodeInvalidValue + " at features[2].properties.producerCountry":           true,
		geo.CodePointAreaTooLarge + " at features[3].properties.area":                 true,
		geo.CodeRequired + " at features[4].properties.producerCountry":               true,
		geo.CodeRequired + " at features[4].properties.area":                          true,
	}
	if got := problems(an); !maps.Equal(got, want) {
		t.Errorf("a collection with nine problems: details %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, hdr: geoJSON(rw, "pol-bad"), want: 400,
		body: feature(`{"type":"Point","coordinates":[5.000000,6.000000]}`, `{"commodity":"cocoa","producerCountry":"GH","area":1}`)})
	if got := problems(an); !got[geo.CodeInvalidValue+" at type"] || !got[geo.CodeRequired+" at features"] {
		t.Errorf("a lone Feature: details %v, want INVALID_VALUE at type and REQUIRED at features", slices.Sorted(maps.Keys(got)))
	}
	for _, b := range []string{`{"type":"FeatureCollection","features":[`, ""} {
		an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: b, hdr: geoJSON(rw, "pol-bad"), want: 400})
		if ds := oaList(an.body["details"]); len(ds) != 1 || an.detail() != apierr.DetailMalformedJSON {
			t.Errorf("polygons with the body %q: details %v, want one %s", b, oaShort(ds), apierr.DetailMalformedJSON)
		}
	}
	var six []string
	for i := range 6 {
		six = append(six, plot(fmt.Sprint(i), square(5+0.01*float64(i), 6, 0.001)))
	}
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: collection(six...), hdr: geoJSON(rw, "pol-six"), want: 413})
	if ds := oaList(an.body["details"]); len(ds) != 1 || an.detail() != apierr.DetailInvalidValue || ds[0].(map[string]any)["field"] != "features" {
		t.Errorf("six features over a limit of five: details %v, want INVALID_VALUE at features", oaShort(ds))
	}
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: collection(plot(strings.Repeat("x", 5000), square(5, 6, 0.001))),
		hdr: geoJSON(rw, "pol-big"), want: 413})
	if ds := oaList(an.body["details"]); len(ds) != 0 {
		t.Errorf("a body over limits.max_body_bytes: details %v, want none", oaShort(ds))
	}
	c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, hdr: with(idem(rw, "pol-txt"), "Content-Type", "text/plain"), want: 415})
	c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, hdr: geoJSON(ro, "pol-ro"), want: 403})
	c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, want: 401})
	inflight := httptest.NewRequest("POST", polygons, strings.NewReader(fixtureBody))
	err := c.a.db.Update(context.Background(), func(tx *storage.Tx) error {
		return tx.PutIdempotency(storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}, &storage.IdempotencyRecord{Key: "pol-busy",
			Fingerprint: fingerprint(inflight, []byte(fixtureBody)), State: storage.IdemInFlight, Owner: c.a.runID,
			CreatedAt: tx.Now(), ExpiresAt: tx.Now().Add(time.Hour)})
	})
	if err != nil {
		t.Fatal(err)
	}
	c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, hdr: geoJSON(rw, "pol-busy"), want: 423})
	an = c.do(oaCall{method: "GET", target: polygons, op: polygons, hdr: ro, want: 200})
	if len(an.list) != 0 {
		t.Errorf("polygons after refusals only: %v, want []", oaShort(an.list))
	}

	// Accepted: 202 with the job in Location; the job waits QUEUED (the
	// runner is stopped) with Retry-After and no results yet.
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, hdr: geoJSON(rw, "pol-1"), want: 202})
	fixJob, loc := fmt.Sprint(an.body["jobId"]), an.rec.Header().Get("Location")
	if loc != eudrPrefix+"/jobs/"+fixJob || an.body["featureCount"] != 5.0 {
		t.Errorf("polygons: Location %q, body %v; want %s and featureCount 5", loc, an.body, eudrPrefix+"/jobs/"+fixJob)
	}
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: fixtureBody, hdr: geoJSON(rw, "pol-1"), want: 202})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["jobId"] != fixJob || an.rec.Header().Get("Location") != loc {
		t.Errorf("replayed polygons: Idempotent-Replayed %q, jobId %v, Location %q; want true, %s, %s",
			an.rec.Header().Get("Idempotent-Replayed"), an.body["jobId"], an.rec.Header().Get("Location"), fixJob, loc)
	}
	c.do(oaCall{method: "POST", target: polygons, op: polygons, body: mixedBody, hdr: geoJSON(rw, "pol-1"), want: 409})
	an = c.do(oaCall{method: "POST", target: polygons, op: polygons, body: mixedBody, hdr: with(idem(rw, "pol-2"), "Content-Type", "application/json"), want: 202})
	mixJob := fmt.Sprint(an.body["jobId"])
	an = c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + fixJob, op: job, hdr: ro, want: 200})
	if an.body["status"] != storage.JobQueued || an.body["type"] != work.PolygonIngestion || an.rec.Header().Get("Retry-After") == "" ||
		len(oaList(an.body["results"])) != 0 || an.body["startedAt"] != nil {
		t.Errorf("queued polygon job: %v, Retry-After %q; want QUEUED %s with Retry-After and no results",
			oaShort(an.body), an.rec.Header().Get("Retry-After"), work.PolygonIngestion)
	}
	c.do(oaCall{env: storage.Production, method: "GET", target: eudrPrefix + "/jobs/" + fixJob, op: job, hdr: live, want: 404})
	c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + fixJob, op: job, want: 401})

	// A subscription for both events, then the runner screens the jobs.
	an = c.do(oaCall{method: "POST", target: eudrPrefix + "/webhooks", op: eudrPrefix + "/webhooks", hdr: idem(rw, "pol-wh"), want: 200,
		body: `{"targetUrl":"` + base + `/polygons","eventTypes":["polygon.verified","polygon.failed"]}`})
	secret := fmt.Sprint(an.body["signingSecret"])
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := c.a.jobs.Run(ctx); err != nil {
			t.Errorf("job runner: %v", err)
		}
	}()
	oaEventually(t, "the polygon jobs to finish", func() bool { return c.jobFinished(fixJob) && c.jobFinished(mixJob) })
	stop()
	<-stopped

	// The jobs: COMPLETED, one result per feature in feature order.
	for _, j := range []struct {
		id   string
		want []oaPolygonOutcome
	}{{fixJob, fixtures}, {mixJob, mixed}} {
		an = c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + j.id, op: job, hdr: ro, want: 200})
		p, _ := an.body["progress"].(map[string]any)
		if an.body["status"] != storage.JobCompleted || an.rec.Header().Get("Retry-After") != "" ||
			!reflect.DeepEqual(p, map[string]any{"total": 5.0, "processed": 5.0, "succeeded": 3.0, "failed": 2.0, "percent": 100.0}) {
			t.Errorf("completed polygon job %s: %v, Retry-After %q", j.id, oaShort(an.body), an.rec.Header().Get("Retry-After"))
		}
		results := oaList(an.body["results"])
		if len(results) != len(j.want) {
			t.Fatalf("job %s: %d results, want %d", j.id, len(results), len(j.want))
		}
		for i, w := range j.want {
			r := results[i].(map[string]any)
			var reason any
			if w.failureReason != "" {
				reason = w.failureReason
			}
			if r["featureIndex"] != float64(i) || r["polygonId"] != storage.PolygonID(j.id, i) || r["eudrStatus"] != w.status || r["failureReason"] != reason {
				t.Errorf("job %s result %d: %v, want %s %v", j.id, i, r, w.status, reason)
			}
		}
	}

	// Status and evidence of every polygon; the evidence's input hash is
	// of the feature as sent (these are sent without whitespace).
	for _, j := range []struct {
		id   string
		want []oaPolygonOutcome
	}{{fixJob, fixtures}, {mixJob, mixed}} {
		for i, w := range j.want {
			id := storage.PolygonID(j.id, i)
			an = c.do(oaCall{method: "GET", target: polygons + "/" + id + "/status", op: status, hdr: ro, want: 200})
			if an.body["polygonId"] != id || an.body["jobId"] != j.id || an.body["eudrStatus"] != w.status || (an.body["risk"] == nil) != (w.status == geo.StatusFailed) {
				t.Errorf("status of %s: %v, want %s", id, oaShort(an.body), w.status)
			}
			an = c.do(oaCall{method: "GET", target: polygons + "/" + id + "/evidence", op: evidence, hdr: ro, want: 200})
			sum := sha256.Sum256([]byte(w.feature))
			if an.body["inputSha256"] != hex.EncodeToString(sum[:]) || an.body["eudrStatus"] != w.status ||
				an.body["engineVersion"] != geo.EngineVersion || an.body["appVersion"] != "openapi-test" {
				t.Errorf("evidence of %s: %s", id, an.rec.Body)
			}
		}
	}
	an = c.do(oaCall{method: "GET", target: polygons + "/" + storage.PolygonID(fixJob, 0) + "/evidence", op: evidence, hdr: ro, want: 200})
	overlaps, layers := oaList(an.body["overlaps"]), oaList(an.body["layers"])
	if len(overlaps) != 1 || overlaps[0].(map[string]any)["kind"] != string(geo.DeforestationAfterCutoff) || len(layers) < 2 ||
		!reflect.DeepEqual(an.body["rules"], map[string]any{"maxRiskScore": 50.0, "overlapThresholdPct": 0.0, "areaTolerancePct": 10.0,
			"lossThresholdPct": 10.0, "lossThresholdHa": 0.5, "cutoff": "2020-12-31"}) {
		t.Errorf("evidence of the deforestation fixture: %s", an.rec.Body)
	}
	an = c.do(oaCall{method: "GET", target: polygons + "/" + storage.PolygonID(fixJob, 4) + "/evidence", op: evidence, hdr: ro, want: 200})
	if len(oaList(an.body["layers"])) != 0 || len(oaList(an.body["overlaps"])) != 0 || an.body["areaHa"] != 0.0 {
		t.Errorf("evidence of a self-intersecting plot: %s; want no layers, no overlaps, areaHa 0", an.rec.Body)
	}

	// The whole record: the geometry exactly as sent.
	for _, g := range []struct {
		id, geometry string
	}{
		{storage.PolygonID(fixJob, 0), `{"type":"Polygon","coordinates":` + square(-61.5, -10.5, 0.001) + `}`},
		{storage.PolygonID(mixJob, 0), `{"type":"Point","coordinates":[5.100000,6.100000,12.5]}`},
	} {
		an = c.do(oaCall{method: "GET", target: polygons + "/" + g.id, op: polygon, hdr: ro, want: 200})
		if !strings.Contains(an.rec.Body.String(), `"geometry":`+g.geometry) {
			t.Errorf("polygon %s: %s; want the geometry %s", g.id, an.rec.Body, g.geometry)
		}
	}
	an = c.do(oaCall{method: "GET", target: polygons + "/" + storage.PolygonID(mixJob, 1), op: polygon, hdr: ro, want: 200})
	if an.body["geometryType"] != geo.TypeMultiPoint || an.body["areaHa"] != 24.0 || an.body["declaredAreaHa"] != 12.0 || an.body["supplierId"] != nil {
		t.Errorf("a MultiPoint of two 12 ha cattle plots: %s", an.rec.Body)
	}

	// Lists: newest job first, the last feature first; filters and pages.
	an = c.do(oaCall{method: "GET", target: polygons, op: polygons, hdr: ro, want: 200})
	if len(an.list) != 10 || ids(an.list)[0] != storage.PolygonID(mixJob, 4) || ids(an.list)[9] != storage.PolygonID(fixJob, 0) {
		t.Errorf("polygon list: %v", ids(an.list))
	}
	for _, it := range an.list {
		if _, ok := it.(map[string]any)["geometry"]; ok {
			t.Errorf("the list shows the geometry of %v", it.(map[string]any)["polygonId"])
		}
	}
	an = c.do(oaCall{method: "GET", target: polygons + "?limit=1", op: polygons, hdr: ro, want: 200})
	next := an.rec.Header().Get("X-Next-Cursor")
	if len(an.list) != 1 || next != storage.PolygonID(mixJob, 4) || !strings.Contains(an.rec.Header().Get("Link"), `rel="next"`) {
		t.Errorf("polygon list with limit=1: %v, X-Next-Cursor %q, Link %q", ids(an.list), next, an.rec.Header().Get("Link"))
	}
	an = c.do(oaCall{method: "GET", target: polygons + "?limit=1&cursor=" + next, op: polygons, hdr: ro, want: 200})
	if got := ids(an.list); !slices.Equal(got, []string{storage.PolygonID(mixJob, 3)}) {
		t.Errorf("second page of one: %v", got)
	}
	for _, f := range []struct {
		query string
		want  []string
	}{
		{"eudrStatus=FAILED&jobId=" + fixJob, []string{storage.PolygonID(fixJob, 4), storage.PolygonID(fixJob, 2)}},
		{"eudrStatus=HIGH_RISK", []string{storage.PolygonID(mixJob, 2), storage.PolygonID(fixJob, 1), storage.PolygonID(fixJob, 0)}},
		{"commodity=cattle", []string{storage.PolygonID(mixJob, 1)}},
		{"supplierId=V-1&eudrStatus=COMPLIANT", []string{storage.PolygonID(fixJob, 3)}},
		{"jobId=" + storage.NewID("job", time.Now()), nil},
	} {
		an = c.do(oaCall{method: "GET", target: polygons + "?" + f.query, op: polygons, hdr: ro, want: 200})
		if got := ids(an.list); !slices.Equal(got, f.want) {
			t.Errorf("polygons?%s: %v, want %v", f.query, got, f.want)
		}
	}
	an = c.do(oaCall{method: "GET", target: polygons + "?eudrStatus=compliant&commodity=tea&limit=0", op: polygons, hdr: ro, want: 400})
	if got := problems(an); len(got) != 3 || !got[apierr.DetailInvalidValue+" at query.eudrStatus"] || !got[apierr.DetailInvalidValue+" at query.commodity"] {
		t.Errorf("polygons with three bad parameters: details %v", slices.Sorted(maps.Keys(got)))
	}
	an = c.do(oaCall{env: storage.Production, method: "GET", target: polygons, op: polygons, hdr: live, want: 200})
	if len(an.list) != 0 {
		t.Errorf("production lists the sandbox's polygons: %v", ids(an.list))
	}
	c.do(oaCall{method: "GET", target: polygons, op: polygons, want: 401})

	// Another environment, unknown IDs, deletion.
	one := storage.PolygonID(fixJob, 4)
	for _, path := range []string{polygon, status, evidence} {
		target := strings.Replace(path, "{polygonId}", one, 1)
		c.do(oaCall{env: storage.Production, method: "GET", target: target, op: path, hdr: live, want: 404})
		c.do(oaCall{method: "GET", target: strings.Replace(path, "{polygonId}", "pol_nope", 1), op: path, hdr: ro, want: 404})
		c.do(oaCall{method: "GET", target: target, op: path, want: 401})
	}
	c.do(oaCall{env: storage.Production, method: "DELETE", target: polygons + "/" + one, op: polygon, hdr: live, want: 404})
	c.do(oaCall{method: "DELETE", target: polygons + "/" + one, op: polygon, hdr: ro, want: 403})
	c.do(oaCall{method: "DELETE", target: polygons + "/" + one, op: polygon, hdr: rw, want: 204})
	c.do(oaCall{method: "DELETE", target: polygons + "/" + one, op: polygon, hdr: rw, want: 404})
	for _, path := range []string{polygon, status, evidence} {
		c.do(oaCall{method: "GET", target: strings.Replace(path, "{polygonId}", one, 1), op: path, hdr: ro, want: 404})
	}
	an = c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + fixJob, op: job, hdr: ro, want: 200})
	if rs := oaList(an.body["results"]); len(rs) != 5 || rs[4].(map[string]any)["polygonId"] != one {
		t.Errorf("the job's results after deleting %s: %v; want it still listed", one, oaShort(rs))
	}

	// The events: per job, the screened polygons and the failed ones with
	// their reasons, to the subscription's path.
	oaEventually(t, "the four polygon events", func() bool { return len(recv.atPath("/polygons")) >= 4 })
	got := map[string]map[string]any{}
	for _, d := range recv.atPath("/polygons") {
		typ := d.header.Get(webhooksig.HeaderEventType)
		if env := c.checkDelivery(typ, d, secret); env != nil {
			data, _ := env["data"].(map[string]any)
			got[typ+" "+fmt.Sprint(data["jobId"])] = data
		}
	}
	for _, j := range []struct {
		id   string
		want []oaPolygonOutcome
	}{{fixJob, fixtures}, {mixJob, mixed}} {
		verified := map[string]any{"jobId": j.id, "polygonIds": []any{}}
		failed := map[string]any{"jobId": j.id, "polygonIds": []any{}, "reasons": map[string]any{}}
		for i, w := range j.want {
			id := storage.PolygonID(j.id, i)
			if w.status == geo.StatusFailed {
				failed["polygonIds"] = append(failed["polygonIds"].([]any), id)
				failed["reasons"].(map[string]any)[id] = w.failureReason
			} else {
				verified["polygonIds"] = append(verified["polygonIds"].([]any), id)
			}
		}
		if d := got[event.PolygonVerified+" "+j.id]; !reflect.DeepEqual(d, verified) {
			t.Errorf("polygon.verified of job %s: %v, want %v", j.id, d, verified)
		}
		if d := got[event.PolygonFailed+" "+j.id]; !reflect.DeepEqual(d, failed) {
			t.Errorf("polygon.failed of job %s: %v, want %v", j.id, d, failed)
		}
	}
}

// oaWith returns the header pairs h with more appended; h is not changed.
func oaWith(h []string, more ...string) []string { return append(slices.Clone(h), more...) }

// oaIdem returns h with an Idempotency-Key.
func oaIdem(h []string, key string) []string { return oaWith(h, "Idempotency-Key", key) }

// oaProblems returns an error answer's details as "CODE at field" keys.
func oaProblems(an oaAnswer) map[string]bool {
	out := map[string]bool{}
	for _, dv := range oaList(an.body["details"]) {
		dm, _ := dv.(map[string]any)
		out[fmt.Sprint(dm["code"])+" at "+fmt.Sprint(dm["field"])] = true
	}
	return out
}

// oaRunUntil runs the job runner r until cond holds (or the wait of
// oaEventually runs out), then stops it.
func oaRunUntil(t *testing.T, r *work.Queue, what string, cond func() bool) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := r.Run(ctx); err != nil {
			t.Errorf("job runner: %v", err)
		}
	}()
	oaEventually(t, what, cond)
	stop()
	<-stopped
}
