package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the layout version this build reads and writes. Open
// records it in a new file and refuses a file written by a newer build.
const SchemaVersion = 1

// FileName is the name of the store file inside the data dir.
const FileName = "eudr.db"

var (
	// ErrNotFound is returned when a record does not exist (in this tenant).
	ErrNotFound = errors.New("not found")
	// ErrInUse is returned by Open when another process holds the data dir.
	ErrInUse = errors.New("data dir is in use by another process")
)

var (
	bucketMeta          = []byte("meta")
	bucketOrgs          = []byte("orgs")
	bucketUsers         = []byte("users")
	bucketAPIKeys       = []byte("api_keys")
	bucketAPIKeyHashes  = []byte("api_key_hashes")
	bucketIdemExpiry    = []byte("idempotency_expiry")
	bucketTenants       = []byte("tenants")
	bucketLayers        = []byte("layers")
	bucketLayerData     = []byte("layer_data")
	bucketSessions      = []byte("sessions")
	keySchemaVersion    = []byte("schema_version")
	keyCreatedAt        = []byte("created_at")
	globalBuckets       = [][]byte{bucketMeta, bucketOrgs, bucketUsers, bucketAPIKeys, bucketAPIKeyHashes, bucketIdemExpiry, bucketTenants, bucketLayers, bucketLayerData, bucketSessions}
	openTimeout         = time.Second
	initialMmapSize     = 64 << 20
	errSchemaTooNew     = errors.New("store was written by a newer version")
	errReadOnlyNotFound = errors.New("store file does not exist")
)

// Options configures Open.
type Options struct {
	// ReadOnly opens the file with a shared lock and no writes (admin tools).
	ReadOnly bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// ObserveCommit, when set, is told how long each write transaction
	// made through Update or Batch took to commit (from the end of its
	// work to its data on disk), once per commit.
	ObserveCommit func(time.Duration)
}

// DB is the open store.
type DB struct {
	bolt          *bolt.DB
	path          string
	now           func() time.Time
	observeCommit func(time.Duration)
	// timing is the commit timer of the write transaction under way, if
	// any: write transactions run one at a time, so only the goroutine
	// holding bbolt's writer lock touches it.
	timing *commitTimer
}

// Open opens (creating if needed) the store in dataDir. It fails with an error
// wrapping ErrInUse when another process holds the file.
func Open(dataDir string, opts Options) (*DB, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	path := filepath.Join(dataDir, FileName)
	if opts.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("open store %s: %w", path, errReadOnlyNotFound)
		}
	} else if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout:         openTimeout,
		ReadOnly:        opts.ReadOnly,
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: initialMmapSize,
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("open store %s: %w", dataDir, ErrInUse)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	bdb.MaxBatchDelay = batchDelay
	db := &DB{bolt: bdb, path: path, now: opts.Now, observeCommit: opts.ObserveCommit}
	if opts.ReadOnly {
		err = db.checkSchema()
	} else {
		err = db.init()
	}
	if err != nil {
		bdb.Close()
		return nil, err
	}
	return db, nil
}

// init creates the global buckets and records the schema version.
func (db *DB) init() error {
	return db.bolt.Update(func(btx *bolt.Tx) error {
		for _, name := range globalBuckets {
			if _, err := btx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		meta := btx.Bucket(bucketMeta)
		if v := meta.Get(keySchemaVersion); v != nil {
			return checkVersion(v)
		}
		if err := meta.Put(keySchemaVersion, []byte(strconv.Itoa(SchemaVersion))); err != nil {
			return err
		}
		return meta.Put(keyCreatedAt, []byte(db.now().UTC().Format(time.RFC3339Nano)))
	})
}

func (db *DB) checkSchema() error {
	return db.bolt.View(func(btx *bolt.Tx) error {
		meta := btx.Bucket(bucketMeta)
		if meta == nil {
			return fmt.Errorf("store has no meta bucket: not an eudr store")
		}
		return checkVersion(meta.Get(keySchemaVersion))
	})
}

func checkVersion(v []byte) error {
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return fmt.Errorf("bad schema version %q", v)
	}
	if n > SchemaVersion {
		return fmt.Errorf("schema version %d, this build reads %d: %w", n, SchemaVersion, errSchemaTooNew)
	}
	return nil
}

// Close closes the file. Outstanding transactions must have ended.
func (db *DB) Close() error { return db.bolt.Close() }

// Path is the store file's path.
func (db *DB) Path() string { return db.path }

// Bolt exposes the underlying handle for packages that own buckets of their
// own in the same file (queue, ledger).
func (db *DB) Bolt() *bolt.DB { return db.bolt }

// Tx is a transaction with the store's typed accessors.
type Tx struct {
	*bolt.Tx
	now time.Time
}

// WrapTx gives a transaction opened by another package (the queue's job
// runner) the store's typed accessors, with now as its time.
func WrapTx(btx *bolt.Tx, now time.Time) *Tx { return &Tx{Tx: btx, now: now.UTC()} }

