package server

import (
	"context"
	"time"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/config"
	"github.com/eudr/eudr/server/layer"
	"github.com/eudr/eudr/storage"
)

// Admin is a stopped appliance's data dir opened for one admin command
// (create a key, reset a password, import a layer): the store and the two
// services those commands use, and nothing else. It loads no reference
// layer, builds no EU system client, reads no ledger or sealing key and
// starts no queue, so a command works even while one of those would fail
// to start, and costs no more than the record it writes.
type Admin struct {
	db       *storage.DB
	accounts *account.Service
	layers   *layer.Service
}

// OpenAdmin opens the store in cfg.DataDir for an admin command, creating
// the first organisation and admin on an empty store as New does. It fails
// with an error wrapping storage.ErrInUse while the appliance runs, and
// when the store cannot be opened or the first admin cannot be created.
func OpenAdmin(cfg *config.Config, opts Options) (*Admin, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	db, err := storage.Open(cfg.DataDir, storage.Options{Now: opts.Now})
	if err != nil {
		return nil, err
	}
	accounts, err := openAccounts(context.Background(), db, cfg, opts.Now, opts.Logger, false)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Admin{db: db, accounts: accounts, layers: newLayers(db, cfg, opts.Logger)}, nil
}

// Accounts is the account service: keys and passwords.
func (ad *Admin) Accounts() *account.Service { return ad.accounts }

// Layers is the layer service, for imports; its index is not loaded.
func (ad *Admin) Layers() *layer.Service { return ad.layers }

// Close closes the store.
func (ad *Admin) Close() error {
	ad.layers.CloseTiles()
	return ad.db.Close()
}
