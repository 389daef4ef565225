package metrics

import (
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"
)

// Listener is the metrics listener: GET /metrics in the Prometheus text
// format, and the Go profiler under /debug/pprof/ when asked for. It has
// no auth, so it is a listener of its own, never one of the API's.
type Listener struct {
	Server *http.Server // for the caller's graceful shutdown
	ln     net.Listener
}

// CheckListen returns why addr cannot be the metrics listener's address,
// or nil: it is host:port with a numeric port, or "" (no listener), and
// none of apiAddrs (the metrics have no auth) unless its port is 0.
func CheckListen(addr string, apiAddrs ...string) error {
	if addr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if _, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil {
		return fmt.Errorf("%q is not host:port with a numeric port (empty turns the listener off)", addr)
	}
	for _, api := range apiAddrs {
		if addr == api && !strings.HasSuffix(addr, ":0") {
			return errors.New("must differ from the API listeners: metrics have no auth")
		}
	}
	return nil
}

// Listen binds addr for the metrics listener and logs it ready with its
// address; nil when addr is "". It fails, naming addr, when addr cannot
// be bound (a port already taken).
func (m *Metrics) Listen(addr string, pprof bool, log zerolog.Logger) (*Listener, error) {
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen metrics on %s: %w", addr, err)
	}
	log = log.With().Str("component", "metrics").Logger()
	errLog := stdlog.New(log, "", 0)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{ErrorLog: errLog,
		ErrorHandling: promhttp.ContinueOnError})) // a failed family is logged, the others served
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, WriteTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute, ErrorLog: errLog}
	if pprof {
		// net/http/pprof's handlers are on the default mux, which serves
		// nothing else here.
		mux.Handle("/debug/pprof/", http.DefaultServeMux)
		srv.WriteTimeout = 0 // a profile or trace lasts as long as asked
	}
	log.Info().Str("addr", ln.Addr().String()).Str("url", "http://"+ln.Addr().String()+"/metrics").
		Bool("pprof", pprof).Msg("metrics listener ready")
	return &Listener{Server: srv, ln: ln}, nil
}

// Addr is the address the listener is bound to.
func (l *Listener) Addr() string { return l.ln.Addr().String() }

// Serve serves the listener until its server is shut down, and returns
// nil then.
func (l *Listener) Serve() error {
	if err := l.Server.Serve(l.ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve metrics: %w", err)
	}
	return nil
}

// Close closes the listener of a server that will not be started; nil
// does nothing.
func (l *Listener) Close() {
	if l != nil {
		l.ln.Close()
	}
}
