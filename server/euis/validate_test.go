package euis_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/euis"
)

func TestValidate_Valid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*euis.Statement)
	}{
		{"AsIs", func(*euis.Statement) {}},
		{"100Commodities", func(s *euis.Statement) {
			s.Commodities = nil
			for i := range 100 {
				c := cocoa(1)
				c.Producers = producers("GH", i, 1)
				s.Commodities = append(s.Commodities, c)
			}
		}},
		{"1000ProducersPerCommodity", func(s *euis.Statement) { s.Commodities = []euis.Commodity{cocoa(1000)} }},
		{"10000Producers", func(s *euis.Statement) {
			s.Commodities = nil
			for i := range 10 {
				c := cocoa(0)
				c.Producers = producers("CI", i*1000, 1000)
				s.Commodities = append(s.Commodities, c)
			}
		}},
		{"GeolocationAtLimit", func(s *euis.Statement) {
			// 25,000,000 base64 bytes: 2 x 9,375,000 bytes of GeoJSON.
			c := cocoa(0)
			for range 2 {
				c.Producers = append(c.Producers, euis.Producer{Country: "CI", GeometryGeoJSON: padded(9_375_000)})
			}
			s.Commodities = []euis.Commodity{c}
		}},
		{"InternalReference35", func(s *euis.Statement) { s.InternalReference = strings.Repeat("é", 35) }},
		{"NoInternalReference", func(s *euis.Statement) { s.InternalReference = "" }},
		{"DomesticWithoutEORI", func(s *euis.Statement) {
			s.ActivityType = euis.ActivityDomestic
			s.Operator.EORI = ""
			s.Commodities[0].PercentageEstimation = ptr(25)
			s.Commodities[1].SupplementaryUnitType = "MTK"
		}},
		{"DomesticSupplementaryUnitOnly", func(s *euis.Statement) {
			s.ActivityType = euis.ActivityDomestic
			s.Commodities = []euis.Commodity{{HSHeading: "4011", DescriptionOfGoods: "Tyres", SupplementaryUnit: dec("40"), SupplementaryUnitType: "NAR", Producers: producers("MY", 0, 1)}}
		}},
		{"NonEUOperatorImport", func(s *euis.Statement) { s.Operator.Country = "CH"; s.Operator.EORI = "CH123456" }},
		{"NorthernIreland", func(s *euis.Statement) { s.CountryOfActivity, s.BorderCrossCountry = "XI", "XI" }},
		{"CattleNAR", func(s *euis.Statement) {
			s.Commodities = []euis.Commodity{{HSHeading: "010229", DescriptionOfGoods: "Live cattle", NetWeightKg: "52000", SupplementaryUnit: dec("80"), SupplementaryUnitType: "NAR", Producers: producers("BR", 0, 3)}}
		}},
		{"Heading0102NoUnit", func(s *euis.Statement) {
			s.Commodities = []euis.Commodity{{HSHeading: "0102", DescriptionOfGoods: "Live bovine animals", NetWeightKg: "52000", Producers: producers("BR", 0, 3)}}
		}},
		{"ProducersFromReferences", func(s *euis.Statement) { s.Commodities[0].Producers = nil }},
		{"GeometryKinds", func(s *euis.Statement) {
			for i, g := range []string{
				`{"type":"MultiPoint","coordinates":[[1.000000,2.000000]]}`,
				`{"type":"MultiPolygon","coordinates":[]}`,
				`{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1.000000,2.000000]}]}`,
				`{"type":"Feature","properties":{"ProducerName":"A"},"geometry":{"type":"Point","coordinates":[1.000000,2.000000]}}`,
				`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[]}}]}`,
			} {
				s.Commodities[0].Producers = append(s.Commodities[0].Producers, euis.Producer{Country: "CI", Name: fmt.Sprint("G", i), GeometryGeoJSON: []byte(g)})
			}
		}},
		{"Representative", func(s *euis.Statement) {
			s.OperatorRole = euis.RoleRepresentativeOperator
			s.Operator = euis.Operator{Name: "Importer SA", Country: "FR", EORI: "FR12345678901", Street: "1 rue de la Paix", PostalCode: "75002", City: "Paris", Email: "a.b@example.fr"}
		}},
		{"RepresentativeByVAT", func(s *euis.Statement) {
			s.OperatorRole, s.ActivityType = euis.RoleRepresentativeOperator, euis.ActivityDomestic
			s.Operator = euis.Operator{Name: "Négoce SA", Country: "FR", Identifiers: []euis.OperatorIdentifier{{Type: "vat", Value: "FR40303265045"}},
				Street: "1 rue de la Paix", PostalCode: "75002", City: "Paris"}
			s.Commodities[0].PercentageEstimation = ptr(5)
		}},
		{"SDReference", func(s *euis.Statement) {
			s.ReferencedStatements = []euis.Reference{{ReferenceNumber: "S26FRNMNBSA96Q", VerificationNumber: "--------"}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validStatement()
			tc.mutate(&s)
			mustValidate(t, s)
		})
	}
}

