// Package server is the composition root and the HTTP edge: it reads the
// configuration (the only package that does), builds every workflow's
// service from it (services.go), and serves the API over them: listeners,
// routes, middleware, and one <resource>.go of handlers per resource, each
// decoding a request, calling one service method and encoding the answer.
// The workflows themselves live in the packages below it (docs/architecture.md).
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/server/config"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/devca"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/server/metrics"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/server/ratelimit"
	"github.com/eudr/eudr/server/report"
	"github.com/eudr/eudr/server/sd"
	"github.com/eudr/eudr/server/shipment"
	"github.com/eudr/eudr/server/webhook"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// Options are what the caller (main, tests) gives New besides the config.
type Options struct {
	Version string
	Logger  zerolog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// App is the running appliance: one store, two environments.
type App struct {
	cfg     *config.Config
	db      *storage.DB
	log     zerolog.Logger
	version string
	now     func() time.Time
	started time.Time
	runID   string // tells this process's in-flight idempotency records from a crashed one's

	keyRate *ratelimit.Limiter // per API key (or logged-in user)
	ipRate  *ratelimit.Limiter // per client IP, for requests without a valid credential
	usage   *account.Usage
	proxies []netip.Prefix

	jobs       *work.Queue
	dispatcher *queue.Dispatcher // webhook deliveries
	events     *event.Publisher

	shipments *shipment.Service
	webhooks  *webhook.Service
	layers    *layer.Service
	polygons  *polygon.Service
	accounts  *account.Service
	dds       *dds.Service
	sd        *sd.Service
	batches   *batch.Service
	reports   *report.Service

	ledger  *anchor.Ledger // checkpoint signing key, loaded at start
	devCA   *devca.CA      // issues sandbox listener certificates; the sandbox's deliveries trust it
	metrics *metrics.Metrics

	handlers map[storage.Environment]http.Handler
}

// New opens the store in cfg.DataDir, creates the first organisation and
// admin on an empty store, and builds the HTTP handlers. It fails with an
// error wrapping storage.ErrInUse when another process holds the data dir.
func New(cfg *config.Config, opts Options) (*App, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	m := metrics.New(metrics.Options{Version: opts.Version, Now: opts.Now})
	db, err := storage.Open(cfg.DataDir, storage.Options{Now: opts.Now, ObserveCommit: m.ObserveCommit})
	if err != nil {
		return nil, err
	}
	m.WatchStore(db)
	a := &App{
		cfg:     cfg,
		db:      db,
		log:     opts.Logger,
		version: opts.Version,
		now:     opts.Now,
		started: opts.Now(),
		runID:   randomHex(8),
		keyRate: ratelimit.New(cfg.RateLimit.PerSecond, cfg.RateLimit.Burst),
		ipRate:  ratelimit.New(cfg.RateLimit.IPPerSecond, cfg.RateLimit.IPBurst),
		usage:   account.NewUsage(),
		proxies: parsePrefixes(cfg.TrustedProxies),
		metrics: m,
	}
	if err := a.buildServices(context.Background()); err != nil {
		db.Close()
		return nil, err
	}
	a.handlers = map[storage.Environment]http.Handler{}
	for _, env := range storage.Environments {
		a.handlers[env] = a.handler(env)
	}
	return a, nil
}

// Handler is the complete HTTP handler of one environment's listener.
func (a *App) Handler(env storage.Environment) http.Handler { return a.handlers[env] }

// Close flushes key usage and closes the store. Run calls it on return.
func (a *App) Close() error {
	err := a.usage.Flush(context.Background(), a.db)
	a.layers.CloseTiles()
	return errors.Join(err, a.db.Close())
}

// Run serves both listeners and the admin socket and runs the background
// work until ctx is done, then shuts down as docs/operations.md says: stop accepting,
// finish in-flight requests within shutdown_timeout, stop the background
// work, close the store. It returns nil on a clean stop.
func (a *App) Run(ctx context.Context) error {
	defer a.Close()
	// Metrics first: ready before the API listeners, whose lines tests wait for.
	metricsLn, err := a.metrics.Listen(a.cfg.Metrics.Listen, a.cfg.Metrics.PProf, a.log)
	if err != nil {
		return err
	}
	type listener struct {
		env storage.Environment
		ln  net.Listener
		tls config.TLSConfig
	}
	var lns []listener
	for _, env := range storage.Environments {
		lc := a.listenConfig(env)
		ln, err := net.Listen("tcp", lc.Listen)
		if err != nil {
			metricsLn.Close()
			for _, l := range lns {
				l.ln.Close()
			}
			return fmt.Errorf("listen %s on %s: %w", env, lc.Listen, err)
		}
		lns = append(lns, listener{env, ln, lc.TLS})
	}
	sock, err := a.listenAdmin()
	if err != nil {
		a.log.Warn().Err(err).Msg("admin socket unavailable; hot backups only through the API")
	}

	servers := make([]*http.Server, 0, len(lns)+1)
	g, gctx := errgroup.WithContext(ctx)
	if metricsLn != nil {
		servers = append(servers, metricsLn.Server)
		g.Go(metricsLn.Serve)
	}
	for _, l := range lns {
		srv := a.httpServer(a.handlers[l.env])
		servers = append(servers, srv)
		scheme := "http"
		if l.tls.CertFile != "" {
			scheme = "https"
		}
		a.log.Info().Str("environment", string(l.env)).Str("addr", l.ln.Addr().String()).
			Str("url", scheme+"://"+l.ln.Addr().String()).Msg("listener ready")
		g.Go(func() error {
			var err error
			if l.tls.CertFile != "" {
				err = srv.ServeTLS(l.ln, l.tls.CertFile, l.tls.KeyFile)
			} else {
				err = srv.Serve(l.ln)
			}
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return fmt.Errorf("serve %s: %w", l.env, err)
		})
	}
	if sock != nil {
		srv := a.httpServer(a.adminHandler())
		srv.WriteTimeout = 0 // a backup of a large store takes as long as it takes
		servers = append(servers, srv)
		g.Go(func() error {
			if err := srv.Serve(sock); !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("serve admin socket: %w", err)
			}
			return nil
		})
	}

	// Background work runs under its own context, cancelled when shutdown
	// begins; the runner then lets running jobs finish (DrainTimeout).
	bgCtx, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBackground()
	var bg sync.WaitGroup
	for _, run := range []func(context.Context) error{a.jobs.Run, a.dispatcher.Run} {
		bg.Add(1)
		go func() {
			defer bg.Done()
			if err := run(bgCtx); err != nil {
				a.log.Error().Err(err).Msg("background worker stopped")
			}
		}()
	}
	bg.Add(1)
	go func() {
		defer bg.Done()
		a.runMaintenance(bgCtx)
	}()

	<-gctx.Done()
	a.log.Info().Msg("shutting down: no new requests, finishing in-flight ones and jobs")
	// Listeners and workers drain side by side, each within
	// shutdown_timeout: jobs stop being claimed and those running get the
	// runner's drain time; work that requests still queue meanwhile is on
	// disk and runs at the next start.
	stopBackground()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.ShutdownTimeout)
	defer cancel()
	var shutdownErr error
	for _, srv := range servers {
		if err := srv.Shutdown(shutdownCtx); err != nil {
			shutdownErr = errors.Join(shutdownErr, fmt.Errorf("shutdown: %w", err))
			srv.Close()
		}
	}
	bg.Wait()
	if sock != nil {
		os.Remove(a.adminSocketPath())
	}
	err = errors.Join(g.Wait(), shutdownErr)
	a.log.Info().Msg("stopped")
	return err
}

