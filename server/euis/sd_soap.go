package euis

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
)

// NSSD is the namespace of the simplified-declaration service's bodies.
const NSSD = "http://ec.europa.eu/tracesnt/certificate/eudr/simplified-declaration/v3"

// ServiceSD is the simplified-declaration service's path under the endpoint.
const ServiceSD = "ws/EUDRSimplifiedDeclarationServiceV3"

// Operations of the simplified-declaration service, as Exchange and
// Observe name them.
const (
	OpSubmitSD          = "submitSd"
	OpGetSD             = "getSd"
	OpWithdrawSD        = "withdrawSd"
	OpFindSDByReference = "getSdByInternalReference"
)

// The SOAPActions are the WSDL binding's: the service's namespace for
// submitSd, updateSd and withdrawSd, but the statement service's for the
// reads (getSd, getSdByInternalReference, getSdByIdentifiers), as release
// 8.2.1 publishes them.
var (
	opSubmitSD        = operation{OpSubmitSD, ServiceSD, NSSD + "/submitSd", "sd", NSSD, "SubmitSdResponse"}
	opWithdrawSD      = operation{OpWithdrawSD, ServiceSD, NSSD + "/withdrawSd", "sd", NSSD, "WithdrawSdResponse"}
	opGetSD           = operation{OpGetSD, ServiceSD, NSDDS + "/getSd", "sd", NSSD, "GetSdResponse"}
	opGetSDByInternal = operation{OpFindSDByReference, ServiceSD, NSDDS + "/getSdByInternalReference", "sd", NSSD, "GetSdByInternalReferenceResponse"}
)

var _ SDClient = (*SOAPClient)(nil)

// SubmitSD validates d (a Violations error when it breaks a rule: nothing
// is sent) and files it with submitSd.
func (c *SOAPClient) SubmitSD(ctx context.Context, cr Credentials, d SDStatement) (string, error) {
	if err := ValidateSD(d); err != nil {
		return "", err
	}
	var out struct {
		SDIdentifier string `xml:"sdIdentifier"`
	}
	req := submitSdRequest{OperatorRole: d.OperatorRole, Statement: sdStatementXML(d)}
	if err := c.call(ctx, cr, opSubmitSD, req, &out); err != nil {
		return "", err
	}
	id := strings.TrimSpace(out.SDIdentifier)
	if id == "" {
		return "", &ProtocolError{Operation: OpSubmitSD, Err: errors.New("no sdIdentifier")}
	}
	return id, nil
}

// GetSD returns the declarations' statuses (getSd). A NotFoundException is
// an empty answer.
func (c *SOAPClient) GetSD(ctx context.Context, cr Credentials, ids []string) ([]Status, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if err := checkUUIDs(ids); err != nil {
		return nil, err
	}
	req := getSdRequest{}
	for _, id := range ids {
		req.List = append(req.List, xmlUUIDAndVersion{UUID: id})
	}
	return c.sdOverview(ctx, cr, opGetSD, req)
}

// FindSDByInternalReference returns the declarations filed under ref
// (getSdByInternalReference); compare InternalReference of what comes
// back, as for FindByInternalReference.
func (c *SOAPClient) FindSDByInternalReference(ctx context.Context, cr Credentials, ref string) ([]Status, error) {
	if ref == "" || len([]rune(ref)) > MaxSDInternalReferenceLen {
		return nil, fmt.Errorf("find simplified declarations by internal reference %q: 1 to %d characters", ref, MaxSDInternalReferenceLen)
	}
	return c.sdOverview(ctx, cr, opGetSDByInternal, getSdByInternalReferenceRequest{InternalReference: ref})
}

func (c *SOAPClient) sdOverview(ctx context.Context, cr Credentials, op operation, req any) ([]Status, error) {
	var out struct {
		List []xmlOverview `xml:"sdOverviewList"`
	}
	if err := c.call(ctx, cr, op, req, &out); err != nil {
		var f *Fault
		if errors.As(err, &f) && f.Kind == FaultNotFound {
			return nil, nil
		}
		return nil, err
	}
	statuses := make([]Status, len(out.List))
	for i, o := range out.List {
		statuses[i] = o.status()
	}
	return statuses, nil
}

// WithdrawSD withdraws a declaration (withdrawSd) and returns the status
// the answer gives (SdModificationResponseType).
func (c *SOAPClient) WithdrawSD(ctx context.Context, cr Credentials, id string) (string, error) {
	if !IsUUID(id) {
		return "", fmt.Errorf("withdraw simplified declaration %q: not a uuid", id)
	}
	var out struct {
		UUID   string `xml:"uuid"`
		Status string `xml:"status"`
	}
	if err := c.call(ctx, cr, opWithdrawSD, withdrawSdRequest{SDIdentifier: id}, &out); err != nil {
		return "", err
	}
	return strings.TrimSpace(out.Status), nil
}

// --- simplified-declaration/v3 requests, in the order of the XSD sequences ---

type submitSdRequest struct {
	XMLName      xml.Name       `xml:"sd:SubmitSdRequest"`
	OperatorRole string         `xml:"sd:operatorRole"`
	Statement    xmlSDStatement `xml:"sd:statement"`
}

