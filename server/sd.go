package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/sd"
	"github.com/eudr/eudr/storage"
)

// handleSDCreate and the handlers below serve server/sd: decode, one call, its view.
func (a *App) handleSDCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req sd.Request
	if err := req.Check(decodeJSON(r, &req)); err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		acc, err := a.sd.Create(tx, tenantFrom(r.Context()), &req, actorOf(r))
		return accepted(acc.JobID, acc), err
	})
}

func (a *App) handleSDGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	v, err := a.sd.View(r.Context(), tenantFrom(r.Context()), ps.ByName("sdId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, v)
}

func (a *App) handleSDWithdraw(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	wd, err := a.sd.Withdraw(r.Context(), tenantFrom(r.Context()), ps.ByName("sdId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		v, err := a.sd.RecordWithdrawal(tx, tenantFrom(r.Context()), wd, actorOf(r))
		return reply{status: http.StatusOK, body: v}, err
	})
}

func (a *App) handleSDList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	f := storage.SDFilter{Status: r.URL.Query().Get("status"), InternalReference: r.URL.Query().Get("internalReference")}
	if err := apierr.Merge(apierr.DetailsOf(err), sd.CheckStatus(f.Status)); err != nil {
		writeError(w, r, err)
		return
	}
	list, more, err := a.sd.List(r.Context(), tenantFrom(r.Context()), f, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]sd.View, len(list))
	for i, dcl := range list {
		out[i] = sd.ViewOf(dcl, false)
	}
	if more {
		setNextPage(w, r, page, out[len(out)-1].SDID)
	}
	writeJSON(w, r, http.StatusOK, out)
}

// handleSDUpdate updates a VALIDATED declaration in the EU system
// (sd.Update, outside any transaction) and then records it
// (sd.RecordUpdate).
func (a *App) handleSDUpdate(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	var req sd.Request
	var u *sd.Update
	err := req.Check(decodeJSON(r, &req))
	if err == nil {
		u, err = a.sd.Update(r.Context(), tenantFrom(r.Context()), ps.ByName("sdId"), &req)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		v, err := a.sd.RecordUpdate(tx, tenantFrom(r.Context()), u, actorOf(r))
		return reply{status: http.StatusOK, body: v}, err
	})
}

// handleSDLookup fetches a declaration another operator filed by its
// numbers (sd.LookUp, outside any transaction) and stores the answer
// (sd.RecordLookup).
func (a *App) handleSDLookup(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req sd.LookupRequest
	decoded, err := decodeJSON(r, &req)
	if err == nil {
		// Validate here too, though the service does: its problems
		// then come in one answer with the body's decoding problems.
		err = apierr.Merge(decoded, req.Validate())
	}
	var l *sd.Lookup
	if err == nil {
		l, err = a.sd.LookUp(r.Context(), tenantFrom(r.Context()), req)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		v, err := a.sd.RecordLookup(tx, tenantFrom(r.Context()), l, actorOf(r))
		return reply{status: http.StatusOK, body: v}, err
	})
}

func (a *App) handleSDLookupGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	v, err := a.sd.FindLookup(r.Context(), tenantFrom(r.Context()), ps.ByName("referenceNumber"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, v)
}
