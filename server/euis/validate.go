package euis

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/risk"
)

// Limits of the information system (Operator API Reference V3 sections 2.3,
// 4.1 and 10.3; V3 XSD).
const (
	MaxCommodities           = 100   // commodities per statement
	MaxProducersPerCommodity = 1000  // producers per commodity
	MaxProducers             = 10000 // producers per statement
	// MaxGeolocationBytes bounds the geolocation of a statement: 25 MB. The
	// reference does not say how the 25 MB are counted; the appliance
	// counts the base64 text it sends (GeolocationSize), 4/3 of the GeoJSON,
	// in decimal megabytes, so that no count the information system might
	// use can exceed it.
	MaxGeolocationBytes     = 25_000_000
	MaxInternalReferenceLen = 35   // internalReferenceNumber
	MaxReferences           = 2000 // groupedDeclarations
	MaxSpecies              = 500  // speciesInfo per commodity
	MaxUUIDsPerGet          = 100  // uuidList of getDds
	MaxCallsPerSecond       = 5    // per IP address
	// AmendWindow is how long after submission a statement can be amended
	// or withdrawn.
	AmendWindow = 72 * time.Hour
	// MaxPercentageEstimation is the highest percentage estimate or
	// deviation (units-of-measure guidance for economic operators).
	MaxPercentageEstimation = 25
	// MaxQuantity is the highest net weight or supplementary unit
	// (DecimalSixteenTotalSixPrecType).
	MaxQuantity Decimal = "9999999999.999999"
)

// Field lengths of the V3 XSD, in characters.
const (
	maxDescriptionLen   = 150
	maxCommentLen       = 2000
	maxProducerNameLen  = 500
	maxSpeciesNameLen   = 200
	maxOperatorNameLen  = 200
	maxStreetLen        = 300
	maxPostalCodeLen    = 80
	maxCityLen          = 200
	maxEmailLen         = 200
	maxPhoneLen         = 50
	minVerificationLen  = 5
	maxVerificationLen  = 35
	maxUnitQualifierLen = 4
)

// Codes of a Violation.
const (
	CodeRequired      = "REQUIRED"       // a required field is empty
	CodeInvalidValue  = "INVALID_VALUE"  // not one of the allowed values, or out of range
	CodeInvalidFormat = "INVALID_FORMAT" // does not match the pattern
	CodeTooLong       = "TOO_LONG"       // longer than the field allows

	CodeTooManyCommodities           = "TOO_MANY_COMMODITIES"             // > MaxCommodities (Split cures it)
	CodeTooManyProducersPerCommodity = "TOO_MANY_PRODUCERS_PER_COMMODITY" // > MaxProducersPerCommodity (Split cures it)
	CodeTooManyProducers             = "TOO_MANY_PRODUCERS"               // > MaxProducers (Split cures it)
	CodeGeolocationTooLarge          = "GEOLOCATION_TOO_LARGE"            // > MaxGeolocationBytes in all (Split cures it)
	CodeGeometryTooLarge             = "GEOMETRY_TOO_LARGE"               // one producer's geolocation alone > MaxGeolocationBytes
	CodeTooManySpecies               = "TOO_MANY_SPECIES"                 // > MaxSpecies
	CodeTooManyReferences            = "TOO_MANY_REFERENCES"              // > MaxReferences
	CodeDuplicateReference           = "DUPLICATE_REFERENCE"              // the same reference number twice

	CodeEORIRequired       = "EORI_REQUIRED"             // IMPORT or EXPORT without the operator's EORI (EUDR_OPERATOR_EORI_FOR_ACTIVITY_MISSING)
	CodeActivityNotAllowed = "ACTIVITY_NOT_ALLOWED"      // a non-EU operator may only IMPORT (EUDR_ACTIVITY_TYPE_NOT_ALLOWED_FOR_NON_EU_OPERATOR)
	CodeUnitsOfMeasure     = "UNITS_OF_MEASURE"          // net weight, percentage and supplementary unit against the activity and HS heading
	CodeSpeciesRequired    = "SPECIES_REQUIRED"          // a wood product without species
	CodeProducersRequired  = "PRODUCERS_REQUIRED"        // a commodity without producers in a statement that references none
	CodeInvalidGeoJSON     = "INVALID_GEOJSON"           // geometryGeojson is not JSON
	CodeGeometryNotAllowed = "GEOMETRY_TYPE_NOT_ALLOWED" // LineString and the like
)