// xmlSDStatement is SimplifiedDeclarationBaseType.
type xmlSDStatement struct {
	InternalReferenceNumber string           `xml:"sd:internalReferenceNumber"`
	ActivityType            string           `xml:"sd:activityType"`
	RepresentedOperator     *xmlOperator     `xml:"sd:representedOperator,omitempty"`
	CountryOfActivity       string           `xml:"sd:countryOfActivity,omitempty"`
	BorderCrossCountry      string           `xml:"sd:borderCrossCountry,omitempty"`
	Comment                 string           `xml:"sd:comment,omitempty"`
	Commodities             []xmlSDCommodity `xml:"sd:commodities"`
	GeoLocationConfidential bool             `xml:"sd:geoLocationConfidential"`
}

// xmlSDCommodity is SdCommodityType.
type xmlSDCommodity struct {
	Position    int             `xml:"sd:position"`
	Descriptors xmlDescriptors  `xml:"sd:descriptors"`
	HSHeading   string          `xml:"sd:hsHeading"`
	Producers   []xmlSDProducer `xml:"sd:producers,omitempty"`
}

// xmlSDProducer is SdProducerType; its location one of the choice.
type xmlSDProducer struct {
	Position int                `xml:"sd:producerPosition"`
	Country  string             `xml:"sd:producerCountry"`
	Name     string             `xml:"sd:producerName,omitempty"`
	Location xmlSDProducerPlace `xml:"sd:producerLocation"`
}

type xmlSDProducerPlace struct {
	Geometry        string             `xml:"sd:geometryGeojson,omitempty"` // base64
	PostalAddresses []xmlPostalAddress `xml:"sd:postalAddress,omitempty"`
	Cadastral       []string           `xml:"sd:cadastralIdentifier,omitempty"`
}

type xmlPostalAddress struct {
	Street     string `xml:"sd:producerStreet,omitempty"`
	PostalCode string `xml:"sd:producerPostalCode"`
	City       string `xml:"sd:producerCity"`
}

type withdrawSdRequest struct {
	XMLName      xml.Name `xml:"sd:WithdrawSdRequest"`
	SDIdentifier string   `xml:"sd:sdIdentifier"`
}

type getSdRequest struct {
	XMLName xml.Name            `xml:"sd:GetSdRequest"`
	List    []xmlUUIDAndVersion `xml:"sd:uuidAndVersionNumberList"`
}

// xmlUUIDAndVersion is UuidAndVersionNumberType (common namespace); no
// version asks for the latest.
type xmlUUIDAndVersion struct {
	UUID string `xml:"eudrCommon:uuid"`
}

type getSdByInternalReferenceRequest struct {
	XMLName           xml.Name `xml:"sd:GetSdByInternalReferenceRequest"`
	InternalReference string   `xml:"sd:internalReference"`
}

// sdStatementXML maps d to its request shape, as statementXML does a
// statement's: the represented operator through the same mapping.
func sdStatementXML(d SDStatement) xmlSDStatement {
	role := RoleOperator
	if d.OperatorRole == SDRoleRepresentative {
		role = RoleRepresentativeOperator
	}
	head := statementXML(Statement{OperatorRole: role, Operator: d.Operator})
	x := xmlSDStatement{
		InternalReferenceNumber: d.InternalReference,
		ActivityType:            d.ActivityType,
		RepresentedOperator:     head.RepresentedOperator,
		CountryOfActivity:       d.CountryOfActivity,
		BorderCrossCountry:      d.BorderCrossCountry,
		Comment:                 d.Comment,
		GeoLocationConfidential: d.GeoLocationConfidential,
		Commodities:             make([]xmlSDCommodity, len(d.Commodities)),
	}
	for i, c := range d.Commodities {
		desc := statementXML(Statement{Commodities: []Commodity{{DescriptionOfGoods: c.DescriptionOfGoods, NetWeightKg: c.NetWeightKg,
			PercentageEstimation: c.PercentageEstimation, SupplementaryUnit: c.SupplementaryUnit, SupplementaryUnitType: c.SupplementaryUnitType}}}).Commodities[0].Descriptors
		xc := xmlSDCommodity{Position: i + 1, Descriptors: desc, HSHeading: c.HSHeading, Producers: make([]xmlSDProducer, len(c.Producers))}
		for j, p := range c.Producers {
			xp := xmlSDProducer{Position: j + 1, Country: strings.ToUpper(p.Country), Name: p.Name}
			switch {
			case len(p.GeometryGeoJSON) > 0:
				xp.Location.Geometry = base64.StdEncoding.EncodeToString(p.GeometryGeoJSON)
			case len(p.PostalAddresses) > 0:
				for _, a := range p.PostalAddresses {
					xp.Location.PostalAddresses = append(xp.Location.PostalAddresses, xmlPostalAddress(a))
				}
			default:
				xp.Location.Cadastral = p.CadastralIdentifiers
			}
			xc.Producers[j] = xp
		}
		x.Commodities[i] = xc
	}
	return x
}
