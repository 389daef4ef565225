package euis

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// OpGetSDByIdentifiers is the look-up of a declaration by its numbers, as
// Exchange and Observe name it.
const OpGetSDByIdentifiers = "getSdByIdentifiers"

// The WSDL binds the read under the statement service's namespace, as it
// does getSd.
var opGetSDByIdentifiers = operation{OpGetSDByIdentifiers, ServiceSD, NSDDS + "/getSdByIdentifiers", "sd", NSSD, "GetSdByIdentifiersResponse"}

type getSdByIdentifiersRequest struct {
	XMLName xml.Name         `xml:"sd:GetSdByIdentifiersRequest"`
	Pair    xmlReferencePair `xml:"sd:referenceAndVerificationNumber"`
}

// GetSDByIdentifiers fetches the declaration another operator filed by its
// declaration and verification numbers (getSdByIdentifiers): its content
// as the information system answers it, without operator role. A
// NotFoundException (which a wrong verification number also gives) is a
// nil declaration.
func (c *SOAPClient) GetSDByIdentifiers(ctx context.Context, cr Credentials, ref Reference) (*SDStatement, error) {
	if err := checkPair(ref); err != nil {
		return nil, err
	}
	var out struct {
		Statement *xmlSDAnswer `xml:"statement"`
	}
	if err := c.call(ctx, cr, opGetSDByIdentifiers, getSdByIdentifiersRequest{Pair: xmlReferencePair(ref)}, &out); err != nil {
		var f *Fault
		if errors.As(err, &f) && f.Kind == FaultNotFound {
			return nil, nil
		}
		return nil, err
	}
	if out.Statement == nil {
		return nil, &ProtocolError{Operation: OpGetSDByIdentifiers, Err: errors.New("no statement")}
	}
	d, err := out.Statement.declaration()
	if err != nil {
		return nil, &ProtocolError{Operation: OpGetSDByIdentifiers, Err: err}
	}
	return d, nil
}

// xmlSDAnswer is SimplifiedDeclarationBaseType as an answer holds it: its
// head is a statement's (read by xmlStatementAnswer), its commodities its
// own.
type xmlSDAnswer struct {
	xmlStatementAnswer
	Commodities []struct {
		Descriptors struct {
			DescriptionOfGoods string `xml:"descriptionOfGoods"`
			GoodsMeasure       struct {
				Percentage        string `xml:"percentageEstimationOrDeviation"`
				NetWeight         string `xml:"netWeight"`
				SupplementaryUnit string `xml:"supplementaryUnit"`
				UnitQualifier     string `xml:"supplementaryUnitQualifier"`
			} `xml:"goodsMeasure"`
		} `xml:"descriptors"`
		HSHeading string `xml:"hsHeading"`
		Producers []struct {
			Country  string `xml:"producerCountry"`
			Name     string `xml:"producerName"`
			Location struct {
				Geometry        string `xml:"geometryGeojson"`
				PostalAddresses []struct {
					Street     string `xml:"producerStreet"`
					PostalCode string `xml:"producerPostalCode"`
					City       string `xml:"producerCity"`
				} `xml:"postalAddress"`
				Cadastral []string `xml:"cadastralIdentifier"`
			} `xml:"producerLocation"`
		} `xml:"producers"`
	} `xml:"commodities"`
}

// declaration maps the answer to an SDStatement; an answer the schema does
// not allow (a quantity or geometry that is none) is an error.
func (x *xmlSDAnswer) declaration() (*SDStatement, error) {
	t := strings.TrimSpace
	head, err := x.statement()
	if err != nil {
		return nil, err
	}
	d := &SDStatement{InternalReference: head.InternalReference, ActivityType: head.ActivityType, Operator: head.Operator,
		CountryOfActivity: head.CountryOfActivity, BorderCrossCountry: head.BorderCrossCountry, Comment: head.Comment,
		GeoLocationConfidential: head.GeoLocationConfidential, OperatorRole: SDRoleMicroOperator}
	if x.RepresentedOperator != nil {
		d.OperatorRole = SDRoleRepresentative
	}
	for i, xc := range x.Commodities {
		gm := xc.Descriptors.GoodsMeasure
		c := SDCommodity{HSHeading: t(xc.HSHeading), DescriptionOfGoods: t(xc.Descriptors.DescriptionOfGoods),
			NetWeightKg: Decimal(t(gm.NetWeight)), SupplementaryUnitType: t(gm.UnitQualifier)}
		if p := t(gm.Percentage); p != "" {
			v, err := strconv.ParseFloat(p, 64)
			if err != nil {
				return nil, fmt.Errorf("commodities[%d]: percentage %q", i, p)
			}
			c.PercentageEstimation = &v
		}
		if u := t(gm.SupplementaryUnit); u != "" {
			dec := Decimal(u)
			c.SupplementaryUnit = &dec
		}
		for _, q := range []*Decimal{&c.NetWeightKg, c.SupplementaryUnit} {
			if q != nil && *q != "" && !q.Valid() {
				return nil, fmt.Errorf("commodities[%d]: quantity %q is not a decimal number", i, *q)
			}
		}
		for j, xp := range xc.Producers {
			p := SDProducer{Country: t(xp.Country), Name: t(xp.Name)}
			if g := t(xp.Location.Geometry); g != "" {
				if p.GeometryGeoJSON, err = base64.StdEncoding.DecodeString(g); err != nil {
					return nil, fmt.Errorf("commodities[%d].producers[%d]: geometry is not base64: %w", i, j, err)
				}
			}
			for _, a := range xp.Location.PostalAddresses {
				p.PostalAddresses = append(p.PostalAddresses, PostalAddress{Street: t(a.Street), PostalCode: t(a.PostalCode), City: t(a.City)})
			}
			for _, id := range xp.Location.Cadastral {
				p.CadastralIdentifiers = append(p.CadastralIdentifiers, t(id))
			}
			c.Producers = append(c.Producers, p)
		}
		d.Commodities = append(d.Commodities, c)
	}
	return d, nil
}

// GetSDByIdentifiers returns the declaration the simulator filed under the
// pair once it has its numbers (AVAILABLE, or WITHDRAWN after), as last
// updated; nil for any other pair.
func (sim *Simulator) GetSDByIdentifiers(ctx context.Context, _ Credentials, ref Reference) (*SDStatement, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkPair(ref); err != nil {
		return nil, err
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	id, err := sim.store.Get("sdref/" + ref.ReferenceNumber)
	if err != nil || id == nil {
		return nil, err
	}
	r, ok, err := sim.loadAs("sd/", string(id))
	if err != nil || !ok {
		return nil, err
	}
	st, err := sim.status(r, sim.opts.Now().UTC())
	if err != nil || st.VerificationNumber == "" || st.VerificationNumber != ref.VerificationNumber {
		return nil, err
	}
	b, err := sim.store.Get("sdstmt/" + r.UUID)
	if err != nil || b == nil {
		return nil, err
	}
	var d SDStatement
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("simulator: sdstmt/%s: %w", r.UUID, err)
	}
	if d.OperatorRole != SDRoleRepresentative {
		d.Operator = Operator{}
	}
	return &d, nil
}
