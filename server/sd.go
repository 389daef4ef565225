package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/sd"
	"github.com/eudr/eudr/storage"
)

// Simplified declarations (server/sd): decode, one service call, its view.

func (a *App) handleSDCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req sd.Request
	decoded, err := decodeJSON(r, &req)
	if err == nil {
		err = apierr.Merge(decoded, req.Validate())
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	t, actor := tenantFrom(r.Context()), actorOf(r)
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		dcl, err := a.sd.Create(tx, t, &req, actor)
		if err != nil {
			return reply{}, err
		}
		return accepted(dcl.Submission.ID, sd.Accepted{SDID: dcl.SD.ID, JobID: dcl.Submission.ID}), nil
	})
}

func (a *App) handleSDGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	dcl, err := a.sd.Find(r.Context(), tenantFrom(r.Context()), ps.ByName("sdId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, sd.ViewOf(dcl, true))
}

func (a *App) handleSDList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	list, more := []sd.View(nil), false
	if err == nil {
		list, more, err = a.sd.Views(r.Context(), tenantFrom(r.Context()), r.URL.Query().Get("status"), page)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	if more {
		setNextPage(w, r, page, list[len(list)-1].SDID)
	}
	writeJSON(w, r, http.StatusOK, list)
}

func (a *App) handleSDWithdraw(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	t, actor := tenantFrom(r.Context()), actorOf(r)
	wd, err := a.sd.Withdraw(r.Context(), t, ps.ByName("sdId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		dcl, err := a.sd.RecordWithdrawal(tx, t, wd, actor)
		return reply{status: http.StatusOK, body: sd.ViewOf(dcl, false)}, err
	})
}
