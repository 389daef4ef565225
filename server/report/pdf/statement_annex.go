package pdf

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// confirmation is the declaration Annex II, point 8, of Regulation (EU)
// 2023/1115 puts in every statement: filing it is making it.
const confirmation = "By submitting this due diligence statement the operator confirms that due diligence in accordance " +
	"with Regulation (EU) 2023/1115 was carried out and that no or only a negligible risk was found that the relevant " +
	"products do not comply with Article 3, point (a) or (b), of that Regulation."

// activityWords says an activity type in words.
var activityWords = map[string]string{
	euis.ActivityImport:   "IMPORT: placing on the Union market from outside it",
	euis.ActivityExport:   "EXPORT: export from the Union",
	euis.ActivityDomestic: "DOMESTIC: placing on the market of, or making available from, the Union",
}

// statementAnnex writes the statement's Annex II content as the appliance
// stores it and sent it to the EU system (dds.Payload), with the SHA-256
// its ledger entries name.
func (d *document) statementAnnex(s *storage.DDS) error {
	var p dds.Payload
	if err := json.Unmarshal(s.Statement, &p); err != nil {
		return fmt.Errorf("statement of dds %s: %w", s.ID, err)
	}
	title := "Annex II information, as filed"
	if s.EUUUID == "" {
		title = "Annex II information, as drafted (not filed yet)"
	}
	d.heading(title, 50)
	sum := sha256.Sum256(s.Statement)
	d.field("Statement SHA-256", hex.EncodeToString(sum[:]), true)
	d.font(sans, "", 7.5)
	d.SetTextColor(90, 90, 90)
	d.MultiCell(contentW, 3.8, "The SHA-256 of the statement's JSON as stored (the \"statement\" member of GET /declarations/dds/{ddsId}); "+
		"each ledger entry of its history names it as statementSha256.", "", "L", false)
	d.SetTextColor(0, 0, 0)
	d.Ln(1)

	o := p.Operator
	d.field("Operator", o.Name, false)
	d.field("Operator role", p.OperatorRole, false)
	d.field("Operator country", o.Country, false)
	if o.EORI != "" {
		d.field("EORI", o.EORI, true)
	}
	for _, id := range o.Identifiers {
		d.field("Identifier ("+id.Type+")", id.Value, true)
	}
	if addr := operatorAddress(o); addr != "" {
		d.field("Address", addr, false)
	}
	d.field("Internal reference", orText(p.InternalReferenceNumber, "none: the EU system generates one"), false)
	d.field("Activity", orText(activityWords[p.ActivityType], p.ActivityType), false)
	d.field("Country of activity", p.CountryOfActivity, false)
	switch p.ActivityType {
	case euis.ActivityImport:
		d.field("Country of entry", p.BorderCrossCountry, false)
	case euis.ActivityExport:
		d.field("Country of exit", p.BorderCrossCountry, false)
	}
	confidential := "no: downstream operators and traders see it"
	if p.GeoLocationConfidential {
		confidential = "yes: kept from downstream operators and traders"
	}
	d.field("Geolocation confidential", confidential, false)

	for _, c := range p.Commodities {
		d.statementCommodity(c)
	}
	d.heading("Referenced statements", 20)
	if len(p.ReferencedStatements) == 0 {
		d.para("None: the statement references no earlier statement.", 8.5)
	} else {
		rows := make([][]string, len(p.ReferencedStatements))
		for i, r := range p.ReferencedStatements {
			rows[i] = []string{strconv.Itoa(i + 1), r.ReferenceNumber, r.VerificationNumber}
		}
		d.stmtTable([]stmtColumn{{"#", 10, false}, {"Reference number", 85, true}, {"Verification number", 85, true}}, rows)
	}
	d.heading("Confirmation (Annex II, point 8)", 25)
	d.SetFillColor(244, 244, 244)
	d.font(sans, "", 8.5)
	d.MultiCell(contentW, 4.4, "“"+confirmation+"”", "", "L", true)
	return nil
}

