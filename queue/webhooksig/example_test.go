package webhooksig_test

import (
	"encoding/json"
	"io"
	"net/http"
	"time"

	"github.com/eudr/eudr/queue/webhooksig"
)

// A receiver reads the raw body first, verifies it, and only then parses
// it; it answers 2xx within 10 seconds and deduplicates by eventId.
func Example_receiver() {
	secret := "whsec_..." // shown once at registration or rotation
	http.HandleFunc("/eudr-events", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		// Replay-protected check; webhooksig.Verify(secret, body,
		// r.Header.Get(webhooksig.HeaderSignature)) checks the body scheme only.
		if err := webhooksig.VerifyStandard(secret, r.Header, body, webhooksig.DefaultTolerance, time.Now()); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev struct {
			EventType string          `json:"eventType"`
			EventID   string          `json:"eventId"`
			Data      json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "bad JSON", http.StatusBadRequest)
			return
		}
		// ... skip ev.EventID if already handled, else handle ev ...
		w.WriteHeader(http.StatusNoContent)
	})
}
