package dds

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euchange"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// An amendment corrects a VALIDATED statement in the EU system (amendDds),
// which keeps its UUID and reference number, within the amendment period:
// 72 hours after submission, and the 8 days after them on a justified
// request (docs/dds.md; the sandbox's may be shorter, Options.SandboxWindows). Amend prepares the statement and makes the call
// outside any transaction; RecordAmendment records it in the caller's.
// The status stays VALIDATED: the history gains an entry with the changed
// fields, the new statement's hash and the justification, anchored by a
// dds.amended ledger entry, and dds.amended fires.

// AmendRequest is the body of POST /declarations/dds/{ddsId}/amend: the
// fields to change, nothing else. What a statement is made of (its
// batches, their producers and geolocation, the operator, the activity,
// the referenced statements) cannot be amended: revoke it and draft again.
type AmendRequest struct {
	// Commodities change the description or quantities of commodity
	// entries, each named by its position (from 1).
	Commodities        []CommodityChange `json:"commodities"`
	CountryOfActivity  *string           `json:"countryOfActivity"`
	BorderCrossCountry *string           `json:"borderCrossCountry"`
	// Justification is why the statement is amended: required after the
	// first 72 hours, recorded in the history and the ledger either way.
	Justification *string `json:"justification"`
}

// CommodityChange changes one commodity entry; a field left out stays.
type CommodityChange struct {
	Position           int           `json:"position"`
	DescriptionOfGoods *string       `json:"descriptionOfGoods"`
	NetWeightKg        *euis.Decimal `json:"netWeightKg"`
	SupplementaryUnit  *euis.Decimal `json:"supplementaryUnit"`
}

// MaxJustificationLen bounds a justification, in characters.
const MaxJustificationLen = 1000

// Validate checks the request's own fields; every problem is one apierr
// 400. Whether the positions exist and the amended statement keeps the EU
// system's rules is Amend's to say.
func (req *AmendRequest) Validate() error {
	var probs apierr.Problems
	if len(req.Commodities) == 0 && req.CountryOfActivity == nil && req.BorderCrossCountry == nil {
		probs.Add(apierr.DetailRequired, "body", "names nothing to change: commodities, countryOfActivity or borderCrossCountry")
	}
	seen := map[int]bool{}
	for i, c := range req.Commodities {
		at := fmt.Sprintf("commodities[%d]", i)
		switch {
		case c.Position < 1:
			probs.Add(apierr.DetailInvalidValue, at+".position", "must be the position of a commodity entry, from 1")
		case seen[c.Position]:
			probs.Add(apierr.DetailInvalidValue, at+".position", "is listed twice")
		}
		seen[c.Position] = true
		if c.DescriptionOfGoods == nil && c.NetWeightKg == nil && c.SupplementaryUnit == nil {
			probs.Add(apierr.DetailRequired, at, "changes nothing: give descriptionOfGoods, netWeightKg or supplementaryUnit")
		}
	}
	for _, c := range []struct {
		field string
		v     *string
	}{{"countryOfActivity", req.CountryOfActivity}, {"borderCrossCountry", req.BorderCrossCountry}} {
		if c.v != nil && !euis.IsEUCountry(*c.v) {
			probs.Add(apierr.DetailInvalidValue, c.field, "must be an EU member state (ISO 3166-1 alpha-2, or XI)")
		}
	}
	if j := req.Justification; j != nil && (strings.TrimSpace(*j) == "" || utf8.RuneCountInString(*j) > MaxJustificationLen) {
		probs.Add(apierr.DetailInvalidValue, "justification", fmt.Sprintf("must be 1-%d characters, not only spaces", MaxJustificationLen))
	}
	return probs.Err()
}

// Amendment is a statement amended in the EU system, for RecordAmendment
// to record. Only Amend makes one.
type Amendment struct {
	ddsID string
	// base is the SHA-256 of the stored statement the amendment was made
	// from: RecordAmendment refuses it when that changed meanwhile.
	base          [sha256.Size]byte
	payload       []byte
	changes       []string
	justification string
	euStatus      string
}

