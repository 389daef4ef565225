package server

// The answers of a real appliance conform to the OpenAPI document: the
// harness (oaConformance) and the walk through every route.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/server/config"
	"github.com/eudr/eudr/server/ratelimit"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

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
		c.checkHeader(name, fmt.Sprintf("%d answer", rec.Code), hn, rec.Header().Get(hn), h)
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
	// other path 200. Each subscription's secret is set as it is
	// registered, so the receiver verifies every delivery as it arrives.
	recv := apitest.NewReceiver(t)
	recv.SetPolicy(func(d *apitest.Delivery) apitest.Answer {
		if d.Path == "/gone" {
			return apitest.Answer{Status: http.StatusGone, Body: "gone"}
		}
		return apitest.Answer{Status: http.StatusOK, Body: "ok"}
	})
	cfg, err := config.Load("", []string{
		"EUDR_WEBHOOKS_CA_FILE=" + recv.CAFile,
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

	// The reference for browsers, and each kind of file it uses.
	c.do(oaCall{env: storage.Production, method: "GET", target: "/docs", op: "/docs", want: 200})
	c.do(oaCall{method: "GET", target: "/docs/", op: "/docs/", want: 200})
	for _, f := range docsReference.Files() {
		c.do(oaCall{method: "GET", target: "/docs/" + f.Name, op: "/docs/{file}", want: 200})
	}
	c.do(oaCall{method: "GET", target: "/docs/swagger-ui-bundle.js", op: "/docs/{file}", want: 404})

	// The console, its page on each listener and each file it uses.
	c.do(oaCall{env: storage.Production, method: "GET", target: "/console", op: "/console", want: 200})
	c.do(oaCall{method: "GET", target: "/console/", op: "/console/", want: 200})
	for _, f := range operatorConsole.Files() {
		c.do(oaCall{method: "GET", target: "/console/" + f.Name, op: "/console/{file}", want: 200})
	}
	c.do(oaCall{method: "GET", target: "/console/app.js", op: "/console/{file}", want: 404})

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

	c.webhooks(recv, recv.URL(""), rw, ro, []string{"X-API-Key", liveKey})
	// Every delivery verified with its subscription's secret as it arrived.
	for _, d := range recv.Requests("", "") {
		if d.SigErr != nil || d.EnvErr != nil {
			t.Errorf("delivery %s to %s answered %d: signatures %v, envelope %v", d.Env.EventID, d.Path, d.Status, d.SigErr, d.EnvErr)
		}
	}

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
	a.ipRate = ratelimit.New(0.001, 1)
	c.do(oaCall{method: "GET", target: "/livez", op: "/livez", want: 200})
	an = c.do(oaCall{method: "GET", target: "/livez", op: "/livez", want: 429})
	if an.rec.Header().Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
}

// oaFind returns the last request recv got of event eventID.
func oaFind(recv *apitest.Receiver, eventID string) (apitest.Delivery, bool) {
	if ds := recv.Requests("", eventID); len(ds) > 0 {
		return ds[len(ds)-1], true
	}
	return apitest.Delivery{}, false
}

// oaFindPath returns the first request recv got to path.
func oaFindPath(recv *apitest.Receiver, path string) (apitest.Delivery, bool) {
	if ds := recv.Requests(path, ""); len(ds) > 0 {
		return ds[0], true
	}
	return apitest.Delivery{}, false
}

// oaWait bounds a wait for work the test started: a safety net against a
// hang, not a measure of speed. An archive renders a PDF report per
// statement, seconds of CPU under the race detector on a loaded machine.
const oaWait = 5 * time.Minute

// oaEventually polls cond for up to oaWait.
func oaEventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(oaWait); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// checkHeader holds header hn of an answer or a delivery (what, in the
// message), whose value is val ("" when absent), to its declaration decl
// in the document: present when required, and conforming to its schema
// (an integer schema is checked on the parsed number).
func (c *oaConformance) checkHeader(name, what, hn, val string, decl map[string]any) {
	t := c.t
	t.Helper()
	if val == "" {
		if decl["required"] == true {
			t.Errorf("%s: the %s lacks the %s header", name, what, hn)
		}
		return
	}
	schema, _ := decl["schema"].(map[string]any)
	var v any = val
	if schema["type"] == "integer" {
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			t.Errorf("%s: header %s: %q is not an integer", name, hn, val)
			return
		}
		v = float64(n)
	}
	for _, e := range c.sc.check(schema, v, "header "+hn) {
		t.Errorf("%s: %s", name, e)
	}
}

// checkDelivery holds a request the appliance sent to a receiver to the
// document's webhook of its event type: the declared headers, the body
// schema, and both signatures made with secret, at the delivery's arrival
// by the receiver's clock.
func (c *oaConformance) checkDelivery(eventType string, d apitest.Delivery, secret string) map[string]any {
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
		c.checkHeader(name, "delivery", hn, d.Header.Get(hn), pm)
	}
	if ct := d.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q, want application/json", name, ct)
	}
	var body map[string]any
	if err := json.Unmarshal(d.Body, &body); err != nil {
		t.Errorf("%s: body is not a JSON object: %v", name, err)
		return nil
	}
	schema, _ := oaPointer(post, "/requestBody/content/application~1json/schema")
	for _, e := range c.sc.check(schema, body, "body") {
		t.Errorf("%s: %s", name, e)
	}
	if err := webhooksig.Verify(secret, d.Body, d.Header.Get(webhooksig.HeaderSignature)); err != nil {
		t.Errorf("%s: %s: %v", name, webhooksig.HeaderSignature, err)
	}
	if err := webhooksig.VerifyStandard(secret, d.Header, d.Body, webhooksig.DefaultTolerance, d.At); err != nil {
		t.Errorf("%s: Standard Webhooks signature: %v", name, err)
	}
	if got := d.Header.Get(webhooksig.HeaderEventID); got != body["eventId"] || d.Header.Get(webhooksig.HeaderWebhookID) != got {
		t.Errorf("%s: %s %q and webhook-id %q, body eventId %v; want all equal", name, webhooksig.HeaderEventID, got,
			d.Header.Get(webhooksig.HeaderWebhookID), body["eventId"])
	}
	return body
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
