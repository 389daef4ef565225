package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// ddsRequest is POST /declarations/dds (API.md section 7). Split files a
// statement over the EU limits as several; countryOfActivity and
// borderCrossCountry default from the shipments' port of entry.
type ddsRequest struct {
	BatchIDs             []string           `json:"batchIds"`
	ActivityType         *string            `json:"activityType"`
	OperatorUUID         *string            `json:"operatorUuid"`
	InternalReference    *string            `json:"internalReference"`
	ReferencedStatements []ddsReferenceBody `json:"referencedStatements"`
	CountryOfActivity    *string            `json:"countryOfActivity"`
	BorderCrossCountry   *string            `json:"borderCrossCountry"`
	// SpeciesInfo names the species of each wood batch, by batch ID (the
	// EU system requires them for wood products).
	SpeciesInfo map[string][]speciesBody `json:"speciesInfo"`
	Split       bool                     `json:"split"`
}

type speciesBody struct {
	ScientificName string `json:"scientificName"`
	CommonName     string `json:"commonName"`
}

type ddsReferenceBody struct {
	ReferenceNumber    string `json:"referenceNumber"`
	VerificationNumber string `json:"verificationNumber"`
}

// maxDDSBatches bounds a request: each batch is a commodity entry, and the
// EU system takes at most 100 per statement (more need split).
const maxDDSBatches = 1000

// validate checks the request's own fields, every problem at once.
func (req *ddsRequest) validate() error {
	var probs apierr.Problems
	switch n := len(req.BatchIDs); {
	case n == 0:
		probs.Add(apierr.DetailRequired, "batchIds", "must list at least one batch")
	case n > maxDDSBatches:
		probs.Add(apierr.DetailInvalidValue, "batchIds", fmt.Sprintf("must list at most %d batches", maxDDSBatches))
	}
	seen := map[string]bool{}
	for i, id := range req.BatchIDs {
		if seen[id] {
			probs.Add(apierr.DetailInvalidValue, fmt.Sprintf("batchIds[%d]", i), "is listed twice")
		}
		seen[id] = true
	}
	switch {
	case req.ActivityType == nil:
		probs.Add(apierr.DetailRequired, "activityType", "is required: IMPORT, EXPORT or DOMESTIC")
	case *req.ActivityType != euis.ActivityImport && *req.ActivityType != euis.ActivityExport && *req.ActivityType != euis.ActivityDomestic:
		probs.Add(apierr.DetailInvalidValue, "activityType", "must be IMPORT, EXPORT or DOMESTIC")
	}
	switch {
	case req.OperatorUUID == nil:
		probs.Add(apierr.DetailRequired, "operatorUuid", "is required: the EU operator UUID the statement is filed for")
	case !uuidPattern.MatchString(*req.OperatorUUID):
		probs.Add(apierr.DetailInvalidValue, "operatorUuid", "must be a UUID")
	}
	if r := req.InternalReference; r != nil && (*r == "" || utf8.RuneCountInString(*r) > euis.MaxInternalReferenceLen) {
		probs.Add(apierr.DetailInvalidValue, "internalReference", fmt.Sprintf("must be 1-%d characters", euis.MaxInternalReferenceLen))
	}
	for i, ref := range req.ReferencedStatements {
		if !euis.IsReferenceNumber(ref.ReferenceNumber) {
			probs.Add(apierr.DetailInvalidValue, fmt.Sprintf("referencedStatements[%d].referenceNumber", i),
				"must be an EU reference number: 14 characters, year, country and 10 letters or digits (26BE7XTVCZAQ2S)")
		}
		if !euis.IsVerificationNumber(ref.VerificationNumber) {
			probs.Add(apierr.DetailInvalidValue, fmt.Sprintf("referencedStatements[%d].verificationNumber", i), "must be 5-35 letters or digits")
		}
	}
	for id, list := range req.SpeciesInfo {
		if !seen[id] {
			probs.Add(apierr.DetailInvalidValue, "speciesInfo."+id, "names a batch that is not in batchIds")
		}
		for i, sp := range list {
			if sp.ScientificName == "" && sp.CommonName == "" {
				probs.Add(apierr.DetailRequired, fmt.Sprintf("speciesInfo.%s[%d]", id, i), "needs a scientificName and a commonName")
			}
		}
	}
	for _, c := range []struct {
		field string
		v     *string
	}{{"countryOfActivity", req.CountryOfActivity}, {"borderCrossCountry", req.BorderCrossCountry}} {
		if c.v != nil && !euis.IsEUCountry(*c.v) {
			probs.Add(apierr.DetailInvalidValue, c.field, "must be an EU member state (ISO 3166-1 alpha-2, or XI)")
		}
	}
	return probs.Err()
}

