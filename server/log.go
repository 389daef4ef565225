package server

import (
	"io"
	"os"
	"time"

	"github.com/eudr/eudr/server/config"
	"github.com/rs/zerolog"
	"golang.org/x/term"
)

// NewLogger builds the root logger: JSON lines, or human-readable console
// output when format is "console", or "auto" and w is a terminal.
func NewLogger(cfg config.LogConfig, w io.Writer) (zerolog.Logger, error) {
	level, err := config.ParseLevel(cfg.Level)
	if err != nil {
		return zerolog.Nop(), err
	}
	zerolog.TimeFieldFormat = time.RFC3339Nano
	out := w
	console := cfg.Format == "console"
	if cfg.Format == "auto" {
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			console = true
		}
	}
	if console {
		out = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05.000"}
	}
	return zerolog.New(out).Level(level).With().Timestamp().Logger(), nil
}