func (a *App) listenConfig(env storage.Environment) config.ListenConfig {
	if env == storage.Sandbox {
		return a.cfg.Sandbox
	}
	return a.cfg.Production
}

func (a *App) httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       60 * time.Second, // large polygon uploads on slow links
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          newStdLogger(a.log),
	}
}

// runMaintenance sweeps expired idempotency records, idle rate-limit buckets
// and flushes key usage until ctx is done; errors are logged and retried on
// the next tick.
func (a *App) runMaintenance(ctx context.Context) {
	sweep := time.NewTicker(a.cfg.Idempotency.SweepInterval)
	defer sweep.Stop()
	flush := time.NewTicker(30 * time.Second)
	defer flush.Stop()
	a.sweepIdempotency(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-sweep.C:
			a.sweepIdempotency(ctx)
			if _, err := a.reports.Sweep(ctx); err != nil && ctx.Err() == nil {
				a.log.Warn().Err(err).Msg("expire reports")
			}
			now := a.now()
			a.keyRate.Sweep(now)
			a.ipRate.Sweep(now)
		case <-flush.C:
			if err := a.usage.Flush(ctx, a.db); err != nil && ctx.Err() == nil {
				a.log.Warn().Err(err).Msg("record key usage")
			}
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux; if it does, nothing is safe
	}
	return hex.EncodeToString(b)
}

func (a *App) adminSocketPath() string { return filepath.Join(a.cfg.DataDir, AdminSocketName) }