// ddsSource is what a statement is built from, read in one transaction.
type ddsSource struct {
	batches   []*storage.Batch
	links     []*storage.ShipmentLink // the batches' shipment links, in order
	suppliers []*storage.Supplier     // the batches' supplier mappings, in order
	plots     [][]ddsPlot             // per batch, its polygons
	operator  *storage.Supplier       // the mapping of operatorUuid; nil when none
}

type ddsPlot struct {
	polygon *storage.Polygon
	feature json.RawMessage
}

// readDDSSource reads the batches of a request and refuses what cannot be
// declared: an unknown batch (404), one not VERIFIED or not linked to a
// shipment (422 BATCH_NOT_VERIFIED, every one listed). It writes nothing.
func readDDSSource(tx *storage.Tx, t storage.Tenant, req *ddsRequest) (*ddsSource, error) {
	src := &ddsSource{}
	var missing, unfit apierr.Problems
	for i, id := range req.BatchIDs {
		field := fmt.Sprintf("batchIds[%d]", i)
		b, err := tx.FindBatch(t, id)
		if errors.Is(err, storage.ErrNotFound) {
			missing.Add(apierr.DetailInvalidValue, field, "no batch "+id)
			continue
		}
		if err != nil {
			return nil, err
		}
		link, err := tx.BatchLinkOf(t, id)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, err
		}
		switch {
		case b.Status != storage.BatchVerified:
			unfit.Add(apierr.DetailBatchNotVerified, field, fmt.Sprintf("batch %s is %s, not VERIFIED", id, b.Status))
			continue
		case link == nil || link.Status != storage.LinkLinked:
			unfit.Add(apierr.DetailBatchNotVerified, field, fmt.Sprintf("batch %s is not linked to a shipment (POST /shipments/link)", id))
			continue
		}
		sup, err := tx.FindSupplier(t, b.SupplierID)
		if errors.Is(err, storage.ErrNotFound) {
			// Deleted since the batch was registered: the operator's
			// identity would come from it.
			missing.Add(apierr.DetailSupplierNotFound, field, fmt.Sprintf("the supplier mapping %s of batch %s no longer exists: map it again (POST /suppliers)", b.SupplierID, id))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("supplier %s of batch %s: %w", b.SupplierID, id, err)
		}
		ids, err := tx.FindBatchPolygons(t, id)
		if err != nil {
			return nil, err
		}
		plots := make([]ddsPlot, 0, len(ids))
		for _, pid := range ids {
			p, err := tx.FindPolygon(t, pid)
			if err != nil {
				return nil, fmt.Errorf("polygon %s of batch %s: %w", pid, id, err)
			}
			d, err := tx.FindPolygonDetail(t, pid)
			if err != nil {
				return nil, fmt.Errorf("polygon %s of batch %s: %w", pid, id, err)
			}
			plots = append(plots, ddsPlot{polygon: p, feature: d.Feature})
		}
		src.batches, src.links, src.suppliers = append(src.batches, b), append(src.links, link), append(src.suppliers, sup)
		src.plots = append(src.plots, plots)
	}
	if len(missing) > 0 {
		return nil, &apierr.Error{Status: http.StatusNotFound, Code: apierr.CodeNotFound, Message: "a batch or its supplier mapping was not found", Details: missing}
	}
	if len(unfit) > 0 {
		return nil, &apierr.Error{Status: http.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
			Message: "only VERIFIED batches linked to a shipment can be declared", Details: unfit}
	}
	for _, s := range src.suppliers {
		if strings.EqualFold(s.EUOperatorUUID, *req.OperatorUUID) {
			src.operator = s
			break
		}
	}
	return src, nil
}

