package dds_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

func payloadOf(tb testing.TB, d *storage.DDS) dds.Payload {
	tb.Helper()
	var p dds.Payload
	if err := json.Unmarshal(d.Statement, &p); err != nil {
		tb.Fatalf("statement of %s: %v", d.ID, err)
	}
	return p
}

func TestService_Draft(t *testing.T) {
	r := newRig(t, nil)
	r.declarable(t, sandbox, "bat_1")
	d := r.mustDraft(t, sandbox, request("bat_1"))
	if d.Status != storage.DDSDraft || history(d) != "DRAFT/key_test" || d.History[0].LedgerIndex == nil ||
		d.InternalReference != d.ID || d.OperatorUUID != operator || !slices.Equal(d.BatchIDs, []string{"bat_1"}) {
		t.Errorf("draft: %+v, want a DRAFT by key_test anchored in the ledger, its internal reference its ID", d)
	}

	// The Annex II statement: the operator of operatorUuid, the country of
	// the port of entry, the batch's plot at 6 decimals.
	p := payloadOf(t, d)
	if p.InternalReferenceNumber != d.ID || !reflect.DeepEqual(p.Operator, dds.PayloadOperator{Name: "Importer BV", Country: "NL", EORI: "NL123456789"}) ||
		p.CountryOfActivity != "NL" || p.BorderCrossCountry != "NL" || len(p.Commodities) != 1 {
		t.Fatalf("statement: %s", d.Statement)
	}
	c := p.Commodities[0]
	if c.HSHeading != "180100" || c.DescriptionOfGoods != "cocoa, batch LOT-bat_1" || c.NetWeightKg != "1000" || c.SupplementaryUnit != nil ||
		len(c.Producers) != 1 || c.Producers[0].Name != "Kofi Mensah" || c.Producers[0].Country != "GH" {
		t.Errorf("commodity: %+v", c)
	}
	if geo := string(c.Producers[0].GeometryGeojson); !strings.Contains(geo, "[-1.600000,6.700000]") || !strings.Contains(geo, "6.710000]") ||
		!strings.Contains(geo, `"ProducerCountry":"GH"`) || !strings.Contains(geo, `"ProducerName":"Kofi Mensah"`) {
		t.Errorf("geolocation: %s", geo)
	}
	if err := euis.Validate(p.Statement()); err != nil {
		t.Errorf("the statement drafted breaks an EU rule: %v", err)
	}

	// Reads: by ID, listed by status; an unknown ID is not found.
	if got := r.find(t, sandbox, d.ID); got.DDS.ID != d.ID || got.Submission != nil {
		t.Errorf("Find: %+v", got)
	}
	for status, want := range map[string]int{"": 1, storage.DDSDraft: 1, storage.DDSSubmitted: 0} {
		list, more, err := r.s.List(context.Background(), sandbox, dds.Filter{Status: status}, storage.Page{Limit: 10})
		if err != nil || len(list) != want || more {
			t.Errorf("List of %q: %d, more %v, %v; want %d", status, len(list), more, err, want)
		}
	}
	if _, err := r.s.Find(context.Background(), sandbox, "dds_nope"); !isNotFound(err) {
		t.Errorf("Find of an unknown statement: %v, want apierr.NotFound", err)
	}
	if _, err := r.s.Find(context.Background(), production, d.ID); !isNotFound(err) {
		t.Errorf("Find in the other environment: %v, want apierr.NotFound", err)
	}
	wantError(t, "a filter on an unknown status", dds.Filter{Status: "done"}.Validate(), apierr.StatusBadRequest, apierr.DetailInvalidValue)
}

