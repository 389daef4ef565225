package server

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

func ptr(s string) *string { return &s }

// validSupplier is a request every field of which is valid.
func validSupplier() supplierRequest {
	return supplierRequest{ERPVendorID: "V-100.a_1", EUOperatorUUID: "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b",
		Name: "Coopérative Agricole", Country: "CI"}
}

func TestSupplierRequest_Validate(t *testing.T) {
	for _, tc := range []struct {
		name        string
		mutate      func(r *supplierRequest)
		wantDetails []string // "code field"; nil: valid
		check       func(t *testing.T, s *storage.Supplier)
	}{
		{name: "Valid", mutate: func(*supplierRequest) {}, check: func(t *testing.T, s *storage.Supplier) {
			if s.Role != "OPERATOR" || s.EORI != "" || s.Name != "Coopérative Agricole" || s.Country != "CI" || s.ERPVendorID != "V-100.a_1" {
				t.Errorf("supplier: got %+v, want role OPERATOR, no EORI, fields kept", s)
			}
		}},

		{name: "ERPVendorIDMissing", mutate: func(r *supplierRequest) { r.ERPVendorID = "" }, wantDetails: []string{"REQUIRED erpVendorId"}},
		{name: "ERPVendorIDSlash", mutate: func(r *supplierRequest) { r.ERPVendorID = "V/1" }, wantDetails: []string{"INVALID_VALUE erpVendorId"}},
		{name: "ERPVendorIDLeadingDot", mutate: func(r *supplierRequest) { r.ERPVendorID = ".V1" }, wantDetails: []string{"INVALID_VALUE erpVendorId"}},
		{name: "ERPVendorIDSpace", mutate: func(r *supplierRequest) { r.ERPVendorID = "V 1" }, wantDetails: []string{"INVALID_VALUE erpVendorId"}},
		{name: "ERPVendorID64", mutate: func(r *supplierRequest) { r.ERPVendorID = strings.Repeat("v", 64) }},
		{name: "ERPVendorID65", mutate: func(r *supplierRequest) { r.ERPVendorID = strings.Repeat("v", 65) }, wantDetails: []string{"INVALID_VALUE erpVendorId"}},

		{name: "UUIDMissing", mutate: func(r *supplierRequest) { r.EUOperatorUUID = "" }, wantDetails: []string{"REQUIRED euOperatorUuid"}},
		{name: "UUIDBad", mutate: func(r *supplierRequest) { r.EUOperatorUUID = "not-a-uuid" }, wantDetails: []string{"INVALID_VALUE euOperatorUuid"}},
		{name: "UUIDNoDashes", mutate: func(r *supplierRequest) { r.EUOperatorUUID = "3f2b8a1e6c4d4e5f9a7b1c2d3e4f5a6b" }, wantDetails: []string{"INVALID_VALUE euOperatorUuid"}},
		{name: "UUIDBraces", mutate: func(r *supplierRequest) { r.EUOperatorUUID = "{3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b}" }, wantDetails: []string{"INVALID_VALUE euOperatorUuid"}},
		{name: "UUIDNonHex", mutate: func(r *supplierRequest) { r.EUOperatorUUID = "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6g" }, wantDetails: []string{"INVALID_VALUE euOperatorUuid"}},
		{name: "UUIDUpperCaseLowered", mutate: func(r *supplierRequest) { r.EUOperatorUUID = "3F2B8A1E-6C4D-4E5F-9A7B-1C2D3E4F5A6B" },
			check: func(t *testing.T, s *storage.Supplier) {
				if s.EUOperatorUUID != "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b" {
					t.Errorf("euOperatorUuid: got %q, want it lower-cased", s.EUOperatorUUID)
				}
			}},

		{name: "NameMissing", mutate: func(r *supplierRequest) { r.Name = "" }, wantDetails: []string{"REQUIRED name"}},
		{name: "NameBlank", mutate: func(r *supplierRequest) { r.Name = "  \t " }, wantDetails: []string{"REQUIRED name"}},
		{name: "NameTrimmed", mutate: func(r *supplierRequest) { r.Name = "  Coop  " }, check: func(t *testing.T, s *storage.Supplier) {
			if s.Name != "Coop" {
				t.Errorf("name: got %q, want Coop", s.Name)
			}
		}},
		{name: "Name200", mutate: func(r *supplierRequest) { r.Name = strings.Repeat("n", 200) }},
		{name: "Name201", mutate: func(r *supplierRequest) { r.Name = strings.Repeat("n", 201) }, wantDetails: []string{"INVALID_VALUE name"}},
		{name: "Name200NonASCII", mutate: func(r *supplierRequest) { r.Name = strings.Repeat("é", 200) }},
		{name: "Name201NonASCII", mutate: func(r *supplierRequest) { r.Name = strings.Repeat("é", 201) }, wantDetails: []string{"INVALID_VALUE name"}},

		{name: "CountryMissing", mutate: func(r *supplierRequest) { r.Country = "" }, wantDetails: []string{"REQUIRED country"}},
		{name: "CountryLower", mutate: func(r *supplierRequest) { r.Country = "ci" }, wantDetails: []string{"INVALID_VALUE country"}},
		{name: "CountryUnassigned", mutate: func(r *supplierRequest) { r.Country = "XX" }, wantDetails: []string{"INVALID_VALUE country"}},
		{name: "CountryAlpha3", mutate: func(r *supplierRequest) { r.Country = "CIV" }, wantDetails: []string{"INVALID_VALUE country"}},

		{name: "EORIValid", mutate: func(r *supplierRequest) { r.EORI = ptr("DE123456789012345") }, check: func(t *testing.T, s *storage.Supplier) {
			if s.EORI != "DE123456789012345" {
				t.Errorf("eori: got %q, want DE123456789012345", s.EORI)
			}
		}},
		{name: "EORITrimmed", mutate: func(r *supplierRequest) { r.EORI = ptr(" FR12345 ") }, check: func(t *testing.T, s *storage.Supplier) {
			if s.EORI != "FR12345" {
				t.Errorf("eori: got %q, want FR12345", s.EORI)
			}
		}},
		{name: "EORITooLong", mutate: func(r *supplierRequest) { r.EORI = ptr("DE1234567890123456") }, wantDetails: []string{"INVALID_VALUE eori"}},
		{name: "EORINoNumber", mutate: func(r *supplierRequest) { r.EORI = ptr("DE") }, wantDetails: []string{"INVALID_VALUE eori"}},
		{name: "EORILowerCountry", mutate: func(r *supplierRequest) { r.EORI = ptr("de12345") }, wantDetails: []string{"INVALID_VALUE eori"}},
		{name: "EORIPunctuation", mutate: func(r *supplierRequest) { r.EORI = ptr("DE-12345") }, wantDetails: []string{"INVALID_VALUE eori"}},
		{name: "EORIEmpty", mutate: func(r *supplierRequest) { r.EORI = ptr("") }, wantDetails: []string{"INVALID_VALUE eori"}},

		{name: "RoleTrader", mutate: func(r *supplierRequest) { r.Role = ptr("TRADER") }, check: func(t *testing.T, s *storage.Supplier) {
			if s.Role != "TRADER" {
				t.Errorf("role: got %q, want TRADER", s.Role)
			}
		}},
		{name: "RoleOperator", mutate: func(r *supplierRequest) { r.Role = ptr("OPERATOR") }, check: func(t *testing.T, s *storage.Supplier) {
			if s.Role != "OPERATOR" {
				t.Errorf("role: got %q, want OPERATOR", s.Role)
			}
		}},
		{name: "RoleLower", mutate: func(r *supplierRequest) { r.Role = ptr("trader") }, wantDetails: []string{"INVALID_VALUE role"}},
		{name: "RoleOther", mutate: func(r *supplierRequest) { r.Role = ptr("PRODUCER") }, wantDetails: []string{"INVALID_VALUE role"}},
		{name: "RoleEmpty", mutate: func(r *supplierRequest) { r.Role = ptr("") }, wantDetails: []string{"INVALID_VALUE role"}},

		{name: "AllAtOnce", mutate: func(r *supplierRequest) {
			*r = supplierRequest{ERPVendorID: "bad id", EUOperatorUUID: "x", Name: "", Country: "Germany", EORI: ptr("?"), Role: ptr("BOSS")}
		}, wantDetails: []string{"INVALID_VALUE erpVendorId", "INVALID_VALUE euOperatorUuid", "REQUIRED name", "INVALID_VALUE country",
			"INVALID_VALUE eori", "INVALID_VALUE role"}},
		{name: "AllMissing", mutate: func(r *supplierRequest) { *r = supplierRequest{} },
			wantDetails: []string{"REQUIRED erpVendorId", "REQUIRED euOperatorUuid", "REQUIRED name", "REQUIRED country"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := validSupplier()
			tc.mutate(&req)
			s, err := req.validate()
			if tc.wantDetails == nil {
				if err != nil {
					t.Fatalf("validate(%+v): got %v, want nil", req, err)
				}
				if tc.check != nil {
					tc.check(t, s)
				}
				return
			}
			if s != nil {
				t.Errorf("validate: got supplier %+v with an error, want nil", s)
			}
			e := apierr.From(err)
			if e.Status != http.StatusBadRequest || e.Code != apierr.CodeValidationFailed {
				t.Fatalf("validate: got %v, want 400 VALIDATION_FAILED", err)
			}
			var got []string
			for _, d := range e.Details {
				got = append(got, d.Code+" "+d.Field)
				if d.Issue == "" {
					t.Errorf("%s %s: got an empty issue", d.Code, d.Field)
				}
			}
			if !slices.Equal(got, tc.wantDetails) {
				t.Errorf("details: got %q, want %q", got, tc.wantDetails)
			}
		})
	}
}

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
			Name: "Coop", Country: "CI", EORI: ptr("CI123"), Role: "TRADER", CreatedAt: "2026-11-20T10:00:00.000Z", UpdatedAt: "2026-11-20T10:00:00.000Z"}
		got := created
		if got.EORI == nil || *got.EORI != "CI123" {
			t.Errorf("eori: got %v, want CI123", got.EORI)
		}
		got.EORI, want.EORI = nil, nil
		if got != want {
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

	t.Run("ValidationListsAll", func(t *testing.T) {
		r := post(`{"erpVendorId":"a b","euOperatorUuid":"nope","country":"XX","role":"X"}`)
		e := wantError(t, r, 400, apierr.CodeValidationFailed, "")
		want := map[string]bool{"INVALID_VALUE erpVendorId": true, "INVALID_VALUE euOperatorUuid": true, "REQUIRED name": true,
			"INVALID_VALUE country": true, "INVALID_VALUE role": true}
		if got := detailSet(e.Details); !maps.Equal(got, want) {
			t.Errorf("details: got %+v, want %v", e.Details, want)
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
