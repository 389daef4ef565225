package euis

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/xml"
	"strconv"
	"strings"
)

// Namespaces of the V3 services and of WS-Security.
const (
	NSSOAP          = "http://schemas.xmlsoap.org/soap/envelope/"
	NSWSSE          = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
	NSWSU           = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
	NSBase          = "http://ec.europa.eu/sanco/tracesnt/base/v4"
	NSDDS           = "http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3"
	NSCommon        = "http://ec.europa.eu/tracesnt/certificate/eudr/common/v3"
	NSVerify        = "http://ec.europa.eu/tracesnt/certificate/eudr/verify-declaration/v3"
	NSEcho          = "http://ec.europa.eu/tracesnt/eudr/echo"
	NSBody          = "http://ec.europa.eu/tracesnt/body/v3"
	typeTokenDigest = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest"
	typeBase64      = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary"
)

// Services: the path under the endpoint, the namespace of the body and its
// prefix in the requests.
const (
	ServiceDDS    = "ws/EUDRDueDiligenceStatementServiceV3"
	ServiceVerify = "ws/EUDRVerifyDeclarationServiceV3"
	// ServiceEcho is the echo service's address in its WSDL and in the
	// clients seen working; the V3 reference also names /ws/eudr/echo
	// (SOAPOptions.EchoPath).
	ServiceEcho = "ws/EudrEchoService"
)

// operation is a SOAP operation: its name, service, SOAPAction and the
// namespace prefix of its body.
type operation struct {
	name     string
	service  string
	action   string
	prefix   string
	ns       string
	response string // local name of the answer's body element
}

// The SOAPActions are those of the WSDL bindings: namespace + "/" +
// operation for the statement service; verifyDeclaration and testEcho
// declare their own.
var (
	opSubmit        = operation{OpSubmit, ServiceDDS, NSDDS + "/submitDds", "dds", NSDDS, "SubmitDdsResponse"}
	opWithdraw      = operation{OpWithdraw, ServiceDDS, NSDDS + "/withdrawDds", "dds", NSDDS, "WithdrawDdsResponse"}
	opGet           = operation{OpGet, ServiceDDS, NSDDS + "/getDds", "dds", NSDDS, "GetDdsResponse"}
	opGetByInternal = operation{OpFindByReference, ServiceDDS, NSDDS + "/getDdsByInternalReference", "dds", NSDDS, "GetDdsByInternalReferenceResponse"}
	opVerify        = operation{OpVerifyDeclaration, ServiceVerify, "http://ec.europa.eu/tracesnt/certificate/eudr/verification/v3/verify-declaration", "verify", NSVerify, "VerifyDeclarationResponse"}
	opEcho          = operation{OpEcho, ServiceEcho, NSEcho, "echo", NSEcho, "EudrEchoResponse"}
)

// The request types below use literal prefixes in their tags (encoding/xml
// writes "dds:position" as it is); the envelope declares them. Field order
// is the order of the XSD sequences: encoding/xml writes fields in order.

type envelope struct {
	XMLName xml.Name   `xml:"soapenv:Envelope"`
	Attrs   []xml.Attr `xml:",any,attr"`
	Header  soapHeader `xml:"soapenv:Header"`
	Body    soapBody   `xml:"soapenv:Body"`
}

type soapHeader struct {
	Security security `xml:"wsse:Security"`
	ClientID string   `xml:"v4:WebServiceClientId"`
	// BodyIdentity is sent to the statement service when the credentials
	// name an operator access identifier (release 8.2.1's optional header).
	BodyIdentity *bodyIdentity `xml:"body:BodyIdentity,omitempty"`
}

// bodyIdentity is BodyIdentityType of http://ec.europa.eu/tracesnt/body/v3,
// its operator choice. That schema leaves elementFormDefault unqualified:
// the choice's element is in no namespace (no prefix, and the envelope
// declares no default namespace).
type bodyIdentity struct {
	NS               string `xml:"xmlns:body,attr"`
	OperatorAccessID string `xml:"OperatorAccessIdentifier"`
}

type soapBody struct {
	Content any
}

type security struct {
	NSWSSE        string        `xml:"xmlns:wsse,attr"`
	NSWSU         string        `xml:"xmlns:wsu,attr"`
	Timestamp     timestamp     `xml:"wsu:Timestamp"`
	UsernameToken usernameToken `xml:"wsse:UsernameToken"`
}

type timestamp struct {
	ID      string `xml:"wsu:Id,attr"`
	Created string `xml:"wsu:Created"`
	Expires string `xml:"wsu:Expires"`
}