// Violation is one way a statement breaks a rule or limit of the
// information system.
type Violation struct {
	Code string
	// Path names the field: lowerCamel Statement field names, indices from
	// 0, as in "commodities[2].producers[7].geometryGeoJSON".
	Path string
	// Limit states the rule or limit broken, as in "at most 1,000 producers
	// per commodity".
	Limit string
	// Issue says what was found, as in "1,204 producers".
	Issue string
}

func (v Violation) String() string {
	return v.Path + ": " + v.Code + ": " + v.Issue + " (" + v.Limit + ")"
}

// Violations is every violation found in a statement. It is an error.
type Violations []Violation

func (vs Violations) Error() string {
	switch len(vs) {
	case 0:
		return "no violations"
	case 1:
		return "statement breaks a rule of the eu information system: " + vs[0].String()
	}
	return fmt.Sprintf("statement breaks %d rules of the eu information system: %s; ...", len(vs), vs[0])
}

// Err returns vs as an error, or nil when vs is empty.
func (vs Violations) Err() error {
	if len(vs) == 0 {
		return nil
	}
	return vs
}

func (vs *Violations) add(code, path, limit, format string, args ...any) {
	*vs = append(*vs, Violation{Code: code, Path: path, Limit: limit, Issue: fmt.Sprintf(format, args...)})
}

