package plotfile

import (
	"strconv"
	"strings"
	"unicode"
)

// The properties the appliance reads (docs/screening.md), by the names a
// plot file may give them. A file's column, attribute or ExtendedData
// name matches one when, without letter case, spaces, '_', '-' and '.',
// it is one of the aliases below, or the first 10 characters of one (a
// Shapefile's .dbf cuts names to 10: producerCo is producerCountry).
var propertyAliases = map[string][]string{
	"commodity":       {"commodity", "commodities", "product", "crop"},
	"producerCountry": {"producerCountry", "country", "countryCode", "iso2", "producerCountryCode"},
	"producerName":    {"producerName", "producer", "farmer", "farmerName", "grower", "owner"},
	"productionPlace": {"productionPlace", "place", "plotName", "farmName", "farm", "location"},
	"area":            {"area", "areaHa", "hectares", "ha", "surface", "size"},
	"externalId":      {"externalId", "plotId", "farmId", "plotCode", "ref", "reference"},
	"supplierId":      {"supplierId", "supplier", "vendorId", "vendor", "erpVendorId"},
}

// Coordinate columns of a table of points, and the column of a table of
// WKT geometries, by the same rules.
var (
	latitudeAliases  = []string{"latitude", "lat", "y"}
	longitudeAliases = []string{"longitude", "lon", "lng", "long", "x"}
	wktAliases       = []string{"wkt", "geometry", "geom", "theGeom", "shape"}
)

// dbfNameLen is how long a .dbf field name may be.
const dbfNameLen = 10

// squash is a name without letter case and the separators people put in
// names: "Producer Country", "producer_country" and "producerCountry" are
// one name.
func squash(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == ' ' || r == '_' || r == '-' || r == '.':
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// matches reports whether a file's name for something is one of aliases,
// or one cut to a .dbf field name.
func matches(name string, aliases []string) bool {
	n := squash(stripUnit(name))
	if n == "" {
		return false
	}
	for _, a := range aliases {
		a = squash(a)
		if n == a || (len(name) == dbfNameLen && len(a) > dbfNameLen && strings.HasPrefix(a, n)) {
			return true
		}
	}
	return false
}

// stripUnit drops a unit in brackets at the end of a name: "Area (ha)".
func stripUnit(name string) string {
	name = strings.TrimSpace(name)
	for _, b := range [][2]string{{"(", ")"}, {"[", "]"}} {
		if strings.HasSuffix(name, b[1]) {
			if i := strings.LastIndex(name, b[0]); i > 0 {
				return strings.TrimSpace(name[:i])
			}
		}
	}
	return name
}

// PropertyName is the property of the appliance a file's name stands
// for, and false when it stands for none (the value is then kept under
// its own name).
func PropertyName(name string) (string, bool) {
	for _, prop := range propertyOrder {
		if matches(name, propertyAliases[prop]) {
			return prop, true
		}
	}
	return "", false
}

// propertyOrder fixes the order PropertyName tries the properties in, so
// that a name two could match always goes to the same.
var propertyOrder = []string{"commodity", "producerCountry", "producerName", "productionPlace", "area", "externalId", "supplierId"}

// propertyValue is the JSON value of a property read as text: area a
// number (a decimal comma taken as a point), commodity in lower case and
// producerCountry in upper case (the appliance reads them so), the rest
// trimmed text. An empty text is absent (ok false). An area that is not a
// finite number (NaN and Inf parse, but JSON has no such numbers) stays
// text, for the appliance to refuse naming it.
func propertyValue(prop, text string) (v any, ok bool) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, false
	}
	switch prop {
	case "area":
		if f, err := strconv.ParseFloat(strings.Replace(text, ",", ".", 1), 64); err == nil && finite(f) {
			return f, true
		}
	case "commodity":
		return strings.ToLower(text), true
	case "producerCountry":
		return strings.ToUpper(text), true
	}
	return text, true
}
