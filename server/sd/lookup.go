package sd

import (
	"context"
	"encoding/json"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euchange"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// A look-up fetches a declaration another operator (a micro or small
// primary operator upstream) filed from the EU system by its declaration
// and verification numbers (getSdByIdentifiers), to check it before its
// products are traded on, and keeps the answer: LookUp makes the call
// outside any transaction, RecordLookup stores it in the caller's, as a
// statement's look-up is.

// LookupRequest is the body of POST /declarations/sd-references/lookup.
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
			"must be a declaration number: S, the year, the country and 9 letters or digits (S26FRNMNBSA96Q)")
	}
	switch {
	case req.VerificationNumber == "":
		probs.Add(apierr.DetailRequired, "verificationNumber", "is required")
	case !euis.IsVerificationNumber(req.VerificationNumber):
		probs.Add(apierr.DetailInvalidValue, "verificationNumber", "must be 5-35 letters or digits")
	}
	return probs.Err()
}

// LookupView is a look-up as the API shows it: the pair asked, when and
// by whom, and the declaration the EU system answered, in the shape of
// POST /declarations/sd's body.
type LookupView struct {
	ReferenceNumber    string `json:"referenceNumber"`
	VerificationNumber string `json:"verificationNumber"`
	// Found is false when the EU system knows no declaration with the pair
	// (a wrong verification number reads the same); Declaration is then
	// null.
	Found       bool            `json:"found"`
	Declaration json.RawMessage `json:"declaration"`
	LookedUpAt  string          `json:"lookedUpAt"`
	Actor       string          `json:"actor"`
}

// Lookup is the EU system's answer to a look-up, for RecordLookup to
// store. Only LookUp makes one.
type Lookup struct {
	req         LookupRequest
	declaration json.RawMessage // nil when not found
}

// LookUp asks the EU system for the declaration req names and writes
// nothing. Not found is an answer (Found false). It fails with a 400 for
// numbers of the wrong form; 422 EU_SYSTEM_NOT_CONFIGURED without usable
// credentials in production, or when the EU system refuses the call; 503
// when it cannot be reached.
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
		creds, err = s.o.Credentials(tx, t)
		return err
	})
	if err != nil {
		return nil, err
	}
	found, err := s.o.Clients[t.Env].GetSDByIdentifiers(ctx, creds, euis.Reference{ReferenceNumber: req.ReferenceNumber, VerificationNumber: req.VerificationNumber})
	switch {
	case euis.IsTransient(err):
		return nil, euchange.Unreachable(err, "nothing was stored")
	case err != nil:
		return nil, euchange.NotTaken("did not answer the look-up", "nothing was stored", err.Error())
	}
	l := &Lookup{req: req}
	if found != nil {
		if l.declaration, err = json.Marshal(requestOf(*found)); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// RecordLookup stores l by actor in the caller's transaction, replacing
// the look-up of the same declaration number before, and returns it.
func (s *Service) RecordLookup(tx *storage.Tx, t storage.Tenant, l *Lookup, actor string) (LookupView, error) {
	rec := &storage.ReferenceLookup{ReferenceNumber: l.req.ReferenceNumber, VerificationNumber: l.req.VerificationNumber,
		Found: l.declaration != nil, Statement: l.declaration, LookedUpAt: tx.Now(), Actor: actor}
	if err := tx.PutSDLookup(t, rec); err != nil {
		return LookupView{}, err
	}
	return lookupView(rec), nil
}

// FindLookup returns the latest stored look-up of the declaration number
// ref; apierr.NotFound when it was never looked up.
func (s *Service) FindLookup(ctx context.Context, t storage.Tenant, ref string) (LookupView, error) {
	var out LookupView
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		rec, err := tx.FindSDLookup(t, ref)
		if err == nil {
			out = lookupView(rec)
		}
		return err
	})
	return out, apierr.Named(err, "simplified declaration look-up", ref)
}

func lookupView(rec *storage.ReferenceLookup) LookupView {
	v := LookupView{ReferenceNumber: rec.ReferenceNumber, VerificationNumber: rec.VerificationNumber, Found: rec.Found,
		Declaration: rec.Statement, LookedUpAt: storage.FormatTime(rec.LookedUpAt), Actor: rec.Actor}
	if len(v.Declaration) == 0 {
		v.Declaration = json.RawMessage("null")
	}
	return v
}

// requestOf is d in the API's shape, the inverse of Request.statement.
func requestOf(d euis.SDStatement) Request {
	r := Request{OperatorRole: d.OperatorRole, InternalReference: d.InternalReference, ActivityType: d.ActivityType,
		CountryOfActivity: d.CountryOfActivity, BorderCrossCountry: d.BorderCrossCountry, Comment: d.Comment,
		GeoLocationConfidential: d.GeoLocationConfidential, Commodities: make([]CommodityBody, len(d.Commodities))}
	if o := d.Operator; o.Name != "" {
		r.Operator = &Operator{Name: o.Name, Country: o.Country, EORI: o.EORI, Street: o.Street, PostalCode: o.PostalCode,
			City: o.City, FullAddress: o.FullAddress, Email: o.Email, Phone: o.Phone}
		for _, id := range o.Identifiers {
			r.Operator.Identifiers = append(r.Operator.Identifiers, Identifier(id))
		}
	}
	for i, c := range d.Commodities {
		cb := CommodityBody{HSHeading: c.HSHeading, DescriptionOfGoods: c.DescriptionOfGoods, NetWeightKg: c.NetWeightKg,
			PercentageEstimation: c.PercentageEstimation, SupplementaryUnit: c.SupplementaryUnit, SupplementaryUnitType: c.SupplementaryUnitType,
			Producers: make([]ProducerBody, len(c.Producers))}
		for j, p := range c.Producers {
			pb := ProducerBody{Country: p.Country, Name: p.Name, CadastralIdentifiers: p.CadastralIdentifiers}
			if json.Valid(p.GeometryGeoJSON) {
				pb.GeometryGeoJSON = json.RawMessage(p.GeometryGeoJSON)
			} else if len(p.GeometryGeoJSON) > 0 { // not JSON: shown as the text it is
				pb.GeometryGeoJSON, _ = json.Marshal(string(p.GeometryGeoJSON))
			}
			for _, a := range p.PostalAddresses {
				pb.PostalAddresses = append(pb.PostalAddresses, PostalAddress(a))
			}
			cb.Producers[j] = pb
		}
		r.Commodities[i] = cb
	}
	return r
}
