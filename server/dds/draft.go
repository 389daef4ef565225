package dds

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// Draft builds the Annex II statement req asks for from its batches and
// records it as a DRAFT by actor, in the caller's transaction, and returns
// what it recorded: one statement, or with req.Split the parts of one
// over the EU system's size limits (SplitOf, Part). It writes nothing
// when it refuses: 400 for a request Validate refuses, 404 naming each
// unknown batch and each batch whose supplier mapping was deleted, 422
// BATCH_NOT_VERIFIED naming each batch not VERIFIED or not linked to a
// shipment, 422 EU_SYSTEM_RULE naming each rule or limit of the EU system
// the statement breaks (with the hint to split when splitting would cure
// it), and a REPRESENTATIVE_OPERATOR statement for an operator none of
// the batches' supplier mappings is.
func (s *Service) Draft(tx *storage.Tx, t storage.Tenant, req *DraftRequest, actor string) ([]*storage.DDS, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	src, err := readSource(tx, t, req)
	if err != nil {
		return nil, err
	}
	if req.role() == euis.RoleRepresentativeOperator && src.operator == nil {
		// The represented operator's identity goes to the EU system: it is
		// never guessed from another mapping.
		return nil, &apierr.Error{Status: apierr.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
			Message: "a REPRESENTATIVE_OPERATOR statement is filed for the operator of one of its batches' supplier mappings",
			Details: []apierr.Detail{{Code: apierr.DetailInvalidValue, Field: "operatorUuid",
				Issue: "is the euOperatorUuid of none of the batches' supplier mappings: the represented operator is taken from its mapping"}}}
	}
	st, err := buildStatement(req, src)
	if err != nil {
		return nil, err
	}
	parts := []euis.Statement{st}
	if verr := euis.Validate(st); verr != nil {
		if !req.Split {
			_, serr := euis.Split(st)
			return nil, statementProblems(verr, serr == nil)
		}
		if parts, err = euis.Split(st); err != nil {
			return nil, statementProblems(err, false)
		}
	}
	out := make([]*storage.DDS, len(parts))
	for i, p := range parts {
		d, err := newDraft(tx, req, p)
		if err != nil {
			return nil, err
		}
		if len(parts) > 1 {
			first := d
			if i > 0 {
				first = out[0]
			}
			d.SplitOf, d.Part = first.ID, i+1
		}
		if err := s.Record(tx, t, d, storage.DDSDraft, actor, "created from batches"); err != nil {
			return nil, err
		}
		out[i] = d
	}
	return out, nil
}

// newDraft is the statement record of st, not yet written.
func newDraft(tx *storage.Tx, req *DraftRequest, st euis.Statement) (*storage.DDS, error) {
	id := storage.NewID("dds", tx.Now())
	if st.InternalReference == "" {
		// The DDS ID (30 characters): a statement can always be found
		// again in the EU system by its internal reference.
		st.InternalReference = id
	}
	payload, err := storage.MarshalJSON(PayloadOf(st))
	if err != nil {
		return nil, err
	}
	d := &storage.DDS{ID: id, BatchIDs: req.BatchIDs, ActivityType: st.ActivityType,
		OperatorUUID: st.OperatorUUID, InternalReference: st.InternalReference, Statement: payload, CreatedAt: tx.Now()}
	for _, ref := range st.ReferencedStatements { // a split's first part holds them all
		d.ReferencedStatements = append(d.ReferencedStatements, storage.DDSReference{ReferenceNumber: ref.ReferenceNumber,
			VerificationNumber: ref.VerificationNumber})
	}
	return d, nil
}

// source is what a statement is built from, read in one transaction.
type source struct {
	batches   []*storage.Batch
	links     []*storage.ShipmentLink // the batches' shipment links, in order
	suppliers []*storage.Supplier     // the batches' supplier mappings, in order
	plots     [][]plot                // per batch, its polygons
	operator  *storage.Supplier       // the mapping of operatorUuid; nil when none
}

type plot struct {
	polygon *storage.Polygon
	feature json.RawMessage
}

// readSource reads the batches of a request and refuses what cannot be
// declared: an unknown batch (404), one not VERIFIED or not linked to a
// shipment (422 BATCH_NOT_VERIFIED, every one listed). It writes nothing.
func readSource(tx *storage.Tx, t storage.Tenant, req *DraftRequest) (*source, error) {
	src := &source{}
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
		plots := make([]plot, 0, len(ids))
		for _, pid := range ids {
			p, err := tx.FindPolygon(t, pid)
			if err != nil {
				return nil, fmt.Errorf("polygon %s of batch %s: %w", pid, id, err)
			}
			d, err := tx.FindPolygonDetail(t, pid)
			if err != nil {
				return nil, fmt.Errorf("polygon %s of batch %s: %w", pid, id, err)
			}
			plots = append(plots, plot{polygon: p, feature: d.Feature})
		}
		src.batches, src.links, src.suppliers = append(src.batches, b), append(src.links, link), append(src.suppliers, sup)
		src.plots = append(src.plots, plots)
	}
	if len(missing) > 0 {
		return nil, &apierr.Error{Status: apierr.StatusNotFound, Code: apierr.CodeNotFound, Message: "a batch or its supplier mapping was not found", Details: missing}
	}
	if len(unfit) > 0 {
		return nil, &apierr.Error{Status: apierr.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
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
// cross-check then rejects the statement). For REPRESENTATIVE_OPERATOR
// the operator is sent as the represented operator: the mapping's name,
// country, EORI and other identifiers, and address (Draft has made sure
// the mapping is operatorUuid's).
func buildStatement(req *DraftRequest, src *source) (euis.Statement, error) {
	op := src.operator
	if op == nil {
		op = src.suppliers[0]
	}
	s := euis.Statement{
		OperatorRole: req.role(),
		ActivityType: *req.ActivityType,
		Operator: euis.Operator{Name: op.Name, Country: op.Country, EORI: op.EORI, Street: op.Street, PostalCode: op.PostalCode,
			City: op.City, FullAddress: op.FullAddress},
		OperatorUUID: *req.OperatorUUID,
	}
	for _, id := range op.Identifiers {
		s.Operator.Identifiers = append(s.Operator.Identifiers, euis.OperatorIdentifier{Type: id.Type, Value: id.Value})
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
			NetWeightKg: euis.Decimal(b.NetMassKg)}
		// A supplementary unit goes with a DOMESTIC statement, or with the
		// HS headings that have one (IMPORT and EXPORT declare none
		// elsewhere).
		if b.SupplementaryUnit != nil && (s.ActivityType == euis.ActivityDomestic || euis.SupplementaryUnitFor(c.HSHeading) != "") {
			u := euis.Decimal(*b.SupplementaryUnit)
			c.SupplementaryUnit, c.SupplementaryUnitType = &u, b.SupplementaryUnitType
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
func producersOf(plots []plot) ([]euis.Producer, error) {
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

// euFeature is a plot as the EU system reads it (euis.PlotFeature).
func euFeature(p plot) (json.RawMessage, error) {
	return euis.PlotFeature(p.feature, euis.PlotProperties{ProducerName: p.polygon.ProducerName,
		ProducerCountry: p.polygon.ProducerCountry, ProductionPlace: p.polygon.ProductionPlace, AreaHa: p.polygon.DeclaredAreaHa})
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
	return &apierr.Error{Status: apierr.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule, Message: msg, Details: out}
}
