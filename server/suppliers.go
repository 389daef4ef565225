package server

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

type supplierRequest struct {
	ERPVendorID    string  `json:"erpVendorId"`
	EUOperatorUUID string  `json:"euOperatorUuid"`
	Name           string  `json:"name"`
	Country        string  `json:"country"`
	EORI           *string `json:"eori"`
	Role           *string `json:"role"`
}

type supplierResponse struct {
	SupplierID     string  `json:"supplierId"`
	ERPVendorID    string  `json:"erpVendorId"`
	EUOperatorUUID string  `json:"euOperatorUuid"`
	Name           string  `json:"name"`
	Country        string  `json:"country"`
	EORI           *string `json:"eori"`
	Role           string  `json:"role"`
	CreatedAt      string  `json:"createdAt"`
	UpdatedAt      string  `json:"updatedAt"`
}

func toSupplierResponse(s *storage.Supplier) supplierResponse {
	resp := supplierResponse{SupplierID: s.ID, ERPVendorID: s.ERPVendorID, EUOperatorUUID: s.EUOperatorUUID,
		Name: s.Name, Country: s.Country, Role: s.Role, CreatedAt: storage.FormatTime(s.CreatedAt), UpdatedAt: storage.FormatTime(s.UpdatedAt)}
	if s.EORI != "" {
		resp.EORI = &s.EORI
	}
	return resp
}

// Supplier roles in the EU information system.
const (
	roleOperator = "OPERATOR"
	roleTrader   = "TRADER"
)

var (
	// erpVendorIDPattern keeps IDs usable as a URL path segment unescaped.
	erpVendorIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	uuidPattern        = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
	// eoriPattern: a two-letter country code and up to 15 alphanumerics (EU customs EORI format).
	eoriPattern = regexp.MustCompile(`^[A-Z]{2}[A-Za-z0-9]{1,15}$`)
)

const maxSupplierNameLen = 200

// validate checks every field and reports every problem, and returns the
// mapping to store with normalised values.
func (req *supplierRequest) validate() (*storage.Supplier, error) {
	var probs apierr.Problems
	switch {
	case req.ERPVendorID == "":
		probs.Add(apierr.DetailRequired, "erpVendorId", "is required")
	case !erpVendorIDPattern.MatchString(req.ERPVendorID):
		probs.Add(apierr.DetailInvalidValue, "erpVendorId", "must be 1-64 characters of A-Z, a-z, 0-9, '.', '_' or '-', starting with a letter or digit")
	}
	switch {
	case req.EUOperatorUUID == "":
		probs.Add(apierr.DetailRequired, "euOperatorUuid", "is required")
	case !uuidPattern.MatchString(req.EUOperatorUUID):
		probs.Add(apierr.DetailInvalidValue, "euOperatorUuid", "must be a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)")
	}
	name := strings.TrimSpace(req.Name)
	switch {
	case name == "":
		probs.Add(apierr.DetailRequired, "name", "is required")
	case utf8.RuneCountInString(name) > maxSupplierNameLen:
		probs.Add(apierr.DetailInvalidValue, "name", fmt.Sprintf("must be at most %d characters", maxSupplierNameLen))
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
		if !eoriPattern.MatchString(eori) {
			probs.Add(apierr.DetailInvalidValue, "eori", "must be an EORI number: two capital letters and up to 15 letters or digits")
		}
	}
	role := roleOperator
	if req.Role != nil {
		role = *req.Role
		if role != roleOperator && role != roleTrader {
			probs.Add(apierr.DetailInvalidValue, "role", fmt.Sprintf("must be OPERATOR or TRADER, not %q", role))
		}
	}
	if err := probs.Err(); err != nil {
		return nil, err
	}
	return &storage.Supplier{ERPVendorID: req.ERPVendorID, EUOperatorUUID: strings.ToLower(req.EUOperatorUUID),
		Name: name, Country: req.Country, EORI: eori, Role: role}, nil
}

func (a *App) handleSuppliersUpsert(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req supplierRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s, err := req.validate()
	if err := mergeProblems(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		if err := upsertSupplier(tx, t, s); err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusOK, body: toSupplierResponse(s)}, nil
	})
}

// upsertSupplier inserts or replaces the mapping of s.ERPVendorID; a
// replaced mapping keeps its supplierId and createdAt.
func upsertSupplier(tx *storage.Tx, t storage.Tenant, s *storage.Supplier) error {
	s.ID = storage.NewID("sup", tx.Now())
	s.CreatedAt, s.UpdatedAt = tx.Now(), tx.Now()
	return tx.PutSupplier(t, s)
}

func (a *App) handleSuppliersList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var list []*storage.Supplier
	var more bool
	err = a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		list, more, err = tx.FindSuppliers(tenantFrom(r.Context()), page)
		return err
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]supplierResponse, 0, len(list))
	for _, s := range list {
		out = append(out, toSupplierResponse(s))
	}
	if more {
		setNextPage(w, r, page, list[len(list)-1].ID)
	}
	writeJSON(w, r, http.StatusOK, out)
}

func (a *App) handleSuppliersGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	var s *storage.Supplier
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		s, err = tx.FindSupplier(tenantFrom(r.Context()), ps.ByName("erpVendorId"))
		return err
	})
	if err != nil {
		writeError(w, r, supplierError(err, ps.ByName("erpVendorId")))
		return
	}
	writeJSON(w, r, http.StatusOK, toSupplierResponse(s))
}

func (a *App) handleSuppliersDelete(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	err := a.db.Update(r.Context(), func(tx *storage.Tx) error {
		return tx.DeleteSupplier(tenantFrom(r.Context()), ps.ByName("erpVendorId"))
	})
	if err != nil {
		writeError(w, r, supplierError(err, ps.ByName("erpVendorId")))
		return
	}
	writeNoContent(w)
}

func supplierError(err error, id string) error {
	if apierr.From(err).Status == http.StatusNotFound {
		return apierr.NotFound{Kind: "supplier", ID: id}
	}
	return err
}
