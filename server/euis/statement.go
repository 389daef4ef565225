package euis

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Client files due diligence statements with the EU information system and
// follows them. SOAPClient talks to TRACES NT; Simulator stands in for it in
// the sandbox. Both are safe for concurrent use.
type Client interface {
	// Submit files s (submitDds) and returns the UUID the information system
	// assigned. The reference and verification numbers come later, through
	// Get, once the statement is AVAILABLE. A rejection on submission is a
	// *Fault of kind FaultBusinessRules.
	Submit(ctx context.Context, cr Credentials, s Statement) (uuid string, err error)
	// Get returns the status of each statement (getDds), at most
	// MaxUUIDsPerGet per call. A UUID the information system does not know
	// (yet) is left out of the answer: right after submission it may not
	// be visible.
	Get(ctx context.Context, cr Credentials, uuids []string) ([]Status, error)
	// Withdraw withdraws a statement (withdrawDds): allowed within
	// AmendWindow of its submission and not while it is GROUPED. A refusal
	// is a *Fault.
	Withdraw(ctx context.Context, cr Credentials, uuid string) error
	// Amend replaces the statement uuid names with s (amendDds), which
	// keeps its UUID and reference number, and returns the status the
	// information system answers. Allowed while the statement is AVAILABLE,
	// within AmendWindow of its submission (AmendExtension longer on a
	// justified request). A refusal is a *Fault; a statement that breaks a
	// rule is a Violations error or a FaultBusinessRules fault.
	Amend(ctx context.Context, cr Credentials, uuid string, s Statement) (status string, err error)
	// VerifyDeclaration checks a reference and verification number pair
	// (verifyDeclaration) and returns VerifyExistingUsable,
	// VerifyExistingNonUsable or VerifyNonExistent. Not found is an answer,
	// not an error.
	VerifyDeclaration(ctx context.Context, cr Credentials, ref Reference) (string, error)
	// Echo calls the echo service with query and returns its status ("OK"):
	// a check of connectivity and credentials.
	Echo(ctx context.Context, cr Credentials, query string) (string, error)
	// GetByIdentifiers returns the statement another operator filed that
	// a reference and verification number pair names (getDdsByIdentifiers),
	// as the information system holds it, or nil when no statement has that
	// pair (an answer, not an error). Numbers that cannot be valid are a
	// Violations error; nothing is sent. The answer has no operator role
	// and, for a statement its operator filed for itself, no operator: the
	// information system sends neither.
	GetByIdentifiers(ctx context.Context, cr Credentials, ref Reference) (*Statement, error)
}

// Endpoints and web-service client IDs of the two environments of the
// information system (Operator API Reference V3, sections 1.2.1 and 1.2.3).
// The client ID to use is the one shown in the user's "Web Services Access"
// profile section.
const (
	ProductionEndpoint = "https://eudr.webcloud.ec.europa.eu/tracesnt"
	AcceptanceEndpoint = "https://acceptance.eudr.webcloud.ec.europa.eu/tracesnt"
	ProductionClientID = "eudr-repository"
	AcceptanceClientID = "eudr-test"
)

// ErrNotConfigured is returned, wrapped, when the credentials lack a field
// or the endpoint is not an http(s) URL. No request is sent.
var ErrNotConfigured = errors.New("eu information system credentials not configured")

// Credentials are a web-service user's access to the information system.
type Credentials struct {
	// Username is the EU Login username of the web-service user.
	Username string
	// AuthKey is the "Authentication Key" of the user's Web Services Access
	// profile section. It never leaves the process: requests carry only a
	// digest of it. String and GoString leave it out.
	AuthKey string
	// ClientID is sent as the WebServiceClientId header: AcceptanceClientID
	// or ProductionClientID, or what the profile shows.
	ClientID string
	// Endpoint is the base URL of the information system up to and including
	// "/tracesnt" (ProductionEndpoint, AcceptanceEndpoint, or a relay of an
	// air-gapped site); the client appends "/ws/<service>".
	Endpoint string
	// OperatorAccessIdentifier, when set, is sent in the BodyIdentity
	// header of the statement service's calls: the operator a web-service
	// client that files for several operators acts for, as the EC
	// administrator assigned it (at most MaxOperatorAccessIdentifierLen
	// characters).
	OperatorAccessIdentifier string
}

// MaxOperatorAccessIdentifierLen is the longest OperatorAccessIdentifierType.
const MaxOperatorAccessIdentifierLen = 16