// TestService_DraftRefused: what cannot be declared is refused with every
// problem named, and nothing is recorded.
func TestService_DraftRefused(t *testing.T) {
	r := newRig(t, nil)
	for _, id := range []string{"bat_ok", "bat_risky", "bat_unlinked", "bat_orphan", "bat_wood"} {
		r.declarable(t, sandbox, id)
	}
	r.b.Update(t, func(tx *storage.Tx) error {
		b, err := tx.FindBatch(sandbox, "bat_risky")
		if err != nil {
			return err
		}
		b.Status = storage.BatchHighRisk
		if err := tx.PutBatch(sandbox, b); err != nil {
			return err
		}
		l, err := tx.BatchLinkOf(sandbox, "bat_unlinked")
		if err != nil {
			return err
		}
		l.Status = storage.LinkFailed
		if err := tx.PutShipmentLink(sandbox, l); err != nil {
			return err
		}
		if b, err = tx.FindBatch(sandbox, "bat_orphan"); err != nil {
			return err
		}
		b.SupplierID = "V-gone"
		if err := tx.PutBatch(sandbox, b); err != nil {
			return err
		}
		// Wood: the EU system requires its species.
		if b, err = tx.FindBatch(sandbox, "bat_wood"); err != nil {
			return err
		}
		b.Commodity, b.HSCode = "wood", "44072900"
		if err := tx.PutBatch(sandbox, b); err != nil {
			return err
		}
		// A VERIFIED batch never linked to a shipment.
		if b, err = tx.FindBatch(sandbox, "bat_ok"); err != nil {
			return err
		}
		b.ID = "bat_nolink"
		if err := tx.PutBatch(sandbox, b); err != nil {
			return err
		}
		return tx.PutBatchPolygons(sandbox, b.ID, []string{"pol_bat_ok"})
	})
	for _, tc := range []struct {
		name    string
		batches []string
		status  int
		details []string
		// field and issue, when set, are of the first detail: where it
		// is and what its issue names.
		field, issue string
	}{
		{"UnknownBatch", []string{"bat_nope"}, 404, []string{apierr.DetailInvalidValue}, "", ""},
		{"NotVerified", []string{"bat_risky"}, 422, []string{apierr.DetailBatchNotVerified}, "", ""},
		{"NotLinked", []string{"bat_unlinked"}, 422, []string{apierr.DetailBatchNotVerified}, "", ""},
		{"NeverLinked", []string{"bat_nolink"}, 422, []string{apierr.DetailBatchNotVerified}, "batchIds[0]", "bat_nolink"},
		{"SupplierDeleted", []string{"bat_orphan"}, 404, []string{apierr.DetailSupplierNotFound}, "batchIds[0]", "V-gone"},
		{"EachListed", []string{"bat_risky", "bat_ok", "bat_unlinked"}, 422, []string{apierr.DetailBatchNotVerified, apierr.DetailBatchNotVerified}, "", ""},
		{"EURule", []string{"bat_wood"}, 422, []string{apierr.DetailEUSystemRule}, "statement.commodities[0].speciesInfo", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.draft(sandbox, request(tc.batches...))
			e := wantError(t, fmt.Sprint(tc.batches), err, tc.status, tc.details...)
			if len(e.Details) > 0 && (tc.field != "" && e.Details[0].Field != tc.field || !strings.Contains(e.Details[0].Issue, tc.issue)) {
				t.Errorf("%v: first detail %+v, want it at %q naming %q", tc.batches, e.Details[0], tc.field, tc.issue)
			}
		})
	}
	err := r.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
		_, err := r.s.Draft(tx, sandbox, &dds.DraftRequest{}, "key_test")
		return err
	})
	wantError(t, "an empty request", err, 400, apierr.DetailRequired, apierr.DetailRequired, apierr.DetailRequired)
	if n := r.countDDS(t, sandbox); n != 0 {
		t.Errorf("%d statements recorded by refused drafts", n)
	}

	// IMPORT needs the operator's EORI, which a mapping may lack: the EU
	// rule is named.
	noEORI := newRig(t, nil)
	noEORI.declarable(t, sandbox, "bat_1")
	noEORI.b.Update(t, func(tx *storage.Tx) error {
		s, err := tx.FindSupplier(sandbox, "V-1")
		if err != nil {
			return err
		}
		s.EORI = ""
		return tx.PutSupplier(sandbox, s)
	})
	_, err = noEORI.draft(sandbox, request("bat_1"))
	if e := wantError(t, "an IMPORT without the operator's EORI", err, 422, apierr.DetailEUSystemRule); len(e.Details) > 0 &&
		(e.Details[0].Field != "statement.operator.eori" || !strings.Contains(e.Details[0].Issue, "EORI")) {
		t.Errorf("an IMPORT without the operator's EORI: %+v, want the EORI rule at statement.operator.eori", e.Details)
	}

	// With the species named, the wood batch is declared.
	req := request("bat_wood")
	req.SpeciesInfo = map[string][]dds.Species{"bat_wood": {{ScientificName: "Tectona grandis", CommonName: "teak"}}}
	d := r.mustDraft(t, sandbox, req)
	if sp := payloadOf(t, d).Commodities[0].SpeciesInfo; len(sp) != 1 || sp[0].ScientificName != "Tectona grandis" {
		t.Errorf("species: %s", d.Statement)
	}
}

