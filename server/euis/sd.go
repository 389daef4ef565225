package euis

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/eudr/eudr/geo"
)

// SDClient files simplified declarations with the EU information system's
// EUDRSimplifiedDeclarationServiceV3 and follows them: the one-time
// declaration of a micro or small primary operator (MSPO), filed by the
// operator itself or by its authorised representative, instead of a due
// diligence statement per shipment. SOAPClient and Simulator implement it
// beside Client; the two share the transport, rate limit and credentials.
type SDClient interface {
	// SubmitSD files d (submitSd) and returns its sdIdentifier, the UUID
	// the information system assigned. Reference and verification numbers
	// come later, through GetSD. A rejection on submission is a *Fault of
	// kind FaultBusinessRules.
	SubmitSD(ctx context.Context, cr Credentials, d SDStatement) (sdIdentifier string, err error)
	// GetSD returns the status of each declaration (getSd), at most
	// MaxUUIDsPerGet per call; one the information system does not know
	// (yet) is left out.
	GetSD(ctx context.Context, cr Credentials, sdIdentifiers []string) ([]Status, error)
	// WithdrawSD withdraws a declaration (withdrawSd) and returns the status
	// the information system answers. A refusal (GROUPED, under checks,
	// customs lock) is a *Fault.
	WithdrawSD(ctx context.Context, cr Credentials, sdIdentifier string) (string, error)
	// FindSDByInternalReference returns the declarations filed under an
	// internal reference (getSdByInternalReference): how a submission
	// whose answer was lost is found again.
	FindSDByInternalReference(ctx context.Context, cr Credentials, ref string) ([]Status, error)
	// UpdateSD replaces the content of an AVAILABLE declaration
	// (updateSd), which keeps its numbers, and returns the status
	// answered. A refusal (not AVAILABLE, customs lock, a rule broken) is
	// a *Fault; an unknown declaration a *Fault of kind FaultNotFound.
	UpdateSD(ctx context.Context, cr Credentials, sdIdentifier string, d SDStatement) (string, error)
	// GetSDByIdentifiers fetches a declaration, another operator's too, by
	// its declaration and verification numbers (getSdByIdentifiers); nil
	// when the information system knows none with the pair.
	GetSDByIdentifiers(ctx context.Context, cr Credentials, ref Reference) (*SDStatement, error)
}

// Roles that file a simplified declaration (SdOperatorRoleType; its
// MEMBER_STATE is for authorities).
const (
	SDRoleMicroOperator  = "MICRO_OPERATOR"
	SDRoleRepresentative = "REPRESENTATIVE_MSPO"
)

// Limits of a simplified declaration (SimplifiedDeclarationBaseType).
const (
	// MaxSDInternalReferenceLen: the declaration's internalReferenceNumber
	// is a ReferenceNumberType, 14 characters, not the 35 of a statement.
	MaxSDInternalReferenceLen = 14
	MaxSDCommodities          = 200 // commodities per declaration
	MaxSDAddresses            = 100 // postal addresses or cadastral identifiers per producer
	maxCadastralIDLen         = 80
)

// Codes of a Violation of a simplified declaration's producer location.
const (
	// CodeLocationRequired: a producer without geometry, postal address or
	// cadastral identifier.
	CodeLocationRequired = "LOCATION_REQUIRED"
	// CodeOneLocationKind: a producer with more than one kind of location
	// (the schema's choice takes one).
	CodeOneLocationKind = "ONE_LOCATION_KIND"
)

// SDStatement is a simplified declaration (SimplifiedDeclarationBaseType):
// the information of Annex III for a micro or small primary operator.
// Positions are the indices plus one, as in Statement.
type SDStatement struct {
	// OperatorRole is SDRoleMicroOperator or SDRoleRepresentative.
	OperatorRole string
	// InternalReference is required, at most MaxSDInternalReferenceLen
	// characters.
	InternalReference string
	ActivityType      string
	// Operator is the represented operator, sent for SDRoleRepresentative
	// only (the schema requires it then); a micro operator filing for
	// itself is known by its web-service profile.
	Operator           Operator
	CountryOfActivity  string
	BorderCrossCountry string
	Comment            string
	Commodities        []SDCommodity
	// GeoLocationConfidential keeps the producers' locations from
	// downstream operators and traders.
	GeoLocationConfidential bool
}

