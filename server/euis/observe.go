package euis

import (
	"context"
	"errors"
	"time"
)

// Operations of the Operator API, as Observe names them.
const (
	OpSubmit            = "submitDds"
	OpGet               = "getDds"
	OpWithdraw          = "withdrawDds"
	OpVerifyDeclaration = "verifyDeclaration"
	OpEcho              = "testEcho"
	OpFindByReference   = "getDdsByInternalReference"
)

// Outcomes of a call to the information system, as Outcome names them.
const (
	OutcomeOK        = "ok"        // answered
	OutcomeRejected  = "rejected"  // refused on its business rules
	OutcomeFault     = "fault"     // another permanent SOAP fault: credentials, permission, not found, invalid request
	OutcomeTransient = "transient" // may go away by itself: down, too slow, rate limited (IsTransient)
	OutcomeError     = "error"     // anything else: no request sent, TLS, a redirect, an unreadable answer code
)

// Outcome sorts the error of a call (nil for an answer) into one of the
// Outcome constants.
func Outcome(err error) string {
	var f *Fault
	switch {
	case err == nil:
		return OutcomeOK
	case IsTransient(err):
		return OutcomeTransient
	case errors.As(err, &f) && f.Rejected():
		return OutcomeRejected
	case errors.As(err, &f):
		return OutcomeFault
	default:
		return OutcomeError
	}
}

// Observer hears each call of an observed client when it ends: the
// operation (an Op constant), when it began, and its error (nil for an
// answer).
type Observer func(op string, start time.Time, err error)

// Finder is the look-up by internal reference both clients have, beside
// Client: an observed client has it when the client it wraps does.
type Finder interface {
	FindByInternalReference(ctx context.Context, cr Credentials, ref string) ([]Status, error)
}

// Observe wraps c so that observe hears of every call it makes.
func Observe(c Client, observe Observer) Client {
	return &observed{c: c, observe: observe}
}

type observed struct {
	c       Client
	observe Observer
}

func (o *observed) Submit(ctx context.Context, cr Credentials, s Statement) (string, error) {
	start := time.Now()
	uuid, err := o.c.Submit(ctx, cr, s)
	o.observe(OpSubmit, start, err)
	return uuid, err
}

func (o *observed) Get(ctx context.Context, cr Credentials, uuids []string) ([]Status, error) {
	start := time.Now()
	st, err := o.c.Get(ctx, cr, uuids)
	o.observe(OpGet, start, err)
	return st, err
}

func (o *observed) Withdraw(ctx context.Context, cr Credentials, uuid string) error {
	start := time.Now()
	err := o.c.Withdraw(ctx, cr, uuid)
	o.observe(OpWithdraw, start, err)
	return err
}

func (o *observed) VerifyDeclaration(ctx context.Context, cr Credentials, ref Reference) (string, error) {
	start := time.Now()
	res, err := o.c.VerifyDeclaration(ctx, cr, ref)
	o.observe(OpVerifyDeclaration, start, err)
	return res, err
}

func (o *observed) Echo(ctx context.Context, cr Credentials, query string) (string, error) {
	start := time.Now()
	res, err := o.c.Echo(ctx, cr, query)
	o.observe(OpEcho, start, err)
	return res, err
}

// FindByInternalReference is the wrapped client's; a client without it
// finds nothing, as if unwrapped.
func (o *observed) FindByInternalReference(ctx context.Context, cr Credentials, ref string) ([]Status, error) {
	f, ok := o.c.(Finder)
	if !ok {
		return nil, nil
	}
	start := time.Now()
	st, err := f.FindByInternalReference(ctx, cr, ref)
	o.observe(OpFindByReference, start, err)
	return st, err
}