// Now is the time fixed for this transaction.
func (tx *Tx) Now() time.Time { return tx.now }

// Now is the store's clock, for times recorded outside a transaction.
func (db *DB) Now() time.Time { return db.now().UTC() }

// Update runs fn in a read-write transaction, committed when fn returns nil.
// The commit is synced to disk before Update returns.
func (db *DB) Update(ctx context.Context, fn func(tx *Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.bolt.Update(func(btx *bolt.Tx) error {
		return db.timed(btx, fn(&Tx{Tx: btx, now: db.now().UTC()}))
	})
}

// Batch runs fn in a write transaction shared with concurrent Batch calls
// (group commit): one pair of fsyncs for all of them, instead of one per
// request. A lone call waits at most batchDelay for company. fn may run
// more than once (when another call of its group fails, the rest run
// again), so it must have no effect outside tx except assignments it makes
// anew on every run. An error from fn fails only its own call; a panic in
// fn is re-raised in the caller, as Update does (the failing call is run
// again alone).
func (db *DB) Batch(ctx context.Context, fn func(tx *Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.bolt.Batch(func(btx *bolt.Tx) error {
		return db.timed(btx, fn(&Tx{Tx: btx, now: db.now().UTC()}))
	})
}

// commitTimer times the commit of one write transaction.
type commitTimer struct {
	tx      *bolt.Tx
	workEnd time.Time // when the last function run in it returned
}

// timed notes that a function run in the write transaction btx has just
// returned err, and passes err on. The commit that follows is timed from
// the last such return to the commit handlers bbolt calls once the data
// is on disk; a Batch runs several functions in one transaction, which
// is timed once.
func (db *DB) timed(btx *bolt.Tx, err error) error {
	if db.observeCommit == nil {
		return err
	}
	if db.timing == nil || db.timing.tx != btx {
		ct := &commitTimer{tx: btx}
		db.timing = ct
		btx.OnCommit(func() { db.observeCommit(time.Since(ct.workEnd)) })
	}
	db.timing.workEnd = time.Now()
	return err
}

// batchDelay is how long a lone Batch call waits for others to share its
// commit: short next to the two fsyncs a commit costs anyway.
const batchDelay = time.Millisecond

// View runs fn in a read-only transaction.
func (db *DB) View(ctx context.Context, fn func(tx *Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return db.bolt.View(func(btx *bolt.Tx) error {
		return fn(&Tx{Tx: btx, now: db.now().UTC()})
	})
}

// Status describes the open store for health checks.
type Status struct {
	SchemaVersion int
	SizeBytes     int64
}

// Status reads the schema version and file size in a short read transaction;
// an error means the store cannot serve reads.
func (db *DB) Status(ctx context.Context) (Status, error) {
	var s Status
	err := db.View(ctx, func(tx *Tx) error {
		n, err := strconv.Atoi(string(tx.Bucket(bucketMeta).Get(keySchemaVersion)))
		if err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		s = Status{SchemaVersion: n, SizeBytes: tx.Size()}
		return nil
	})
	return s, err
}

// Backup writes a consistent copy of the whole store to w from one read
// transaction; writers go on meanwhile. announce, when not nil, is told the
// copy's exact size before the first byte is written. It returns the bytes
// written.
func (db *DB) Backup(ctx context.Context, w io.Writer, announce func(size int64)) (int64, error) {
	var n int64
	err := db.View(ctx, func(tx *Tx) error {
		if announce != nil {
			announce(tx.Size())
		}
		var err error
		n, err = tx.WriteTo(w)
		return err
	})
	return n, err
}

// BackupFile writes a consistent copy to path: a temporary file beside it,
// synced, then renamed into place, so a crash never leaves a half backup
// under the final name.
func (db *DB) BackupFile(ctx context.Context, path string) (int64, error) {
	return WriteFileAtomic(path, func(w io.Writer) (int64, error) { return db.Backup(ctx, w, nil) })
}

// WriteFileAtomic creates path from what write produces, through a synced
// temporary file renamed into place.
func WriteFileAtomic(path string, write func(io.Writer) (int64, error)) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return 0, fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	n, err := write(tmp)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path)) // the rename itself must survive a power loss
	}
	if err != nil {
		return 0, fmt.Errorf("write %s: %w", path, err)
	}
	return n, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// putJSON encodes v into bucket b under key.
func putJSON(b *bolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, data)
}

// getJSON decodes the value under key into v, or returns ErrNotFound.
func getJSON(b *bolt.Bucket, key []byte, v any) error {
	if b == nil {
		return ErrNotFound
	}
	data := b.Get(key)
	if data == nil {
		return ErrNotFound
	}
	return json.Unmarshal(data, v)
}

func unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// lastBefore positions c on the greatest key strictly less than after, or on
// the last key when after is empty: where a newest-first page starts.
func lastBefore(c *bolt.Cursor, after []byte) ([]byte, []byte) {
	if len(after) == 0 {
		return c.Last()
	}
	if k, _ := c.Seek(after); k == nil {
		return c.Last()
	}
	return c.Prev()
}
