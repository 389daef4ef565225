package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/account"
)

// The openapi_*_test.go files hold server/openapi.json to the code: every
// route of routes() is described and nothing else, the document is well
// formed (this file), its schemas say what the Go types and validators do
// (openapi_code_test.go), and the responses of a real appliance conform to
// it (openapi_conformance_test.go and the files per resource).

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
				case code == "304": // a conditional GET's answer, without a body
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
			case authKey, authKeyRead:
				scope := []any{requiredScope(rte.method)}
				if rte.auth == authKeyRead {
					scope = []any{account.ScopeRead}
				}
				want = []any{map[string]any{"ApiKeyHeader": scope}, map[string]any{"ApiKeyBearer": scope}, map[string]any{"SessionCookie": scope}}
			case authAdmin:
				want = []any{map[string]any{"LoginJWT": []any{account.RoleAdmin}}, map[string]any{"SessionCookie": []any{account.RoleAdmin}}}
			case authAppliance:
				want = []any{map[string]any{"LoginJWT": []any{"applianceAdmin"}}, map[string]any{"SessionCookie": []any{"applianceAdmin"}}}
			case authSession:
				want = []any{map[string]any{"SessionCookie": []any{}}}
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
