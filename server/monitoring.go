package server

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" // /debug/pprof/ on http.DefaultServeMux

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
)

// The metrics listener (metrics.listen) serves GET /metrics in the
// Prometheus text format, and the Go profiler under /debug/pprof/ when
// metrics.pprof is on. It has no auth, so it is a listener of its own,
// on loopback by default, never one of the API listeners.

// listenMetrics binds metrics.listen; nil when it is off.
func (a *App) listenMetrics() (net.Listener, error) {
	if a.cfg.Metrics.Listen == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", a.cfg.Metrics.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen metrics on %s: %w", a.cfg.Metrics.Listen, err)
	}
	return ln, nil
}

// serveMetrics serves ln in g and returns its server, for shutdown.
func (a *App) serveMetrics(g *errgroup.Group, ln net.Listener) *http.Server {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(a.metrics.Registry, promhttp.HandlerOpts{
		ErrorLog: newStdLogger(a.log.With().Str("component", "metrics").Logger()), ErrorHandling: promhttp.ContinueOnError}))
	srv := a.httpServer(mux)
	if a.cfg.Metrics.PProf {
		// net/http/pprof registers its handlers on the default mux, which
		// nothing else here serves.
		mux.Handle("/debug/pprof/", http.DefaultServeMux)
		srv.WriteTimeout = 0 // a profile or trace lasts as long as asked
	}
	a.log.Info().Str("addr", ln.Addr().String()).Str("url", "http://"+ln.Addr().String()+"/metrics").
		Bool("pprof", a.cfg.Metrics.PProf).Msg("metrics listener ready")
	g.Go(func() error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve metrics: %w", err)
		}
		return nil
	})
	return srv
}
