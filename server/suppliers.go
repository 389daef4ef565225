package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/storage"
)

type supplierResponse struct {
	SupplierID     string  `json:"supplierId"`
	ERPVendorID    string  `json:"erpVendorId"`
	EUOperatorUUID string  `json:"euOperatorUuid"`
	Name           string  `json:"name"`
	Country        string  `json:"country"`
	EORI           *string `json:"eori"`
	Role           string  `json:"role"`
	// The operator's other reference numbers and its address.
	Identifiers []batch.IdentifierRequest `json:"identifiers"`
	Street      *string                   `json:"street"`
	PostalCode  *string                   `json:"postalCode"`
	City        *string                   `json:"city"`
	FullAddress *string                   `json:"fullAddress"`
	CreatedAt   string                    `json:"createdAt"`
	UpdatedAt   string                    `json:"updatedAt"`
}

func toSupplierResponse(s *storage.Supplier) supplierResponse {
	ids := make([]batch.IdentifierRequest, len(s.Identifiers))
	for i, id := range s.Identifiers {
		ids[i] = batch.IdentifierRequest{Type: id.Type, Value: id.Value}
	}
	return supplierResponse{SupplierID: s.ID, ERPVendorID: s.ERPVendorID, EUOperatorUUID: s.EUOperatorUUID,
		Name: s.Name, Country: s.Country, EORI: storage.Optional(s.EORI), Role: s.Role, Identifiers: ids,
		Street: storage.Optional(s.Street), PostalCode: storage.Optional(s.PostalCode), City: storage.Optional(s.City),
		FullAddress: storage.Optional(s.FullAddress),
		CreatedAt:   storage.FormatTime(s.CreatedAt), UpdatedAt: storage.FormatTime(s.UpdatedAt)}
}

// handleSuppliersUpsert inserts or replaces the mapping of an ERP vendor
// (batch.PutSupplier).
func (a *App) handleSuppliersUpsert(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req batch.SupplierRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s, err := req.Validate()
	if err := apierr.Merge(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		if err := a.batches.PutSupplier(tx, t, s); err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusOK, body: toSupplierResponse(s)}, nil
	})
}

func (a *App) handleSuppliersList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	list, more, err := a.batches.Suppliers(r.Context(), tenantFrom(r.Context()), page)
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
	s, err := a.batches.Supplier(r.Context(), tenantFrom(r.Context()), ps.ByName("erpVendorId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, toSupplierResponse(s))
}

func (a *App) handleSuppliersDelete(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	err := a.db.Update(r.Context(), func(tx *storage.Tx) error {
		return a.batches.DeleteSupplier(tx, tenantFrom(r.Context()), ps.ByName("erpVendorId"))
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}
