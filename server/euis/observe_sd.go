package euis

import (
	"context"
	"time"
)

// ObserveSD wraps the simplified-declaration client c so that observe
// hears of every call it makes, as Observe does for a DDS client; the
// operations are the Op*SD constants.
func ObserveSD(c SDClient, observe Observer) SDClient {
	return &observedSD{c: c, observe: observe}
}

type observedSD struct {
	c       SDClient
	observe Observer
}

func (o *observedSD) SubmitSD(ctx context.Context, cr Credentials, d SDStatement) (string, error) {
	start := time.Now()
	id, err := o.c.SubmitSD(ctx, cr, d)
	o.observe(OpSubmitSD, start, err)
	return id, err
}

func (o *observedSD) GetSD(ctx context.Context, cr Credentials, ids []string) ([]Status, error) {
	start := time.Now()
	st, err := o.c.GetSD(ctx, cr, ids)
	o.observe(OpGetSD, start, err)
	return st, err
}

func (o *observedSD) WithdrawSD(ctx context.Context, cr Credentials, id string) (string, error) {
	start := time.Now()
	st, err := o.c.WithdrawSD(ctx, cr, id)
	o.observe(OpWithdrawSD, start, err)
	return st, err
}

func (o *observedSD) FindSDByInternalReference(ctx context.Context, cr Credentials, ref string) ([]Status, error) {
	start := time.Now()
	st, err := o.c.FindSDByInternalReference(ctx, cr, ref)
	o.observe(OpFindSDByReference, start, err)
	return st, err
}

func (o *observedSD) UpdateSD(ctx context.Context, cr Credentials, id string, d SDStatement) (string, error) {
	start := time.Now()
	st, err := o.c.UpdateSD(ctx, cr, id, d)
	o.observe(OpUpdateSD, start, err)
	return st, err
}

func (o *observedSD) GetSDByIdentifiers(ctx context.Context, cr Credentials, ref Reference) (*SDStatement, error) {
	start := time.Now()
	d, err := o.c.GetSDByIdentifiers(ctx, cr, ref)
	o.observe(OpGetSDByIdentifiers, start, err)
	return d, err
}
