package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/sd"
	"github.com/eudr/eudr/storage"
)

// handleSDCreate and the two below serve server/sd: decode, one call, its view.
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
	status := r.URL.Query().Get("status")
	if err := apierr.Merge(apierr.DetailsOf(err), sd.CheckStatus(status)); err != nil {
		writeError(w, r, err)
		return
	}
	list, more, err := a.sd.List(r.Context(), tenantFrom(r.Context()), status, page)
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
