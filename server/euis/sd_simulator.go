package euis

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// ReasonSDOperatorNotIdentified is the Simulator's rejection of a
// simplified declaration filed under REPRESENTATIVE_MSPO whose represented
// operator has no reference number (EORI or another identifier): the
// information system identifies the operator by a standard ID.
const ReasonSDOperatorNotIdentified = "EUDR_REPRESENTED_OPERATOR_NOT_IDENTIFIED"

var _ SDClient = (*Simulator)(nil)

// The Simulator's simplified declarations (docs/simplified.md) follow its
// statements' rules where they apply: checked as ValidateSD does (a
// violation is a FaultBusinessRules fault), then SUBMITTED for Delay, then
// REJECTED with ReasonSDOperatorNotIdentified for a representative's
// declaration whose operator has no reference number, else AVAILABLE with
// a reference number of the simplified form (S, YY, the country of
// activity or the producers' first country, 9 digits or capital letters)
// and a verification number. WithdrawSD withdraws a SUBMITTED or AVAILABLE
// one, at any time (a declaration has no 72-hour window); UpdateSD
// replaces an AVAILABLE one's content. Records are kept under "sd/<uuid>",
// "sdref/<referenceNumber>" and "sdiref/<internalReference>", the content
// (for GetSDByIdentifiers) under "sdstmt/<uuid>".

// SubmitSD files d.
func (sim *Simulator) SubmitSD(ctx context.Context, _ Credentials, d SDStatement) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if vs := checkSD(d); len(vs) > 0 {
		return "", violationFault(OpSubmitSD, vs)
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	now := sim.opts.Now().UTC()
	uuid, err := sim.uuid()
	if err != nil {
		return "", err
	}
	rec := simRecord{UUID: uuid, InternalReference: d.InternalReference, SubmittedAt: now, DecidedAt: now.Add(sim.opts.Delay),
		Outcome: StatusAvailable}
	if d.OperatorRole == SDRoleRepresentative && len(d.Operator.ReferenceNumbers()) == 0 {
		rec.Outcome, rec.Reasons = StatusRejected, []string{ReasonSDOperatorNotIdentified}
	} else {
		if rec.ReferenceNumber, err = sim.sdReferenceNumber(d, now); err != nil {
			return "", err
		}
		if rec.VerificationNumber, err = sim.random(8); err != nil {
			return "", err
		}
		if err := sim.store.Put("sdref/"+rec.ReferenceNumber, []byte(uuid)); err != nil {
			return "", fmt.Errorf("simulator: put reference: %w", err)
		}
	}
	if err := sim.indexAs("sdiref/", d.InternalReference, uuid); err != nil {
		return "", err
	}
	if err := sim.putSDStatement(uuid, d); err != nil {
		return "", err
	}
	if err := sim.putAs("sd/", rec); err != nil {
		return "", err
	}
	return uuid, nil
}

// GetSD returns the statuses of the declarations it knows, in the order
// asked.
func (sim *Simulator) GetSD(ctx context.Context, _ Credentials, ids []string) ([]Status, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if err := checkUUIDs(ids); err != nil {
		return nil, err
	}
	return sim.sdStatuses(ids)
}

// FindSDByInternalReference returns the declarations filed under exactly
// ref.
func (sim *Simulator) FindSDByInternalReference(ctx context.Context, _ Credentials, ref string) ([]Status, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := sim.store.Get("sdiref/" + ref)
	if err != nil || b == nil {
		return nil, err
	}
	var ids []string
	if err := json.Unmarshal(b, &ids); err != nil {
		return nil, fmt.Errorf("simulator: internal reference %q: %w", ref, err)
	}
	return sim.sdStatuses(ids)
}

func (sim *Simulator) sdStatuses(ids []string) ([]Status, error) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	now := sim.opts.Now().UTC()
	var out []Status
	for _, id := range ids {
		r, ok, err := sim.loadAs("sd/", strings.ToLower(id))
		if err != nil {
			return nil, err
		}
		if ok {
			st, err := sim.status(r, now)
			if err != nil {
				return nil, err
			}
			out = append(out, st)
		}
	}
	return out, nil
}

// WithdrawSD withdraws a SUBMITTED or AVAILABLE declaration.
func (sim *Simulator) WithdrawSD(ctx context.Context, _ Credentials, id string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	now := sim.opts.Now().UTC()
	r, ok, err := sim.loadAs("sd/", strings.ToLower(id))
	if err != nil {
		return "", err
	}
	if !ok {
		f := businessFault(OpWithdrawSD, ReasonStatementNotFound, "no simplified declaration "+id)
		f.Kind, f.Detail = FaultNotFound, "NotFoundException"
		return "", f
	}
	st, err := sim.status(r, now)
	if err != nil {
		return "", err
	}
	if st.Status != StatusSubmitted && st.Status != StatusAvailable {
		return "", businessFault(OpWithdrawSD, ReasonNotAllowedForStatus, fmt.Sprintf("simplified declaration %s is %s", id, st.Status))
	}
	r.WithdrawnAt = &now
	return StatusWithdrawn, sim.putAs("sd/", r)
}

func (sim *Simulator) loadAs(prefix, uuid string) (simRecord, bool, error) {
	b, err := sim.store.Get(prefix + uuid)
	if err != nil {
		return simRecord{}, false, fmt.Errorf("simulator: get %s%s: %w", prefix, uuid, err)
	}
	if b == nil {
		return simRecord{}, false, nil
	}
	var r simRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return simRecord{}, false, fmt.Errorf("simulator: %s%s: %w", prefix, uuid, err)
	}
	return r, true, nil
}

func (sim *Simulator) putAs(prefix string, r simRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := sim.store.Put(prefix+r.UUID, b); err != nil {
		return fmt.Errorf("simulator: put %s%s: %w", prefix, r.UUID, err)
	}
	return nil
}

func (sim *Simulator) indexAs(prefix, ref, uuid string) error {
	key := prefix + ref
	b, err := sim.store.Get(key)
	if err != nil {
		return fmt.Errorf("simulator: get internal reference %q: %w", ref, err)
	}
	var ids []string
	if b != nil {
		if err := json.Unmarshal(b, &ids); err != nil {
			return fmt.Errorf("simulator: internal reference %q: %w", ref, err)
		}
	}
	if b, err = json.Marshal(append(ids, uuid)); err != nil {
		return err
	}
	if err := sim.store.Put(key, b); err != nil {
		return fmt.Errorf("simulator: put internal reference %q: %w", ref, err)
	}
	return nil
}

// sdReferenceNumber returns a new declaration number: S, YY, the country,
// 9 digits or capital letters.
func (sim *Simulator) sdReferenceNumber(d SDStatement, now time.Time) (string, error) {
	country := strings.ToUpper(d.CountryOfActivity)
	if country == "" && len(d.Commodities) > 0 && len(d.Commodities[0].Producers) > 0 {
		country = strings.ToUpper(d.Commodities[0].Producers[0].Country)
	}
	if len(country) != 2 {
		country = "EU"
	}
	for range 10 {
		tail, err := sim.random(9)
		if err != nil {
			return "", err
		}
		n := fmt.Sprintf("S%02d%s%s", now.Year()%100, country, tail)
		b, err := sim.store.Get("sdref/" + n)
		if err != nil {
			return "", fmt.Errorf("simulator: get reference %s: %w", n, err)
		}
		if b == nil {
			return n, nil
		}
	}
	return "", fmt.Errorf("simulator: no free declaration number")
}
