package dds

import (
	"encoding/json"
	"fmt"

	"github.com/eudr/eudr/server/euis"
)

// Payload is a statement's Annex II content as the API shows it and the
// store keeps it (storage.DDS.Statement): euis.Statement in JSON,
// positions written out, each producer's geolocation as the GeoJSON
// itself (the EU client base64-encodes it).
type Payload struct {
	OperatorRole            string             `json:"operatorRole"`
	InternalReferenceNumber string             `json:"internalReferenceNumber,omitempty"`
	ActivityType            string             `json:"activityType"`
	Operator                PayloadOperator    `json:"operator"`
	CountryOfActivity       string             `json:"countryOfActivity"`
	BorderCrossCountry      string             `json:"borderCrossCountry,omitempty"`
	Commodities             []PayloadCommodity `json:"commodities"`
	GeoLocationConfidential bool               `json:"geoLocationConfidential"`
	ReferencedStatements    []Reference        `json:"referencedStatements,omitempty"`
	// OperatorUUID and SupplierOperatorUUIDs are not sent to the EU
	// system: the sandbox's simulated cross-check reads them.
	OperatorUUID          string   `json:"operatorUuid"`
	SupplierOperatorUUIDs []string `json:"supplierOperatorUuids"`
}

// PayloadOperator is the operator of a Payload.
type PayloadOperator struct {
	Name        string       `json:"name"`
	Country     string       `json:"country"`
	EORI        string       `json:"eori,omitempty"`
	Identifiers []Identifier `json:"identifiers,omitempty"`
	Street      string       `json:"street,omitempty"`
	PostalCode  string       `json:"postalCode,omitempty"`
	City        string       `json:"city,omitempty"`
	FullAddress string       `json:"fullAddress,omitempty"`
}

// Identifier is one of an operator's reference numbers besides its EORI.
type Identifier struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// payloadOperator is o as a Payload shows it.
func payloadOperator(o euis.Operator) PayloadOperator {
	p := PayloadOperator{Name: o.Name, Country: o.Country, EORI: o.EORI, Street: o.Street, PostalCode: o.PostalCode,
		City: o.City, FullAddress: o.FullAddress}
	for _, id := range o.Identifiers {
		p.Identifiers = append(p.Identifiers, Identifier{Type: id.Type, Value: id.Value})
	}
	return p
}

// operator is the statement's operator p describes.
func (p PayloadOperator) operator() euis.Operator {
	o := euis.Operator{Name: p.Name, Country: p.Country, EORI: p.EORI, Street: p.Street, PostalCode: p.PostalCode,
		City: p.City, FullAddress: p.FullAddress}
	for _, id := range p.Identifiers {
		o.Identifiers = append(o.Identifiers, euis.OperatorIdentifier{Type: id.Type, Value: id.Value})
	}
	return o
}

// PayloadCommodity is a commodity entry of a Payload.
type PayloadCommodity struct {
	Position              int               `json:"position"`
	HSHeading             string            `json:"hsHeading"`
	DescriptionOfGoods    string            `json:"descriptionOfGoods"`
	NetWeightKg           euis.Decimal      `json:"netWeightKg,omitempty"`
	SupplementaryUnit     *euis.Decimal     `json:"supplementaryUnit,omitempty"`
	SupplementaryUnitType string            `json:"supplementaryUnitType,omitempty"`
	SpeciesInfo           []Species         `json:"speciesInfo,omitempty"`
	Producers             []PayloadProducer `json:"producers"`
}

// PayloadProducer is a producer of a commodity entry.
type PayloadProducer struct {
	Position        int             `json:"position"`
	Country         string          `json:"country"`
	Name            string          `json:"name,omitempty"`
	GeometryGeojson json.RawMessage `json:"geometryGeojson"`
}

// PayloadOf is the payload of statement s.
func PayloadOf(s euis.Statement) Payload {
	p := Payload{OperatorRole: s.OperatorRole, InternalReferenceNumber: s.InternalReference, ActivityType: s.ActivityType,
		Operator:          payloadOperator(s.Operator),
		CountryOfActivity: s.CountryOfActivity, BorderCrossCountry: s.BorderCrossCountry,
		GeoLocationConfidential: s.GeoLocationConfidential, OperatorUUID: s.OperatorUUID,
		SupplierOperatorUUIDs: s.SupplierOperatorUUIDs, Commodities: []PayloadCommodity{}}
	for _, r := range s.ReferencedStatements {
		p.ReferencedStatements = append(p.ReferencedStatements, Reference{ReferenceNumber: r.ReferenceNumber,
			VerificationNumber: r.VerificationNumber})
	}
	for i, c := range s.Commodities {
		pc := PayloadCommodity{Position: i + 1, HSHeading: c.HSHeading, DescriptionOfGoods: c.DescriptionOfGoods,
			NetWeightKg: c.NetWeightKg, SupplementaryUnit: c.SupplementaryUnit, SupplementaryUnitType: c.SupplementaryUnitType,
			Producers: []PayloadProducer{}}
		for _, sp := range c.SpeciesInfo {
			pc.SpeciesInfo = append(pc.SpeciesInfo, Species{ScientificName: sp.ScientificName, CommonName: sp.CommonName})
		}
		for j, pr := range c.Producers {
			pc.Producers = append(pc.Producers, PayloadProducer{Position: j + 1, Country: pr.Country, Name: pr.Name,
				GeometryGeojson: pr.GeometryGeoJSON})
		}
		p.Commodities = append(p.Commodities, pc)
	}
	return p
}

// Statement is the statement to file that p describes.
func (p Payload) Statement() euis.Statement {
	s := euis.Statement{OperatorRole: p.OperatorRole, InternalReference: p.InternalReferenceNumber, ActivityType: p.ActivityType,
		Operator:          p.Operator.operator(),
		CountryOfActivity: p.CountryOfActivity, BorderCrossCountry: p.BorderCrossCountry,
		GeoLocationConfidential: p.GeoLocationConfidential, OperatorUUID: p.OperatorUUID,
		SupplierOperatorUUIDs: p.SupplierOperatorUUIDs}
	for _, r := range p.ReferencedStatements {
		s.ReferencedStatements = append(s.ReferencedStatements, euis.Reference{ReferenceNumber: r.ReferenceNumber,
			VerificationNumber: r.VerificationNumber})
	}
	for _, c := range p.Commodities {
		ec := euis.Commodity{HSHeading: c.HSHeading, DescriptionOfGoods: c.DescriptionOfGoods, NetWeightKg: c.NetWeightKg,
			SupplementaryUnit: c.SupplementaryUnit, SupplementaryUnitType: c.SupplementaryUnitType}
		for _, sp := range c.SpeciesInfo {
			ec.SpeciesInfo = append(ec.SpeciesInfo, euis.Species{ScientificName: sp.ScientificName, CommonName: sp.CommonName})
		}
		for _, pr := range c.Producers {
			ec.Producers = append(ec.Producers, euis.Producer{Country: pr.Country, Name: pr.Name, GeometryGeoJSON: pr.GeometryGeojson})
		}
		s.Commodities = append(s.Commodities, ec)
	}
	return s
}

// statementOf reads a stored payload back into the statement to file.
func statementOf(raw json.RawMessage) (euis.Statement, error) {
	var p Payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return euis.Statement{}, fmt.Errorf("stored statement: %w", err)
	}
	return p.Statement(), nil
}