// SDCommodity is a commodity of a simplified declaration (SdCommodityType):
// no species, and producers located by geometry, postal address or
// cadastral identifier.
type SDCommodity struct {
	HSHeading             string
	DescriptionOfGoods    string
	NetWeightKg           Decimal `json:",omitempty"` // Decimal refuses to marshal ""
	PercentageEstimation  *float64
	SupplementaryUnit     *Decimal
	SupplementaryUnitType string
	Producers             []SDProducer
}

// SDProducer is a producer of a simplified declaration (SdProducerType):
// its location is exactly one of a GeoJSON geometry, up to MaxSDAddresses
// postal addresses, or up to MaxSDAddresses cadastral identifiers.
type SDProducer struct {
	Country              string
	Name                 string
	GeometryGeoJSON      []byte
	PostalAddresses      []PostalAddress
	CadastralIdentifiers []string
}

// PostalAddress is a production location's postal address
// (SdProducerPostalAddressType): the street is optional.
type PostalAddress struct {
	Street     string
	PostalCode string
	City       string
}

// ValidateSD checks every rule of a simplified declaration that can be
// checked before filing, as Validate does for a statement; paths are
// lowerCamel field names, a postal address's in the schema's names
// ("commodities[0].producers[1].postalAddresses[0].producerPostalCode").
func ValidateSD(d SDStatement) error { return checkSD(d).Err() }

func checkSD(d SDStatement) Violations {
	var vs Violations
	switch d.OperatorRole {
	case SDRoleMicroOperator, SDRoleRepresentative:
	case "":
		vs.add(CodeRequired, "operatorRole", "MICRO_OPERATOR or REPRESENTATIVE_MSPO", "empty")
	default:
		vs.add(CodeInvalidValue, "operatorRole", "MICRO_OPERATOR or REPRESENTATIVE_MSPO", "%q", d.OperatorRole)
	}
	switch n := utf8.RuneCountInString(d.InternalReference); {
	case strings.TrimSpace(d.InternalReference) == "":
		vs.add(CodeRequired, "internalReference", fmt.Sprintf("1 to %d characters", MaxSDInternalReferenceLen), "empty")
	case n > MaxSDInternalReferenceLen:
		vs.add(CodeTooLong, "internalReference", fmt.Sprintf("at most %d characters", MaxSDInternalReferenceLen), "%d characters", n)
	}
	// The head and the represented operator follow a statement's rules:
	// checked through one, the role mapped so that the operator is checked
	// as sent.
	head := Statement{OperatorRole: RoleOperator, ActivityType: d.ActivityType, CountryOfActivity: d.CountryOfActivity,
		BorderCrossCountry: d.BorderCrossCountry, Comment: d.Comment, Operator: d.Operator}
	if d.OperatorRole == SDRoleRepresentative {
		head.OperatorRole = RoleRepresentativeOperator
	}
	var rest Violations
	checkHead(&rest, head)
	checkOperator(&rest, head)
	for _, v := range rest {
		if v.Path != "operatorRole" && v.Code != CodeEORIRequired && v.Code != CodeActivityNotAllowed {
			vs = append(vs, v)
		}
	}
	if n := len(d.Commodities); n == 0 {
		vs.add(CodeRequired, "commodities", "at least 1 commodity", "no commodities")
	} else if n > MaxSDCommodities {
		vs.add(CodeTooManyCommodities, "commodities", fmt.Sprintf("at most %d commodities per simplified declaration", MaxSDCommodities), "%d commodities", n)
	}
	for i, c := range d.Commodities {
		checkSDCommodity(&vs, d.ActivityType, i, c)
	}
	return vs
}

