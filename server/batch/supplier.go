package batch

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// Roles of a supplier in the EU information system.
const (
	RoleOperator = "OPERATOR"
	RoleTrader   = "TRADER"
)

// Patterns and limits of a supplier mapping (the OpenAPI document states
// them too). Its euOperatorUuid has the form euis.UUIDPattern.
var (
	// ERPVendorIDPattern keeps IDs usable as a URL path segment unescaped;
	// a batch's supplierId has it too.
	ERPVendorIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	// EORIPattern: a two-letter country code and up to 15 alphanumerics
	// (EU customs EORI format).
	EORIPattern = regexp.MustCompile(`^[A-Z]{2}[A-Za-z0-9]{1,15}$`)
)

// MaxSupplierNameLen is the longest supplier name, in characters.
const MaxSupplierNameLen = 200

// SupplierRequest is the body of POST /suppliers.
type SupplierRequest struct {
	ERPVendorID    string  `json:"erpVendorId"`
	EUOperatorUUID string  `json:"euOperatorUuid"`
	Name           string  `json:"name"`
	Country        string  `json:"country"`
	EORI           *string `json:"eori"`
	Role           *string `json:"role"`
	// Identifiers, Street, PostalCode, City and FullAddress identify the
	// operator in a statement filed on its behalf.
	Identifiers *[]IdentifierRequest `json:"identifiers"`
	Street      *string              `json:"street"`
	PostalCode  *string              `json:"postalCode"`
	City        *string              `json:"city"`
	FullAddress *string              `json:"fullAddress"`
}

// IdentifierRequest is one of a SupplierRequest's identifiers.
type IdentifierRequest struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// Limits of a supplier's address, in characters (the EU system's).
const (
	MaxStreetLen     = 300
	MaxPostalCodeLen = 80
	MaxCityLen       = 200
)

// Validate checks every field and returns the mapping to store, its
// values normalised (name and EORI trimmed, the UUID in lower case, the
// role OPERATOR unless given); it returns every problem found as one
// apierr 400.
func (req *SupplierRequest) Validate() (*storage.Supplier, error) {
	var probs apierr.Problems
	switch {
	case req.ERPVendorID == "":
		probs.Add(apierr.DetailRequired, "erpVendorId", "is required")
	case !ERPVendorIDPattern.MatchString(req.ERPVendorID):
		probs.Add(apierr.DetailInvalidValue, "erpVendorId", "must be 1-64 characters of A-Z, a-z, 0-9, '.', '_' or '-', starting with a letter or digit")
	}
	switch {
	case req.EUOperatorUUID == "":
		probs.Add(apierr.DetailRequired, "euOperatorUuid", "is required")
	case !euis.IsUUID(req.EUOperatorUUID):
		probs.Add(apierr.DetailInvalidValue, "euOperatorUuid", "must be a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)")
	}
	name := strings.TrimSpace(req.Name)
	switch {
	case name == "":
		probs.Add(apierr.DetailRequired, "name", "is required")
	case utf8.RuneCountInString(name) > MaxSupplierNameLen:
		probs.Add(apierr.DetailInvalidValue, "name", fmt.Sprintf("must be at most %d characters", MaxSupplierNameLen))
	}
	switch {
	case req.Country == "":
		probs.Add(apierr.DetailRequired, "country", "is required")
	case !geo.IsCountryCode(req.Country):
		probs.Add(apierr.DetailInvalidValue, "country", fmt.Sprintf("must be an ISO 3166-1 alpha-2 code in upper case, not %q", req.Country))
	}
	var eori string
	if req.EORI != nil {
		eori = strings.TrimSpace(*req.EORI)
		if !EORIPattern.MatchString(eori) {
			probs.Add(apierr.DetailInvalidValue, "eori", "must be an EORI number: two capital letters and up to 15 letters or digits")
		}
	}
	role := RoleOperator
	if req.Role != nil {
		role = *req.Role
		if role != RoleOperator && role != RoleTrader {
			probs.Add(apierr.DetailInvalidValue, "role", fmt.Sprintf("must be OPERATOR or TRADER, not %q", role))
		}
	}
	sup := &storage.Supplier{ERPVendorID: req.ERPVendorID, EUOperatorUUID: strings.ToLower(req.EUOperatorUUID),
		Name: name, Country: req.Country, EORI: eori, Role: role}
	req.checkIdentification(&probs, sup)
	if err := probs.Err(); err != nil {
		return nil, err
	}
	return sup, nil
}

