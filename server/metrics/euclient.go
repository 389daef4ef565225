package metrics

import (
	"time"

	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// EUClient wraps env's EU information system client so that each call is
// counted by operation (an euis.Op constant) and outcome (euis.Outcome),
// and timed.
func (m *Metrics) EUClient(env storage.Environment, c euis.Client) euis.Client {
	return euis.Observe(c, func(op string, start time.Time, err error) {
		m.euDuration.WithLabelValues(string(env), op).Observe(time.Since(start).Seconds())
		m.euCalls.WithLabelValues(string(env), op, euis.Outcome(err)).Inc()
	})
}

// EUSDClient is EUClient for env's simplified-declaration client: its
// calls are counted and timed in the same metrics, by their own
// operations (submitSd, getSd, updateSd, ...).
func (m *Metrics) EUSDClient(env storage.Environment, c euis.SDClient) euis.SDClient {
	return euis.ObserveSD(c, func(op string, start time.Time, err error) {
		m.euDuration.WithLabelValues(string(env), op).Observe(time.Since(start).Seconds())
		m.euCalls.WithLabelValues(string(env), op, euis.Outcome(err)).Inc()
	})
}
