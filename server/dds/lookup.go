package dds

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euchange"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// A look-up fetches a statement another operator (an upstream supplier)
// filed from the EU system by its reference and verification numbers
// (getDdsByIdentifiers), to check it before referencing it, with whether
// it can still be referenced (verifyDeclaration), and keeps the answer
// (docs/dds.md): LookUp makes the call outside any transaction,
// RecordLookup stores it in the caller's.

// LookupRequest is the body of POST /declarations/references/lookup.
type LookupRequest struct {
	ReferenceNumber    string `json:"referenceNumber"`
	VerificationNumber string `json:"verificationNumber"`
}

// Validate checks the numbers' forms; every problem is one apierr 400.
func (req *LookupRequest) Validate() error {
	var probs apierr.Problems
	switch {
	case req.ReferenceNumber == "":
		probs.Add(apierr.DetailRequired, "referenceNumber", "is required")
	case !euis.IsReferenceNumber(req.ReferenceNumber):
		probs.Add(apierr.DetailInvalidValue, "referenceNumber",
			"must be an EU reference number: 14 characters, year, country and 10 letters or digits (26BE7XTVCZAQ2S)")
	}
	switch {
	case req.VerificationNumber == "":
		probs.Add(apierr.DetailRequired, "verificationNumber", "is required")
	case !euis.IsVerificationNumber(req.VerificationNumber):
		probs.Add(apierr.DetailInvalidValue, "verificationNumber", "must be 5-35 letters or digits")
	}
	return probs.Err()
}

// ReferenceLookup is a look-up as the API shows it: the pair asked, when
// and by whom, and what the EU system answered.
type ReferenceLookup struct {
	ReferenceNumber    string `json:"referenceNumber"`
	VerificationNumber string `json:"verificationNumber"`
	// Found is false when the EU system knows no statement with the pair
	// (a wrong verification number reads the same); Statement is then null.
	Found bool `json:"found"`
	// Usability is what verifyDeclaration says of the statement found:
	// EXISTING_USABLE when it can be referenced, EXISTING_NON_USABLE when
	// it cannot (grouped into another, withdrawn, ...); null when not found.
	Usability  *string              `json:"usability"`
	Statement  *ReferencedStatement `json:"statement"`
	LookedUpAt string               `json:"lookedUpAt"`
	Actor      string               `json:"actor"`
}

// ReferencedStatement summarises the statement found: what a statement
// that references it needs to check, without the geolocations.
type ReferencedStatement struct {
	InternalReference  *string `json:"internalReference"`
	ActivityType       string  `json:"activityType"`
	CountryOfActivity  *string `json:"countryOfActivity"`
	BorderCrossCountry *string `json:"borderCrossCountry"`
	// Operator is the represented operator; null for a statement its
	// operator filed for itself (the EU system does not say who).
	Operator                *ReferencedOperator   `json:"operator"`
	GeoLocationConfidential bool                  `json:"geoLocationConfidential"`
	Commodities             []ReferencedCommodity `json:"commodities"`
	// ReferencedStatements are the reference numbers it groups.
	ReferencedStatements []string `json:"referencedStatements"`
}

// ReferencedOperator is the represented operator of a statement found.
type ReferencedOperator struct {
	Name        string       `json:"name"`
	Country     *string      `json:"country"`
	Identifiers []Identifier `json:"identifiers"`
}

// ReferencedCommodity is a commodity of a statement found; its producers
// are counted, their countries listed once each.
type ReferencedCommodity struct {
	HSHeading             string   `json:"hsHeading"`
	DescriptionOfGoods    string   `json:"descriptionOfGoods"`
	NetWeightKg           *string  `json:"netWeightKg"`
	SupplementaryUnit     *string  `json:"supplementaryUnit"`
	SupplementaryUnitType *string  `json:"supplementaryUnitType"`
	Producers             int      `json:"producers"`
	ProducerCountries     []string `json:"producerCountries"`
}

// Lookup is the EU system's answer to a look-up, for RecordLookup to
// store. Only LookUp makes one.
type Lookup struct {
	req       LookupRequest
	statement *ReferencedStatement
	usability string
}

