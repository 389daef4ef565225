package main_test

// End-to-end tests of statements in production: without EU system
// credentials, and with credentials whose auth key never shows (in an
// answer, a log line or a request to the EU system, here a fake one that
// is down). TestDDS_Refusals runs them on its appliance.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// ddsFakeEU records what the appliance sends to the EU system and answers
// 503: the system is down.
type ddsFakeEU struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []string // header and body of each request
}

func newDDSFakeEU(t testing.TB) *ddsFakeEU {
	f := &ddsFakeEU{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL)
		r.Header.Write(&b)
		b.Write(body)
		f.mu.Lock()
		f.reqs = append(f.reqs, b.String())
		f.mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *ddsFakeEU) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// ddsProduction: production drafts without EU system credentials, but
// does not submit (422 EU_SYSTEM_NOT_CONFIGURED); credentials are stored
// and shown without their auth key, which no response, log line or
// request to the EU system carries. An endpoint given through the API is
// https only; eu, on plain http, is the configured production endpoint.
func ddsProduction(t *testing.T, p *serverProc, eu *ddsFakeEU) {
	const authKey = "AuthKey-e2e-9f3Kq7ZxW2mLp"
	live, base := p.createKey(t, production), p.ProductionURL
	var bodies [][]byte
	keep := func(r *apitest.Response) *apitest.Response {
		bodies = append(bodies, r.Body)
		return r
	}

	// Production screens against imported layers: a deforestation layer
	// covering the plot's region, its loss elsewhere.
	layer := map[string]any{"name": "E2E DDS loss", "kind": "deforestation", "version": "1", "source": "e2e",
		"features": json.RawMessage(polCollection(polFeature(polBoxGeometry(-1.95, 6.05, -1.94, 6.06, 6), map[string]any{}))),
		"coverage": json.RawMessage(polCollection(polFeature(polBoxGeometry(-2, 6, -1, 7, 1), map[string]any{})))}
	apitest.Do(t, "POST", base+enterpriseAPI+"/layers", apitest.Merge(apitest.Bearer(p.Login(t)), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())), layer).WantStatus(t, http.StatusOK)
	ddsMapOperator(t, base, live, "V-LIVE", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, live, "V-LIVE", ddsPlots(1, -1.5, 6.5, "V-LIVE")...)
	d := ddsDraft(t, base, live, ddsBody(ddsOperatorUUID, batch))

	for range 2 { // nothing is recorded: the second answer is the same
		e := apitest.WantError(t, keep(ddsPost(t, base, live, d.DDSID, "submit")), http.StatusUnprocessableEntity, "BUSINESS_RULE", "EU_SYSTEM_NOT_CONFIGURED")
		if !strings.Contains(e.Message, "credentials/eu-system") {
			t.Errorf("not configured: %q does not say how to configure", e.Message)
		}
	}
	if v := ddsGet(t, base, live, d.DDSID); v.Status != "DRAFT" || ddsHistory(v) != "DRAFT" {
		t.Errorf("after refused submits: %s", ddsHistory(v))
	}
	credURL := base + eudrAPI + "/credentials/eu-system"
	apitest.WantError(t, keep(apitest.Do(t, "GET", credURL, apitest.WithKey(live), nil)), http.StatusNotFound, "NOT_FOUND")

	// A bad PUT lists its problems, without the key.
	e := apitest.WantError(t, keep(apitest.Do(t, "PUT", credURL, apitest.WithKey(live), map[string]any{"authKey": authKey})), http.StatusBadRequest,
		"VALIDATION_FAILED", "REQUIRED", "REQUIRED")
	e.Detail(t, "username")
	e.Detail(t, "clientId")
	apitest.WantError(t, keep(apitest.Do(t, "PUT", credURL, apitest.WithKey(live), map[string]any{"username": "op-user", "authKey": authKey,
		"clientId": "eudr-test", "endpoint": "ftp://relay.example/tracesnt"})), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
	endpoint := eu.srv.URL + "/tracesnt"
	e = apitest.WantError(t, keep(apitest.Do(t, "PUT", credURL, apitest.WithKey(live), map[string]any{"username": "op-user", "authKey": authKey,
		"clientId": "eudr-test", "endpoint": endpoint})), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
	if d := e.Detail(t, "endpoint"); !strings.Contains(d.Issue, "https URL without user name or password") {
		t.Errorf("plain http endpoint through the API: issue %q", d.Issue)
	}
	if n := len(eu.requests()); n != 0 {
		t.Fatalf("the EU system received %d requests before any submission", n)
	}

	put := keep(apitest.Do(t, "PUT", credURL, apitest.WithKey(live), map[string]any{"username": "op-user", "authKey": authKey,
		"clientId": "eudr-test", "endpoint": "production"})).WantStatus(t, http.StatusOK)
	get := keep(apitest.Do(t, "GET", credURL, apitest.WithKey(live), nil)).WantStatus(t, http.StatusOK)
	for _, r := range []*apitest.Response{put, get} {
		var c map[string]any
		r.Decode(t, &c)
		if got := ledSortedKeys(rawKeys(t, r.Body)); !slices.Equal(got, []string{"authKeySet", "clientId", "effectiveEndpoint", "endpoint", "operatorAccessIdentifier", "updatedAt", "username"}) {
			t.Errorf("%s: members %v", r.Request, got)
		}
		if c["username"] != "op-user" || c["clientId"] != "eudr-test" || c["endpoint"] != "production" || c["effectiveEndpoint"] != endpoint ||
			c["authKeySet"] != true || c["operatorAccessIdentifier"] != nil {
			t.Errorf("%s: %s", r.Request, r.Body)
		}
		if s, _ := c["updatedAt"].(string); s != "" {
			apitest.ParseTime(t, s)
		}
	}
	// The sandbox has no credentials of its own.
	apitest.WantError(t, keep(apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/credentials/eu-system", apitest.WithKey(p.createKey(t, sandbox)), nil)), http.StatusNotFound, "NOT_FOUND")

	// Now the statement goes to the EU system, which is down: the request
	// carries the username, not the key.
	_, jobID := ddsSubmitWith(t, base, live, d.DDSID, apitest.NewIdemKey())
	waitUntil(t, ddsWait, "a request to the EU system", func() bool { return len(eu.requests()) > 0 })
	for _, req := range eu.requests() {
		if !strings.Contains(req, "op-user") || strings.Contains(req, authKey) ||
			strings.Contains(req, base64.StdEncoding.EncodeToString([]byte(authKey))) {
			t.Errorf("request to the EU system: username there %v, auth key there %v:\n%.2000s",
				strings.Contains(req, "op-user"), strings.Contains(req, authKey), req)
		}
	}
	// The job stays RUNNING and says why: the outcome of its last attempt
	// and when it tries again (production's first poll delay, 30 min), on
	// the job and on the statement, which stays a DRAFT.
	var j jobView
	waitUntil(t, ddsWait, "the job to show its failed attempt", func() bool {
		r := keep(apitest.Do(t, "GET", jobURL(base, jobID), apitest.WithKey(live), nil)).WantStatus(t, http.StatusOK)
		j = jobView{}
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			t.Fatalf("%s: %v: %s", r.Request, err, r.Body)
		}
		return j.Attempts > 0
	})
	var last jobAttemptView
	if err := json.Unmarshal(j.LastAttempt, &last); err != nil || j.Status != "RUNNING" || j.Error != nil || j.NextAttemptAt == nil ||
		last.Code != "EU_SYSTEM_UNAVAILABLE" || last.Message != "the EU information system answered HTTP 503 (Service Unavailable) to submitDds; trying again" {
		t.Fatalf("a submission job while the EU system answers 503: %+v (lastAttempt %s)", j, j.LastAttempt)
	}
	if wait := apitest.ParseTime(t, *j.NextAttemptAt).Sub(apitest.ParseTime(t, last.At)); wait != 30*time.Minute {
		t.Errorf("next attempt %s after the last, want 30m", wait)
	}
	dr := keep(apitest.Do(t, "GET", base+ddsPath+"/"+d.DDSID, apitest.WithKey(live), nil)).WantStatus(t, http.StatusOK)
	v := ddsDecode(t, dr, dr.Body)
	if sub := v.Submission; v.Status != "DRAFT" || sub == nil || sub.JobID != jobID || sub.Status != "RUNNING" ||
		sub.Attempts != j.Attempts || sub.LastAttempt == nil || *sub.LastAttempt != last || sub.NextAttemptAt == nil || *sub.NextAttemptAt != *j.NextAttemptAt {
		t.Errorf("the statement while its submission is retried: %s, submission %+v", v.Status, sub)
	}
	for _, b := range bodies {
		if bytes.Contains(b, []byte(authKey)) {
			t.Errorf("a response carries the auth key: %s", b)
		}
	}
	assertLogHasNoSecrets(t, p, authKey)
}

// rawKeys is the members of a JSON object.
func rawKeys(t testing.TB, body []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("not a JSON object: %s", body)
	}
	return m
}
