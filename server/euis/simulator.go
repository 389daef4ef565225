package euis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
)

// ZeroOperatorUUID is the operator UUID the Simulator always rejects.
const ZeroOperatorUUID = "00000000-0000-0000-0000-000000000000"

// DefaultSimDelay is how long the Simulator keeps a statement SUBMITTED.
const DefaultSimDelay = 3 * time.Second

// Reasons of the Simulator's rejections and refusals. The V3 reference
// publishes no codes for refused withdrawals; these are the V1/V2 codes
// where there was one.
const (
	// ReasonOperatorUUIDMismatch: the operator UUID is the zero UUID or none
	// of the batches' suppliers' (docs/dds.md). The statement ends
	// REJECTED.
	ReasonOperatorUUIDMismatch = "OPERATOR_UUID_MISMATCH"
	// ReasonWithdrawNotPossible: the 72 hours have passed, or the statement
	// is GROUPED.
	ReasonWithdrawNotPossible = "EUDR_API_AMEND_OR_WITHDRAW_DDS_NOT_POSSIBLE"
	// ReasonNotAllowedForStatus: the statement is REJECTED or WITHDRAWN.
	ReasonNotAllowedForStatus = "EUDR_API_WITHDRAW_NOT_ALLOWED_FOR_STATUS"
	// ReasonStatementNotFound: no statement has the UUID.
	ReasonStatementNotFound = "EUDR_WEBSERVICE_STATEMENT_NOT_FOUND"
	// ReasonReferencedNotAvailable: a referenced statement the simulator
	// filed is not AVAILABLE (still SUBMITTED, GROUPED, WITHDRAWN, ...).
	ReasonReferencedNotAvailable = "EUDR_REFERENCED_STATEMENT_NOT_FOUND"
)

// SimStore keeps the Simulator's records, so that they survive a restart.
// The server backs it with a bbolt bucket. Keys are "dds/<uuid>",
// "ref/<referenceNumber>" and "iref/<internalReference>"; values are JSON.
type SimStore interface {
	// Get returns the value of key, or nil and no error when there is none.
	Get(key string) ([]byte, error)
	// Put sets the value of key.
	Put(key string, v []byte) error
}

// MemSimStore is a SimStore in memory, for tests.
type MemSimStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

// NewMemSimStore returns an empty MemSimStore.
func NewMemSimStore() *MemSimStore { return &MemSimStore{m: make(map[string][]byte)} }

// Get returns a copy of the value of key, or nil.
func (s *MemSimStore) Get(key string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.m[key]), nil
}

// Put sets a copy of v as the value of key.
func (s *MemSimStore) Put(key string, v []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = slices.Clone(v)
	return nil
}

// SimOptions configure a Simulator.
type SimOptions struct {
	// Delay is how long a statement stays SUBMITTED before it is AVAILABLE
	// or REJECTED; DefaultSimDelay when 0.
	Delay time.Duration
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Rand is the source of UUIDs and numbers; crypto/rand when nil.
	Rand io.Reader
	// Windows are the periods of withdrawal and amendment; EUWindows
	// when Windows.Amend is 0.
	Windows Windows
}

// Simulator is the Client of the sandbox: an information system in the
// process (docs/dds.md). It ignores the credentials and checks a
// statement as Validate does (a violation is a FaultBusinessRules fault,
// as the real system would answer). Then:
//
//   - An OperatorUUID that is empty, ZeroOperatorUUID, or not among
//     SupplierOperatorUUIDs (case does not matter) makes the statement
//     REJECTED with ReasonOperatorUUIDMismatch, Delay after submission.
//   - Any other statement is AVAILABLE Delay after submission, with a
//     reference number in the real form (YY, the country of activity, 10
//     digits or capital letters; the operator's country, or EU, when there
//     is no country of activity) and a verification number of 8.
//   - A referenced statement the simulator filed must be AVAILABLE, and is
//     then GROUPED while the new statement is neither REJECTED nor
//     WITHDRAWN. References it does not know are taken as filed elsewhere.
//   - Withdraw succeeds for a SUBMITTED or AVAILABLE statement within
//     Windows.Amend of its submission; otherwise it is a *Fault.
//   - Amend replaces an AVAILABLE statement within Windows.Amend plus
//     Windows.Extension of its submission (simulator_amend.go).
//   - GetByIdentifiers finds a statement it made AVAILABLE by its
//     reference and verification numbers; any other pair finds nothing.
//
// Statuses are computed from the stored times when asked, so nothing runs
// in the background and a restart changes nothing. Writes are not atomic
// with each other: a crash between them can leave an index entry without
// its record, which reads as not found.
type Simulator struct {
	store SimStore
	opts  SimOptions
	mu    sync.Mutex // serialises read-modify-write of records
}