func checkSDCommodity(vs *Violations, activity string, i int, c SDCommodity) {
	at := fmt.Sprintf("commodities[%d]", i)
	// Heading, description and quantities as a statement's commodity;
	// species and producers are the declaration's own.
	as := Commodity{HSHeading: c.HSHeading, DescriptionOfGoods: c.DescriptionOfGoods, NetWeightKg: c.NetWeightKg,
		PercentageEstimation: c.PercentageEstimation, SupplementaryUnit: c.SupplementaryUnit, SupplementaryUnitType: c.SupplementaryUnitType}
	var rest Violations
	checkCommodity(&rest, Statement{ActivityType: activity, ReferencedStatements: []Reference{{}}}, i, as)
	for _, v := range rest {
		if v.Code != CodeSpeciesRequired {
			*vs = append(*vs, v)
		}
	}
	if n := len(c.Producers); n > MaxProducersPerCommodity {
		vs.add(CodeTooManyProducersPerCommodity, at+".producers", fmt.Sprintf("at most %s producers per commodity", count(MaxProducersPerCommodity)), "%s producers", count(n))
	}
	for j, p := range c.Producers {
		checkSDProducer(vs, fmt.Sprintf("%s.producers[%d]", at, j), p)
	}
}

func checkSDProducer(vs *Violations, at string, p SDProducer) {
	kinds := 0
	for _, given := range []bool{len(strings.TrimSpace(string(p.GeometryGeoJSON))) > 0, len(p.PostalAddresses) > 0, len(p.CadastralIdentifiers) > 0} {
		if given {
			kinds++
		}
	}
	switch {
	case kinds == 0:
		vs.add(CodeLocationRequired, at, "a geometry, postal addresses or cadastral identifiers", "none")
	case kinds > 1:
		vs.add(CodeOneLocationKind, at, "one of a geometry, postal addresses or cadastral identifiers", "%d kinds", kinds)
	}
	if len(p.GeometryGeoJSON) > 0 || kinds == 0 {
		// The geometry's rules are a statement producer's; without any
		// location only its country and name are checked.
		var rest Violations
		checkProducer(&rest, at, Producer{Country: p.Country, Name: p.Name, GeometryGeoJSON: p.GeometryGeoJSON})
		for _, v := range rest {
			if kinds > 0 || v.Path != at+".geometryGeoJSON" {
				*vs = append(*vs, v)
			}
		}
	} else {
		switch {
		case p.Country == "":
			vs.add(CodeRequired, at+".country", "the ISO 3166-1 alpha-2 country of production", "empty")
		case !geo.IsCountryCode(strings.ToUpper(p.Country)):
			vs.add(CodeInvalidValue, at+".country", "an ISO 3166-1 alpha-2 country code", "%q", p.Country)
		}
		if n := utf8.RuneCountInString(p.Name); n > maxProducerNameLen {
			vs.add(CodeTooLong, at+".name", fmt.Sprintf("at most %d characters", maxProducerNameLen), "%d characters", n)
		}
	}
	if n := len(p.PostalAddresses); n > MaxSDAddresses {
		vs.add(CodeInvalidValue, at+".postalAddresses", fmt.Sprintf("at most %d postal addresses", MaxSDAddresses), "%d", n)
	}
	for k, a := range p.PostalAddresses {
		path := fmt.Sprintf("%s.postalAddresses[%d]", at, k)
		for _, f := range []struct {
			name, v  string
			max      int
			required bool
		}{{"producerStreet", a.Street, maxStreetLen, false}, {"producerPostalCode", a.PostalCode, maxPostalCodeLen, true}, {"producerCity", a.City, maxCityLen, true}} {
			switch n := utf8.RuneCountInString(f.v); {
			case f.required && strings.TrimSpace(f.v) == "":
				vs.add(CodeRequired, path+"."+f.name, "a postal address has a postal code and a city", "empty")
			case n > f.max:
				vs.add(CodeTooLong, path+"."+f.name, fmt.Sprintf("at most %d characters", f.max), "%d characters", n)
			}
		}
	}
	if n := len(p.CadastralIdentifiers); n > MaxSDAddresses {
		vs.add(CodeInvalidValue, at+".cadastralIdentifiers", fmt.Sprintf("at most %d cadastral identifiers", MaxSDAddresses), "%d", n)
	}
	for k, c := range p.CadastralIdentifiers {
		path := fmt.Sprintf("%s.cadastralIdentifiers[%d]", at, k)
		switch n := utf8.RuneCountInString(c); {
		case strings.TrimSpace(c) == "":
			vs.add(CodeRequired, path, "a cadastral identifier", "empty")
		case n > maxCadastralIDLen:
			vs.add(CodeTooLong, path, fmt.Sprintf("at most %d characters", maxCadastralIDLen), "%d characters", n)
		}
	}
}