// Amend applies req to the statement ref names (its ID or EU reference
// number), checks the result as a draft is checked, and amends the
// statement in the EU system; it writes nothing. It fails with a 400 for a
// request Validate refuses, or a position the statement does not have, or
// a request that changes nothing; apierr.NotFound; 409 DDS_NOT_AMENDABLE
// for a statement that is not VALIDATED, past the amendment period (the
// issue says when it closed), in the 8 days' extension without a
// justification, or that the EU system refuses to amend; 422
// EU_SYSTEM_RULE naming each rule the amended statement breaks; 422
// EU_SYSTEM_NOT_CONFIGURED as for a revocation; 503 when the EU system
// cannot be reached.
func (s *Service) Amend(ctx context.Context, t storage.Tenant, ref string, req *AmendRequest) (*Amendment, error) {
	// The handler has validated req already, to merge its problems with
	// those of decoding; this second, cheap check keeps Amend safe for any
	// other caller (apply indexes the commodities by req's positions).
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var d *storage.DDS
	var creds euis.Credentials
	var refused error // past the period: unless the EU system holds the amendment already
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if d, err = tx.FindDDS(t, ref); err != nil {
			return err
		}
		if refused = amendable(d, tx.Now(), req.Justification != nil, s.windows(t)); refused != nil && d.Status != storage.DDSValidated {
			return refused
		}
		creds, err = s.credentials(tx, t)
		return err
	})
	if err != nil {
		return nil, apierr.Named(err, "dds", ref)
	}
	st, err := statementOf(d.Statement)
	if err != nil {
		return nil, fmt.Errorf("dds %s: %w", d.ID, err)
	}
	changes, err := req.apply(&st)
	if err != nil {
		return nil, err
	}
	if verr := euis.Validate(st); verr != nil {
		return nil, statementProblems(verr, false)
	}
	payload, err := storage.MarshalJSON(PayloadOf(st))
	if err != nil {
		return nil, err
	}
	if bytes.Equal(payload, d.Statement) {
		return nil, apierr.Invalid("body", "changes nothing: the statement reads so already")
	}
	// A retry of an amendment the EU system took but that was never
	// recorded here (a crash, a failed commit) may find the period
	// closed, or the EU system refusing: when the EU system's statement
	// reads as this amendment would make it, the amendment is done.
	status := ""
	if refused == nil {
		var aerr error
		if status, aerr = s.client(t).Amend(ctx, creds, d.EUUUID, st); aerr != nil {
			var fault *euis.Fault
			if !errors.As(aerr, &fault) || euis.IsTransient(aerr) {
				return nil, amendFailed(aerr)
			}
			refused = amendFailed(aerr)
		}
	}
	if refused != nil && !s.amendedAlready(ctx, t, creds, d, st) {
		return nil, refused
	}
	a := &Amendment{ddsID: d.ID, base: sha256.Sum256(d.Statement), payload: payload, changes: changes, euStatus: status}
	if req.Justification != nil {
		a.justification = strings.TrimSpace(*req.Justification)
	}
	return a, nil
}

// apply makes req's changes to st and returns the payload paths of the
// fields changed; a position st does not have is a 400.
func (req *AmendRequest) apply(st *euis.Statement) ([]string, error) {
	var changes []string
	var probs apierr.Problems
	for i, c := range req.Commodities {
		if c.Position > len(st.Commodities) {
			probs.Add(apierr.DetailInvalidValue, fmt.Sprintf("commodities[%d].position", i),
				fmt.Sprintf("the statement has %d commodity entries", len(st.Commodities)))
			continue
		}
		ec := &st.Commodities[c.Position-1]
		at := fmt.Sprintf("commodities[%d].", c.Position-1)
		if c.DescriptionOfGoods != nil {
			ec.DescriptionOfGoods = *c.DescriptionOfGoods
			changes = append(changes, at+"descriptionOfGoods")
		}
		if c.NetWeightKg != nil {
			ec.NetWeightKg = *c.NetWeightKg
			changes = append(changes, at+"netWeightKg")
		}
		if c.SupplementaryUnit != nil {
			u := *c.SupplementaryUnit
			ec.SupplementaryUnit = &u
			changes = append(changes, at+"supplementaryUnit")
		}
	}
	if req.CountryOfActivity != nil {
		st.CountryOfActivity = strings.ToUpper(*req.CountryOfActivity)
		changes = append(changes, "countryOfActivity")
	}
	if req.BorderCrossCountry != nil {
		st.BorderCrossCountry = strings.ToUpper(*req.BorderCrossCountry)
		changes = append(changes, "borderCrossCountry")
	}
	return changes, probs.Err()
}