// TestService_DraftSplit: a statement over the EU system's 100 commodities
// is refused with the hint to split, and split when asked: parts that
// name the first.
func TestService_DraftSplit(t *testing.T) {
	r := newRig(t, nil)
	var ids []string
	r.b.Update(t, func(tx *storage.Tx) error {
		for i := range euis.MaxCommodities + 1 {
			ids = append(ids, fmt.Sprintf("bat_%03d", i))
			if err := putDeclarable(tx, sandbox, ids[i]); err != nil {
				return err
			}
		}
		return nil
	})
	_, err := r.draft(sandbox, request(ids...))
	e := wantError(t, "101 batches", err, 422, apierr.DetailEUSystemRule)
	if !strings.Contains(e.Message, `"split": true`) || len(e.Details) != 1 || e.Details[0].Field != "statement.commodities" {
		t.Errorf("101 batches: %+v, want the hint to split and the field statement.commodities", e)
	}
	req := request(ids...)
	req.Split = true
	parts, err := r.draft(sandbox, req)
	if err != nil || len(parts) != 2 {
		t.Fatalf("split: %d parts, %v", len(parts), err)
	}
	for i, d := range parts {
		if d.SplitOf != parts[0].ID || d.Part != i+1 || d.Status != storage.DDSDraft || len(d.History) != 1 {
			t.Errorf("part %d: splitOf %s, part %d, %s, history %s", i+1, d.SplitOf, d.Part, d.Status, history(d))
		}
	}
	if a, b := len(payloadOf(t, parts[0]).Commodities), len(payloadOf(t, parts[1]).Commodities); a+b != len(ids) || a > euis.MaxCommodities {
		t.Errorf("commodities of the parts: %d and %d", a, b)
	}
}

// TestService_DraftSupplementaryUnit: a DOMESTIC statement declares the
// batch's supplementary unit whatever its HS heading, and no border
// crossing; an IMPORT of a heading without one declares none.
func TestService_DraftSupplementaryUnit(t *testing.T) {
	r := newRig(t, nil)
	r.declarable(t, sandbox, "bat_1")
	r.b.Update(t, func(tx *storage.Tx) error {
		b, err := tx.FindBatch(sandbox, "bat_1")
		if err != nil {
			return err
		}
		unit := json.Number("5")
		b.SupplementaryUnit, b.SupplementaryUnitType = &unit, "KSD"
		return tx.PutBatch(sandbox, b)
	})
	c := payloadOf(t, r.mustDraft(t, sandbox, request("bat_1"))).Commodities[0]
	if c.SupplementaryUnit != nil || c.SupplementaryUnitType != "" {
		t.Errorf("IMPORT of 1801: %+v, want no supplementary unit", c)
	}
	req := request("bat_1")
	*req.ActivityType = euis.ActivityDomestic
	p := payloadOf(t, r.mustDraft(t, sandbox, req))
	if c := p.Commodities[0]; c.SupplementaryUnit == nil || *c.SupplementaryUnit != "5" || c.SupplementaryUnitType != "KSD" || p.BorderCrossCountry != "" {
		t.Errorf("DOMESTIC: %+v, border crossing %q", c, p.BorderCrossCountry)
	}
}