// checkIdentification adds the problems of the identifiers and address to
// probs and their trimmed values to sup: types of euis.IdentifierTypes,
// values of 1 to 80 characters, each pair once, at most 12 reference
// numbers with the EORI (one of type eori may repeat the EORI; it is
// sent once); street, postal code and city all or none, a full address
// only with them.
func (req *SupplierRequest) checkIdentification(probs *apierr.Problems, sup *storage.Supplier) {
	if req.Identifiers != nil {
		seen := map[storage.OperatorIdentifier]bool{}
		for i, id := range *req.Identifiers {
			at := fmt.Sprintf("identifiers[%d]", i)
			v := storage.OperatorIdentifier{Type: id.Type, Value: strings.TrimSpace(id.Value)}
			ok := true
			if !slices.Contains(euis.IdentifierTypes, v.Type) {
				probs.Add(apierr.DetailInvalidValue, at+".type", fmt.Sprintf("must be one of %s, not %q", strings.Join(euis.IdentifierTypes, ", "), v.Type))
				ok = false
			}
			switch n := utf8.RuneCountInString(v.Value); {
			case n == 0:
				probs.Add(apierr.DetailRequired, at+".value", "is required")
				ok = false
			case n > euis.MaxIdentifierValueLen:
				probs.Add(apierr.DetailInvalidValue, at+".value", fmt.Sprintf("must be at most %d characters", euis.MaxIdentifierValueLen))
				ok = false
			case seen[v]:
				probs.Add(apierr.DetailInvalidValue, at, "is listed twice")
				ok = false
			}
			if ok {
				seen[v] = true
				sup.Identifiers = append(sup.Identifiers, v)
			}
		}
		op := euis.Operator{EORI: sup.EORI}
		for _, id := range sup.Identifiers {
			op.Identifiers = append(op.Identifiers, euis.OperatorIdentifier{Type: id.Type, Value: id.Value})
		}
		if n := len(op.ReferenceNumbers()); n > euis.MaxOperatorIdentifiers {
			probs.Add(apierr.DetailInvalidValue, "identifiers", fmt.Sprintf("must make at most %d reference numbers with eori, not %d", euis.MaxOperatorIdentifiers, n))
		}
	}
	trimmed := func(p *string) string {
		if p == nil {
			return ""
		}
		return strings.TrimSpace(*p)
	}
	sup.Street, sup.PostalCode, sup.City, sup.FullAddress = trimmed(req.Street), trimmed(req.PostalCode), trimmed(req.City), trimmed(req.FullAddress)
	if sup.Street != "" || sup.PostalCode != "" || sup.City != "" || sup.FullAddress != "" {
		for _, f := range []struct {
			field, v string
			max      int
		}{{"street", sup.Street, MaxStreetLen}, {"postalCode", sup.PostalCode, MaxPostalCodeLen}, {"city", sup.City, MaxCityLen}} {
			switch n := utf8.RuneCountInString(f.v); {
			case n == 0:
				probs.Add(apierr.DetailRequired, f.field, "is required with an address: street, postalCode and city go together, and fullAddress with them")
			case n > f.max:
				probs.Add(apierr.DetailInvalidValue, f.field, fmt.Sprintf("must be at most %d characters", f.max))
			}
		}
	}
	if n := utf8.RuneCountInString(sup.FullAddress); n > euis.MaxFullAddressLen {
		probs.Add(apierr.DetailInvalidValue, "fullAddress", fmt.Sprintf("must be at most %d characters", euis.MaxFullAddressLen))
	}
}

// PutSupplier inserts or replaces the mapping of sup.ERPVendorID in the
// caller's transaction and sets sup's ID and times: a replaced mapping
// keeps its supplierId and createdAt. It fails only when the store does.
func (s *Service) PutSupplier(tx *storage.Tx, t storage.Tenant, sup *storage.Supplier) error {
	sup.ID = storage.NewID("sup", tx.Now())
	sup.CreatedAt, sup.UpdatedAt = tx.Now(), tx.Now()
	return tx.PutSupplier(t, sup)
}

// DeleteSupplier removes the mapping of erpVendorID in the caller's
// transaction, or returns apierr.NotFound. Batches that name it keep their
// supplierId.
func (s *Service) DeleteSupplier(tx *storage.Tx, t storage.Tenant, erpVendorID string) error {
	return apierr.Named(tx.DeleteSupplier(t, erpVendorID), "supplier", erpVendorID)
}

// Suppliers returns the tenant's mappings newest first, one page, and
// whether more follow. It fails only when the store does.
func (s *Service) Suppliers(ctx context.Context, t storage.Tenant, p storage.Page) ([]*storage.Supplier, bool, error) {
	var list []*storage.Supplier
	var more bool
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		list, more, err = tx.FindSuppliers(t, p)
		return err
	})
	return list, more, err
}

// Supplier returns the mapping of erpVendorID, or apierr.NotFound.
func (s *Service) Supplier(ctx context.Context, t storage.Tenant, erpVendorID string) (*storage.Supplier, error) {
	var sup *storage.Supplier
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		sup, err = tx.FindSupplier(t, erpVendorID)
		return err
	})
	if err != nil {
		return nil, apierr.Named(err, "supplier", erpVendorID)
	}
	return sup, nil
}
