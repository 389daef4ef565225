package account

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
)

// TestService_LoginBounded holds the service's hashing slots itself, which
// only a white-box test can: with every slot busy a login is answered 503
// with Retry-After, or ends with its context; a freed slot lets it in.
func TestService_LoginBounded(t *testing.T) {
	b := apitest.NewBench(t, time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC))
	s := New(Options{DB: b.DB, TokenKey: []byte("k"), TokenTTL: time.Hour, AdminPassword: "pw", DataDir: t.TempDir(),
		HashSlots: 2, HashWait: time.Millisecond, Now: b.Clock.Now, Logger: zerolog.Nop()})
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range cap(s.hashSlots) { // every slot busy
		s.hashSlots <- struct{}{}
	}
	_, _, err := s.Login(context.Background(), AdminUsername, "pw")
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != apierr.StatusServiceUnavailable || e.Code != apierr.CodeServiceUnavailable || e.RetryAfter != 1 {
		t.Errorf("login with every slot busy: got %v, want 503 SERVICE_UNAVAILABLE with Retry-After 1", err)
	}

	s.o.HashWait = time.Hour // only the context can end this wait
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.checkPasswordBounded(ctx, dummyHash, "pw"); !errors.Is(err, context.Canceled) {
		t.Errorf("password check with every slot busy and its context cancelled: got %v, want context.Canceled", err)
	}

	<-s.hashSlots // one slot frees up
	if _, _, err := s.Login(context.Background(), AdminUsername, "pw"); err != nil {
		t.Errorf("login with a free slot: got %v, want a token", err)
	}
	if n := len(s.hashSlots); n != 1 {
		t.Errorf("slots held after the login: got %d, want 1 (the login gave its slot back)", n)
	}
}