// amendable refuses an amendment the EU system would not take: the
// statement must be VALIDATED (AVAILABLE there), within w.Amend of its
// submission (filedAt; one whose submission time is not known is
// refused), or within w.Extension after that with a justification.
func amendable(d *storage.DDS, now time.Time, justified bool, w euis.Windows) error {
	refuse := func(field, issue string) error { return apierr.Conflict(apierr.DetailDDSNotAmendable, field, issue) }
	if d.Status != storage.DDSValidated {
		return refuse("path.ddsId", fmt.Sprintf("dds %s is %s; only a VALIDATED statement can be amended", d.ID, d.Status))
	}
	submitted := filedAt(d)
	if submitted == nil {
		return refuse("path.ddsId", fmt.Sprintf("when dds %s was filed is not known, so neither is its amendment period: revoke it and file it again", d.ID))
	}
	window, closes := w.Period(*submitted)
	switch {
	case now.After(closes):
		return refuse("path.ddsId", fmt.Sprintf("the amendment period of dds %s closed at %s (filed from %s: %s, and %s more on a justified request)",
			d.ID, storage.FormatTime(closes), storage.FormatTime(*submitted), w.Amend, w.Extension))
	case now.After(window) && !justified:
		return refuse("justification", fmt.Sprintf("the %s after the submission of dds %s ended at %s; until %s it can be amended on a justified request only: send a justification",
			w.Amend, d.ID, storage.FormatTime(window), storage.FormatTime(closes)))
	}
	return nil
}

// amendedAlready reports whether the EU system's statement d, looked up
// by its numbers, reads as st in every field an amendment changes; a
// look-up that fails or finds nothing is a no.
func (s *Service) amendedAlready(ctx context.Context, t storage.Tenant, creds euis.Credentials, d *storage.DDS, st euis.Statement) bool {
	if d.ReferenceNumber == "" || d.VerificationNumber == "" {
		return false
	}
	eu, err := s.client(t).GetByIdentifiers(ctx, creds, euis.Reference{ReferenceNumber: d.ReferenceNumber, VerificationNumber: d.VerificationNumber})
	if err != nil || eu == nil || eu.CountryOfActivity != st.CountryOfActivity || eu.BorderCrossCountry != st.BorderCrossCountry ||
		len(eu.Commodities) != len(st.Commodities) {
		return false
	}
	for i, c := range st.Commodities {
		e := eu.Commodities[i]
		if e.DescriptionOfGoods != c.DescriptionOfGoods || !sameDecimal(&e.NetWeightKg, &c.NetWeightKg) ||
			!sameDecimal(e.SupplementaryUnit, c.SupplementaryUnit) {
			return false
		}
	}
	return true
}

// sameDecimal reports whether a and b are both absent (or empty), or the
// same number.
func sameDecimal(a, b *euis.Decimal) bool {
	if a == nil || *a == "" || b == nil || *b == "" {
		return (a == nil || *a == "") && (b == nil || *b == "")
	}
	return a.Cmp(*b) == 0
}

// filedAt is the earliest time the EU system can have dated the
// statement's submission, which its amendment period counts from: the
// start of the filing attempt it came from (a filing adopted after a
// crash is recorded SUBMITTED hours after it was made), else the time it
// was recorded SUBMITTED; nil when neither is known.
func filedAt(d *storage.DDS) *time.Time {
	if d.Poll != nil && d.Poll.SubmitAttemptAt != nil {
		return d.Poll.SubmitAttemptAt
	}
	return d.SubmittedAt
}