// Validate reports whether every field is set and the endpoint is an
// absolute http or https URL; the error wraps ErrNotConfigured.
func (cr Credentials) Validate() error {
	var missing []string
	for _, f := range []struct{ name, v string }{
		{"username", cr.Username}, {"authKey", cr.AuthKey}, {"clientId", cr.ClientID}, {"endpoint", cr.Endpoint},
	} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: missing %v", ErrNotConfigured, missing)
	}
	u, err := url.Parse(cr.Endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%w: endpoint %q is not an http(s) URL", ErrNotConfigured, cr.Endpoint)
	}
	return nil
}

// String describes the credentials without the authentication key.
func (cr Credentials) String() string {
	return fmt.Sprintf("{Username:%s ClientID:%s Endpoint:%s AuthKey:[redacted]}", cr.Username, cr.ClientID, cr.Endpoint)
}

// GoString is String, so that %#v does not print the key either.
func (cr Credentials) GoString() string { return "euis.Credentials" + cr.String() }

// Operator roles (OperatorRoleType).
const (
	RoleOperator               = "OPERATOR"
	RoleRepresentativeOperator = "REPRESENTATIVE_OPERATOR"
)

// Activity types (ActivityType).
const (
	ActivityDomestic = "DOMESTIC"
	ActivityImport   = "IMPORT"
	ActivityExport   = "EXPORT"
)

// Statuses of a statement (EudrStatusType of release 8.2.1). SUSPENDED and
// UPDATED are declared "not active in current release". Later releases
// may send others: Status.Status keeps whatever was sent. DRAFT is no
// status of the EU system's: a statement not yet filed is the appliance's
// own (storage.DDSDraft).
const (
	StatusSubmitted = "SUBMITTED"
	StatusAvailable = "AVAILABLE"
	StatusRejected  = "REJECTED"
	StatusWithdrawn = "WITHDRAWN"
	StatusArchived  = "ARCHIVED"
	StatusGrouped   = "GROUPED"
	StatusObsolete  = "OBSOLETE"
	// StatusSuspended: the competent authority suspended the statement;
	// it may come back AVAILABLE.
	StatusSuspended = "SUSPENDED"
	// StatusUpdated: the statement was amended and is being profiled
	// again; AVAILABLE or REJECTED follows.
	StatusUpdated = "UPDATED"
)

// Results of VerifyDeclaration (VerifyResultType).
const (
	VerifyExistingUsable    = "EXISTING_USABLE"
	VerifyExistingNonUsable = "EXISTING_NON_USABLE"
	VerifyNonExistent       = "NON_EXISTENT"
)

// Statement is a due diligence statement: the information of Annex II to
// Regulation (EU) 2023/1115 in the shape of the V3 DueDiligenceStatementBaseType.
// Positions are not fields: a commodity's position is its index in
// Commodities plus one, a producer's its index in Producers plus one.
type Statement struct {
	// OperatorRole is RoleOperator or RoleRepresentativeOperator.
	OperatorRole string
	// InternalReference is the operator's own reference (internalReferenceNumber),
	// at most MaxInternalReferenceLen characters; the information system
	// generates one when it is empty.
	InternalReference string
	// ActivityType is ActivityDomestic, ActivityImport or ActivityExport.
	ActivityType string
	// Operator is the operator the statement is for. The information system
	// takes the identity of an OPERATOR from the web-service user's profile,
	// so for RoleOperator nothing of it is sent: Validate checks its EORI
	// for IMPORT and EXPORT and its country against the activity. For
	// RoleRepresentativeOperator it is sent as representedOperator.
	Operator Operator
	// CountryOfActivity is the Member State of the activity (ISO 3166-1
	// alpha-2, EU27 or XI).
	CountryOfActivity string
	// BorderCrossCountry is the Member State of entry (IMPORT) or exit
	// (EXPORT).
	BorderCrossCountry string
	// Comment is an optional comment for the competent authority.
	Comment     string
	Commodities []Commodity
	// GeoLocationConfidential keeps the geolocation from downstream
	// operators and traders.
	GeoLocationConfidential bool
	// ReferencedStatements are earlier statements this one groups
	// (groupedDeclarations). Only the reference numbers are sent: the V3
	// GroupedDeclarationsType has no verification number. The verification
	// numbers serve VerifyDeclaration before filing.
	ReferencedStatements []Reference

	// OperatorUUID and SupplierOperatorUUIDs serve only the Simulator's
	// cross-check (docs/dds.md): the operator UUID the statement was
	// generated for and the EU operator UUIDs of its batches' supplier
	// mappings. SOAPClient does not send them; the information system has
	// no such fields.
	OperatorUUID          string
	SupplierOperatorUUIDs []string
}