type usernameToken struct {
	ID       string    `xml:"wsu:Id,attr"`
	Username string    `xml:"wsse:Username"`
	Password typedText `xml:"wsse:Password"`
	Nonce    encText   `xml:"wsse:Nonce"`
	Created  string    `xml:"wsu:Created"`
}

type typedText struct {
	Type  string `xml:"Type,attr"`
	Value string `xml:",chardata"`
}

type encText struct {
	EncodingType string `xml:"EncodingType,attr"`
	Value        string `xml:",chardata"`
}

// passwordDigest is the WS-Security UsernameToken PasswordDigest:
// Base64(SHA-1(nonce || created || password)).
func passwordDigest(nonce []byte, created, authKey string) string {
	h := sha1.New()
	h.Write(nonce)
	h.Write([]byte(created))
	h.Write([]byte(authKey))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// --- due-diligence-statement/v3 requests ---

type submitDdsRequest struct {
	XMLName      xml.Name     `xml:"dds:SubmitDdsRequest"`
	OperatorRole string       `xml:"dds:operatorRole"`
	Statement    xmlStatement `xml:"dds:statement"`
}

// xmlStatement is DueDiligenceStatementBaseType.
type xmlStatement struct {
	InternalReferenceNumber string          `xml:"dds:internalReferenceNumber,omitempty"`
	ActivityType            string          `xml:"dds:activityType"`
	RepresentedOperator     *xmlOperator    `xml:"dds:representedOperator,omitempty"`
	CountryOfActivity       string          `xml:"dds:countryOfActivity,omitempty"`
	BorderCrossCountry      string          `xml:"dds:borderCrossCountry,omitempty"`
	Comment                 string          `xml:"dds:comment,omitempty"`
	Commodities             []xmlCommodity  `xml:"dds:commodities"`
	GeoLocationConfidential bool            `xml:"dds:geoLocationConfidential"`
	GroupedDeclarations     []xmlGroupedRef `xml:"dds:groupedDeclarations,omitempty"`
}

// xmlOperator is EconomicOperatorIdentificationType (common namespace):
// the name comes last.
type xmlOperator struct {
	ReferenceNumbers []xmlOperatorRef `xml:"eudrCommon:operatorReferenceNumber,omitempty"`
	Address          *xmlAddress      `xml:"eudrCommon:operatorAddress,omitempty"`
	Email            string           `xml:"eudrCommon:operatorEmail,omitempty"`
	Phone            string           `xml:"eudrCommon:operatorPhone,omitempty"`
	Name             string           `xml:"eudrCommon:operatorName"`
}

type xmlOperatorRef struct {
	Type  string `xml:"eudrCommon:identifierType"`
	Value string `xml:"eudrCommon:identifierValue"`
}

type xmlAddress struct {
	Country     string `xml:"eudrCommon:country"`
	Street      string `xml:"eudrCommon:street"`
	PostalCode  string `xml:"eudrCommon:postalCode"`
	City        string `xml:"eudrCommon:city"`
	FullAddress string `xml:"eudrCommon:fullAddress,omitempty"`
}

// xmlCommodity is DdsCommodityType.
type xmlCommodity struct {
	Position    int            `xml:"dds:position"`
	Descriptors xmlDescriptors `xml:"dds:descriptors"`
	HSHeading   string         `xml:"dds:hsHeading"`
	SpeciesInfo []xmlSpecies   `xml:"dds:speciesInfo,omitempty"`
	Producers   []xmlProducer  `xml:"dds:producers,omitempty"`
}

// xmlDescriptors is CommercialDescriptionType (common namespace).
type xmlDescriptors struct {
	DescriptionOfGoods string          `xml:"eudrCommon:descriptionOfGoods"`
	GoodsMeasure       xmlGoodsMeasure `xml:"eudrCommon:goodsMeasure"`
}

// xmlGoodsMeasure is GoodsMeasureType: percentage, net weight,
// supplementary unit, its qualifier.
type xmlGoodsMeasure struct {
	Percentage        string `xml:"eudrCommon:percentageEstimationOrDeviation,omitempty"`
	NetWeight         string `xml:"eudrCommon:netWeight,omitempty"`
	SupplementaryUnit string `xml:"eudrCommon:supplementaryUnit,omitempty"`
	UnitQualifier     string `xml:"eudrCommon:supplementaryUnitQualifier,omitempty"`
}

type xmlSpecies struct {
	ScientificName string `xml:"dds:scientificName,omitempty"`
	CommonName     string `xml:"dds:commonName,omitempty"`
}

// xmlProducer is DdsProducerType.
type xmlProducer struct {
	Position int    `xml:"dds:position"`
	Country  string `xml:"dds:country"`
	Name     string `xml:"dds:name,omitempty"`
	Geometry string `xml:"dds:geometryGeojson"` // base64
}

// xmlGroupedRef is GroupedDeclarationsType: one reference number per
// repetition of the wrapper.
type xmlGroupedRef struct {
	ReferenceNumber string `xml:"eudrCommon:groupedDeclaration"`
}

type withdrawDdsRequest struct {
	XMLName xml.Name `xml:"dds:WithdrawDdsRequest"`
	UUID    string   `xml:"dds:uuid"`
}

type getDdsRequest struct {
	XMLName xml.Name `xml:"dds:GetDdsRequest"`
	UUIDs   []string `xml:"dds:uuidList"`
}

type getDdsByInternalReferenceRequest struct {
	XMLName           xml.Name `xml:"dds:GetDdsByInternalReferenceRequest"`
	InternalReference string   `xml:"dds:internalReference"`
}

type verifyDeclarationRequest struct {
	XMLName            xml.Name `xml:"verify:VerifyDeclarationRequest"`
	ReferenceNumber    string   `xml:"verify:referenceNumber"`
	VerificationNumber string   `xml:"verify:verificationNumber"`
}

type echoRequest struct {
	XMLName xml.Name `xml:"echo:EudrEchoRequest"`
	Query   string   `xml:"echo:query"`
}

// statementXML maps s to its request shape. Positions are indices plus one;
// country codes are sent in capitals; quantities as decimals with at most
// 6 fraction digits (3 for the percentage).
func statementXML(s Statement) xmlStatement {
	x := xmlStatement{
		InternalReferenceNumber: s.InternalReference,
		ActivityType:            s.ActivityType,
		CountryOfActivity:       s.CountryOfActivity,
		BorderCrossCountry:      s.BorderCrossCountry,
		Comment:                 s.Comment,
		GeoLocationConfidential: s.GeoLocationConfidential,
		Commodities:             make([]xmlCommodity, len(s.Commodities)),
	}
	if s.OperatorRole == RoleRepresentativeOperator {
		o := s.Operator
		op := &xmlOperator{Email: o.Email, Phone: o.Phone, Name: o.Name}
		for _, id := range o.ReferenceNumbers() {
			op.ReferenceNumbers = append(op.ReferenceNumbers, xmlOperatorRef(id))
		}
		if o.Street != "" && o.PostalCode != "" && o.City != "" && o.Country != "" {
			op.Address = &xmlAddress{Country: strings.ToUpper(o.Country), Street: o.Street, PostalCode: o.PostalCode, City: o.City,
				FullAddress: o.FullAddress}
		}
		x.RepresentedOperator = op
	}
	for i, c := range s.Commodities {
		xc := xmlCommodity{
			Position:  i + 1,
			HSHeading: c.HSHeading,
			Descriptors: xmlDescriptors{
				DescriptionOfGoods: c.DescriptionOfGoods,
				GoodsMeasure:       xmlGoodsMeasure{UnitQualifier: c.SupplementaryUnitType},
			},
		}
		if c.PercentageEstimation != nil {
			xc.Descriptors.GoodsMeasure.Percentage = decimal(*c.PercentageEstimation, 3)
		}
		if c.NetWeightKg.Sign() > 0 {
			xc.Descriptors.GoodsMeasure.NetWeight = c.NetWeightKg.Text(QuantityFractionDigits)
		}
		if c.SupplementaryUnit != nil {
			xc.Descriptors.GoodsMeasure.SupplementaryUnit = c.SupplementaryUnit.Text(QuantityFractionDigits)
		}
		for _, sp := range c.SpeciesInfo {
			xc.SpeciesInfo = append(xc.SpeciesInfo, xmlSpecies(sp))
		}
		xc.Producers = make([]xmlProducer, len(c.Producers))
		for j, p := range c.Producers {
			xc.Producers[j] = xmlProducer{
				Position: j + 1,
				Country:  strings.ToUpper(p.Country),
				Name:     p.Name,
				Geometry: base64.StdEncoding.EncodeToString(p.GeometryGeoJSON),
			}
		}
		x.Commodities[i] = xc
	}
	for _, r := range s.ReferencedStatements {
		x.GroupedDeclarations = append(x.GroupedDeclarations, xmlGroupedRef{ReferenceNumber: r.ReferenceNumber})
	}
	return x
}

// decimal formats v with at most frac fraction digits and no trailing
// zeros: 200, 12.5, 0.000001.
func decimal(v float64, frac int) string {
	s := strconv.FormatFloat(v, 'f', frac, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
