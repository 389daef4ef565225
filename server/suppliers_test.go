package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/storage"
)

func TestApp_Suppliers(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	_, live := ta.newKey(storage.Production)
	path := eudrPrefix + "/suppliers"
	idem := 0
	post := func(body string) *httptest.ResponseRecorder {
		idem++
		return ta.do("POST", path, body, "X-API-Key", key, "Idempotency-Key", fmt.Sprint("s-", idem))
	}

	var created supplierResponse
	t.Run("Create", func(t *testing.T) {
		r := post(`{"erpVendorId":"V1","euOperatorUuid":"3F2B8A1E-6C4D-4E5F-9A7B-1C2D3E4F5A6B","name":"Coop","country":"CI","eori":"CI123","role":"TRADER"}`)
		if r.Code != 200 {
			t.Fatalf("POST: got %d %s, want 200", r.Code, r.Body)
		}
		mustDecode(t, r, &created)
		want := supplierResponse{SupplierID: created.SupplierID, ERPVendorID: "V1", EUOperatorUUID: "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b",
			Name: "Coop", Country: "CI", EORI: storage.Optional("CI123"), Role: "TRADER", Identifiers: []batch.IdentifierRequest{},
			CreatedAt: "2026-11-20T10:00:00.000Z", UpdatedAt: "2026-11-20T10:00:00.000Z"}
		got := created
		if got.EORI == nil || *got.EORI != "CI123" {
			t.Errorf("eori: got %v, want CI123", got.EORI)
		}
		got.EORI, want.EORI = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("created: got %+v, want %+v", got, want)
		}
		if !strings.HasPrefix(created.SupplierID, "sup_") || len(created.SupplierID) != 30 {
			t.Errorf("supplierId: got %q, want sup_ + ULID", created.SupplierID)
		}
	})

	t.Run("UpsertKeepsIDAndCreatedAt", func(t *testing.T) {
		ta.clock.Advance(time.Hour)
		r := post(`{"erpVendorId":"V1","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b","name":"Coop 2","country":"GH"}`)
		if r.Code != 200 {
			t.Fatalf("upsert: got %d %s", r.Code, r.Body)
		}
		var s supplierResponse
		mustDecode(t, r, &s)
		if s.SupplierID != created.SupplierID || s.CreatedAt != created.CreatedAt {
			t.Errorf("upsert: got id %s createdAt %s, want %s %s kept", s.SupplierID, s.CreatedAt, created.SupplierID, created.CreatedAt)
		}
		if s.UpdatedAt != "2026-11-20T11:00:00.000Z" || s.Name != "Coop 2" || s.Country != "GH" || s.Role != "OPERATOR" || s.EORI != nil {
			t.Errorf("upsert: got %+v, want new values, updatedAt 11:00, role OPERATOR, no eori", s)
		}
		w := ta.do("GET", path+"/V1", "", "X-API-Key", key)
		var got supplierResponse
		mustDecode(t, w, &got)
		if w.Code != 200 || got.Name != "Coop 2" || got.SupplierID != created.SupplierID {
			t.Errorf("GET after upsert: got %d %+v", w.Code, got)
		}
	})

	t.Run("WrongTypeAndUnknown", func(t *testing.T) {
		r := post(`{"erpVendorId":1}`)
		e := wantError(t, r, 400, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
		if e.Details[0].Field != "erpVendorId" {
			t.Errorf("field: got %q, want erpVendorId", e.Details[0].Field)
		}
		r = post(`{"erpVendorId":"V9","vendor":"x"}`)
		wantError(t, r, 400, apierr.CodeValidationFailed, apierr.DetailUnknownField)
		w := ta.do("POST", path, `{}`, "X-API-Key", key, "Idempotency-Key", "ct", "Content-Type", "text/plain")
		wantError(t, w, http.StatusUnsupportedMediaType, apierr.CodeUnsupportedMediaType, "")
	})

	t.Run("List", func(t *testing.T) {
		post(`{"erpVendorId":"V2","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b","name":"Two","country":"BR"}`)
		w := ta.do("GET", path, "", "X-API-Key", key)
		var list []supplierResponse
		mustDecode(t, w, &list)
		if len(list) != 2 || list[0].ERPVendorID != "V2" || list[1].ERPVendorID != "V1" {
			t.Errorf("list: got %+v, want V2 then V1 (newest first)", list)
		}
		w = ta.do("GET", path+"?limit=1", "", "X-API-Key", key)
		mustDecode(t, w, &list)
		if len(list) != 1 || w.Header().Get("X-Next-Cursor") != list[0].SupplierID {
			t.Errorf("page of 1: got %d items, X-Next-Cursor %q", len(list), w.Header().Get("X-Next-Cursor"))
		}
	})

	t.Run("TenantIsolation", func(t *testing.T) {
		w := ta.serve(storage.Production, newRequest("GET", path, "", "X-API-Key", live))
		if w.Code != 200 || strings.TrimSpace(w.Body.String()) != "[]" {
			t.Errorf("production list: got %d %s, want 200 [] (sandbox data is not visible)", w.Code, w.Body)
		}
		w = ta.serve(storage.Production, newRequest("GET", path+"/V1", "", "X-API-Key", live))
		wantError(t, w, 404, apierr.CodeNotFound, "")
	})

	t.Run("Delete", func(t *testing.T) {
		w := ta.do("DELETE", path+"/V1", "", "X-API-Key", key)
		if w.Code != http.StatusNoContent {
			t.Fatalf("DELETE: got %d %s, want 204", w.Code, w.Body)
		}
		e := wantError(t, ta.do("GET", path+"/V1", "", "X-API-Key", key), 404, apierr.CodeNotFound, "")
		if !strings.Contains(e.Message, "V1") {
			t.Errorf("404 message: got %q, want it to name V1", e.Message)
		}
		wantError(t, ta.do("DELETE", path+"/V1", "", "X-API-Key", key), 404, apierr.CodeNotFound, "")
	})
}