// Operator identifies the operator of a statement.
type Operator struct {
	Name    string // at most 200 characters
	Country string // ISO 3166-1 alpha-2 country of establishment
	EORI    string // Economic Operators Registration and Identification number
	// Identifiers are the operator's other reference numbers (VAT, GLN,
	// ...); with the EORI at most MaxOperatorIdentifiers. One of type eori
	// with the EORI's value is the EORI, not sent twice.
	Identifiers []OperatorIdentifier
	// Street, PostalCode and City make the address sent for a represented
	// operator; all three or none. FullAddress is the address as one text,
	// sent with them (the schema has it only beside them).
	Street      string
	PostalCode  string
	City        string
	FullAddress string
	Email       string
	Phone       string
}

// OperatorIdentifier is one of an operator's reference numbers
// (EconomicOperatorReferenceNumberType): its type, one of IdentifierTypes,
// and its value, 1 to 80 characters.
type OperatorIdentifier struct {
	Type  string
	Value string
}

// IdentifierTypes are the types of an operator's reference numbers
// (IdentifierTypeType): EORI, VAT identification number, global location
// number, tax identification number, central business register, company
// identification number, D-U-N-S number, national company number,
// registration number in a national company register, other national
// identifier.
var IdentifierTypes = []string{"eori", "vat", "gln", "tin", "cbr", "cin", "duns", "comp_num", "comp_reg", "oni"}

// Limits of an operator's identification (EconomicOperatorIdentificationType).
const (
	// MaxOperatorIdentifiers is how many reference numbers an operator may
	// be sent with, its EORI counted.
	MaxOperatorIdentifiers = 12
	// MaxIdentifierValueLen and MaxFullAddressLen are in characters.
	MaxIdentifierValueLen = 80
	MaxFullAddressLen     = 250
)

// ReferenceNumbers are the reference numbers o is sent with: the EORI
// first, then Identifiers, the EORI not repeated.
func (o Operator) ReferenceNumbers() []OperatorIdentifier {
	var out []OperatorIdentifier
	if o.EORI != "" {
		out = append(out, OperatorIdentifier{Type: "eori", Value: o.EORI})
	}
	for _, id := range o.Identifiers {
		if id.Type == "eori" && id.Value == o.EORI {
			continue
		}
		out = append(out, id)
	}
	return out
}

// Commodity is a relevant commodity or product of a statement
// (DdsCommodityType).
type Commodity struct {
	// HSHeading is the Harmonised System code, 2 to 6 digits.
	HSHeading string
	// DescriptionOfGoods is the commercial description, at most 150
	// characters.
	DescriptionOfGoods string
	// NetWeightKg is the net mass in kilograms, as given; "" or 0 leaves
	// it out. Required for IMPORT and EXPORT.
	NetWeightKg Decimal
	// PercentageEstimation is the percentage estimate or deviation of the
	// net mass (0 to 25), DOMESTIC only.
	PercentageEstimation *float64
	// SupplementaryUnit is the quantity in SupplementaryUnitType units
	// (KSD, MTK, MTQ, MTR, NAR, NPR). For IMPORT and EXPORT it is required
	// exactly when the HS heading has a supplementary unit (SupplementaryUnitFor).
	SupplementaryUnit     *Decimal
	SupplementaryUnitType string
	// SpeciesInfo names the species (required for wood products).
	SpeciesInfo []Species
	// Producers are the producers with the geolocation of their plots. A
	// commodity may have none only when the statement references others.
	Producers []Producer
}

// Species is a species of a wood product.
type Species struct {
	ScientificName string
	CommonName     string
}

// Producer is a producer of a commodity and the geolocation of its plot.
type Producer struct {
	// Country is the ISO 3166-1 alpha-2 country of production.
	Country string
	// Name is the producer's name, at most 500 characters, optional.
	Name string
	// GeometryGeoJSON is the GeoJSON of the plot (a geometry, Feature or
	// FeatureCollection; WGS 84), as raw JSON: the client base64-encodes it.
	GeometryGeoJSON []byte
}

// Reference is the pair of numbers that identifies a filed statement.
type Reference struct {
	ReferenceNumber    string
	VerificationNumber string
}

// Status is what the information system says of a filed statement
// (OverviewType).
type Status struct {
	UUID              string
	InternalReference string
	// Status is one of the Status* constants, or any other value the
	// information system sent, as sent.
	Status             string
	ReferenceNumber    string // once AVAILABLE
	VerificationNumber string // once AVAILABLE
	// Reasons are the reasons of a rejection (rejectionReason).
	Reasons []string
	// Communication is the competent authority's last message to the
	// operator (communicationToOperator), if any.
	Communication string
	// Date is the time of the last change; zero when not sent.
	Date time.Time
}
