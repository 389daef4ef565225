package main_test

// End-to-end tests of supplier mappings (POST/GET/DELETE /suppliers):
// upsert, newest-first pages with Link and X-Next-Cursor, validation of
// every field, unknown fields, malformed JSON, media types and the body
// limit.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// linkNext extracts the target of a Link: <...>; rel="next" header.
var linkNext = regexp.MustCompile(`^<([^>]+)>;\s*rel="next"$`)

func TestSuppliers(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	base := p.SandboxURL + eudrAPI + "/suppliers"
	key := apitest.WithKey(sk.Key)

	t.Run("Upsert", func(t *testing.T) {
		first := mustCreateSupplier(t, p.SandboxURL, sk.Key, "ups-1", "First Name Ltd")
		if !supplierIDPattern.MatchString(first.SupplierID) {
			t.Errorf("supplierId %q, want sup_ + ULID", first.SupplierID)
		}
		if first.Role != "OPERATOR" || first.Country != "BR" || first.EORI.Valid {
			t.Errorf("created %+v, want role OPERATOR, country BR, eori null", first)
		}
		if first.CreatedAt != first.UpdatedAt {
			t.Errorf("new mapping: createdAt %s, updatedAt %s, want equal", first.CreatedAt, first.UpdatedAt)
		}
		time.Sleep(5 * time.Millisecond)
		body := supplierBody("ups-1", "Second Name Ltd")
		body["euOperatorUuid"] = "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE"
		body["eori"] = "DE123456789"
		body["role"] = "TRADER"
		var second supplier
		postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), body).WantStatus(t, http.StatusOK).Decode(t, &second)
		if second.SupplierID != first.SupplierID || second.CreatedAt != first.CreatedAt {
			t.Errorf("upsert: supplierId %s createdAt %s, want the first %s %s", second.SupplierID, second.CreatedAt, first.SupplierID, first.CreatedAt)
		}
		if second.Name != "Second Name Ltd" || second.Role != "TRADER" || second.EORI != (nullString{true, "DE123456789"}) {
			t.Errorf("upsert answered %+v, want the new values", second)
		}
		if second.EUOperatorUUID != "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee" {
			t.Errorf("euOperatorUuid %q, want it lower-cased", second.EUOperatorUUID)
		}
		created, updated := apitest.ParseTime(t, second.CreatedAt), apitest.ParseTime(t, second.UpdatedAt)
		if !updated.After(created) || updated.Before(apitest.ParseTime(t, first.UpdatedAt)) {
			t.Errorf("updatedAt %s, want after createdAt %s", second.UpdatedAt, second.CreatedAt)
		}
		var got supplier
		apitest.Do(t, "GET", base+"/ups-1", key, nil).WantStatus(t, http.StatusOK).Decode(t, &got)
		if got != second {
			t.Errorf("GET %+v, want what the upsert answered %+v", got, second)
		}
	})

	var made []supplier
	t.Run("ListNewestFirst", func(t *testing.T) {
		for i := 1; i <= 4; i++ {
			time.Sleep(2 * time.Millisecond) // IDs are time-ordered to the millisecond
			made = append(made, mustCreateSupplier(t, p.SandboxURL, sk.Key, fmt.Sprintf("list-%d", i), fmt.Sprintf("List %d Ltd", i)))
		}
		var list []supplier
		r := apitest.Do(t, "GET", base, key, nil).WantStatus(t, http.StatusOK)
		r.Decode(t, &list)
		if r.Header.Get("Link") != "" || r.Header.Get("X-Next-Cursor") != "" {
			t.Errorf("complete list has Link %q / X-Next-Cursor %q", r.Header.Get("Link"), r.Header.Get("X-Next-Cursor"))
		}
		if len(list) < 4 {
			t.Fatalf("listed %d suppliers, want at least 4", len(list))
		}
		for i := 0; i < 4; i++ {
			if want := made[3-i]; list[i] != want {
				t.Errorf("list[%d] = %s, want %s (newest first)", i, list[i].ERPVendorID, want.ERPVendorID)
			}
		}
		for i := 1; i < len(list); i++ {
			if list[i].SupplierID >= list[i-1].SupplierID {
				t.Errorf("list not newest first at %d: %s after %s", i, list[i].SupplierID, list[i-1].SupplierID)
			}
		}
	})
	t.Run("Pagination", func(t *testing.T) {
		var all []supplier
		apitest.Do(t, "GET", base, key, nil).WantStatus(t, http.StatusOK).Decode(t, &all)
		for _, limit := range []int{1, 2, 3} {
			var walked []supplier
			next := base + "?limit=" + strconv.Itoa(limit)
			for pages := 0; next != ""; pages++ {
				if pages > len(all)+1 {
					t.Fatalf("limit=%d: more pages than suppliers", limit)
				}
				r := apitest.Do(t, "GET", next, key, nil).WantStatus(t, http.StatusOK)
				var page []supplier
				r.Decode(t, &page)
				if len(page) == 0 || len(page) > limit {
					t.Fatalf("limit=%d: page of %d", limit, len(page))
				}
				walked = append(walked, page...)
				next = ""
				link, cursor := r.Header.Get("Link"), r.Header.Get("X-Next-Cursor")
				if link == "" {
					if cursor != "" {
						t.Errorf("limit=%d: X-Next-Cursor %q without Link", limit, cursor)
					}
					continue
				}
				m := linkNext.FindStringSubmatch(link)
				if m == nil || !strings.HasPrefix(m[1], eudrAPI+"/suppliers?") {
					t.Fatalf("limit=%d: Link %q, want <%s/suppliers?...>; rel=\"next\"", limit, link, eudrAPI)
				}
				u, err := url.Parse(m[1])
				if err != nil {
					t.Fatal(err)
				}
				if cursor == "" || u.Query().Get("cursor") != cursor || cursor != page[len(page)-1].SupplierID {
					t.Errorf("limit=%d: X-Next-Cursor %q, Link cursor %q, want the page's last supplierId %s", limit, cursor, u.Query().Get("cursor"), page[len(page)-1].SupplierID)
				}
				if u.Query().Get("limit") != strconv.Itoa(limit) {
					t.Errorf("limit=%d: Link keeps limit %q", limit, u.Query().Get("limit"))
				}
				next = p.SandboxURL + m[1]
			}
			if !slices.Equal(walked, all) {
				t.Errorf("limit=%d: walked %d suppliers, want the %d of the full list in order", limit, len(walked), len(all))
			}
		}
	})
	t.Run("LimitOutOfRange", func(t *testing.T) {
		for _, q := range []string{"limit=0", "limit=5000", "limit=1001", "limit=-1", "limit=abc"} {
			e := apitest.WantError(t, apitest.Do(t, "GET", base+"?"+q, key, nil), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
			if len(e.Details) == 1 && e.Details[0].Field != "query.limit" {
				t.Errorf("?%s: field %q, want query.limit", q, e.Details[0].Field)
			}
		}
		apitest.Do(t, "GET", base+"?limit=1000", key, nil).WantStatus(t, http.StatusOK)
	})
	t.Run("GetAndDelete", func(t *testing.T) {
		s := mustCreateSupplier(t, p.SandboxURL, sk.Key, "del-1", "Delete Me Ltd")
		var got supplier
		apitest.Do(t, "GET", base+"/del-1", key, nil).WantStatus(t, http.StatusOK).Decode(t, &got)
		if got != s {
			t.Errorf("GET %+v, want %+v", got, s)
		}
		r := apitest.Do(t, "DELETE", base+"/del-1", key, nil).WantStatus(t, http.StatusNoContent)
		if len(r.Body) != 0 {
			t.Errorf("204 with body %q", r.Body)
		}
		apitest.WantError(t, apitest.Do(t, "GET", base+"/del-1", key, nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "DELETE", base+"/del-1", key, nil), http.StatusNotFound, "NOT_FOUND")
		var list []supplier
		apitest.Do(t, "GET", base, key, nil).WantStatus(t, http.StatusOK).Decode(t, &list)
		for _, x := range list {
			if x.ERPVendorID == "del-1" {
				t.Errorf("deleted supplier still listed")
			}
		}
		// Created again, it is a new mapping.
		again := mustCreateSupplier(t, p.SandboxURL, sk.Key, "del-1", "Back Again Ltd")
		if again.SupplierID == s.SupplierID {
			t.Errorf("re-created supplier kept the deleted one's id %s", s.SupplierID)
		}
	})
	t.Run("ValidationReportsEveryProblem", func(t *testing.T) {
		body := map[string]any{
			"erpVendorId":    "has space!",
			"euOperatorUuid": "not-a-uuid",
			"name":           "   ",
			"country":        "XX",
			"eori":           "12",
			"role":           "BOSS",
		}
		e := apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), body), http.StatusBadRequest, "VALIDATION_FAILED",
			"INVALID_VALUE", "INVALID_VALUE", "REQUIRED", "INVALID_VALUE", "INVALID_VALUE", "INVALID_VALUE")
		for field, code := range map[string]string{"erpVendorId": "INVALID_VALUE", "euOperatorUuid": "INVALID_VALUE", "name": "REQUIRED",
			"country": "INVALID_VALUE", "eori": "INVALID_VALUE", "role": "INVALID_VALUE"} {
			if d := e.Detail(t, field); d.Code != code {
				t.Errorf("field %s: code %s, want %s", field, d.Code, code)
			}
		}
		e = apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), map[string]any{}), http.StatusBadRequest, "VALIDATION_FAILED",
			"REQUIRED", "REQUIRED", "REQUIRED", "REQUIRED")
		for _, f := range []string{"erpVendorId", "euOperatorUuid", "name", "country"} {
			e.Detail(t, f)
		}
		lower := supplierBody("val-1", "Lower Ltd")
		lower["country"] = "br"
		e = apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), lower), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
		e.Detail(t, "country")
		typed := supplierBody("val-2", "Typed Ltd")
		typed["name"] = 42
		e = apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), typed), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
		e.Detail(t, "name")
		apitest.WantError(t, apitest.Do(t, "GET", base+"/val-1", key, nil), http.StatusNotFound, "NOT_FOUND")
	})
	t.Run("UnknownFields", func(t *testing.T) {
		body := supplierBody("unk-1", "Unknown Ltd")
		body["colour"] = "green"
		body["legacyId"] = 7
		e := apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), body), http.StatusBadRequest, "VALIDATION_FAILED", "UNKNOWN_FIELD", "UNKNOWN_FIELD")
		e.Detail(t, "colour")
		e.Detail(t, "legacyId")
	})
	t.Run("MalformedJSON", func(t *testing.T) {
		for _, c := range []struct{ body, code string }{
			{`{"erpVendorId": "x",`, "MALFORMED_JSON"},
			{`{"erpVendorId": "x"}{}`, "MALFORMED_JSON"},
			{`nul`, "MALFORMED_JSON"},
			{`{'erpVendorId': 'x'}`, "MALFORMED_JSON"},
			{" ", "MALFORMED_JSON"},
			{`[1,2]`, "INVALID_VALUE"}, // well-formed, but not an object
		} {
			e := apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), c.body), http.StatusBadRequest, "VALIDATION_FAILED", c.code)
			if len(e.Details) == 1 && e.Details[0].Field != "body" {
				t.Errorf("body %q: field %q, want body", c.body, e.Details[0].Field)
			}
		}
	})
	t.Run("UnsupportedMediaType", func(t *testing.T) {
		for _, ct := range []string{"text/plain", "application/xml", "application/x-www-form-urlencoded", "application/geo+json"} {
			r := apitest.Do(t, "POST", base, apitest.Merge(key, apitest.Hdr("Idempotency-Key", apitest.NewIdemKey(), "Content-Type", ct)), supplierBody("mt-1", "Media Ltd"))
			apitest.WantError(t, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "INVALID_VALUE")
		}
		apitest.WantError(t, apitest.Do(t, "GET", base+"/mt-1", key, nil), http.StatusNotFound, "NOT_FOUND")
		apitest.Do(t, "POST", base, apitest.Merge(key, apitest.Hdr("Idempotency-Key", apitest.NewIdemKey(), "Content-Type", "application/json; charset=utf-8")),
			supplierBody("mt-1", "Media Ltd")).WantStatus(t, http.StatusOK)
	})
}

func TestSuppliers_BodyLimit(t *testing.T) {
	t.Parallel()
	p := startServer(t, "EUDR_LIMITS_MAX_BODY_BYTES=2048")
	sk := p.CreateKey(t, sandbox)
	big := supplierBody("big-1", strings.Repeat("n", 3000)) // over 2048 bytes as JSON
	js, _ := json.Marshal(big)

	// Content-Length over the limit.
	apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), js), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	// Chunked: the limit applies while reading.
	idem := apitest.NewIdemKey()
	apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, idem, bytes.NewReader(js)), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	// A body just under the limit is fine, with the same key (a 413 does not burn it).
	ok := supplierBody("big-1", strings.Repeat("n", 190))
	postSupplier(t, p.SandboxURL, sk.Key, idem, ok).WantStatus(t, http.StatusOK)
	apitest.WantError(t, apitest.Do(t, "POST", p.SandboxURL+enterpriseAPI+"/auth/login", nil, bytes.NewReader(js)), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
}