// amendment is how euchange.Failed words a failed amendment: the EU
// system's field names are mapped to the statement's payload paths.
var amendment = euchange.Change{Noun: "amended statement", Verb: "amend", What: "amendment",
	NotChangeable: apierr.DetailDDSNotAmendable, Target: "path.ddsId",
	Field: func(f string) string { return "statement." + payloadPath(f) }}

// amendFailed is the error of an amendment the EU system did not take
// (euchange.Failed).
func amendFailed(err error) error { return euchange.Failed(amendment, err) }

// RecordAmendment records a by actor in the caller's transaction: the
// amended statement, a history entry (the status unchanged) noting the
// fields changed, the new statement's SHA-256 and the justification,
// anchored by a dds.amended ledger entry, and the dds.amended event. When
// the EU system did not answer AVAILABLE (it profiles the statement
// again: UPDATED), or the amendment was found on a retry, the entry's
// status is SUBMITTED and a dds_submission job is queued in the same
// transaction to follow the statement to the EU system's decision. It
// returns the statement. When the stored statement changed since Amend
// read it (another amendment, with another Idempotency-Key, recorded
// meanwhile), it records nothing and fails with 409 DDS_NOT_AMENDABLE:
// the EU system holds the content of whichever call it took last, which
// the caller reads back before amending again. Otherwise it fails only
// when the store or the ledger does.
func (s *Service) RecordAmendment(tx *storage.Tx, t storage.Tenant, a *Amendment, actor string) (Declaration, error) {
	d, err := tx.FindDDS(t, a.ddsID)
	if err != nil {
		return Declaration{}, apierr.Named(err, "dds", a.ddsID)
	}
	if sha256.Sum256(d.Statement) != a.base {
		return Declaration{}, apierr.Conflict(apierr.DetailDDSNotAmendable, "path.ddsId", fmt.Sprintf(
			"dds %s was changed by another request since; read it again (the EU system holds the content it took last) and amend it anew", d.ID))
	}
	d.Statement = a.payload
	sum := sha256.Sum256(d.Statement)
	hash := hex.EncodeToString(sum[:])
	euStatus := a.euStatus
	if euStatus == "" {
		euStatus = "found so on a retry"
	}
	note := fmt.Sprintf("amended in the EU system (%s): %s; statement sha256 %s", euStatus, strings.Join(a.changes, ", "), hash)
	if a.justification != "" {
		note += "; justification: " + a.justification
	}
	status := d.Status
	if d.Status == storage.DDSValidated && a.euStatus != euis.StatusAvailable {
		// The EU system profiles the amended statement again (UPDATED),
		// or its status is not known (an amendment found on a retry): it
		// is SUBMITTED again, and a submission job follows it until the
		// EU system decides, as after a filing.
		job, err := s.o.Jobs.Enqueue(tx, t, work.DDSSubmission, 1, []byte(d.ID))
		if err != nil {
			return Declaration{}, err
		}
		d.Poll = &storage.DDSPollState{JobID: job.ID, SubmitAttemptAt: filedAt(d), EUStatus: a.euStatus}
		status = storage.DDSSubmitted
		note += "; being decided again by the EU system: followed by job " + job.ID
	}
	e := anchor.DDSEntry{Type: anchor.EntryDDSAmended, DDSID: d.ID, Status: status, Actor: actor, StatementSHA256: hash,
		EUUUID: d.EUUUID, ReferenceNumber: d.ReferenceNumber, VerificationNumber: d.VerificationNumber,
		Changes: a.changes, Justification: a.justification}
	if err := s.recordEntry(tx, t, d, e, note); err != nil {
		return Declaration{}, err
	}
	if _, _, err := s.o.Events.Publish(tx, t, event.DDSAmended, event.DDSAmendedData{DDSID: d.ID, ReferenceNumber: d.ReferenceNumber,
		StatementSHA256: hash, Changes: a.changes, Justification: storage.Optional(a.justification)}); err != nil {
		return Declaration{}, err
	}
	return WithSubmission(tx, t, d)
}