func TestValidate_Rules(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name   string
		mutate func(*euis.Statement)
		code   string
		path   string
	}{
		// Size limits.
		{"101Commodities", func(s *euis.Statement) {
			for len(s.Commodities) < 101 {
				s.Commodities = append(s.Commodities, cocoa(1))
			}
		}, euis.CodeTooManyCommodities, "commodities"},
		{"NoCommodities", func(s *euis.Statement) { s.Commodities = nil }, euis.CodeRequired, "commodities"},
		{"1001ProducersPerCommodity", func(s *euis.Statement) { s.Commodities[0] = cocoa(1001) }, euis.CodeTooManyProducersPerCommodity, "commodities[0].producers"},
		{"10001Producers", func(s *euis.Statement) {
			s.Commodities = nil
			for i := range 11 {
				c := cocoa(0)
				c.Producers = producers("CI", i*910, 910)
				s.Commodities = append(s.Commodities, c)
			}
		}, euis.CodeTooManyProducers, "commodities"},
		{"GeolocationOverLimit", func(s *euis.Statement) {
			c := cocoa(0)
			c.Producers = []euis.Producer{{Country: "CI", GeometryGeoJSON: padded(9_375_000)}, {Country: "CI", GeometryGeoJSON: padded(9_375_001)}}
			s.Commodities = []euis.Commodity{c}
		}, euis.CodeGeolocationTooLarge, "commodities"},
		{"GeometryOverLimit", func(s *euis.Statement) {
			s.Commodities[0].Producers[1].GeometryGeoJSON = padded(18_750_003)
		}, euis.CodeGeometryTooLarge, "commodities[0].producers[1].geometryGeoJSON"},
		{"InternalReference36", func(s *euis.Statement) { s.InternalReference = long(36) }, euis.CodeTooLong, "internalReference"},

		// Values and formats.
		{"RoleTrader", func(s *euis.Statement) { s.OperatorRole = "TRADER" }, euis.CodeInvalidValue, "operatorRole"},
		{"NoRole", func(s *euis.Statement) { s.OperatorRole = "" }, euis.CodeRequired, "operatorRole"},
		{"ActivityTrade", func(s *euis.Statement) { s.ActivityType = "TRADE" }, euis.CodeInvalidValue, "activityType"},
		{"NoActivity", func(s *euis.Statement) { s.ActivityType = "" }, euis.CodeRequired, "activityType"},
		{"CountryOfActivityUS", func(s *euis.Statement) { s.CountryOfActivity = "US" }, euis.CodeInvalidValue, "countryOfActivity"},
		{"BorderCrossCountryLower", func(s *euis.Statement) { s.BorderCrossCountry = "nl" }, euis.CodeInvalidValue, "borderCrossCountry"},
		{"Comment2001", func(s *euis.Statement) { s.Comment = long(2001) }, euis.CodeTooLong, "comment"},
		{"HSHeadingOneDigit", func(s *euis.Statement) { s.Commodities[0].HSHeading = "1" }, euis.CodeInvalidFormat, "commodities[0].hsHeading"},
		{"HSHeadingSevenDigits", func(s *euis.Statement) { s.Commodities[0].HSHeading = "1801001" }, euis.CodeInvalidFormat, "commodities[0].hsHeading"},
		{"HSHeadingLetters", func(s *euis.Statement) { s.Commodities[0].HSHeading = "18a1" }, euis.CodeInvalidFormat, "commodities[0].hsHeading"},
		{"HSHeadingDotted", func(s *euis.Statement) { s.Commodities[0].HSHeading = "1801.00" }, euis.CodeInvalidFormat, "commodities[0].hsHeading"},
		{"NoHSHeading", func(s *euis.Statement) { s.Commodities[0].HSHeading = "" }, euis.CodeRequired, "commodities[0].hsHeading"},
		{"Description151", func(s *euis.Statement) { s.Commodities[1].DescriptionOfGoods = long(151) }, euis.CodeTooLong, "commodities[1].descriptionOfGoods"},
		{"NoDescription", func(s *euis.Statement) { s.Commodities[1].DescriptionOfGoods = " " }, euis.CodeRequired, "commodities[1].descriptionOfGoods"},

		// Operator.
		{"ImportWithoutEORI", func(s *euis.Statement) { s.Operator.EORI = "" }, euis.CodeEORIRequired, "operator.eori"},
		{"ExportWithoutEORI", func(s *euis.Statement) { s.ActivityType, s.Operator.EORI = euis.ActivityExport, "" }, euis.CodeEORIRequired, "operator.eori"},
		{"EORILowerCase", func(s *euis.Statement) { s.Operator.EORI = "be0123456789" }, euis.CodeInvalidFormat, "operator.eori"},
		{"EORITooLong", func(s *euis.Statement) { s.Operator.EORI = "BE" + strings.Repeat("1", 16) }, euis.CodeInvalidFormat, "operator.eori"},
		{"NonEUOperatorExport", func(s *euis.Statement) { s.ActivityType, s.Operator.Country = euis.ActivityExport, "US" }, euis.CodeActivityNotAllowed, "activityType"},
		{"OperatorCountryUnknown", func(s *euis.Statement) { s.Operator.Country = "XX" }, euis.CodeInvalidValue, "operator.country"},
		{"RepresentativeWithoutName", func(s *euis.Statement) { s.OperatorRole, s.Operator.Name = euis.RoleRepresentativeOperator, "" }, euis.CodeRequired, "operator.name"},
		{"RepresentativePartialAddress", func(s *euis.Statement) {
			s.OperatorRole, s.Operator.Street, s.Operator.City = euis.RoleRepresentativeOperator, "Rue 1", "Bruxelles"
		}, euis.CodeRequired, "operator.postalCode"},
		{"RepresentativeBadEmail", func(s *euis.Statement) {
			s.OperatorRole, s.Operator.Email = euis.RoleRepresentativeOperator, "not-an-address"
		}, euis.CodeInvalidFormat, "operator.email"},
		{"RepresentativeWithoutAddress", func(s *euis.Statement) { s.OperatorRole = euis.RoleRepresentativeOperator }, euis.CodeRequired, "operator.city"},
		{"RepresentativeWithoutCountry", func(s *euis.Statement) {
			s.OperatorRole, s.Operator.Country, s.Operator.Street = euis.RoleRepresentativeOperator, "", "Rue 1"
		}, euis.CodeRequired, "operator.country"},
		{"RepresentativeWithoutReferenceNumber", func(s *euis.Statement) {
			s.OperatorRole, s.ActivityType, s.Operator.EORI = euis.RoleRepresentativeOperator, euis.ActivityDomestic, ""
			s.Operator.Street, s.Operator.PostalCode, s.Operator.City = "Rue 1", "1000", "Bruxelles"
		}, euis.CodeRequired, "operator.identifiers"},
		{"OperatorName201", func(s *euis.Statement) { s.Operator.Name = long(201) }, euis.CodeTooLong, "operator.name"},
		{"IdentifierTypeUnknown", func(s *euis.Statement) {
			s.Operator.Identifiers = []euis.OperatorIdentifier{{Type: "VAT", Value: "BE0123456789"}}
		}, euis.CodeInvalidValue, "operator.identifiers[0].type"},
		{"IdentifierValueEmpty", func(s *euis.Statement) {
			s.Operator.Identifiers = []euis.OperatorIdentifier{{Type: "vat", Value: "BE1"}, {Type: "gln", Value: " "}}
		}, euis.CodeRequired, "operator.identifiers[1].value"},
		{"IdentifierValue81", func(s *euis.Statement) {
			s.Operator.Identifiers = []euis.OperatorIdentifier{{Type: "oni", Value: long(81)}}
		}, euis.CodeTooLong, "operator.identifiers[0].value"},
		{"RepresentativeFullAddressAlone", func(s *euis.Statement) {
			s.OperatorRole, s.Operator.FullAddress = euis.RoleRepresentativeOperator, "Rue 1, 1000 Bruxelles"
		}, euis.CodeRequired, "operator.street"},
		{"RepresentativeFullAddress251", func(s *euis.Statement) {
			s.OperatorRole, s.Operator.Street, s.Operator.PostalCode, s.Operator.City, s.Operator.FullAddress = euis.RoleRepresentativeOperator, "Rue 1", "1000", "Bruxelles", long(251)
		}, euis.CodeTooLong, "operator.fullAddress"},

		// Units of measure.
		{"ImportWithoutNetWeight", func(s *euis.Statement) { s.Commodities[0].NetWeightKg = "0" }, euis.CodeRequired, "commodities[0].netWeightKg"},
		{"NegativeNetWeight", func(s *euis.Statement) { s.Commodities[0].NetWeightKg = "-1" }, euis.CodeInvalidValue, "commodities[0].netWeightKg"},
		{"NetWeightOverMax", func(s *euis.Statement) { s.Commodities[0].NetWeightKg = "1e10" }, euis.CodeInvalidValue, "commodities[0].netWeightKg"},
		{"ImportWithPercentage", func(s *euis.Statement) { s.Commodities[0].PercentageEstimation = ptr(5) }, euis.CodeUnitsOfMeasure, "commodities[0].percentageEstimation"},
		{"ImportWoodWithoutUnit", func(s *euis.Statement) {
			s.Commodities[1].SupplementaryUnit, s.Commodities[1].SupplementaryUnitType = nil, ""
		}, euis.CodeUnitsOfMeasure, "commodities[1].supplementaryUnit"},
		{"ImportWoodWrongUnit", func(s *euis.Statement) { s.Commodities[1].SupplementaryUnitType = "MTK" }, euis.CodeUnitsOfMeasure, "commodities[1].supplementaryUnitType"},
		{"ImportCocoaWithUnit", func(s *euis.Statement) {
			s.Commodities[0].SupplementaryUnit, s.Commodities[0].SupplementaryUnitType = dec("3"), "NAR"
		}, euis.CodeUnitsOfMeasure, "commodities[0].supplementaryUnit"},
		{"ImportCattleWithoutUnit", func(s *euis.Statement) {
			s.Commodities = []euis.Commodity{{HSHeading: "010221", DescriptionOfGoods: "Breeding cattle", NetWeightKg: "9000", Producers: producers("BR", 0, 1)}}
		}, euis.CodeUnitsOfMeasure, "commodities[0].supplementaryUnit"},
		{"ImportPulpWithoutKSD", func(s *euis.Statement) {
			s.Commodities = []euis.Commodity{{HSHeading: "470200", DescriptionOfGoods: "Chemical wood pulp, dissolving grades", NetWeightKg: "9000", Producers: producers("BR", 0, 1), SpeciesInfo: []euis.Species{{ScientificName: "Eucalyptus grandis", CommonName: "Rose gum"}}}}
		}, euis.CodeUnitsOfMeasure, "commodities[0].supplementaryUnit"},
		{"UnitWithoutType", func(s *euis.Statement) { s.Commodities[1].SupplementaryUnitType = "" }, euis.CodeRequired, "commodities[1].supplementaryUnitType"},
		{"TypeWithoutUnit", func(s *euis.Statement) {
			s.ActivityType = euis.ActivityDomestic
			s.Commodities[0].PercentageEstimation, s.Commodities[0].SupplementaryUnitType = ptr(1), "NAR"
		}, euis.CodeRequired, "commodities[0].supplementaryUnit"},
		{"DomesticNeither", func(s *euis.Statement) { s.ActivityType = euis.ActivityDomestic }, euis.CodeUnitsOfMeasure, "commodities[0]"},
		{"DomesticPercentageWithoutWeight", func(s *euis.Statement) {
			s.ActivityType = euis.ActivityDomestic
			s.Commodities[0].NetWeightKg, s.Commodities[0].PercentageEstimation = "0", ptr(10)
		}, euis.CodeUnitsOfMeasure, "commodities[0].netWeightKg"},
		{"DomesticPercentage26", func(s *euis.Statement) {
			s.ActivityType = euis.ActivityDomestic
			s.Commodities[0].PercentageEstimation = ptr(26)
		}, euis.CodeInvalidValue, "commodities[0].percentageEstimation"},
		{"DomesticUnitKGM", func(s *euis.Statement) {
			s.ActivityType = euis.ActivityDomestic
			s.Commodities[1].SupplementaryUnitType = "KGM"
		}, euis.CodeInvalidValue, "commodities[1].supplementaryUnitType"},
		{"UnitTypeTooLong", func(s *euis.Statement) { s.Commodities[1].SupplementaryUnitType = "MTQXX" }, euis.CodeInvalidValue, "commodities[1].supplementaryUnitType"},

		// Species.
		{"WoodWithoutSpecies", func(s *euis.Statement) { s.Commodities[1].SpeciesInfo = nil }, euis.CodeSpeciesRequired, "commodities[1].speciesInfo"},
		{"WoodWithoutCommonName", func(s *euis.Statement) { s.Commodities[1].SpeciesInfo[0].CommonName = "" }, euis.CodeSpeciesRequired, "commodities[1].speciesInfo"},
		{"LogsWithoutSpecies", func(s *euis.Statement) {
			s.Commodities[1].HSHeading, s.Commodities[1].SpeciesInfo = "4403", nil
		}, euis.CodeSpeciesRequired, "commodities[1].speciesInfo"},
		{"EmptySpecies", func(s *euis.Statement) { s.Commodities[0].SpeciesInfo = []euis.Species{{}} }, euis.CodeRequired, "commodities[0].speciesInfo[0]"},
		{"SpeciesName201", func(s *euis.Statement) { s.Commodities[1].SpeciesInfo[0].ScientificName = long(201) }, euis.CodeTooLong, "commodities[1].speciesInfo[0].scientificName"},
		{"501Species", func(s *euis.Statement) {
			for range 500 {
				s.Commodities[1].SpeciesInfo = append(s.Commodities[1].SpeciesInfo, euis.Species{ScientificName: "Quercus robur"})
			}
		}, euis.CodeTooManySpecies, "commodities[1].speciesInfo"},

		// Producers and geometry.
		{"NoProducersNoReferences", func(s *euis.Statement) { s.Commodities[0].Producers, s.ReferencedStatements = nil, nil }, euis.CodeProducersRequired, "commodities[0].producers"},
		{"ProducerCountryXX", func(s *euis.Statement) { s.Commodities[0].Producers[1].Country = "XX" }, euis.CodeInvalidValue, "commodities[0].producers[1].country"},
		{"ProducerCountryEmpty", func(s *euis.Statement) { s.Commodities[0].Producers[1].Country = "" }, euis.CodeRequired, "commodities[0].producers[1].country"},
		{"ProducerName501", func(s *euis.Statement) { s.Commodities[0].Producers[0].Name = long(501) }, euis.CodeTooLong, "commodities[0].producers[0].name"},
		{"NoGeometry", func(s *euis.Statement) { s.Commodities[0].Producers[0].GeometryGeoJSON = nil }, euis.CodeRequired, "commodities[0].producers[0].geometryGeoJSON"},
		{"GeometryNotJSON", func(s *euis.Statement) { s.Commodities[0].Producers[0].GeometryGeoJSON = []byte(`{"type":"Point",`) }, euis.CodeInvalidGeoJSON, "commodities[0].producers[0].geometryGeoJSON"},
		{"LineString", func(s *euis.Statement) {
			s.Commodities[0].Producers[0].GeometryGeoJSON = []byte(`{"type":"LineString","coordinates":[[1,2],[3,4]]}`)
		}, euis.CodeGeometryNotAllowed, "commodities[0].producers[0].geometryGeoJSON"},
		{"FeatureLineString", func(s *euis.Statement) {
			s.Commodities[0].Producers[0].GeometryGeoJSON = []byte(`{"type":"Feature","geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]}}`)
		}, euis.CodeGeometryNotAllowed, "commodities[0].producers[0].geometryGeoJSON"},
		{"CollectionMultiLineString", func(s *euis.Statement) {
			s.Commodities[0].Producers[0].GeometryGeoJSON = []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]}},{"type":"Feature","geometry":{"type":"MultiLineString","coordinates":[]}}]}`)
		}, euis.CodeGeometryNotAllowed, "commodities[0].producers[0].geometryGeoJSON"},
		{"GeometryWithoutType", func(s *euis.Statement) {
			s.Commodities[0].Producers[0].GeometryGeoJSON = []byte(`{"coordinates":[1,2]}`)
		}, euis.CodeGeometryNotAllowed, "commodities[0].producers[0].geometryGeoJSON"},

		// Referenced statements.
		{"ReferenceShort", func(s *euis.Statement) { s.ReferencedStatements[0].ReferenceNumber = "26FRYUI34JTQK" }, euis.CodeInvalidFormat, "referencedStatements[0].referenceNumber"},
		{"ReferenceLowerCase", func(s *euis.Statement) { s.ReferencedStatements[0].ReferenceNumber = "26fryui34jtqkb" }, euis.CodeInvalidFormat, "referencedStatements[0].referenceNumber"},
		{"ReferenceNoYear", func(s *euis.Statement) { s.ReferencedStatements[0].ReferenceNumber = "FR26YUI34JTQKB" }, euis.CodeInvalidFormat, "referencedStatements[0].referenceNumber"},
		{"ReferenceEmpty", func(s *euis.Statement) { s.ReferencedStatements[0].ReferenceNumber = "" }, euis.CodeRequired, "referencedStatements[0].referenceNumber"},
		{"ReferenceTwice", func(s *euis.Statement) { s.ReferencedStatements[1] = s.ReferencedStatements[0] }, euis.CodeDuplicateReference, "referencedStatements[1].referenceNumber"},
		{"VerificationShort", func(s *euis.Statement) { s.ReferencedStatements[1].VerificationNumber = "SFFC" }, euis.CodeInvalidFormat, "referencedStatements[1].verificationNumber"},
		{"Verification36", func(s *euis.Statement) { s.ReferencedStatements[1].VerificationNumber = strings.Repeat("A", 36) }, euis.CodeInvalidFormat, "referencedStatements[1].verificationNumber"},
		{"VerificationSpace", func(s *euis.Statement) { s.ReferencedStatements[1].VerificationNumber = "SFFC B4Y3" }, euis.CodeInvalidFormat, "referencedStatements[1].verificationNumber"},
		{"VerificationEmpty", func(s *euis.Statement) { s.ReferencedStatements[1].VerificationNumber = "" }, euis.CodeRequired, "referencedStatements[1].verificationNumber"},
		{"2001References", func(s *euis.Statement) {
			s.ReferencedStatements = nil
			for i := range 2001 {
				s.ReferencedStatements = append(s.ReferencedStatements, euis.Reference{ReferenceNumber: fmt.Sprintf("26FR%010d", i), VerificationNumber: "SEKUYXPP"})
			}
		}, euis.CodeTooManyReferences, "referencedStatements"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validStatement()
			tc.mutate(&s)
			err := euis.Validate(s)
			var vs euis.Violations
			if !errors.As(err, &vs) {
				t.Fatalf("Validate = %v, want Violations", err)
			}
			for _, v := range vs {
				if v.Code == tc.code && v.Path == tc.path {
					if v.Limit == "" || v.Issue == "" {
						t.Errorf("violation %+v lacks its limit or issue", v)
					}
					return
				}
			}
			t.Errorf("Validate = %v; want %s at %s", vs, tc.code, tc.path)
		})
	}
}

func TestValidate_EveryViolation(t *testing.T) {
	s := validStatement()
	s.InternalReference = strings.Repeat("x", 40)
	s.Commodities[0].HSHeading = "1"
	s.Commodities[1].Producers[0].Country = "ZZ"
	s.Operator.EORI = ""
	err := euis.Validate(s)
	var vs euis.Violations
	if !errors.As(err, &vs) {
		t.Fatalf("Validate = %v", err)
	}
	want := map[string]bool{"internalReference": true, "commodities[0].hsHeading": true, "commodities[1].producers[0].country": true, "operator.eori": true}
	for _, v := range vs {
		delete(want, v.Path)
	}
	if len(want) > 0 {
		t.Errorf("Validate = %v; missing %v", vs, want)
	}
	if msg := err.Error(); !strings.Contains(msg, "4 rules") || !strings.Contains(msg, "internalReference") {
		t.Errorf("Error() = %q", msg)
	}
	if got := vs[0].String(); got != "internalReference: TOO_LONG: 40 characters (at most 35 characters)" {
		t.Errorf("String() = %q", got)
	}
}

func TestValidate_LimitText(t *testing.T) {
	s := validStatement()
	s.Commodities[0] = cocoa(1204)
	var vs euis.Violations
	errors.As(euis.Validate(s), &vs)
	if len(vs) != 1 || vs[0].Limit != "at most 1,000 producers per commodity" || vs[0].Issue != "1,204 producers" {
		t.Errorf("Validate = %+v", vs)
	}
}

func TestSupplementaryUnitFor(t *testing.T) {
	for hs, want := range map[string]string{
		"47": "", "4701": "KSD", "470100": "KSD", "4410": "MTQ", "441011": "MTQ", "4403": "MTQ", "4407": "",
		"010221": "NAR", "010229": "NAR", "0102": "", "010290": "", "4011": "NAR", "401110": "NAR", "1801": "", "": "",
	} {
		if got := euis.SupplementaryUnitFor(hs); got != want {
			t.Errorf("SupplementaryUnitFor(%q) = %q, want %q", hs, got, want)
		}
	}
}

func TestIdentifierForms(t *testing.T) {
	for s, want := range map[string]bool{
		"26BE7XTVCZAQ2S": true, "24FRXVV3VOS991": true, "99EU9999999999": true, "S26FRNMNBSA96Q": true,
		"26BE7XTVCZAQ2": false, "26BE7XTVCZAQ2SX": false, "2BE7XTVCZAQ2SX": false, "26be7xtvczaq2s": false, "S26FRNMNBSA96": false,
	} {
		if got := euis.IsReferenceNumber(s); got != want {
			t.Errorf("IsReferenceNumber(%q) = %v", s, got)
		}
	}
	for s, want := range map[string]bool{"SFFCB4Y3": true, "--------": true, "ABCDE": true, "ABCD": false, strings.Repeat("A", 35): true, strings.Repeat("A", 36): false, "AB CDE": false} {
		if got := euis.IsVerificationNumber(s); got != want {
			t.Errorf("IsVerificationNumber(%q) = %v", s, got)
		}
	}
	for s, want := range map[string]bool{"071874bd-8c62-4cac-8eb6-b2fbe003410c": true, "071874BD-8C62-4CAC-8EB6-B2FBE003410C": true, "071874bd8c624cac8eb6b2fbe003410c": false} {
		if got := euis.IsUUID(s); got != want {
			t.Errorf("IsUUID(%q) = %v", s, got)
		}
	}
}

func TestGeolocationSize(t *testing.T) {
	s := validStatement()
	var want int64
	for _, c := range s.Commodities {
		for _, p := range c.Producers {
			want += int64((len(p.GeometryGeoJSON) + 2) / 3 * 4)
		}
	}
	if got := euis.GeolocationSize(s); got != want {
		t.Errorf("GeolocationSize = %d, want %d", got, want)
	}
}