// buildStatement assembles the Annex II statement: one commodity per batch
// (its HS heading, net mass and supplementary unit), its plots grouped into
// producers by name and country (an unnamed plot is a producer of its
// own), each producer's geolocation a FeatureCollection of its plots with
// the properties the EU system reads (ProducerName, ProducerCountry,
// ProductionPlace, Area for points) and coordinates at 6 decimals. The
// operator is the supplier mapping of operatorUuid or, when none of the
// batches' mappings has it, the first batch's (the EU system's
// cross-check then rejects the statement).
func buildStatement(req *ddsRequest, src *ddsSource) (euis.Statement, error) {
	op := src.operator
	if op == nil {
		op = src.suppliers[0]
	}
	s := euis.Statement{
		OperatorRole: euis.RoleOperator,
		ActivityType: *req.ActivityType,
		Operator:     euis.Operator{Name: op.Name, Country: op.Country, EORI: op.EORI},
		OperatorUUID: *req.OperatorUUID,
	}
	if req.InternalReference != nil {
		s.InternalReference = *req.InternalReference
	}
	for _, sup := range src.suppliers {
		s.SupplierOperatorUUIDs = append(s.SupplierOperatorUUIDs, sup.EUOperatorUUID)
	}
	s.CountryOfActivity = portCountry(src.links)
	if req.CountryOfActivity != nil {
		s.CountryOfActivity = *req.CountryOfActivity
	}
	if s.ActivityType != euis.ActivityDomestic {
		s.BorderCrossCountry = s.CountryOfActivity
		if req.BorderCrossCountry != nil {
			s.BorderCrossCountry = *req.BorderCrossCountry
		}
	}
	for _, r := range req.ReferencedStatements {
		s.ReferencedStatements = append(s.ReferencedStatements, euis.Reference{ReferenceNumber: r.ReferenceNumber,
			VerificationNumber: r.VerificationNumber})
	}
	for i, b := range src.batches {
		c := euis.Commodity{HSHeading: hsHeading(b.HSCode), DescriptionOfGoods: describe(b),
			NetWeightKg: b.NetMassKg}
		// A supplementary unit goes with a DOMESTIC statement, or with the
		// HS headings that have one (IMPORT and EXPORT declare none
		// elsewhere).
		if b.SupplementaryUnit != nil && (s.ActivityType == euis.ActivityDomestic || euis.SupplementaryUnitFor(c.HSHeading) != "") {
			c.SupplementaryUnit, c.SupplementaryUnitType = b.SupplementaryUnit, b.SupplementaryUnitType
		}
		for _, sp := range req.SpeciesInfo[b.ID] {
			c.SpeciesInfo = append(c.SpeciesInfo, euis.Species{ScientificName: sp.ScientificName, CommonName: sp.CommonName})
		}
		producers, err := producersOf(src.plots[i])
		if err != nil {
			return euis.Statement{}, fmt.Errorf("batch %s: %w", b.ID, err)
		}
		c.Producers = producers
		s.Commodities = append(s.Commodities, c)
	}
	return s, nil
}

// portCountry is the country of the first shipment's port of entry
// (UN/LOCODE: its first two letters), or "".
func portCountry(links []*storage.ShipmentLink) string {
	for _, l := range links {
		if len(l.PortOfEntry) >= 2 {
			return l.PortOfEntry[:2]
		}
	}
	return ""
}

// hsHeading is the EU system's hsHeading of an HS code: its first 6 digits
// at most.
func hsHeading(code string) string {
	if len(code) > 6 {
		return code[:6]
	}
	return code
}

// describe is a batch's descriptionOfGoods: its commodity and reference,
// within the EU system's 150 characters.
func describe(b *storage.Batch) string {
	d := []rune(b.Commodity + ", batch " + b.Reference)
	return string(d[:min(len(d), 150)])
}

