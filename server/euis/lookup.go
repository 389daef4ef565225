package euis

import (
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// OpGetByIdentifiers is the look-up of a statement by its numbers, as
// Observe names it.
const OpGetByIdentifiers = "getDdsByIdentifiers"

var opGetByIdentifiers = operation{OpGetByIdentifiers, ServiceDDS, NSDDS + "/getDdsByIdentifiers", "dds", NSDDS, "GetDdsByIdentifiersResponse"}

var (
	_ Client = (*SOAPClient)(nil)
	_ Client = (*Simulator)(nil)
)

type getDdsByIdentifiersRequest struct {
	XMLName xml.Name         `xml:"dds:GetDdsByIdentifiersRequest"`
	Pair    xmlReferencePair `xml:"dds:referenceAndVerificationNumber"`
}

// xmlReferencePair is ReferenceAndVerificationNumberType (common namespace).
type xmlReferencePair struct {
	ReferenceNumber    string `xml:"eudrCommon:referenceNumber"`
	VerificationNumber string `xml:"eudrCommon:verificationNumber"`
}

// checkPair refuses numbers that cannot name a statement, as a Violations
// error whose paths are those of the pair.
func checkPair(ref Reference) error {
	var vs Violations
	checkReferences(&vs, Statement{ReferencedStatements: []Reference{ref}})
	for i := range vs {
		vs[i].Path = strings.TrimPrefix(vs[i].Path, "referencedStatements[0].")
	}
	return vs.Err()
}

// GetByIdentifiers fetches a statement by its numbers (getDdsByIdentifiers).
// A NotFoundException is a nil statement.
func (c *SOAPClient) GetByIdentifiers(ctx context.Context, cr Credentials, ref Reference) (*Statement, error) {
	if err := checkPair(ref); err != nil {
		return nil, err
	}
	var out struct {
		Statement *xmlStatementAnswer `xml:"statement"`
	}
	req := getDdsByIdentifiersRequest{Pair: xmlReferencePair(ref)}
	if err := c.call(ctx, cr, opGetByIdentifiers, req, &out); err != nil {
		var f *Fault
		if errors.As(err, &f) && f.Kind == FaultNotFound {
			return nil, nil
		}
		return nil, err
	}
	if out.Statement == nil {
		return nil, &ProtocolError{Operation: OpGetByIdentifiers, Err: errors.New("no statement")}
	}
	s, err := out.Statement.statement()
	if err != nil {
		return nil, &ProtocolError{Operation: OpGetByIdentifiers, Err: err}
	}
	return s, nil
}

// xmlStatementAnswer is DueDiligenceStatementBaseType as an answer holds
// it: names without their namespaces, as decodeAnswer reads them.
type xmlStatementAnswer struct {
	InternalReferenceNumber string `xml:"internalReferenceNumber"`
	ActivityType            string `xml:"activityType"`
	RepresentedOperator     *struct {
		ReferenceNumbers []struct {
			Type  string `xml:"identifierType"`
			Value string `xml:"identifierValue"`
		} `xml:"operatorReferenceNumber"`
		Address *struct {
			Country     string `xml:"country"`
			Street      string `xml:"street"`
			PostalCode  string `xml:"postalCode"`
			City        string `xml:"city"`
			FullAddress string `xml:"fullAddress"`
		} `xml:"operatorAddress"`
		Email string `xml:"operatorEmail"`
		Phone string `xml:"operatorPhone"`
		Name  string `xml:"operatorName"`
	} `xml:"representedOperator"`
	CountryOfActivity  string `xml:"countryOfActivity"`
	BorderCrossCountry string `xml:"borderCrossCountry"`
	Comment            string `xml:"comment"`
	Commodities        []struct {
		Descriptors struct {
			DescriptionOfGoods string `xml:"descriptionOfGoods"`
			GoodsMeasure       struct {
				Percentage        string `xml:"percentageEstimationOrDeviation"`
				NetWeight         string `xml:"netWeight"`
				SupplementaryUnit string `xml:"supplementaryUnit"`
				UnitQualifier     string `xml:"supplementaryUnitQualifier"`
			} `xml:"goodsMeasure"`
		} `xml:"descriptors"`
		HSHeading   string `xml:"hsHeading"`
		SpeciesInfo []struct {
			ScientificName string `xml:"scientificName"`
			CommonName     string `xml:"commonName"`
		} `xml:"speciesInfo"`
		Producers []struct {
			Country  string `xml:"country"`
			Name     string `xml:"name"`
			Geometry string `xml:"geometryGeojson"`
		} `xml:"producers"`
	} `xml:"commodities"`
	GeoLocationConfidential string   `xml:"geoLocationConfidential"`
	GroupedDeclarations     []string `xml:"groupedDeclarations>groupedDeclaration"`
}

// statement maps the answer to a Statement; an answer the schema does not
// allow (a quantity or geometry that is none) is an error.
func (x *xmlStatementAnswer) statement() (*Statement, error) {
	t := strings.TrimSpace
	s := &Statement{
		InternalReference: t(x.InternalReferenceNumber), ActivityType: t(x.ActivityType),
		CountryOfActivity: t(x.CountryOfActivity), BorderCrossCountry: t(x.BorderCrossCountry), Comment: t(x.Comment),
	}
	switch strings.ToLower(t(x.GeoLocationConfidential)) {
	case "true", "1":
		s.GeoLocationConfidential = true
	}
	if o := x.RepresentedOperator; o != nil {
		s.Operator = Operator{Name: t(o.Name), Email: t(o.Email), Phone: t(o.Phone)}
		for _, id := range o.ReferenceNumbers {
			s.Operator.Identifiers = append(s.Operator.Identifiers, OperatorIdentifier{Type: t(id.Type), Value: t(id.Value)})
		}
		if a := o.Address; a != nil {
			s.Operator.Country, s.Operator.Street, s.Operator.PostalCode = t(a.Country), t(a.Street), t(a.PostalCode)
			s.Operator.City, s.Operator.FullAddress = t(a.City), t(a.FullAddress)
		}
	}
	for i, xc := range x.Commodities {
		gm := xc.Descriptors.GoodsMeasure
		c := Commodity{HSHeading: t(xc.HSHeading), DescriptionOfGoods: t(xc.Descriptors.DescriptionOfGoods),
			NetWeightKg: Decimal(t(gm.NetWeight)), SupplementaryUnitType: t(gm.UnitQualifier)}
		for _, sp := range xc.SpeciesInfo {
			c.SpeciesInfo = append(c.SpeciesInfo, Species{ScientificName: t(sp.ScientificName), CommonName: t(sp.CommonName)})
		}
		if p := t(gm.Percentage); p != "" {
			v, err := strconv.ParseFloat(p, 64)
			if err != nil {
				return nil, fmt.Errorf("commodities[%d]: percentage %q", i, p)
			}
			c.PercentageEstimation = &v
		}
		if u := t(gm.SupplementaryUnit); u != "" {
			d := Decimal(u)
			c.SupplementaryUnit = &d
		}
		for j, xp := range xc.Producers {
			geometry, err := base64.StdEncoding.DecodeString(t(xp.Geometry))
			if err != nil {
				return nil, fmt.Errorf("commodities[%d].producers[%d]: geometry is not base64: %w", i, j, err)
			}
			c.Producers = append(c.Producers, Producer{Country: t(xp.Country), Name: t(xp.Name), GeometryGeoJSON: geometry})
		}
		s.Commodities = append(s.Commodities, c)
	}
	for _, r := range x.GroupedDeclarations {
		s.ReferencedStatements = append(s.ReferencedStatements, Reference{ReferenceNumber: t(r)})
	}
	return s, nil
}

// GetByIdentifiers returns the statement the simulator filed under the
// pair, once it has its numbers (AVAILABLE, or GROUPED or WITHDRAWN
// after), in the shape the information system answers; nil for any other
// pair. Statements filed before the simulator kept their content are not
// found either.
func (sim *Simulator) GetByIdentifiers(ctx context.Context, _ Credentials, ref Reference) (*Statement, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkPair(ref); err != nil {
		return nil, err
	}
	sim.mu.Lock()
	defer sim.mu.Unlock()
	r, ok, err := sim.byReference(ref.ReferenceNumber)
	if err != nil || !ok || r.Statement == nil {
		return nil, err
	}
	st, err := sim.status(r, sim.opts.Now().UTC())
	if err != nil || st.VerificationNumber == "" || st.VerificationNumber != ref.VerificationNumber {
		return nil, err
	}
	s := *r.Statement
	return &s, nil
}

// answerShape is s as the information system gives it back: no operator
// role, no operator unless represented, none of the simulator's own
// fields.
func answerShape(s Statement) *Statement {
	if s.OperatorRole != RoleRepresentativeOperator {
		s.Operator = Operator{}
	}
	s.OperatorRole, s.OperatorUUID, s.SupplierOperatorUUIDs = "", "", nil
	return &s
}

func (o *observed) GetByIdentifiers(ctx context.Context, cr Credentials, ref Reference) (*Statement, error) {
	start := time.Now()
	s, err := o.c.GetByIdentifiers(ctx, cr, ref)
	o.observe(OpGetByIdentifiers, start, err)
	return s, err
}