// LookUp asks the EU system for the statement req names and, when found,
// whether it can be referenced, and writes nothing. Not found is an answer
// (Found false). It fails with a 400 for
// numbers of the wrong form; 422 EU_SYSTEM_NOT_CONFIGURED without usable
// credentials in production, or when the EU system refuses the call
// (credentials, permission); 503 when the EU system cannot be reached.
func (s *Service) LookUp(ctx context.Context, t storage.Tenant, req LookupRequest) (*Lookup, error) {
	// The handler has validated req already, to merge its problems with
	// those of decoding; this second, cheap check keeps LookUp from
	// sending numbers of the wrong form for any other caller.
	if err := req.Validate(); err != nil {
		return nil, err
	}
	var creds euis.Credentials
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		creds, err = s.credentials(tx, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	client := s.client(t)
	ref := euis.Reference{ReferenceNumber: req.ReferenceNumber, VerificationNumber: req.VerificationNumber}
	found, err := client.GetByIdentifiers(ctx, creds, ref)
	if err != nil {
		return nil, lookupFailed(euis.OpGetByIdentifiers, err)
	}
	l := &Lookup{req: req}
	if found == nil {
		return l, nil
	}
	// The statement's content says nothing of its status: whether it can
	// still be referenced is verifyDeclaration's to say.
	usability, err := client.VerifyDeclaration(ctx, creds, ref)
	if err != nil {
		return nil, lookupFailed(euis.OpVerifyDeclaration, err)
	}
	l.statement, l.usability = summarise(found), usability
	return l, nil
}

// lookupFailed is the error of a look-up whose call of op failed: 503 for
// a failure that may go away, 422 for a refusal.
func lookupFailed(op string, err error) error {
	if euis.IsTransient(err) {
		return euchange.Unreachable(err, "nothing was stored")
	}
	return lookupRefused(answerMessage(op, err))
}

func lookupRefused(issue string) error {
	return euchange.NotTaken("did not answer the look-up", "nothing was stored", issue)
}

// RecordLookup stores l by actor in the caller's transaction, replacing
// the look-up of the same reference number before, and returns it.
func (s *Service) RecordLookup(tx *storage.Tx, t storage.Tenant, l *Lookup, actor string) (ReferenceLookup, error) {
	rec := &storage.ReferenceLookup{ReferenceNumber: l.req.ReferenceNumber, VerificationNumber: l.req.VerificationNumber,
		Found: l.statement != nil, Usability: l.usability, LookedUpAt: tx.Now(), Actor: actor}
	if l.statement != nil {
		b, err := json.Marshal(l.statement)
		if err != nil {
			return ReferenceLookup{}, err
		}
		rec.Statement = b
	}
	if err := tx.PutReferenceLookup(t, rec); err != nil {
		return ReferenceLookup{}, err
	}
	return ReferenceLookup{ReferenceNumber: rec.ReferenceNumber, VerificationNumber: rec.VerificationNumber, Found: rec.Found,
		Usability: storage.Optional(l.usability), Statement: l.statement, LookedUpAt: storage.FormatTime(rec.LookedUpAt), Actor: actor}, nil
}

// summarise is the part of st a referencing statement needs.
func summarise(st *euis.Statement) *ReferencedStatement {
	rs := &ReferencedStatement{InternalReference: storage.Optional(st.InternalReference), ActivityType: st.ActivityType,
		CountryOfActivity: storage.Optional(st.CountryOfActivity), BorderCrossCountry: storage.Optional(st.BorderCrossCountry),
		GeoLocationConfidential: st.GeoLocationConfidential, Commodities: []ReferencedCommodity{}, ReferencedStatements: []string{}}
	if o := st.Operator; o.Name != "" {
		rs.Operator = &ReferencedOperator{Name: o.Name, Country: storage.Optional(o.Country), Identifiers: []Identifier{}}
		for _, id := range o.ReferenceNumbers() {
			rs.Operator.Identifiers = append(rs.Operator.Identifiers, Identifier(id))
		}
	}
	for _, c := range st.Commodities {
		rc := ReferencedCommodity{HSHeading: c.HSHeading, DescriptionOfGoods: c.DescriptionOfGoods,
			NetWeightKg: storage.Optional(string(c.NetWeightKg)), SupplementaryUnitType: storage.Optional(c.SupplementaryUnitType),
			Producers: len(c.Producers), ProducerCountries: []string{}}
		if c.SupplementaryUnit != nil {
			rc.SupplementaryUnit = storage.Optional(string(*c.SupplementaryUnit))
		}
		for _, p := range c.Producers {
			if !slices.Contains(rc.ProducerCountries, p.Country) {
				rc.ProducerCountries = append(rc.ProducerCountries, p.Country)
			}
		}
		rs.Commodities = append(rs.Commodities, rc)
	}
	for _, r := range st.ReferencedStatements {
		rs.ReferencedStatements = append(rs.ReferencedStatements, r.ReferenceNumber)
	}
	return rs
}

// FindLookup returns the latest stored look-up of the reference number
// ref: what the EU system answered, when and to whom. apierr.NotFound
// when it was never looked up; the store's error when it fails.
func (s *Service) FindLookup(ctx context.Context, t storage.Tenant, ref string) (ReferenceLookup, error) {
	var out ReferenceLookup
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		rec, err := tx.FindReferenceLookup(t, ref)
		if err != nil {
			return err
		}
		out = ReferenceLookup{ReferenceNumber: rec.ReferenceNumber, VerificationNumber: rec.VerificationNumber, Found: rec.Found,
			Usability: storage.Optional(rec.Usability), LookedUpAt: storage.FormatTime(rec.LookedUpAt), Actor: rec.Actor}
		if len(rec.Statement) > 0 {
			out.Statement = new(ReferencedStatement)
			if err := json.Unmarshal(rec.Statement, out.Statement); err != nil {
				return fmt.Errorf("look-up of %s: %w", ref, err)
			}
		}
		return nil
	})
	return out, apierr.Named(err, "reference look-up", ref)
}
