package batch_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/storage"
)

// validSupplier is a request every field of which is valid.
func validSupplier() batch.SupplierRequest {
	return batch.SupplierRequest{ERPVendorID: "V-100.a_1", EUOperatorUUID: "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b",
		Name: "Coopérative Agricole", Country: "CI"}
}

func TestSupplierRequest_Validate(t *testing.T) {
	for _, tc := range []struct {
		name        string
		mutate      func(r *batch.SupplierRequest)
		wantDetails []string // "code field"; nil: valid
		check       func(t *testing.T, s *storage.Supplier)
	}{
		{name: "Valid", mutate: func(*batch.SupplierRequest) {}, check: func(t *testing.T, s *storage.Supplier) {
			if s.Role != "OPERATOR" || s.EORI != "" || s.Name != "Coopérative Agricole" || s.Country != "CI" || s.ERPVendorID != "V-100.a_1" {
				t.Errorf("supplier: got %+v, want role OPERATOR, no EORI, fields kept", s)
			}
		}},

		{name: "ERPVendorIDMissing", mutate: func(r *batch.SupplierRequest) { r.ERPVendorID = "" }, wantDetails: []string{"REQUIRED erpVendorId"}},
		{name: "ERPVendorIDSlash", mutate: func(r *batch.SupplierRequest) { r.ERPVendorID = "V/1" }, wantDetails: []string{"INVALID_VALUE erpVendorId"}},
		{name: "ERPVendorIDLeadingDot", mutate: func(r *batch.SupplierRequest) { r.ERPVendorID = ".V1" }, wantDetails: []string{"INVALID_VALUE erpVendorId"}},
		{name: "ERPVendorIDSpace", mutate: func(r *batch.SupplierRequest) { r.ERPVendorID = "V 1" }, wantDetails: []string{"INVALID_VALUE erpVendorId"}},
		{name: "ERPVendorID64", mutate: func(r *batch.SupplierRequest) { r.ERPVendorID = strings.Repeat("v", 64) }},
		{name: "ERPVendorID65", mutate: func(r *batch.SupplierRequest) { r.ERPVendorID = strings.Repeat("v", 65) }, wantDetails: []string{"INVALID_VALUE erpVendorId"}},

		{name: "UUIDMissing", mutate: func(r *batch.SupplierRequest) { r.EUOperatorUUID = "" }, wantDetails: []string{"REQUIRED euOperatorUuid"}},
		{name: "UUIDBad", mutate: func(r *batch.SupplierRequest) { r.EUOperatorUUID = "not-a-uuid" }, wantDetails: []string{"INVALID_VALUE euOperatorUuid"}},
		{name: "UUIDNoDashes", mutate: func(r *batch.SupplierRequest) { r.EUOperatorUUID = "3f2b8a1e6c4d4e5f9a7b1c2d3e4f5a6b" }, wantDetails: []string{"INVALID_VALUE euOperatorUuid"}},
		{name: "UUIDBraces", mutate: func(r *batch.SupplierRequest) { r.EUOperatorUUID = "{3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b}" }, wantDetails: []string{"INVALID_VALUE euOperatorUuid"}},
		{name: "UUIDNonHex", mutate: func(r *batch.SupplierRequest) { r.EUOperatorUUID = "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6g" }, wantDetails: []string{"INVALID_VALUE euOperatorUuid"}},
		{name: "UUIDUpperCaseLowered", mutate: func(r *batch.SupplierRequest) { r.EUOperatorUUID = "3F2B8A1E-6C4D-4E5F-9A7B-1C2D3E4F5A6B" },
			check: func(t *testing.T, s *storage.Supplier) {
				if s.EUOperatorUUID != "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b" {
					t.Errorf("euOperatorUuid: got %q, want it lower-cased", s.EUOperatorUUID)
				}
			}},

		{name: "NameMissing", mutate: func(r *batch.SupplierRequest) { r.Name = "" }, wantDetails: []string{"REQUIRED name"}},
		{name: "NameBlank", mutate: func(r *batch.SupplierRequest) { r.Name = "  \t " }, wantDetails: []string{"REQUIRED name"}},
		{name: "NameTrimmed", mutate: func(r *batch.SupplierRequest) { r.Name = "  Coop  " }, check: func(t *testing.T, s *storage.Supplier) {
			if s.Name != "Coop" {
				t.Errorf("name: got %q, want Coop", s.Name)
			}
		}},
		{name: "Name200", mutate: func(r *batch.SupplierRequest) { r.Name = strings.Repeat("n", 200) }},
		{name: "Name201", mutate: func(r *batch.SupplierRequest) { r.Name = strings.Repeat("n", 201) }, wantDetails: []string{"INVALID_VALUE name"}},
		{name: "Name200NonASCII", mutate: func(r *batch.SupplierRequest) { r.Name = strings.Repeat("é", 200) }},
		{name: "Name201NonASCII", mutate: func(r *batch.SupplierRequest) { r.Name = strings.Repeat("é", 201) }, wantDetails: []string{"INVALID_VALUE name"}},

		{name: "CountryMissing", mutate: func(r *batch.SupplierRequest) { r.Country = "" }, wantDetails: []string{"REQUIRED country"}},
		{name: "CountryLower", mutate: func(r *batch.SupplierRequest) { r.Country = "ci" }, wantDetails: []string{"INVALID_VALUE country"}},
		{name: "CountryUnassigned", mutate: func(r *batch.SupplierRequest) { r.Country = "XX" }, wantDetails: []string{"INVALID_VALUE country"}},
		{name: "CountryAlpha3", mutate: func(r *batch.SupplierRequest) { r.Country = "CIV" }, wantDetails: []string{"INVALID_VALUE country"}},

		{name: "EORIValid", mutate: func(r *batch.SupplierRequest) { r.EORI = ptr("DE123456789012345") }, check: func(t *testing.T, s *storage.Supplier) {
			if s.EORI != "DE123456789012345" {
				t.Errorf("eori: got %q, want DE123456789012345", s.EORI)
			}
		}},
		{name: "EORITrimmed", mutate: func(r *batch.SupplierRequest) { r.EORI = ptr(" FR12345 ") }, check: func(t *testing.T, s *storage.Supplier) {
			if s.EORI != "FR12345" {
				t.Errorf("eori: got %q, want FR12345", s.EORI)
			}
		}},
		{name: "EORITooLong", mutate: func(r *batch.SupplierRequest) { r.EORI = ptr("DE1234567890123456") }, wantDetails: []string{"INVALID_VALUE eori"}},
		{name: "EORINoNumber", mutate: func(r *batch.SupplierRequest) { r.EORI = ptr("DE") }, wantDetails: []string{"INVALID_VALUE eori"}},
		{name: "EORILowerCountry", mutate: func(r *batch.SupplierRequest) { r.EORI = ptr("de12345") }, wantDetails: []string{"INVALID_VALUE eori"}},
		{name: "EORIPunctuation", mutate: func(r *batch.SupplierRequest) { r.EORI = ptr("DE-12345") }, wantDetails: []string{"INVALID_VALUE eori"}},

		// The operator's other reference numbers and its address, for a
		// statement filed on its behalf.
		{name: "IdentifiersAndAddress", mutate: func(r *batch.SupplierRequest) {
			r.EORI = ptr("CI123")
			ids := []batch.IdentifierRequest{{Type: "eori", Value: "CI123"}}
			for _, typ := range []string{"vat", "gln", "tin", "cbr", "cin", "duns", "comp_num", "comp_reg", "oni"} {
				ids = append(ids, batch.IdentifierRequest{Type: typ, Value: " " + typ + "-1 "})
			}
			ids = append(ids, batch.IdentifierRequest{Type: "oni", Value: strings.Repeat("9", 80)}, batch.IdentifierRequest{Type: "vat", Value: "CI2"})
			r.Identifiers = &ids
			r.Street, r.PostalCode, r.City, r.FullAddress = ptr(" Rue 1 "), ptr("01 BP 1"), ptr("Abidjan"), ptr("Rue 1, 01 BP 1 Abidjan")
		}, check: func(t *testing.T, s *storage.Supplier) {
			if len(s.Identifiers) != 12 || s.Identifiers[1] != (storage.OperatorIdentifier{Type: "vat", Value: "vat-1"}) ||
				s.Street != "Rue 1" || s.PostalCode != "01 BP 1" || s.City != "Abidjan" || s.FullAddress != "Rue 1, 01 BP 1 Abidjan" {
				t.Errorf("supplier: got %+v, want 12 identifiers (the EORI once among the 12 reference numbers) and the address trimmed", s)
			}
		}},
		{name: "IdentifiersThirteen", mutate: func(r *batch.SupplierRequest) {
			r.EORI = ptr("CI123")
			var ids []batch.IdentifierRequest
			for i := range 12 {
				ids = append(ids, batch.IdentifierRequest{Type: "oni", Value: fmt.Sprint("N", i)})
			}
			r.Identifiers = &ids
		}, wantDetails: []string{"INVALID_VALUE identifiers"}},
		{name: "IdentifiersBad", mutate: func(r *batch.SupplierRequest) {
			r.Identifiers = &[]batch.IdentifierRequest{{Type: "VAT", Value: "x"}, {Type: "gln", Value: " "}, {Type: "oni", Value: strings.Repeat("9", 81)},
				{Type: "vat", Value: "BE1"}, {Type: "vat", Value: "BE1"}}
		}, wantDetails: []string{"INVALID_VALUE identifiers[0].type", "REQUIRED identifiers[1].value", "INVALID_VALUE identifiers[2].value", "INVALID_VALUE identifiers[4]"}},
		{name: "AddressPartial", mutate: func(r *batch.SupplierRequest) { r.Street, r.City = ptr("Rue 1"), ptr("Abidjan") }, wantDetails: []string{"REQUIRED postalCode"}},
		{name: "FullAddressAlone", mutate: func(r *batch.SupplierRequest) { r.FullAddress = ptr("Rue 1, Abidjan") },
			wantDetails: []string{"REQUIRED street", "REQUIRED postalCode", "REQUIRED city"}},
		{name: "FullAddressTooLong", mutate: func(r *batch.SupplierRequest) {
			r.Street, r.PostalCode, r.City, r.FullAddress = ptr("Rue 1"), ptr("01"), ptr("Abidjan"), ptr(strings.Repeat("a", 251))
		}, wantDetails: []string{"INVALID_VALUE fullAddress"}},
		{name: "EORIEmpty", mutate: func(r *batch.SupplierRequest) { r.EORI = ptr("") }, wantDetails: []string{"INVALID_VALUE eori"}},

		{name: "RoleTrader", mutate: func(r *batch.SupplierRequest) { r.Role = ptr("TRADER") }, check: func(t *testing.T, s *storage.Supplier) {
			if s.Role != "TRADER" {
				t.Errorf("role: got %q, want TRADER", s.Role)
			}
		}},
		{name: "RoleOperator", mutate: func(r *batch.SupplierRequest) { r.Role = ptr("OPERATOR") }, check: func(t *testing.T, s *storage.Supplier) {
			if s.Role != "OPERATOR" {
				t.Errorf("role: got %q, want OPERATOR", s.Role)
			}
		}},
		{name: "RoleLower", mutate: func(r *batch.SupplierRequest) { r.Role = ptr("trader") }, wantDetails: []string{"INVALID_VALUE role"}},
		{name: "RoleOther", mutate: func(r *batch.SupplierRequest) { r.Role = ptr("PRODUCER") }, wantDetails: []string{"INVALID_VALUE role"}},
		{name: "RoleEmpty", mutate: func(r *batch.SupplierRequest) { r.Role = ptr("") }, wantDetails: []string{"INVALID_VALUE role"}},

		{name: "AllAtOnce", mutate: func(r *batch.SupplierRequest) {
			*r = batch.SupplierRequest{ERPVendorID: "bad id", EUOperatorUUID: "x", Name: "", Country: "Germany", EORI: ptr("?"), Role: ptr("BOSS")}
		}, wantDetails: []string{"INVALID_VALUE erpVendorId", "INVALID_VALUE euOperatorUuid", "REQUIRED name", "INVALID_VALUE country",
			"INVALID_VALUE eori", "INVALID_VALUE role"}},
		{name: "AllMissing", mutate: func(r *batch.SupplierRequest) { *r = batch.SupplierRequest{} },
			wantDetails: []string{"REQUIRED erpVendorId", "REQUIRED euOperatorUuid", "REQUIRED name", "REQUIRED country"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := validSupplier()
			tc.mutate(&req)
			s, err := req.Validate()
			if tc.wantDetails == nil {
				if err != nil {
					t.Fatalf("Validate(%+v): got %v, want nil", req, err)
				}
				if tc.check != nil {
					tc.check(t, s)
				}
				return
			}
			if s != nil {
				t.Errorf("Validate: got supplier %+v with an error, want nil", s)
			}
			e := apierr.From(err)
			if e.Status != apierr.StatusBadRequest || e.Code != apierr.CodeValidationFailed {
				t.Fatalf("Validate: got %v, want 400 VALIDATION_FAILED", err)
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

func TestService_Suppliers(t *testing.T) {
	b, s := newService(t, nil, 50)
	ctx := context.Background()
	put := func(req batch.SupplierRequest) *storage.Supplier {
		t.Helper()
		sup, err := req.Validate()
		if err != nil {
			t.Fatal(err)
		}
		b.Update(t, func(tx *storage.Tx) error { return s.PutSupplier(tx, tenant, sup) })
		return sup
	}

	first := put(validSupplier())
	if !strings.HasPrefix(first.ID, "sup_") || !first.CreatedAt.Equal(start) || !first.UpdatedAt.Equal(start) {
		t.Errorf("created: %+v, want an ID and both times now", first)
	}
	b.Clock.Advance(time.Hour)
	again := validSupplier()
	again.Name = "Coop 2"
	replaced := put(again)
	if replaced.ID != first.ID || !replaced.CreatedAt.Equal(start) || !replaced.UpdatedAt.Equal(start.Add(time.Hour)) {
		t.Errorf("replaced: %+v, want its ID and createdAt kept, updatedAt now", replaced)
	}
	second := validSupplier()
	second.ERPVendorID = "V-2"
	put(second)

	if got, err := s.Supplier(ctx, tenant, "V-100.a_1"); err != nil || got.Name != "Coop 2" || got.ID != first.ID {
		t.Errorf("Supplier: %+v %v, want the replaced mapping", got, err)
	}
	list, more, err := s.Suppliers(ctx, tenant, storage.Page{Limit: 1})
	if err != nil || len(list) != 1 || list[0].ERPVendorID != "V-2" || !more {
		t.Errorf("first page: %+v %v %v, want V-2 and more", list, more, err)
	}
	list, more, err = s.Suppliers(ctx, tenant, storage.Page{Limit: 1, After: list[0].ID})
	if err != nil || len(list) != 1 || list[0].ERPVendorID != "V-100.a_1" || more {
		t.Errorf("second page: %+v %v %v, want V-100.a_1 and no more", list, more, err)
	}
	if list, _, err := s.Suppliers(ctx, storage.Tenant{Org: "default", Env: storage.Production}, storage.Page{Limit: 10}); err != nil || len(list) != 0 {
		t.Errorf("another environment's suppliers: %+v %v, want none", list, err)
	}

	b.Update(t, func(tx *storage.Tx) error { return s.DeleteSupplier(tx, tenant, "V-2") })
	if _, err := s.Supplier(ctx, tenant, "V-2"); !errors.As(err, new(apierr.NotFound)) || err.Error() != "supplier V-2 not found" {
		t.Errorf("Supplier after delete: %v, want apierr.NotFound naming it", err)
	}
	err = b.DB.Update(ctx, func(tx *storage.Tx) error { return s.DeleteSupplier(tx, tenant, "V-2") })
	if !errors.As(err, new(apierr.NotFound)) {
		t.Errorf("DeleteSupplier of an unknown mapping: %v, want apierr.NotFound", err)
	}
}