func TestDraftRequest_Validate(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		req  dds.DraftRequest
		want []string // code at field
	}{
		{"Empty", dds.DraftRequest{}, []string{"REQUIRED at batchIds", "REQUIRED at activityType", "REQUIRED at operatorUuid"}},
		{"Values", dds.DraftRequest{BatchIDs: []string{"bat_1", "bat_1"}, ActivityType: str("SELL"), OperatorUUID: str("x"),
			InternalReference: str(strings.Repeat("x", euis.MaxInternalReferenceLen+1)), CountryOfActivity: str("US"), BorderCrossCountry: str("NL"),
			ReferencedStatements: []dds.Reference{{ReferenceNumber: "nope", VerificationNumber: "!"}},
			SpeciesInfo:          map[string][]dds.Species{"bat_2": {{}}}},
			[]string{"INVALID_VALUE at batchIds[1]", "INVALID_VALUE at activityType", "INVALID_VALUE at operatorUuid", "INVALID_VALUE at internalReference",
				"INVALID_VALUE at referencedStatements[0].referenceNumber", "INVALID_VALUE at referencedStatements[0].verificationNumber",
				"INVALID_VALUE at speciesInfo.bat_2", "REQUIRED at speciesInfo.bat_2[0]", "INVALID_VALUE at countryOfActivity"}},
		{"NoBatchesBadValues", dds.DraftRequest{BatchIDs: []string{}, ActivityType: str("SELL"), OperatorUUID: str("x"),
			InternalReference: str(strings.Repeat("x", 36))},
			[]string{"REQUIRED at batchIds", "INVALID_VALUE at activityType", "INVALID_VALUE at operatorUuid", "INVALID_VALUE at internalReference"}},
		{"TooManyBatches", *withBatches(request(), dds.MaxBatches+1), []string{"INVALID_VALUE at batchIds"}},
		{"RoleTrader", dds.DraftRequest{BatchIDs: []string{"bat_1"}, ActivityType: str("IMPORT"), OperatorUUID: str(operator), OperatorRole: str("TRADER")},
			[]string{"INVALID_VALUE at operatorRole"}},
		{"Valid", *request("bat_1"), nil},
		{"ValidRepresentative", dds.DraftRequest{BatchIDs: []string{"bat_1"}, ActivityType: str("IMPORT"), OperatorUUID: str(operator),
			OperatorRole: str(euis.RoleRepresentativeOperator)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.Validate()
			got := map[string]bool{}
			if err != nil {
				for _, d := range apierr.From(err).Details {
					got[d.Code+" at "+d.Field] = true
				}
				if apierr.From(err).Status != apierr.StatusBadRequest {
					t.Errorf("status %d, want 400", apierr.From(err).Status)
				}
			}
			want := map[string]bool{}
			for _, w := range tc.want {
				want[w] = true
			}
			if !maps.Equal(got, want) {
				t.Errorf("got %v, want %v", slices.Sorted(maps.Keys(got)), tc.want)
			}
		})
	}
}

func withBatches(req *dds.DraftRequest, n int) *dds.DraftRequest {
	for i := range n {
		req.BatchIDs = append(req.BatchIDs, fmt.Sprintf("bat_%d", i))
	}
	return req
}

// TestService_DraftOperatorIdentification: the operator's reference
// numbers and address in its supplier mapping go into the statement, and
// come back from the stored payload to be filed.
func TestService_DraftOperatorIdentification(t *testing.T) {
	r := newRig(t, nil)
	r.declarable(t, sandbox, "bat_1")
	ids := []storage.OperatorIdentifier{{Type: "vat", Value: "NL001234567B01"}, {Type: "gln", Value: "8712345000004"}}
	r.b.Update(t, func(tx *storage.Tx) error {
		sup, err := tx.FindSupplier(sandbox, "V-1")
		if err != nil {
			return err
		}
		sup.Identifiers, sup.Street, sup.PostalCode, sup.City, sup.FullAddress = ids, "Havenstraat 1", "3011 AA", "Rotterdam", "Havenstraat 1, 3011 AA Rotterdam"
		return tx.PutSupplier(sandbox, sup)
	})
	d := r.mustDraft(t, sandbox, request("bat_1"))
	want := dds.PayloadOperator{Name: "Importer BV", Country: "NL", EORI: "NL123456789",
		Identifiers: []dds.Identifier{{Type: "vat", Value: "NL001234567B01"}, {Type: "gln", Value: "8712345000004"}},
		Street:      "Havenstraat 1", PostalCode: "3011 AA", City: "Rotterdam", FullAddress: "Havenstraat 1, 3011 AA Rotterdam"}
	p := payloadOf(t, d)
	if !reflect.DeepEqual(p.Operator, want) {
		t.Fatalf("operator %+v, want %+v", p.Operator, want)
	}
	o := p.Statement().Operator
	if refs := o.ReferenceNumbers(); len(refs) != 3 || refs[0].Type != "eori" || refs[2] != (euis.OperatorIdentifier{Type: "gln", Value: "8712345000004"}) ||
		o.FullAddress != want.FullAddress || o.City != "Rotterdam" {
		t.Errorf("statement operator %+v, want the EORI and both identifiers and the address", o)
	}
}
