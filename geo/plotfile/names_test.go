package plotfile

import "testing"

func TestPropertyName(t *testing.T) {
	for _, c := range []struct {
		name, want string
	}{
		{"producerCountry", "producerCountry"},
		{"ProducerCountry", "producerCountry"}, // the EU file's spelling
		{"producer_country", "producerCountry"},
		{"Producer Country", "producerCountry"},
		{"producerCo", "producerCountry"}, // cut to 10 by a .dbf
		{"productio", ""},                 // 9: not a cut name
		{"production", "productionPlace"},
		{"externalId", "externalId"},
		{"ProducerName", "producerName"},
		{"producerNa", "producerName"},
		{"Area (ha)", "area"},
		{"Area", "area"},
		{"area_ha", "area"},
		{"COMMODITY", "commodity"},
		{"supplier", "supplierId"},
		{"notes", ""},
		{"", ""},
	} {
		got, ok := PropertyName(c.name)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("PropertyName(%q) = %q, %v; want %q", c.name, got, ok, c.want)
		}
	}
}

func TestCoordinateColumns(t *testing.T) {
	for _, c := range []struct {
		name     string
		aliases  []string
		expected bool
	}{
		{"Latitude", latitudeAliases, true},
		{"lat", latitudeAliases, true},
		{"Y", latitudeAliases, true},
		{"lng", longitudeAliases, true},
		{"Longitude (deg)", longitudeAliases, true},
		{"WKT", wktAliases, true},
		{"the_geom", wktAliases, true},
		{"latitude", longitudeAliases, false},
	} {
		if got := matches(c.name, c.aliases); got != c.expected {
			t.Errorf("matches(%q, %v) = %v", c.name, c.aliases, got)
		}
	}
}

func TestPropertyValue(t *testing.T) {
	for _, c := range []struct {
		prop, text string
		want       any
		ok         bool
	}{
		{"area", " 2,5 ", 2.5, true},
		{"area", "1.25", 1.25, true},
		{"area", "large", "large", true},
		{"area", "NaN", "NaN", true},
		{"area", "-inf", "-inf", true},
		{"commodity", "Cocoa", "cocoa", true},
		{"producerCountry", "gh", "GH", true},
		{"producerName", "  Kofi  ", "Kofi", true},
		{"producerName", "  ", nil, false},
	} {
		got, ok := propertyValue(c.prop, c.text)
		if got != c.want || ok != c.ok {
			t.Errorf("propertyValue(%q, %q) = %v, %v; want %v, %v", c.prop, c.text, got, ok, c.want, c.ok)
		}
	}
}

func TestConvertedPath(t *testing.T) {
	c := &Converted{Sources: []string{"rows[1]", "rows[2]"}, Columns: map[string]string{"area": "Area (ha)"}}
	for in, want := range map[string]string{
		"features[1].geometry.coordinates[0][5]": "rows[2].geometry.coordinates[0][5]",
		"features[0].properties.area":            "rows[1].Area (ha)",
		"features[0].properties.commodity":       "rows[1].commodity",
		"features[0]":                            "rows[1]",
		"features[7].geometry":                   "features[7].geometry", // no such source
		"body":                                   "body",
	} {
		if got := c.Path(in); got != want {
			t.Errorf("Path(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFormatOf(t *testing.T) {
	for _, c := range []struct {
		name, contentType string
		want              Format
		ok                bool
	}{
		{"", "", GeoJSON, true},
		{"", "application/geo+json; charset=utf-8", GeoJSON, true},
		{"", "text/csv", CSV, true},
		{"", "application/vnd.google-earth.kmz", KMZ, true},
		{"", "application/zip", Shapefile, true},
		{"KML", "application/octet-stream", KML, true}, // the name wins
		{"", "application/octet-stream", "", false},
		{"gpx", "", "", false},
	} {
		got, ok := FormatOf(c.name, c.contentType)
		if got != c.want || ok != c.ok {
			t.Errorf("FormatOf(%q, %q) = %q, %v; want %q, %v", c.name, c.contentType, got, ok, c.want, c.ok)
		}
	}
}