// TestApp_SuppliersIdentification: the operator's reference numbers and
// address are stored with the mapping and shown by GET; an upsert without
// them clears them; bad ones are refused with their field paths.
func TestApp_SuppliersIdentification(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	path := eudrPrefix + "/suppliers"
	w := ta.do("POST", path, `{"erpVendorId":"V1","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b","name":"Coop","country":"CI",`+
		`"eori":"CI123","identifiers":[{"type":"vat","value":" CI0123456X "},{"type":"duns","value":"123456789"}],`+
		`"street":"Rue des Jardins 12","postalCode":"01 BP 1234","city":"Abidjan","fullAddress":"Rue des Jardins 12, 01 BP 1234 Abidjan"}`,
		"X-API-Key", key, "Idempotency-Key", "id-1")
	if w.Code != http.StatusOK {
		t.Fatalf("POST: %d %s", w.Code, w.Body)
	}
	var got supplierResponse
	mustDecode(t, ta.do("GET", path+"/V1", "", "X-API-Key", key), &got)
	if !reflect.DeepEqual(got.Identifiers, []batch.IdentifierRequest{{Type: "vat", Value: "CI0123456X"}, {Type: "duns", Value: "123456789"}}) ||
		got.Street == nil || *got.Street != "Rue des Jardins 12" || got.PostalCode == nil || *got.PostalCode != "01 BP 1234" ||
		got.City == nil || *got.City != "Abidjan" || got.FullAddress == nil || *got.FullAddress != "Rue des Jardins 12, 01 BP 1234 Abidjan" {
		t.Errorf("GET: %+v", got)
	}

	w = ta.do("POST", path, `{"erpVendorId":"V1","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b","name":"Coop","country":"CI"}`,
		"X-API-Key", key, "Idempotency-Key", "id-2")
	if !strings.Contains(w.Body.String(), `"identifiers":[],"street":null,"postalCode":null,"city":null,"fullAddress":null`) {
		t.Errorf("upsert without them: %s, want them cleared", w.Body)
	}

	w = ta.do("POST", path, `{"erpVendorId":"V1","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b","name":"Coop","country":"CI",`+
		`"identifiers":[{"type":"siret","value":"1"},{"type":"vat","value":""}],"city":"Abidjan"}`, "X-API-Key", key, "Idempotency-Key", "id-3")
	e := wantError(t, w, http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	var fields []string
	for _, d := range e.Details {
		fields = append(fields, d.Code+" "+d.Field)
	}
	for _, want := range []string{"INVALID_VALUE identifiers[0].type", "REQUIRED identifiers[1].value", "REQUIRED street", "REQUIRED postalCode"} {
		if !slices.Contains(fields, want) {
			t.Errorf("refusal %v lacks %s", fields, want)
		}
	}
}
