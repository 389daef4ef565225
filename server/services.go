package server

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/server/config"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/devca"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/server/report"
	"github.com/eudr/eudr/server/report/pdf"
	"github.com/eudr/eudr/server/sd"
	"github.com/eudr/eudr/server/shipment"
	"github.com/eudr/eudr/server/webhook"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// The composition root: each service is built here from the config, and
// nowhere else reads it. The order matters only where a service uses
// another's output: accounts first (bootstrap), then the layers (loaded
// before any screening), the queues and ledger, and the workflows on them.

// buildServices builds every service of the running appliance and
// registers their jobs; Run starts the job runner and the dispatcher.
func (a *App) buildServices(ctx context.Context) error {
	var err error
	if a.accounts, err = openAccounts(ctx, a.db, a.cfg, a.now, a.log, true); err != nil {
		return err
	}
	a.layers = newLayers(a.db, a.cfg, a.log)
	if err := a.layers.Load(ctx); err != nil {
		return err
	}
	if err := a.db.Update(ctx, func(tx *storage.Tx) error {
		if err := queue.Init(tx.Tx); err != nil {
			return err
		}
		var err error
		a.ledger, err = anchor.Open(tx, anchor.Options{KeyFile: a.cfg.Ledger.KeyPath(a.cfg.DataDir),
			KeyName: a.cfg.Ledger.KeyName, Logger: a.log})
		return err
	}); err != nil {
		return fmt.Errorf("init queues and ledger: %w", err)
	}
	// Certificates are dated by the wall clock, which TLS checks them
	// against, whatever clock the appliance runs on.
	if a.devCA, err = devca.Open(a.cfg.DataDir, time.Now); err != nil {
		return fmt.Errorf("sandbox development CA: %w", err)
	}
	policies, err := webhookPolicies(a.cfg.Webhooks, a.devCA.Certificate())
	if err != nil {
		return err
	}
	a.dispatcher = queue.NewDispatcher(queue.DispatcherOptions{
		DB:        a.db.Bolt(),
		PolicyFor: func(scope string) queue.Policy { return policies[event.EnvOfScope(scope)] },
		Workers:   a.cfg.Webhooks.Workers,
		PerTarget: a.cfg.Webhooks.PerTarget,
		// A send lasts at most the timeout; a claim outlives it with room to
		// record the outcome (Validate), and after a crash the delivery is
		// sent again when the claim lapses.
		Lease:   a.cfg.Webhooks.Lease,
		Now:     a.now,
		Logger:  a.log.With().Str("component", "webhooks").Logger(),
		Observe: a.metrics.ObserveDelivery,
	})
	a.events = event.NewPublisher(a.dispatcher.Wake)
	a.jobs = work.New(work.Options{
		DB:           a.db,
		Events:       a.events,
		Workers:      a.cfg.Jobs.Workers,
		Lease:        a.cfg.Jobs.Lease,
		DrainTimeout: a.cfg.ShutdownTimeout,
		Now:          a.now,
		Logger:       a.log.With().Str("component", "jobs").Logger(),
		ObserveRun:   a.metrics.ObserveJobRun,
	})
	a.jobs.Handle(work.SandboxTest, a.runSandboxJob)

	a.webhooks = webhook.New(webhook.Options{DB: a.db, AllowPrivateTargets: map[storage.Environment]bool{
		storage.Production: a.cfg.Webhooks.AllowPrivateTargets, storage.Sandbox: a.cfg.Webhooks.SandboxAllowPrivateTargets},
		Send: a.dispatcher.Send, Wake: a.dispatcher.Wake, Now: a.now})
	a.polygons = polygon.New(polygon.Options{DB: a.db, Jobs: a.jobs, Events: a.events, Ledger: a.ledger, Logger: a.log,
		Index: a.layers.Index, Rules: a.cfg.Risk.Rules(), AppVersion: a.version, MaxFeatures: a.cfg.Limits.MaxFeatures, Now: a.now,
		ObserveScreening: a.metrics.ObserveScreening})
	benchmark, err := a.cfg.Risk.Benchmark()
	if err != nil {
		return fmt.Errorf("risk.country_benchmark_file: %w", err)
	}
	a.batches = batch.New(batch.Options{DB: a.db, Jobs: a.jobs, Events: a.events, Benchmark: benchmark,
		MaxScore: a.cfg.Risk.MaxScore, AppVersion: a.version})
	a.shipments = shipment.New(shipment.Options{DB: a.db, Jobs: a.jobs, Events: a.events, Ledger: a.ledger,
		ConsensusTimeout: a.cfg.Ledger.ConsensusTimeout})
	if a.dds, err = a.newDDSService(); err != nil {
		return err
	}
	a.reports = report.New(report.Options{DB: a.db, Jobs: a.jobs, Events: a.events, Ledger: a.ledger,
		Logger: a.log, Now: a.now, Version: a.version, Dir: a.cfg.Reports.Path(a.cfg.DataDir), Retention: a.cfg.Reports.Retention,
		DownloadPath: reportDownloadPath, DDSView: func(tx *storage.Tx, t storage.Tenant, d *storage.DDS) (any, error) {
			return ddsView(tx, t, d, true)
		}, StatementReport: func(ctx context.Context, t storage.Tenant, id string) ([]byte, error) {
			m, err := a.pdfSource().Make(ctx, t, pdf.KindDDS, id) // recorded in the ledger as a download is
			return m.Body, err
		}})
	return nil
}

