package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/devca"
	"github.com/eudr/eudr/storage"
)

// listenerCertificateResponse is a listener certificate as issued, with
// the only copy of its private key.
type listenerCertificateResponse struct {
	Certificate   string   `json:"certificate"`
	PrivateKey    string   `json:"privateKey"`
	CACertificate string   `json:"caCertificate"`
	Hostnames     []string `json:"hostnames"`
	NotBefore     string   `json:"notBefore"`
	NotAfter      string   `json:"notAfter"`
}

// handleListenerCertificate issues a fresh key and a server certificate
// for a local webhook receiver, signed by the development CA that the
// sandbox's deliveries trust (`eudr webhooks listen` calls it). Sandbox
// listener only. It changes no stored state and keeps no copy of the key,
// so it takes no Idempotency-Key: a repeated request gets another key and
// certificate, as good as the first, and no answer is stored for a replay.
func (a *App) handleListenerCertificate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req devca.Request
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	leaf, err := a.devCA.Issue(req)
	if err := apierr.Merge(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store") // it holds a private key
	writeJSON(w, r, http.StatusOK, listenerCertificateResponse{
		Certificate: string(leaf.CertificatePEM), PrivateKey: string(leaf.PrivateKeyPEM),
		CACertificate: string(a.devCA.CertificatePEM()), Hostnames: leaf.Hosts,
		NotBefore: storage.FormatTime(leaf.NotBefore), NotAfter: storage.FormatTime(leaf.NotAfter),
	})
}
