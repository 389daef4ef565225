package euis

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ReasonAmendNotAllowedForStatus: the statement to amend is not AVAILABLE
// (still SUBMITTED, or REJECTED, WITHDRAWN, ...).
const ReasonAmendNotAllowedForStatus = "EUDR_API_AMEND_NOT_ALLOWED_FOR_STATUS"

// ReasonAmendNotPossible: the statement to amend is GROUPED (referenced by
// another), or its amendment period has closed. The information system
// answers a withdrawal refused for those reasons with the same code
// (ReasonWithdrawNotPossible).
const ReasonAmendNotPossible = "EUDR_API_AMEND_OR_WITHDRAW_DDS_NOT_POSSIBLE"

// SimMarkerUpdated in a commodity's description of goods makes the
// simulator answer the amendment UPDATED, as the information system does
// when it profiles an amended statement again: the statement shows
// UPDATED for the simulator's delay, then AVAILABLE again (docs/sandbox.md).
const SimMarkerUpdated = "[sandbox:updated]"

// Amend replaces an AVAILABLE statement with s, within Windows.Amend plus
// Windows.Extension of its submission by the simulator's clock (the
// operation carries no justification: whether one was needed is the
// caller's to check). s is checked as Submit checks it; its UUID,
// numbers and status stay, and GetByIdentifiers answers s from now on.
// The operator is not cross-checked again, nor are referenced statements.
func (sim *Simulator) Amend(ctx context.Context, _ Credentials, uuid string, s Statement) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if vs := check(s); len(vs) > 0 {
		return "", violationFault(opAmend.name, vs)
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	now := sim.opts.Now().UTC()
	r, ok, err := sim.load(strings.ToLower(uuid))
	if err != nil {
		return "", err
	}
	if !ok {
		f := businessFault(opAmend.name, ReasonStatementNotFound, "no statement "+uuid)
		f.Kind, f.Detail = FaultNotFound, "NotFoundException"
		return "", f
	}
	st, err := sim.status(r, now)
	if err != nil {
		return "", err
	}
	switch _, closes := sim.opts.Windows.Period(r.SubmittedAt); {
	case st.Status == StatusGrouped:
		return "", businessFault(opAmend.name, ReasonAmendNotPossible,
			fmt.Sprintf("statement %s is GROUPED by statement %s", uuid, r.GroupedBy))
	case st.Status != StatusAvailable:
		return "", businessFault(opAmend.name, ReasonAmendNotAllowedForStatus, fmt.Sprintf("statement %s is %s, not AVAILABLE", uuid, st.Status))
	case now.After(closes):
		return "", businessFault(opAmend.name, ReasonAmendNotPossible,
			fmt.Sprintf("statement %s was submitted at %s: the amendment period closed at %s", uuid,
				r.SubmittedAt.Format(time.RFC3339), closes.Format(time.RFC3339)))
	}
	r.Statement, r.AmendedAt, r.UpdatedUntil = answerShape(s), &now, nil
	for _, c := range s.Commodities {
		if strings.Contains(c.DescriptionOfGoods, SimMarkerUpdated) {
			until := now.Add(sim.opts.Delay)
			r.UpdatedUntil = &until
		}
	}
	if err := sim.put(r); err != nil {
		return "", err
	}
	if r.UpdatedUntil != nil {
		return StatusUpdated, nil
	}
	return StatusAvailable, nil
}