// openAccounts loads the login token key (made on first start), builds
// the account service and creates the first organisation and admin on an
// empty store. serving says it is the appliance starting (not an admin
// command), which warns of an admin password it ignores.
func openAccounts(ctx context.Context, db *storage.DB, cfg *config.Config, now func() time.Time, log zerolog.Logger, serving bool) (*account.Service, error) {
	var tokenKey []byte
	if err := db.Update(ctx, func(tx *storage.Tx) error {
		var err error
		tokenKey, err = account.TokenKey(tx)
		return err
	}); err != nil {
		return nil, err
	}
	accounts := account.New(account.Options{DB: db, TokenKey: tokenKey, TokenTTL: cfg.Auth.TokenTTL,
		SessionIdle: cfg.Auth.SessionIdle, SessionMax: cfg.Auth.SessionMax,
		AdminPassword: cfg.AdminPassword, WarnIgnoredPassword: serving, DataDir: cfg.DataDir, Now: now, Logger: log})
	return accounts, accounts.Bootstrap(ctx)
}

// newLayers is the layer service, its index not loaded yet.
func newLayers(db *storage.DB, cfg *config.Config, log zerolog.Logger) *layer.Service {
	return layer.New(layer.Options{DB: db, Logger: log, RasterRoot: cfg.Layers.RasterRootPath(cfg.DataDir),
		RasterCacheBytes: int64(cfg.Layers.RasterCacheMB) << 20})
}

// newDDSService makes the statement workflow, and a.sd on its clients: it loads the key that seals
// credentials, and makes the EU system clients of the two environments,
// the SOAP client for production and the simulator (its records in the
// store) for the sandbox, each counted and timed by the metrics.
func (a *App) newDDSService() (*dds.Service, error) {
	c := a.cfg.EUSystem
	sealer, err := dds.LoadSealer(c.KeyPath(a.cfg.DataDir))
	if err != nil {
		return nil, fmt.Errorf("eu_system.key_file: %w", err)
	}
	trust, key, err := c.Trust()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	soap := euis.NewSOAPClient(euis.NewHTTPClient(euis.HTTPOptions{AllowPrivate: c.AllowPrivateEndpoints, Timeout: c.Timeout, Trust: trust}), euis.SOAPOptions{Now: a.now})
	sim := euis.NewSimulator(storage.SimStore{DB: a.db}, euis.SimOptions{Delay: c.SandboxDelay, Now: a.now, Windows: c.SandboxWindows()})
	schedules := map[storage.Environment][]time.Duration{storage.Production: c.PollSchedule, storage.Sandbox: c.SandboxPollSchedule}
	svc := dds.New(dds.Options{DB: a.db, Jobs: a.jobs, Events: a.events, Ledger: a.ledger, Logger: a.log.With().Str("component", "dds").Logger(),
		Clients:       map[storage.Environment]euis.Client{storage.Production: a.metrics.EUClient(storage.Production, soap), storage.Sandbox: a.metrics.EUClient(storage.Sandbox, sim)},
		PollSchedules: schedules, Sealer: sealer, Endpoints: c.Endpoints(), SandboxWindows: c.SandboxWindows()})
	a.sd = sd.New(sd.Options{DB: a.db, Jobs: a.jobs, Ledger: a.ledger, Logger: a.log.With().Str("component", "sd").Logger(), PollSchedules: schedules,
		Clients: map[storage.Environment]euis.SDClient{storage.Production: a.metrics.EUSDClient(storage.Production, soap), storage.Sandbox: a.metrics.EUSDClient(storage.Sandbox, sim)}, Credentials: svc.CredentialsFor, AttemptOf: dds.AttemptOf})
	return svc, nil
}
