package server

import (
	"encoding/json"

	"github.com/eudr/eudr/server/euis"
)

// payload is a statement's Annex II content as the API shows and the store
// keeps it: euis.Statement in JSON, positions written out, each producer's
// geolocation as the GeoJSON itself (the EU client base64-encodes it).
type payload struct {
	OperatorRole            string             `json:"operatorRole"`
	InternalReferenceNumber string             `json:"internalReferenceNumber,omitempty"`
	ActivityType            string             `json:"activityType"`
	Operator                payloadOperator    `json:"operator"`
	CountryOfActivity       string             `json:"countryOfActivity"`
	BorderCrossCountry      string             `json:"borderCrossCountry,omitempty"`
	Commodities             []payloadCommodity `json:"commodities"`
	GeoLocationConfidential bool               `json:"geoLocationConfidential"`
	ReferencedStatements    []ddsReferenceBody `json:"referencedStatements,omitempty"`
	// OperatorUUID and SupplierOperatorUUIDs are not sent to the EU
	// system: the sandbox's simulated cross-check reads them.
	OperatorUUID          string   `json:"operatorUuid"`
	SupplierOperatorUUIDs []string `json:"supplierOperatorUuids"`
}

type payloadOperator struct {
	Name    string `json:"name"`
	Country string `json:"country"`
	EORI    string `json:"eori,omitempty"`
}

type payloadCommodity struct {
	Position              int               `json:"position"`
	HSHeading             string            `json:"hsHeading"`
	DescriptionOfGoods    string            `json:"descriptionOfGoods"`
	NetWeightKg           float64           `json:"netWeightKg,omitempty"`
	SupplementaryUnit     *float64          `json:"supplementaryUnit,omitempty"`
	SupplementaryUnitType string            `json:"supplementaryUnitType,omitempty"`
	SpeciesInfo           []speciesBody     `json:"speciesInfo,omitempty"`
	Producers             []payloadProducer `json:"producers"`
}

type payloadProducer struct {
	Position        int             `json:"position"`
	Country         string          `json:"country"`
	Name            string          `json:"name,omitempty"`
	GeometryGeojson json.RawMessage `json:"geometryGeojson"`
}

// toPayload is the payload of statement s.
func toPayload(s euis.Statement) payload {
	p := payload{OperatorRole: s.OperatorRole, InternalReferenceNumber: s.InternalReference, ActivityType: s.ActivityType,
		Operator:          payloadOperator{Name: s.Operator.Name, Country: s.Operator.Country, EORI: s.Operator.EORI},
		CountryOfActivity: s.CountryOfActivity, BorderCrossCountry: s.BorderCrossCountry,
		GeoLocationConfidential: s.GeoLocationConfidential, OperatorUUID: s.OperatorUUID,
		SupplierOperatorUUIDs: s.SupplierOperatorUUIDs, Commodities: []payloadCommodity{}}
	for _, r := range s.ReferencedStatements {
		p.ReferencedStatements = append(p.ReferencedStatements, ddsReferenceBody{ReferenceNumber: r.ReferenceNumber,
			VerificationNumber: r.VerificationNumber})
	}
	for i, c := range s.Commodities {
		pc := payloadCommodity{Position: i + 1, HSHeading: c.HSHeading, DescriptionOfGoods: c.DescriptionOfGoods,
			NetWeightKg: c.NetWeightKg, SupplementaryUnit: c.SupplementaryUnit, SupplementaryUnitType: c.SupplementaryUnitType,
			Producers: []payloadProducer{}}
		for _, sp := range c.SpeciesInfo {
			pc.SpeciesInfo = append(pc.SpeciesInfo, speciesBody{ScientificName: sp.ScientificName, CommonName: sp.CommonName})
		}
		for j, pr := range c.Producers {
			pc.Producers = append(pc.Producers, payloadProducer{Position: j + 1, Country: pr.Country, Name: pr.Name,
				GeometryGeojson: pr.GeometryGeoJSON})
		}
		p.Commodities = append(p.Commodities, pc)
	}
	return p
}

// fromPayload reads a stored payload back into the statement to file.
func fromPayload(raw json.RawMessage) (euis.Statement, error) {
	var p payload
	if err := json.Unmarshal(raw, &p); err != nil {
		return euis.Statement{}, err
	}
	s := euis.Statement{OperatorRole: p.OperatorRole, InternalReference: p.InternalReferenceNumber, ActivityType: p.ActivityType,
		Operator:          euis.Operator{Name: p.Operator.Name, Country: p.Operator.Country, EORI: p.Operator.EORI},
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
	return s, nil
}
