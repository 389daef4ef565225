package sd

import (
	"encoding/json"
	"errors"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
)

// Request is the body of POST /declarations/sd: a simplified declaration
// (the EU's SimplifiedDeclarationBaseType with its operatorRole), in the
// names the EU system's violations are reported under. It is stored as
// given once it passes Validate.
type Request struct {
	OperatorRole string `json:"operatorRole"`
	// InternalReference is the operator's own reference, at most 14
	// characters; one is made from the declaration's ID when absent.
	InternalReference       string          `json:"internalReference,omitempty"`
	ActivityType            string          `json:"activityType"`
	Operator                *Operator       `json:"operator,omitempty"`
	CountryOfActivity       string          `json:"countryOfActivity,omitempty"`
	BorderCrossCountry      string          `json:"borderCrossCountry,omitempty"`
	Comment                 string          `json:"comment,omitempty"`
	GeoLocationConfidential bool            `json:"geoLocationConfidential"`
	Commodities             []CommodityBody `json:"commodities"`
}

// Operator is the represented micro or small primary operator.
type Operator struct {
	Name        string       `json:"name"`
	Country     string       `json:"country,omitempty"`
	EORI        string       `json:"eori,omitempty"`
	Identifiers []Identifier `json:"identifiers,omitempty"`
	Street      string       `json:"street,omitempty"`
	PostalCode  string       `json:"postalCode,omitempty"`
	City        string       `json:"city,omitempty"`
	FullAddress string       `json:"fullAddress,omitempty"`
	Email       string       `json:"email,omitempty"`
	Phone       string       `json:"phone,omitempty"`
}

// Identifier is one of the operator's reference numbers.
type Identifier struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// CommodityBody is a commodity of the declaration.
type CommodityBody struct {
	HSHeading             string         `json:"hsHeading"`
	DescriptionOfGoods    string         `json:"descriptionOfGoods"`
	NetWeightKg           euis.Decimal   `json:"netWeightKg,omitempty"`
	PercentageEstimation  *float64       `json:"percentageEstimation,omitempty"`
	SupplementaryUnit     *euis.Decimal  `json:"supplementaryUnit,omitempty"`
	SupplementaryUnitType string         `json:"supplementaryUnitType,omitempty"`
	Producers             []ProducerBody `json:"producers"`
}

// ProducerBody is a producer and its location: one of a GeoJSON geometry,
// postal addresses, or cadastral identifiers.
type ProducerBody struct {
	Country              string          `json:"country"`
	Name                 string          `json:"name,omitempty"`
	GeometryGeoJSON      json.RawMessage `json:"geometryGeoJSON,omitempty"`
	PostalAddresses      []PostalAddress `json:"postalAddresses,omitempty"`
	CadastralIdentifiers []string        `json:"cadastralIdentifiers,omitempty"`
}

// PostalAddress is a production location's postal address, in the EU
// schema's names.
type PostalAddress struct {
	Street     string `json:"producerStreet,omitempty"`
	PostalCode string `json:"producerPostalCode"`
	City       string `json:"producerCity"`
}

// Validate checks the declaration against the EU system's rules
// (euis.ValidateSD), the internal reference aside when it is to be made:
// a missing field is a 400 REQUIRED, any other broken rule a 422
// EU_SYSTEM_RULE, each at its field's path.
func (r *Request) Validate() error {
	d := r.statement()
	if d.InternalReference == "" {
		d.InternalReference = "-"
	}
	var vs euis.Violations
	if !errors.As(euis.ValidateSD(d), &vs) {
		return nil
	}
	var missing apierr.Problems
	var rules []apierr.Detail
	for _, v := range vs {
		if v.Code == euis.CodeRequired {
			missing.Add(apierr.DetailRequired, v.Path, v.Issue+" ("+v.Limit+")")
			continue
		}
		rules = append(rules, apierr.Detail{Code: apierr.DetailEUSystemRule, Field: v.Path, Issue: v.Code + ": " + v.Issue + " (" + v.Limit + ")"})
	}
	if err := missing.Err(); err != nil {
		return err
	}
	return &apierr.Error{Status: apierr.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
		Message: "the simplified declaration breaks a rule or limit of the EU information system", Details: rules}
}

// Check is Validate after decoding: the decoder's error, or its problems
// together with Validate's.
func (r *Request) Check(decoded apierr.Problems, err error) error {
	if err != nil {
		return err
	}
	return apierr.Merge(decoded, r.Validate())
}

// statement is the declaration as the EU client takes it.
func (r *Request) statement() euis.SDStatement {
	d := euis.SDStatement{OperatorRole: r.OperatorRole, InternalReference: r.InternalReference, ActivityType: r.ActivityType,
		CountryOfActivity: r.CountryOfActivity, BorderCrossCountry: r.BorderCrossCountry, Comment: r.Comment,
		GeoLocationConfidential: r.GeoLocationConfidential, Commodities: make([]euis.SDCommodity, len(r.Commodities))}
	if o := r.Operator; o != nil {
		d.Operator = euis.Operator{Name: o.Name, Country: o.Country, EORI: o.EORI, Street: o.Street, PostalCode: o.PostalCode,
			City: o.City, FullAddress: o.FullAddress, Email: o.Email, Phone: o.Phone}
		for _, id := range o.Identifiers {
			d.Operator.Identifiers = append(d.Operator.Identifiers, euis.OperatorIdentifier(id))
		}
	}
	for i, c := range r.Commodities {
		ec := euis.SDCommodity{HSHeading: c.HSHeading, DescriptionOfGoods: c.DescriptionOfGoods, NetWeightKg: c.NetWeightKg,
			PercentageEstimation: c.PercentageEstimation, SupplementaryUnit: c.SupplementaryUnit, SupplementaryUnitType: c.SupplementaryUnitType,
			Producers: make([]euis.SDProducer, len(c.Producers))}
		for j, p := range c.Producers {
			ep := euis.SDProducer{Country: p.Country, Name: p.Name, GeometryGeoJSON: p.GeometryGeoJSON, CadastralIdentifiers: p.CadastralIdentifiers}
			for _, a := range p.PostalAddresses {
				ep.PostalAddresses = append(ep.PostalAddresses, euis.PostalAddress(a))
			}
			ec.Producers[j] = ep
		}
		d.Commodities[i] = ec
	}
	return d
}

// statementOf reads a stored declaration back as the EU client takes it.
func statementOf(raw json.RawMessage) (euis.SDStatement, error) {
	var r Request
	if err := json.Unmarshal(raw, &r); err != nil {
		return euis.SDStatement{}, err
	}
	return r.statement(), nil
}
