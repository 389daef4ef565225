package server

import (
	"net/http"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
	"github.com/julienschmidt/httprouter"
)

type probeResponse struct {
	Status string `json:"status"`
}

type healthResponse struct {
	Status        string      `json:"status"`
	Environment   string      `json:"environment"`
	Version       string      `json:"version"`
	UptimeSeconds int64       `json:"uptimeSeconds"`
	Store         storeHealth `json:"store"`
	// EUSystem is how the EU information system last answered the
	// caller's organisation in this environment.
	EUSystem euSystemHealth `json:"euSystem"`
}

type euSystemHealth struct {
	LastAnswer *euAnswer `json:"lastAnswer"` // null: no call since the appliance started
}

type euAnswer struct {
	Operation string `json:"operation"`
	Outcome   string `json:"outcome"`
	Message   string `json:"message,omitempty"`
	At        string `json:"at"`
}

type storeHealth struct {
	Status        string `json:"status"`
	SchemaVersion int    `json:"schemaVersion"`
	SizeBytes     int64  `json:"sizeBytes"`
}

// handleLivez answers while the process serves HTTP at all.
func (a *App) handleLivez(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	writeJSON(w, r, http.StatusOK, probeResponse{Status: "ok"})
}

// handleReadyz answers 200 while the store serves reads.
func (a *App) handleReadyz(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	if _, err := a.db.Status(r.Context()); err != nil {
		writeError(w, r, &apierr.Error{Status: http.StatusServiceUnavailable, Code: apierr.CodeServiceUnavailable, Message: "store unavailable", Err: err})
		return
	}
	writeJSON(w, r, http.StatusOK, probeResponse{Status: "ok"})
}

func (a *App) handleHealth(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	st, err := a.db.Status(r.Context())
	if err != nil {
		writeError(w, r, &apierr.Error{Status: http.StatusServiceUnavailable, Code: apierr.CodeServiceUnavailable, Message: "store unavailable", Err: err})
		return
	}
	res := healthResponse{
		Status:        "ok",
		Environment:   string(infoFrom(r.Context()).env),
		Version:       a.version,
		UptimeSeconds: int64(a.now().Sub(a.started) / time.Second),
		Store:         storeHealth{Status: "ok", SchemaVersion: st.SchemaVersion, SizeBytes: st.SizeBytes},
	}
	if last, ok := a.dds.LastAnswer(tenantFrom(r.Context())); ok {
		res.EUSystem.LastAnswer = &euAnswer{Operation: last.Operation, Outcome: last.Outcome, Message: last.Message, At: storage.FormatTime(last.At)}
	}
	writeJSON(w, r, http.StatusOK, res)
}