// operatorAddress is the operator's address as one line, "" when none was
// sent.
func operatorAddress(o dds.PayloadOperator) string {
	if o.FullAddress != "" {
		return o.FullAddress
	}
	var parts []string
	for _, s := range []string{o.Street, strings.TrimSpace(o.PostalCode + " " + o.City)} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, ", ")
}

// statementCommodity writes one commodity of the statement: its HS code,
// description and quantities as the exact decimal text filed, and its
// producers with a summary of each one's geolocation.
func (d *document) statementCommodity(c dds.PayloadCommodity) {
	d.heading(fmt.Sprintf("Commodity %d: HS %s", c.Position, c.HSHeading), 40)
	d.field("HS code", c.HSHeading, true)
	d.field("Description of goods", c.DescriptionOfGoods, false)
	if c.NetWeightKg != "" {
		d.field("Net mass", string(c.NetWeightKg)+" kg", false)
	}
	if c.SupplementaryUnit != nil {
		d.field("Supplementary unit", string(*c.SupplementaryUnit)+" "+c.SupplementaryUnitType, false)
	}
	for _, sp := range c.SpeciesInfo {
		d.field("Species", strings.TrimSpace(sp.ScientificName+" ("+sp.CommonName+")"), false)
	}
	if len(c.Producers) == 0 {
		d.para("No producer: the commodity is covered by the referenced statements.", 8.5)
		return
	}
	d.Ln(1)
	rows := make([][]string, len(c.Producers))
	for i, p := range c.Producers {
		rows[i] = []string{strconv.Itoa(p.Position), orText(p.Name, "(unnamed)"), p.Country, geolocationSummary(p.GeometryGeojson)}
	}
	d.stmtTable([]stmtColumn{{"#", 10, false}, {"Producer", 62, false}, {"Country", 16, false}, {"Geolocation", 92, false}}, rows)
}

// geolocationSummary says what a producer's geolocation holds: how many
// plots, of which kinds, and their area: a polygon's measured on the WGS 84
// ellipsoid, a point's as declared.
func geolocationSummary(raw json.RawMessage) string {
	var fc struct {
		Type     string `json:"type"`
		Features []struct {
			Geometry   json.RawMessage `json:"geometry"`
			Properties struct {
				Area *float64 `json:"Area"`
			} `json:"properties"`
		} `json:"features"`
	}
	if err := json.Unmarshal(raw, &fc); err != nil || fc.Type != "FeatureCollection" {
		sum := sha256.Sum256(raw)
		return "not a GeoJSON FeatureCollection; " + strconv.Itoa(len(raw)) + " bytes, SHA-256 " + hex.EncodeToString(sum[:])
	}
	var polygons, points, unreadable int
	measured, declared := 0.0, 0.0
	for _, f := range fc.Features {
		g, err := parseGeometry(f.Geometry)
		if err != nil {
			unreadable++
			continue
		}
		for _, p := range g.Polygons {
			rings := make([][][2]float64, len(p))
			for i, r := range p {
				rings[i] = r
			}
			measured += geo.PolygonArea(rings)
			polygons++
		}
		if len(g.Points) > 0 {
			points += len(g.Points)
			if a := f.Properties.Area; a != nil {
				declared += *a
			}
		}
	}
	n := polygons + points + unreadable
	if n == 0 {
		return "no plot"
	}
	var kinds []string
	if polygons > 0 {
		kinds = append(kinds, plural(polygons, "polygon"))
	}
	if points > 0 {
		kinds = append(kinds, plural(points, "point"))
	}
	if unreadable > 0 {
		kinds = append(kinds, strconv.Itoa(unreadable)+" unreadable")
	}
	s := plural(n, "plot") + " (" + strings.Join(kinds, ", ") + ")"
	if polygons > 0 {
		s += "; " + ha(measured) + " measured"
	}
	if points > 0 {
		s += "; " + ha(declared) + " declared for the points"
	}
	return s
}

// plural is n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