var (
	hsHeadingRE    = regexp.MustCompile(`^[0-9]{2,6}$`)
	eoriRE         = regexp.MustCompile(`^[A-Z]{2}[0-9A-Z]{1,15}$`)
	ddsReferenceRE = regexp.MustCompile(`^[0-9]{2}[A-Z]{2}[0-9A-Z]{10}$`)
	sdReferenceRE  = regexp.MustCompile(`^S[0-9]{2}[A-Z]{2}[0-9A-Z]{9}$`)
	emailRE        = regexp.MustCompile(`^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$`)
	// UUIDPattern is the form of the UUIDs the information system gives
	// operators and statements (the OpenAPI document states it too).
	UUIDPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

// euCountries are the Member States and XI (Northern Ireland): the values of
// EuropeanCountryType.
var euCountries = strings.Fields("AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK XI")

// IsEUCountry reports whether code is a value of EuropeanCountryType: an EU
// Member State (GR for Greece) or XI.
func IsEUCountry(code string) bool { return slices.Contains(euCountries, code) }

// supplementaryUnits is Appendix I of the units-of-measure guidance: the HS
// codes whose IMPORT and EXPORT need a supplementary unit, and which.
// Matched on the first 4 digits, except the 6-digit entries, matched on 6.
var supplementaryUnits = map[string]string{
	"010221": "NAR", "010229": "NAR", "4011": "NAR", "4013": "NAR", "4104": "NAR",
	"4403": "MTQ", "4406": "MTQ", "4408": "MTQ", "4410": "MTQ", "4411": "MTQ", "4412": "MTQ", "4413": "MTQ",
	"4701": "KSD", "4702": "KSD", "4704": "KSD", "4705": "KSD",
}

// domesticUnits is Appendix II: the supplementary units a DOMESTIC
// statement may use.
var domesticUnits = []string{"KSD", "MTK", "MTQ", "MTR", "NAR", "NPR"}

// SupplementaryUnitFor returns the supplementary unit an IMPORT or EXPORT of
// HS heading hs must declare, or "" when it must declare none (Appendix I
// of the units-of-measure guidance for economic operators).
func SupplementaryUnitFor(hs string) string {
	if len(hs) >= 6 {
		if u, ok := supplementaryUnits[hs[:6]]; ok {
			return u
		}
	}
	if len(hs) >= 4 {
		return supplementaryUnits[hs[:4]] // no 4-digit key is a prefix of a 6-digit one
	}
	return ""
}

// isWood reports whether HS heading hs is a wood product of Annex I to
// Regulation (EU) 2023/1115, which must name its species.
func isWood(hs string) bool {
	return slices.Contains(risk.AnnexI().CommodityOf(hs), "wood")
}

// GeolocationSize returns the bytes of geolocation s sends: the base64
// length of every producer's GeoJSON, the measure of MaxGeolocationBytes.
func GeolocationSize(s Statement) int64 {
	var n int64
	for _, c := range s.Commodities {
		for _, p := range c.Producers {
			n += geometrySize(p)
		}
	}
	return n
}

func geometrySize(p Producer) int64 {
	return int64(base64.StdEncoding.EncodedLen(len(p.GeometryGeoJSON)))
}

func producerCount(s Statement) int {
	n := 0
	for _, c := range s.Commodities {
		n += len(c.Producers)
	}
	return n
}

// Validate checks s against every rule and limit of the information system
// that can be checked before filing, and returns Violations listing each
// problem with its path and the limit it breaks, or nil. It does not check
// the geometry beyond its JSON and type (that is package geo's work), nor
// OperatorUUID and SupplierOperatorUUIDs.
func Validate(s Statement) error { return check(s).Err() }

func check(s Statement) Violations {
	var vs Violations
	checkHead(&vs, s)
	checkOperator(&vs, s)
	checkRepresented(&vs, s)
	if n := len(s.Commodities); n == 0 {
		vs.add(CodeRequired, "commodities", "at least 1 commodity", "no commodities")
	} else if n > MaxCommodities {
		vs.add(CodeTooManyCommodities, "commodities", fmt.Sprintf("at most %s commodities per statement", count(MaxCommodities)), "%s commodities", count(n))
	}
	for i, c := range s.Commodities {
		checkCommodity(&vs, s, i, c)
	}
	if n := producerCount(s); n > MaxProducers {
		vs.add(CodeTooManyProducers, "commodities", fmt.Sprintf("at most %s producers per statement", count(MaxProducers)), "%s producers", count(n))
	}
	if n := GeolocationSize(s); n > MaxGeolocationBytes {
		vs.add(CodeGeolocationTooLarge, "commodities", fmt.Sprintf("at most %s bytes of geolocation per statement (25 MB, base64)", count(MaxGeolocationBytes)), "%s bytes", count(int(n)))
	}
	checkReferences(&vs, s)
	return vs
}

func checkHead(vs *Violations, s Statement) {
	switch s.OperatorRole {
	case RoleOperator, RoleRepresentativeOperator:
	case "":
		vs.add(CodeRequired, "operatorRole", "OPERATOR or REPRESENTATIVE_OPERATOR", "empty")
	default:
		vs.add(CodeInvalidValue, "operatorRole", "OPERATOR or REPRESENTATIVE_OPERATOR", "%q", s.OperatorRole)
	}
	if n := utf8.RuneCountInString(s.InternalReference); n > MaxInternalReferenceLen {
		vs.add(CodeTooLong, "internalReference", fmt.Sprintf("at most %d characters", MaxInternalReferenceLen), "%d characters", n)
	}
	switch s.ActivityType {
	case ActivityDomestic, ActivityImport, ActivityExport:
	case "":
		vs.add(CodeRequired, "activityType", "DOMESTIC, IMPORT or EXPORT", "empty")
	default:
		vs.add(CodeInvalidValue, "activityType", "DOMESTIC, IMPORT or EXPORT", "%q", s.ActivityType)
	}
	for _, f := range []struct{ path, v string }{{"countryOfActivity", s.CountryOfActivity}, {"borderCrossCountry", s.BorderCrossCountry}} {
		if f.v != "" && !IsEUCountry(f.v) {
			vs.add(CodeInvalidValue, f.path, "an EU Member State (ISO 3166-1 alpha-2) or XI", "%q", f.v)
		}
	}
	if n := utf8.RuneCountInString(s.Comment); n > maxCommentLen {
		vs.add(CodeTooLong, "comment", fmt.Sprintf("at most %s characters", count(maxCommentLen)), "%s characters", count(n))
	}
}

func checkOperator(vs *Violations, s Statement) {
	o := s.Operator
	importExport := s.ActivityType == ActivityImport || s.ActivityType == ActivityExport
	switch {
	case o.EORI == "" && importExport:
		vs.add(CodeEORIRequired, "operator.eori", "the operator's EORI number is required for IMPORT and EXPORT", "empty")
	case o.EORI != "" && !eoriRE.MatchString(o.EORI):
		vs.add(CodeInvalidFormat, "operator.eori", "an EORI number: 2 capital letters and up to 15 digits or capital letters", "%q", o.EORI)
	}
	if o.Country != "" {
		if !geo.IsCountryCode(o.Country) {
			vs.add(CodeInvalidValue, "operator.country", "an ISO 3166-1 alpha-2 country code", "%q", o.Country)
		} else if !IsEUCountry(o.Country) && s.ActivityType != "" && s.ActivityType != ActivityImport {
			vs.add(CodeActivityNotAllowed, "activityType", "an operator established outside the EU may only IMPORT", "%s by an operator of %s", s.ActivityType, o.Country)
		}
	}
	if n := utf8.RuneCountInString(o.Name); n > maxOperatorNameLen {
		vs.add(CodeTooLong, "operator.name", fmt.Sprintf("at most %d characters", maxOperatorNameLen), "%d characters", n)
	}
	checkIdentifiers(vs, o)
	if s.OperatorRole != RoleRepresentativeOperator {
		return
	}
	// Sent as representedOperator: its own XSD constraints apply.
	if strings.TrimSpace(o.Name) == "" {
		vs.add(CodeRequired, "operator.name", "the represented operator's name is required for REPRESENTATIVE_OPERATOR", "empty")
	}
	if o.Street != "" || o.PostalCode != "" || o.City != "" {
		for _, f := range []struct {
			path, v string
			max     int
		}{{"operator.street", o.Street, maxStreetLen}, {"operator.postalCode", o.PostalCode, maxPostalCodeLen}, {"operator.city", o.City, maxCityLen}, {"operator.country", o.Country, 2}} {
			if f.v == "" {
				vs.add(CodeRequired, f.path, "an address needs street, postal code, city and country", "empty")
			} else if n := utf8.RuneCountInString(f.v); n > f.max {
				vs.add(CodeTooLong, f.path, fmt.Sprintf("at most %d characters", f.max), "%d characters", n)
			}
		}
	}
	if o.FullAddress != "" {
		if o.Street == "" || o.PostalCode == "" || o.City == "" {
			vs.add(CodeRequired, "operator.street", "a full address goes with street, postal code, city and country", "only fullAddress")
		}
		if n := utf8.RuneCountInString(o.FullAddress); n > MaxFullAddressLen {
			vs.add(CodeTooLong, "operator.fullAddress", fmt.Sprintf("at most %d characters", MaxFullAddressLen), "%d characters", n)
		}
	}
	if o.Email != "" && (len(o.Email) > maxEmailLen || !emailRE.MatchString(o.Email)) {
		vs.add(CodeInvalidFormat, "operator.email", "an e-mail address of at most 200 characters", "%q", o.Email)
	}
	if n := utf8.RuneCountInString(o.Phone); n > maxPhoneLen {
		vs.add(CodeTooLong, "operator.phone", fmt.Sprintf("at most %d characters", maxPhoneLen), "%d characters", n)
	}
}

// checkIdentifiers checks an operator's reference numbers against
// EconomicOperatorReferenceNumberType: known types, values of 1 to 80
// characters, at most 12 with the EORI.
func checkIdentifiers(vs *Violations, o Operator) {
	for i, id := range o.Identifiers {
		at := fmt.Sprintf("operator.identifiers[%d]", i)
		if !slices.Contains(IdentifierTypes, id.Type) {
			vs.add(CodeInvalidValue, at+".type", "one of "+strings.Join(IdentifierTypes, ", "), "%q", id.Type)
		}
		switch n := utf8.RuneCountInString(id.Value); {
		case strings.TrimSpace(id.Value) == "":
			vs.add(CodeRequired, at+".value", "an identifier's value", "empty")
		case n > MaxIdentifierValueLen:
			vs.add(CodeTooLong, at+".value", fmt.Sprintf("at most %d characters", MaxIdentifierValueLen), "%d characters", n)
		}
	}
	if n := len(o.ReferenceNumbers()); n > MaxOperatorIdentifiers {
		vs.add(CodeInvalidValue, "operator.identifiers", fmt.Sprintf("at most %d reference numbers, the EORI counted", MaxOperatorIdentifiers), "%d", n)
	}
}

func checkCommodity(vs *Violations, s Statement, i int, c Commodity) {
	at := fmt.Sprintf("commodities[%d]", i)
	switch {
	case c.HSHeading == "":
		vs.add(CodeRequired, at+".hsHeading", "an HS heading of 2 to 6 digits", "empty")
	case !hsHeadingRE.MatchString(c.HSHeading):
		vs.add(CodeInvalidFormat, at+".hsHeading", "an HS heading of 2 to 6 digits ([0-9]{2,6})", "%q", c.HSHeading)
	}
	if strings.TrimSpace(c.DescriptionOfGoods) == "" {
		vs.add(CodeRequired, at+".descriptionOfGoods", "a description of the goods", "empty")
	} else if n := utf8.RuneCountInString(c.DescriptionOfGoods); n > maxDescriptionLen {
		vs.add(CodeTooLong, at+".descriptionOfGoods", fmt.Sprintf("at most %d characters", maxDescriptionLen), "%d characters", n)
	}
	checkQuantities(vs, s.ActivityType, at, c)
	checkSpecies(vs, at, c)
	if len(c.Producers) == 0 && len(s.ReferencedStatements) == 0 {
		vs.add(CodeProducersRequired, at+".producers", "at least 1 producer, unless the statement references other statements", "no producers")
	}
	if n := len(c.Producers); n > MaxProducersPerCommodity {
		vs.add(CodeTooManyProducersPerCommodity, at+".producers", fmt.Sprintf("at most %s producers per commodity", count(MaxProducersPerCommodity)), "%s producers", count(n))
	}
	for j, p := range c.Producers {
		checkProducer(vs, fmt.Sprintf("%s.producers[%d]", at, j), p)
	}
}

func checkQuantities(vs *Violations, activity, at string, c Commodity) {
	quantity := func(path string, v Decimal) {
		if !v.Valid() || v.Sign() < 0 || v.Cmp(MaxQuantity) > 0 {
			vs.add(CodeInvalidValue, path, "from 0 to 9,999,999,999.999999", "%s", v)
		}
	}
	quantity(at+".netWeightKg", c.NetWeightKg)
	if c.SupplementaryUnit != nil {
		quantity(at+".supplementaryUnit", *c.SupplementaryUnit)
		if c.SupplementaryUnitType == "" {
			vs.add(CodeRequired, at+".supplementaryUnitType", "a supplementary unit needs its type", "empty")
		}
	} else if c.SupplementaryUnitType != "" {
		vs.add(CodeRequired, at+".supplementaryUnit", "a supplementary unit type needs its quantity", "no quantity for %q", c.SupplementaryUnitType)
	}
	if t := c.SupplementaryUnitType; t != "" && (len(t) < 3 || len(t) > maxUnitQualifierLen) {
		vs.add(CodeInvalidValue, at+".supplementaryUnitType", "3 or 4 characters (KSD, MTK, MTQ, MTR, NAR, NPR)", "%q", t)
	}
	if p := c.PercentageEstimation; p != nil && (math.IsNaN(*p) || *p < 0 || *p > MaxPercentageEstimation) {
		vs.add(CodeInvalidValue, at+".percentageEstimation", fmt.Sprintf("from 0 to %d", MaxPercentageEstimation), "%v", *p)
	}
	switch activity {
	case ActivityImport, ActivityExport:
		if c.NetWeightKg.Sign() <= 0 {
			vs.add(CodeRequired, at+".netWeightKg", "the net weight in kg is required for IMPORT and EXPORT", "none")
		}
		if c.PercentageEstimation != nil {
			vs.add(CodeUnitsOfMeasure, at+".percentageEstimation", "a percentage estimate or deviation is allowed only for DOMESTIC", "given for %s", activity)
		}
		if !hsHeadingRE.MatchString(c.HSHeading) {
			return
		}
		want := SupplementaryUnitFor(c.HSHeading)
		switch {
		case want == "" && c.SupplementaryUnit != nil:
			vs.add(CodeUnitsOfMeasure, at+".supplementaryUnit", "IMPORT and EXPORT declare a supplementary unit only for the HS headings of Appendix I", "given for HS %s", c.HSHeading)
		case want != "" && c.SupplementaryUnit == nil:
			vs.add(CodeUnitsOfMeasure, at+".supplementaryUnit", fmt.Sprintf("HS %s needs a supplementary unit in %s for IMPORT and EXPORT", c.HSHeading, want), "none")
		case want != "" && c.SupplementaryUnitType != "" && c.SupplementaryUnitType != want:
			vs.add(CodeUnitsOfMeasure, at+".supplementaryUnitType", fmt.Sprintf("HS %s needs a supplementary unit in %s for IMPORT and EXPORT", c.HSHeading, want), "%q", c.SupplementaryUnitType)
		}
	case ActivityDomestic:
		if c.PercentageEstimation != nil && c.NetWeightKg.Sign() <= 0 {
			vs.add(CodeUnitsOfMeasure, at+".netWeightKg", "a percentage estimate or deviation goes with the net weight", "no net weight")
		}
		if (c.NetWeightKg.Sign() <= 0 || c.PercentageEstimation == nil) && c.SupplementaryUnit == nil {
			vs.add(CodeUnitsOfMeasure, at, "DOMESTIC declares the net weight with a percentage estimate or deviation, or a supplementary unit, or both", "neither")
		}
		if t := c.SupplementaryUnitType; t != "" && !slices.Contains(domesticUnits, t) {
			vs.add(CodeInvalidValue, at+".supplementaryUnitType", "KSD, MTK, MTQ, MTR, NAR or NPR", "%q", t)
		}
	}
}

func checkSpecies(vs *Violations, at string, c Commodity) {
	if n := len(c.SpeciesInfo); n > MaxSpecies {
		vs.add(CodeTooManySpecies, at+".speciesInfo", fmt.Sprintf("at most %d species per commodity", MaxSpecies), "%d species", n)
	}
	named := false
	for k, sp := range c.SpeciesInfo {
		if sp.ScientificName == "" && sp.CommonName == "" {
			vs.add(CodeRequired, fmt.Sprintf("%s.speciesInfo[%d]", at, k), "a scientific or common name", "both empty")
		}
		for _, f := range []struct{ path, v string }{{"scientificName", sp.ScientificName}, {"commonName", sp.CommonName}} {
			if n := utf8.RuneCountInString(f.v); n > maxSpeciesNameLen {
				vs.add(CodeTooLong, fmt.Sprintf("%s.speciesInfo[%d].%s", at, k, f.path), fmt.Sprintf("at most %d characters", maxSpeciesNameLen), "%d characters", n)
			}
		}
		if strings.TrimSpace(sp.ScientificName) != "" && strings.TrimSpace(sp.CommonName) != "" {
			named = true
		}
	}
	if !named && isWood(c.HSHeading) {
		vs.add(CodeSpeciesRequired, at+".speciesInfo", "a wood product names its species: scientific and common name", "none named for HS %s", c.HSHeading)
	}
}

func checkProducer(vs *Violations, at string, p Producer) {
	switch {
	case p.Country == "":
		vs.add(CodeRequired, at+".country", "the ISO 3166-1 alpha-2 country of production", "empty")
	case !geo.IsCountryCode(strings.ToUpper(p.Country)):
		vs.add(CodeInvalidValue, at+".country", "an ISO 3166-1 alpha-2 country code", "%q", p.Country)
	}
	if n := utf8.RuneCountInString(p.Name); n > maxProducerNameLen {
		vs.add(CodeTooLong, at+".name", fmt.Sprintf("at most %d characters", maxProducerNameLen), "%d characters", n)
	}
	g := p.GeometryGeoJSON
	if len(strings.TrimSpace(string(g))) == 0 {
		vs.add(CodeRequired, at+".geometryGeoJSON", "the geolocation of the plot, as GeoJSON", "empty")
		return
	}
	if n := geometrySize(p); n > MaxGeolocationBytes {
		vs.add(CodeGeometryTooLarge, at+".geometryGeoJSON", fmt.Sprintf("at most %s bytes of geolocation per statement (25 MB, base64)", count(MaxGeolocationBytes)), "%s bytes in this producer alone", count(int(n)))
	}
	var obj geoJSONType
	if err := json.Unmarshal(g, &obj); err != nil {
		vs.add(CodeInvalidGeoJSON, at+".geometryGeoJSON", "a GeoJSON object", "not JSON: %v", err)
		return
	}
	if t := obj.disallowed(); t != "" {
		vs.add(CodeGeometryNotAllowed, at+".geometryGeoJSON", "Point, MultiPoint, Polygon, MultiPolygon or GeometryCollection (as such, in a Feature or a FeatureCollection)", "%s", t)
	}
}

// geoJSONType reads what matters of a GeoJSON object: its type and those of
// what it holds.
type geoJSONType struct {
	Type       string        `json:"type"`
	Geometry   *geoJSONType  `json:"geometry"`
	Features   []geoJSONType `json:"features"`
	Geometries []geoJSONType `json:"geometries"`
}

// disallowed returns the first type in o the information system does not
// accept, or "".
func (o geoJSONType) disallowed() string {
	switch o.Type {
	case "Point", "MultiPoint", "Polygon", "MultiPolygon":
		return ""
	case "GeometryCollection":
		for _, g := range o.Geometries {
			if t := g.disallowed(); t != "" {
				return t
			}
		}
		return ""
	case "Feature":
		if o.Geometry == nil {
			return "Feature without geometry"
		}
		return o.Geometry.disallowed()
	case "FeatureCollection":
		if len(o.Features) == 0 {
			return "FeatureCollection without features"
		}
		for _, f := range o.Features {
			if f.Type != "Feature" {
				return "FeatureCollection member of type " + strconv.Quote(f.Type)
			}
			if t := f.disallowed(); t != "" {
				return t
			}
		}
		return ""
	case "":
		return "no type"
	}
	return o.Type
}

func checkReferences(vs *Violations, s Statement) {
	if n := len(s.ReferencedStatements); n > MaxReferences {
		vs.add(CodeTooManyReferences, "referencedStatements", fmt.Sprintf("at most %s referenced statements", count(MaxReferences)), "%s", count(n))
	}
	seen := make(map[string]int, len(s.ReferencedStatements))
	for k, r := range s.ReferencedStatements {
		at := fmt.Sprintf("referencedStatements[%d]", k)
		switch {
		case r.ReferenceNumber == "":
			vs.add(CodeRequired, at+".referenceNumber", "a reference number", "empty")
		case !IsReferenceNumber(r.ReferenceNumber):
			vs.add(CodeInvalidFormat, at+".referenceNumber", "14 characters: YY, the country code and 10 digits or capital letters (a simplified declaration: S, YY, the country and 9)", "%q", r.ReferenceNumber)
		default:
			if first, dup := seen[r.ReferenceNumber]; dup {
				vs.add(CodeDuplicateReference, at+".referenceNumber", "each statement referenced once", "%s is also referencedStatements[%d]", r.ReferenceNumber, first)
			} else {
				seen[r.ReferenceNumber] = k
			}
		}
		switch {
		case r.VerificationNumber == "":
			vs.add(CodeRequired, at+".verificationNumber", "the verification number, to verify the reference before filing", "empty")
		case !IsVerificationNumber(r.VerificationNumber):
			vs.add(CodeInvalidFormat, at+".verificationNumber", "5 to 35 characters without spaces", "%q", r.VerificationNumber)
		}
	}
}

// IsReferenceNumber reports whether s has the form of a reference number:
// 14 characters, two digits of the year, the ISO country code and 10 digits
// or capital letters (26BE7XTVCZAQ2S), or for a simplified declaration S,
// the year, the country and 9 (S26FRNMNBSA96Q).
func IsReferenceNumber(s string) bool {
	return ddsReferenceRE.MatchString(s) || sdReferenceRE.MatchString(s)
}

// IsVerificationNumber reports whether s has the form of a verification
// number: 5 to 35 characters, none a space or control character.
func IsVerificationNumber(s string) bool {
	n := utf8.RuneCountInString(s)
	if n < minVerificationLen || n > maxVerificationLen {
		return false
	}
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}

// IsUUID reports whether s has the form of an information system UUID.
func IsUUID(s string) bool { return UUIDPattern.MatchString(s) }

// count formats n with thousands separators: 10,000.
func count(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + count(-n)
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