var _ Client = (*Simulator)(nil)

// NewSimulator returns a Simulator keeping its records in store.
func NewSimulator(store SimStore, opts SimOptions) *Simulator {
	if opts.Delay <= 0 {
		opts.Delay = DefaultSimDelay
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Rand == nil {
		opts.Rand = rand.Reader
	}
	if opts.Windows.Amend <= 0 {
		opts.Windows = EUWindows
	}
	return &Simulator{store: store, opts: opts}
}

// simRecord is a statement in the SimStore.
type simRecord struct {
	UUID               string     `json:"uuid"`
	InternalReference  string     `json:"internalReference,omitempty"`
	SubmittedAt        time.Time  `json:"submittedAt"`
	DecidedAt          time.Time  `json:"decidedAt"` // end of SUBMITTED
	Outcome            string     `json:"outcome"`   // AVAILABLE or REJECTED
	Reasons            []string   `json:"reasons,omitempty"`
	ReferenceNumber    string     `json:"referenceNumber,omitempty"`
	VerificationNumber string     `json:"verificationNumber,omitempty"`
	WithdrawnAt        *time.Time `json:"withdrawnAt,omitempty"`
	GroupedBy          string     `json:"groupedBy,omitempty"` // UUID of the statement that references this one
	// Statement is what GetByIdentifiers answers, kept for a statement
	// that gets numbers; an amendment replaces it.
	Statement *Statement `json:"statement,omitempty"`
	AmendedAt *time.Time `json:"amendedAt,omitempty"` // the last amendment
	// UpdatedUntil ends the UPDATED status of an amendment that asked
	// for it (SimMarkerUpdated); AVAILABLE again after.
	UpdatedUntil *time.Time `json:"updatedUntil,omitempty"`
}

// Submit files s.
func (sim *Simulator) Submit(ctx context.Context, _ Credentials, s Statement) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if vs := check(s); len(vs) > 0 {
		return "", violationFault(opSubmit.name, vs)
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	now := sim.opts.Now().UTC()

	var grouped []simRecord
	for _, ref := range s.ReferencedStatements {
		r, ok, err := sim.byReference(ref.ReferenceNumber)
		if err != nil {
			return "", err
		}
		if !ok {
			continue // filed elsewhere
		}
		st, err := sim.status(r, now)
		if err != nil {
			return "", err
		}
		if st.Status != StatusAvailable {
			return "", businessFault(opSubmit.name, ReasonReferencedNotAvailable,
				fmt.Sprintf("referenced statement %s is %s, not AVAILABLE", ref.ReferenceNumber, st.Status))
		}
		grouped = append(grouped, r)
	}

	uuid, err := sim.uuid()
	if err != nil {
		return "", err
	}
	rec := simRecord{
		UUID:              uuid,
		InternalReference: s.InternalReference,
		SubmittedAt:       now,
		DecidedAt:         now.Add(sim.opts.Delay),
		Outcome:           StatusAvailable,
	}
	if operatorMismatch(s) {
		rec.Outcome, rec.Reasons = StatusRejected, []string{ReasonOperatorUUIDMismatch}
	} else {
		if rec.ReferenceNumber, err = sim.referenceNumber(s, now); err != nil {
			return "", err
		}
		if rec.VerificationNumber, err = sim.random(8); err != nil {
			return "", err
		}
		rec.Statement = answerShape(s)
		if err := sim.store.Put("ref/"+rec.ReferenceNumber, []byte(uuid)); err != nil {
			return "", fmt.Errorf("simulator: put reference: %w", err)
		}
	}
	if s.InternalReference != "" {
		if err := sim.index(s.InternalReference, uuid); err != nil {
			return "", err
		}
	}
	for _, g := range grouped {
		g.GroupedBy = uuid
		if err := sim.put(g); err != nil {
			return "", err
		}
	}
	if err := sim.put(rec); err != nil {
		return "", err
	}
	return uuid, nil
}

// Get returns the statuses of the statements it knows, in the order asked.
func (sim *Simulator) Get(ctx context.Context, _ Credentials, uuids []string) ([]Status, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(uuids) == 0 {
		return nil, nil
	}
	if err := checkUUIDs(uuids); err != nil {
		return nil, err
	}
	return sim.statuses(uuids)
}

// FindByInternalReference returns the statements filed under exactly ref.
func (sim *Simulator) FindByInternalReference(ctx context.Context, _ Credentials, ref string) ([]Status, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	b, err := sim.store.Get("iref/" + ref)
	if err != nil || b == nil {
		return nil, err
	}
	var uuids []string
	if err := json.Unmarshal(b, &uuids); err != nil {
		return nil, fmt.Errorf("simulator: internal reference %q: %w", ref, err)
	}
	return sim.statuses(uuids)
}

func (sim *Simulator) statuses(uuids []string) ([]Status, error) {
	sim.mu.Lock()
	defer sim.mu.Unlock()
	now := sim.opts.Now().UTC()
	var out []Status
	for _, u := range uuids {
		r, ok, err := sim.load(strings.ToLower(u))
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		st, err := sim.status(r, now)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// Withdraw withdraws a SUBMITTED or AVAILABLE statement within
// Windows.Amend of its submission.
func (sim *Simulator) Withdraw(ctx context.Context, _ Credentials, uuid string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	now := sim.opts.Now().UTC()
	r, ok, err := sim.load(strings.ToLower(uuid))
	if err != nil {
		return err
	}
	if !ok {
		f := businessFault(opWithdraw.name, ReasonStatementNotFound, "no statement "+uuid)
		f.Kind, f.Detail = FaultNotFound, "NotFoundException"
		return f
	}
	st, err := sim.status(r, now)
	if err != nil {
		return err
	}
	switch {
	case st.Status == StatusGrouped:
		return businessFault(opWithdraw.name, ReasonWithdrawNotPossible,
			fmt.Sprintf("statement %s is GROUPED by statement %s", uuid, r.GroupedBy))
	case st.Status != StatusSubmitted && st.Status != StatusAvailable:
		return businessFault(opWithdraw.name, ReasonNotAllowedForStatus,
			fmt.Sprintf("statement %s is %s", uuid, st.Status))
	case now.Sub(r.SubmittedAt) > sim.opts.Windows.Amend:
		return businessFault(opWithdraw.name, ReasonWithdrawNotPossible,
			fmt.Sprintf("statement %s was submitted at %s, more than %s ago", uuid, r.SubmittedAt.Format(time.RFC3339), sim.opts.Windows.Amend))
	}
	r.WithdrawnAt = &now
	return sim.put(r)
}

// VerifyDeclaration answers as verifyDeclaration does: EXISTING_USABLE for
// an AVAILABLE statement, EXISTING_NON_USABLE for a GROUPED or WITHDRAWN
// one, NON_EXISTENT when the pair matches no statement that has its
// numbers.
func (sim *Simulator) VerifyDeclaration(ctx context.Context, _ Credentials, ref Reference) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	var vs Violations
	checkReferences(&vs, Statement{ReferencedStatements: []Reference{ref}})
	if err := vs.Err(); err != nil {
		return "", err
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	r, ok, err := sim.byReference(ref.ReferenceNumber)
	if err != nil || !ok {
		return VerifyNonExistent, err
	}
	st, err := sim.status(r, sim.opts.Now().UTC())
	if err != nil {
		return "", err
	}
	switch {
	case st.VerificationNumber == "" || st.VerificationNumber != ref.VerificationNumber:
		return VerifyNonExistent, nil
	case st.Status == StatusAvailable || st.Status == StatusArchived:
		return VerifyExistingUsable, nil
	}
	return VerifyExistingNonUsable, nil
}

// Echo answers "OK".
func (sim *Simulator) Echo(ctx context.Context, _ Credentials, _ string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return "OK", nil
}

// status computes the status of r at now.
func (sim *Simulator) status(r simRecord, now time.Time) (Status, error) {
	st := Status{UUID: r.UUID, InternalReference: r.InternalReference, Status: StatusSubmitted, Date: r.SubmittedAt}
	decided := !now.Before(r.DecidedAt)
	numbers := func() {
		st.ReferenceNumber, st.VerificationNumber = r.ReferenceNumber, r.VerificationNumber
	}
	switch {
	case r.WithdrawnAt != nil:
		st.Status, st.Date = StatusWithdrawn, *r.WithdrawnAt
		if !r.WithdrawnAt.Before(r.DecidedAt) && r.Outcome == StatusAvailable {
			numbers()
		}
	case !decided:
	case r.Outcome == StatusRejected:
		st.Status, st.Date, st.Reasons = StatusRejected, r.DecidedAt, slices.Clone(r.Reasons)
	default:
		st.Status, st.Date = StatusAvailable, r.DecidedAt
		numbers()
		if r.UpdatedUntil != nil && now.Before(*r.UpdatedUntil) {
			st.Status = StatusUpdated
		}
		if r.GroupedBy != "" {
			g, ok, err := sim.load(r.GroupedBy)
			if err != nil {
				return Status{}, err
			}
			if ok && g.WithdrawnAt == nil && (g.Outcome != StatusRejected || now.Before(g.DecidedAt)) {
				st.Status, st.Date = StatusGrouped, g.SubmittedAt
			}
		}
	}
	return st, nil
}

func operatorMismatch(s Statement) bool {
	op := strings.TrimSpace(s.OperatorUUID)
	if op == "" || op == ZeroOperatorUUID {
		return true
	}
	for _, u := range s.SupplierOperatorUUIDs {
		if strings.EqualFold(strings.TrimSpace(u), op) {
			return false
		}
	}
	return true
}

func (sim *Simulator) load(uuid string) (simRecord, bool, error) {
	b, err := sim.store.Get("dds/" + uuid)
	if err != nil {
		return simRecord{}, false, fmt.Errorf("simulator: get statement %s: %w", uuid, err)
	}
	if b == nil {
		return simRecord{}, false, nil
	}
	var r simRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return simRecord{}, false, fmt.Errorf("simulator: statement %s: %w", uuid, err)
	}
	return r, true, nil
}

func (sim *Simulator) put(r simRecord) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := sim.store.Put("dds/"+r.UUID, b); err != nil {
		return fmt.Errorf("simulator: put statement %s: %w", r.UUID, err)
	}
	return nil
}

func (sim *Simulator) byReference(number string) (simRecord, bool, error) {
	b, err := sim.store.Get("ref/" + number)
	if err != nil {
		return simRecord{}, false, fmt.Errorf("simulator: get reference %s: %w", number, err)
	}
	if b == nil {
		return simRecord{}, false, nil
	}
	return sim.load(string(b))
}

func (sim *Simulator) index(ref, uuid string) error {
	key := "iref/" + ref
	b, err := sim.store.Get(key)
	if err != nil {
		return fmt.Errorf("simulator: get internal reference %q: %w", ref, err)
	}
	var uuids []string
	if b != nil {
		if err := json.Unmarshal(b, &uuids); err != nil {
			return fmt.Errorf("simulator: internal reference %q: %w", ref, err)
		}
	}
	b, err = json.Marshal(append(uuids, uuid))
	if err != nil {
		return err
	}
	if err := sim.store.Put(key, b); err != nil {
		return fmt.Errorf("simulator: put internal reference %q: %w", ref, err)
	}
	return nil
}

// referenceNumber returns a new reference number: YY, the country, 10
// digits or capital letters.
func (sim *Simulator) referenceNumber(s Statement, now time.Time) (string, error) {
	country := strings.ToUpper(s.CountryOfActivity)
	if country == "" {
		country = "EU"
		if c := strings.ToUpper(s.Operator.Country); IsEUCountry(c) {
			country = c
		}
	}
	for range 10 {
		tail, err := sim.random(10)
		if err != nil {
			return "", err
		}
		n := fmt.Sprintf("%02d%s%s", now.Year()%100, country, tail)
		b, err := sim.store.Get("ref/" + n)
		if err != nil {
			return "", fmt.Errorf("simulator: get reference %s: %w", n, err)
		}
		if b == nil {
			return n, nil
		}
	}
	return "", errors.New("simulator: no free reference number")
}

const alphanumerics = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

// random returns n random digits and capital letters.
func (sim *Simulator) random(n int) (string, error) {
	out := make([]byte, 0, n)
	buf := make([]byte, 2*n)
	for len(out) < n {
		if _, err := io.ReadFull(sim.opts.Rand, buf); err != nil {
			return "", fmt.Errorf("simulator: random: %w", err)
		}
		for _, b := range buf {
			if b < 252 && len(out) < n { // 252 = 7*36: no bias
				out = append(out, alphanumerics[b%36])
			}
		}
	}
	return string(out), nil
}

// uuid returns a random (version 4) UUID.
func (sim *Simulator) uuid() (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(sim.opts.Rand, b[:]); err != nil {
		return "", fmt.Errorf("simulator: random: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], nil
}

// businessFault is the fault the information system answers on a broken
// business rule.
func businessFault(op, reason, message string) *Fault {
	return &Fault{
		Operation:  op,
		Kind:       FaultBusinessRules,
		Code:       "Client",
		Message:    message,
		Reasons:    []string{reason},
		Errors:     []FaultError{{ID: reason, Message: message}},
		Detail:     "BusinessRulesValidationException",
		HTTPStatus: 500,
	}
}

// violationFault is the fault for a statement that fails Validate: one
// error per violation, its code as ID and its path as field.
func violationFault(op string, vs Violations) *Fault {
	f := businessFault(op, vs[0].Code, vs.Error())
	f.Reasons, f.Errors = nil, nil
	for _, v := range vs {
		if !slices.Contains(f.Reasons, v.Code) {
			f.Reasons = append(f.Reasons, v.Code)
		}
		f.Errors = append(f.Errors, FaultError{ID: v.Code, Message: v.Issue + " (" + v.Limit + ")", Field: v.Path})
	}
	return f
}
