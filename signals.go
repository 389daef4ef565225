package main

import (
	"context"
	"os"
	"syscall"
	"time"

	"github.com/rs/zerolog"
)

// stopOnSignals returns a context that is cancelled at the first signal
// on signals (SIGINT, SIGTERM): the appliance then drains, finishing
// in-flight requests and jobs within shutdown_timeout (drain). A second
// signal while it drains ends the process at once through exit, with 128
// + the signal's number (130 for a second Ctrl-C, 143 for SIGTERM), as a
// shell reports a process killed by that signal. That is safe for the
// store: bbolt commits are atomic, so a write cut short is as if it never
// began, and everything the appliance accepted was committed before it
// answered. stop stops watching, and returns once nothing watches.
func stopOnSignals(ctx context.Context, signals <-chan os.Signal, log zerolog.Logger, drain time.Duration, exit func(code int)) (_ context.Context, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case s := <-signals:
			log.Info().Str("signal", s.String()).Stringer("shutdown_timeout", drain).
				Msg("draining: finishing in-flight requests and jobs; a second signal stops at once")
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-signals:
			code := 128 + int(signalNumber(s))
			log.Warn().Str("signal", s.String()).Int("exit_code", code).
				Msg("second signal: stopping at once; in-flight requests are cut off, unfinished jobs run again after their lease")
			exit(code)
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		<-watched
		cancel()
	}
}

// signalNumber is s's number; SIGTERM's for a signal that has none.
func signalNumber(s os.Signal) syscall.Signal {
	if n, ok := s.(syscall.Signal); ok {
		return n
	}
	return syscall.SIGTERM
}
