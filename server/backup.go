package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/config"
	"github.com/eudr/eudr/storage"
)

// AdminSocketName is the Unix socket in the data dir on which a running
// appliance serves local admin requests (GET /backup). Access to it is
// access to the data dir: it is created with mode 0600.
const AdminSocketName = "eudr.sock"

// listenAdmin opens the admin socket. The store's file lock is held, so a
// socket file left by a killed process is stale and removed first.
func (a *App) listenAdmin() (net.Listener, error) {
	path := a.adminSocketPath()
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

// adminHandler serves the admin socket.
func (a *App) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /backup", func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(a.log.With().Str("component", "admin").Logger().WithContext(r.Context()))
		a.handleBackup(w, r, nil)
	})
	return mux
}

// handleBackup streams a consistent copy of the store, taken in one read
// transaction while writes go on. It serves GET /api/v1/enterprise/admin/backup
// and the admin socket that `eudr admin backup` uses.
func (a *App) handleBackup(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	if r.Method == http.MethodHead { // the size, without copying the store into nothing
		st, err := a.db.Status(r.Context())
		if err != nil {
			writeError(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(st.SizeBytes, 10))
		return
	}
	// A large store over a slow link takes longer than the listener's
	// write timeout: this response has none.
	if err := http.NewResponseController(w).SetWriteDeadline(time.Time{}); err != nil {
		zerolog.Ctx(r.Context()).Debug().Err(err).Msg("clear write deadline")
	}
	n, err := a.db.Backup(r.Context(), w, func(size int64) {
		h := w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", `attachment; filename="eudr-backup.db"`)
		h.Set("Content-Length", strconv.FormatInt(size, 10))
	})
	l := zerolog.Ctx(r.Context())
	if err != nil {
		if n == 0 {
			w.Header().Del("Content-Disposition")
			writeError(w, r, err)
			return
		}
		// Headers are out: the body falls short of Content-Length, which
		// the client detects.
		l.Error().Err(err).Int64("bytes", n).Msg("backup failed")
		return
	}
	l.Info().Int64("bytes", n).Msg("backup written")
}

// Backup writes a consistent copy of the store in cfg.DataDir to dst. When a
// running appliance holds the data dir it asks it over the admin socket (a hot
// copy); otherwise it reads the stopped store itself. hot tells which.
func Backup(ctx context.Context, cfg *config.Config, dst string) (n int64, hot bool, err error) {
	db, err := storage.Open(cfg.DataDir, storage.Options{ReadOnly: true})
	if err == nil {
		defer db.Close()
		n, err = db.BackupFile(ctx, dst)
		return n, false, err
	}
	if !errors.Is(err, storage.ErrInUse) {
		return 0, false, err
	}
	sock := filepath.Join(cfg.DataDir, AdminSocketName)
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://eudr/backup", nil)
	if err != nil {
		return 0, true, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, true, fmt.Errorf("data dir is in use, and the running appliance's admin socket %s does not answer: %w", sock, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, true, fmt.Errorf("running appliance refused the backup: %s", resp.Status)
	}
	// A body shorter than its Content-Length fails the copy: no silent half backup.
	n, err = storage.WriteFileAtomic(dst, func(w io.Writer) (int64, error) { return io.Copy(w, resp.Body) })
	return n, true, err
}