// producersOf groups plots into producers by name and country.
func producersOf(plots []ddsPlot) ([]euis.Producer, error) {
	type group struct {
		name, country string
		features      []json.RawMessage
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, p := range plots {
		pol := p.polygon
		f, err := euFeature(p)
		if err != nil {
			return nil, fmt.Errorf("polygon %s: %w", pol.ID, err)
		}
		key := pol.ProducerName + "\x00" + pol.ProducerCountry
		g := byKey[key]
		if g == nil || pol.ProducerName == "" {
			g = &group{name: pol.ProducerName, country: pol.ProducerCountry}
			groups = append(groups, g)
			if pol.ProducerName != "" {
				byKey[key] = g
			}
		}
		g.features = append(g.features, f)
	}
	out := make([]euis.Producer, len(groups))
	for i, g := range groups {
		fc, err := storage.MarshalJSON(struct {
			Type     string            `json:"type"`
			Features []json.RawMessage `json:"features"`
		}{"FeatureCollection", g.features})
		if err != nil {
			return nil, err
		}
		out[i] = euis.Producer{Country: g.country, Name: g.name, GeometryGeoJSON: fc}
	}
	return out, nil
}

// euFeature is a plot as the EU system reads it: its geometry as sent with
// coordinates at 6 decimals (the EU system keeps 6) and the properties
// ProducerName, ProducerCountry, ProductionPlace and, for a point, Area.
func euFeature(p ddsPlot) (json.RawMessage, error) {
	geom, err := featureGeometry(p.feature)
	if err != nil {
		return nil, err
	}
	var g struct {
		Type        string          `json:"type"`
		Coordinates json.RawMessage `json:"coordinates"`
	}
	if err := json.Unmarshal(geom, &g); err != nil {
		return nil, err
	}
	var coords any
	if err := json.Unmarshal(g.Coordinates, &coords); err != nil {
		return nil, err
	}
	props := map[string]any{"ProducerCountry": p.polygon.ProducerCountry}
	if p.polygon.ProducerName != "" {
		props["ProducerName"] = p.polygon.ProducerName
	}
	if p.polygon.ProductionPlace != "" {
		props["ProductionPlace"] = p.polygon.ProductionPlace
	}
	if a := p.polygon.DeclaredAreaHa; a != nil && (g.Type == "Point" || g.Type == "MultiPoint") {
		props["Area"] = *a
	}
	return storage.MarshalJSON(map[string]any{
		"type":       "Feature",
		"geometry":   map[string]any{"type": g.Type, "coordinates": round6(coords)},
		"properties": props,
	})
}

// round6 writes every number of decoded coordinates with exactly 6
// decimals, rounded: what the EU system keeps, and shows as precise.
func round6(v any) any {
	switch x := v.(type) {
	case float64:
		return json.Number(strconv.FormatFloat(x, 'f', 6, 64))
	case []any:
		for i := range x {
			x[i] = round6(x[i])
		}
		return x
	}
	return v
}

// payloadPath names a field of the EU client's statement as the payload
// shown to clients names it.
func payloadPath(p string) string {
	return strings.NewReplacer("internalReference", "internalReferenceNumber", "geometryGeoJSON", "geometryGeojson").Replace(p)
}

// statementProblems maps the EU system's rules a statement breaks to a 422
// naming each limit, with the hint to split when splitting would cure it.
func statementProblems(err error, splittable bool) error {
	var vs euis.Violations
	if !errors.As(err, &vs) {
		return err
	}
	out := make([]apierr.Detail, len(vs))
	for i, v := range vs {
		out[i] = apierr.Detail{Code: apierr.DetailEUSystemRule, Field: "statement." + payloadPath(v.Path), Issue: v.Issue + " (" + v.Limit + ")"}
	}
	msg := "the statement breaks a rule or limit of the EU information system"
	if splittable {
		msg += `; send "split": true to split it as the EU rules allow`
	}
	return &apierr.Error{Status: http.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule, Message: msg, Details: out}
}
