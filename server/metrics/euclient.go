package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// Operations of the EU information system, as the operation label names
// them: the SOAP operations of the Operator API.
const (
	OpSubmit            = "submitDds"
	OpGet               = "getDds"
	OpWithdraw          = "withdrawDds"
	OpVerifyDeclaration = "verifyDeclaration"
	OpEcho              = "testEcho"
	OpFindByReference   = "getDdsByInternalReference"
)

// Outcomes of a call to the EU information system.
const (
	EUOk        = "ok"        // answered
	EURejected  = "rejected"  // refused on its business rules
	EUFault     = "fault"     // another permanent SOAP fault: credentials, permission, not found, invalid request
	EUTransient = "transient" // may go away by itself: down, too slow, rate limited (euis.IsTransient)
	EUError     = "error"     // anything else: no request sent, TLS, a redirect, an unreadable answer code
)

// EUClient wraps env's EU information system client so that each call is
// counted by operation and outcome, and timed.
func (m *Metrics) EUClient(env storage.Environment, c euis.Client) euis.Client {
	return &euClient{c: c, m: m, env: string(env)}
}

// finder is the lookup by internal reference both EU clients have (the
// dds workflow asks for it by type assertion).
type finder interface {
	FindByInternalReference(ctx context.Context, cr euis.Credentials, ref string) ([]euis.Status, error)
}

type euClient struct {
	c   euis.Client
	m   *Metrics
	env string
}

// observe records a call of operation op that began at start and ended
// with err.
func (e *euClient) observe(op string, start time.Time, err error) {
	e.m.euDuration.WithLabelValues(e.env, op).Observe(time.Since(start).Seconds())
	e.m.euCalls.WithLabelValues(e.env, op, euOutcome(err)).Inc()
}

func euOutcome(err error) string {
	var f *euis.Fault
	switch {
	case err == nil:
		return EUOk
	case euis.IsTransient(err):
		return EUTransient
	case errors.As(err, &f) && f.Rejected():
		return EURejected
	case errors.As(err, &f):
		return EUFault
	default:
		return EUError
	}
}

func (e *euClient) Submit(ctx context.Context, cr euis.Credentials, s euis.Statement) (string, error) {
	start := time.Now()
	uuid, err := e.c.Submit(ctx, cr, s)
	e.observe(OpSubmit, start, err)
	return uuid, err
}

func (e *euClient) Get(ctx context.Context, cr euis.Credentials, uuids []string) ([]euis.Status, error) {
	start := time.Now()
	st, err := e.c.Get(ctx, cr, uuids)
	e.observe(OpGet, start, err)
	return st, err
}

func (e *euClient) Withdraw(ctx context.Context, cr euis.Credentials, uuid string) error {
	start := time.Now()
	err := e.c.Withdraw(ctx, cr, uuid)
	e.observe(OpWithdraw, start, err)
	return err
}

func (e *euClient) VerifyDeclaration(ctx context.Context, cr euis.Credentials, ref euis.Reference) (string, error) {
	start := time.Now()
	res, err := e.c.VerifyDeclaration(ctx, cr, ref)
	e.observe(OpVerifyDeclaration, start, err)
	return res, err
}

func (e *euClient) Echo(ctx context.Context, cr euis.Credentials, query string) (string, error) {
	start := time.Now()
	res, err := e.c.Echo(ctx, cr, query)
	e.observe(OpEcho, start, err)
	return res, err
}

// FindByInternalReference is the wrapped client's, which both clients
// have; a client without it finds nothing, as if unwrapped.
func (e *euClient) FindByInternalReference(ctx context.Context, cr euis.Credentials, ref string) ([]euis.Status, error) {
	f, ok := e.c.(finder)
	if !ok {
		return nil, nil
	}
	start := time.Now()
	st, err := f.FindByInternalReference(ctx, cr, ref)
	e.observe(OpFindByReference, start, err)
	return st, err
}
