package main_test

// End-to-end tests of the refusals of the statement endpoints, the EU
// system's limits and the splitting of a statement over them.

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

func TestDDS_Refusals(t *testing.T) {
	t.Parallel()
	// Production's EU system is a relay on loopback, as an air-gapped
	// site's operator would configure it: named in the config and allowed.
	eu := newDDSFakeEU(t)
	p := startServer(t, append([]string{"EUDR_EU_SYSTEM_ENDPOINT=" + eu.srv.URL + "/tracesnt",
		"EUDR_EU_SYSTEM_ALLOW_PRIVATE_ENDPOINTS=true"}, ddsFast...)...)
	key, base := p.createKey(t, sandbox), p.SandboxURL
	ddsMapOperator(t, base, key, "V-OK", ddsOperatorUUID, ddsEORI)
	noEORI := "5b0f9a2c-1d3e-4f5a-8b6c-7d8e9f0a1b2c"
	ddsMapOperator(t, base, key, "V-NOEORI", noEORI, "")

	unlinked, _ := ddsVerifiedBatch(t, base, key, "V-OK", ddsPlots(1, -1.3, 6.3, "V-OK")...)
	linked, _ := ddsLinkedBatch(t, base, key, "V-OK", ddsPlots(1, -1.3, 6.2, "V-OK")...)

	// A batch not linked to a shipment, alone or next to a linked one.
	e := apitest.WantError(t, ddsCreate(t, base, key, ddsBody(ddsOperatorUUID, unlinked)), http.StatusUnprocessableEntity, "BUSINESS_RULE", "BATCH_NOT_VERIFIED")
	if d := e.Detail(t, "batchIds[0]"); !strings.Contains(d.Issue, unlinked) || !strings.Contains(d.Issue, "link") {
		t.Errorf("unlinked batch: %+v", d)
	}
	e = apitest.WantError(t, ddsCreate(t, base, key, ddsBody(ddsOperatorUUID, linked, unlinked)), http.StatusUnprocessableEntity, "BUSINESS_RULE", "BATCH_NOT_VERIFIED")
	e.Detail(t, "batchIds[1]")

	// An unknown batch: 404 naming it.
	unknown := "bat_01JZZZZZZZZZZZZZZZZZZZZZZZ"
	r := ddsCreate(t, base, key, ddsBody(ddsOperatorUUID, linked, unknown))
	if r.Status != http.StatusNotFound || !bytes.Contains(r.Body, []byte(`"code":"NOT_FOUND"`)) || !bytes.Contains(r.Body, []byte(unknown)) ||
		!bytes.Contains(r.Body, []byte(`"batchIds[1]"`)) {
		t.Errorf("unknown batch: %d %s, want 404 NOT_FOUND naming batchIds[1] %s", r.Status, r.Body, unknown)
	}

	// A bad body: every problem at once.
	bad := map[string]any{"batchIds": []string{linked, linked}, "activityType": "SELL", "operatorUuid": "not-a-uuid",
		"internalReference": strings.Repeat("x", 36), "countryOfActivity": "US",
		"referencedStatements": []map[string]string{{"referenceNumber": "26NL1", "verificationNumber": "x"}}, "colour": "red"}
	e = apitest.WantError(t, ddsCreate(t, base, key, bad), http.StatusBadRequest, "VALIDATION_FAILED",
		"INVALID_VALUE", "INVALID_VALUE", "INVALID_VALUE", "INVALID_VALUE", "INVALID_VALUE", "INVALID_VALUE", "INVALID_VALUE", "UNKNOWN_FIELD")
	for _, f := range []string{"batchIds[1]", "activityType", "operatorUuid", "internalReference", "countryOfActivity",
		"referencedStatements[0].referenceNumber", "referencedStatements[0].verificationNumber", "colour"} {
		e.Detail(t, f)
	}
	e = apitest.WantError(t, ddsCreate(t, base, key, map[string]any{"batchIds": []string{}}), http.StatusBadRequest, "VALIDATION_FAILED",
		"REQUIRED", "REQUIRED", "REQUIRED")
	for _, f := range []string{"batchIds", "activityType", "operatorUuid"} {
		e.Detail(t, f)
	}
	apitest.WantError(t, ddsCreate(t, base, key, `{"batchIds":`), http.StatusBadRequest, "VALIDATION_FAILED", "MALFORMED_JSON")
	apitest.WantError(t, apitest.Do(t, "POST", base+ddsPath, apitest.WithKey(key), ddsBody(ddsOperatorUUID, linked)), http.StatusBadRequest, "VALIDATION_FAILED", "IDEMPOTENCY_KEY_MISSING")
	apitest.WantError(t, ddsPost(t, base, key, "dds_01JZZZZZZZZZZZZZZZZZZZZZZZ", "submit"), http.StatusNotFound, "NOT_FOUND")
	apitest.WantError(t, apitest.Do(t, "GET", base+ddsPath+"/dds_01JZZZZZZZZZZZZZZZZZZZZZZZ", apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
	if ids := ddsList(t, base, key, ""); len(ids) != 0 {
		t.Errorf("refused requests left DDSs behind: %v", ids)
	}

	// IMPORT for an operator whose mapping has no EORI: the EU rule.
	noEORIBatch, _ := ddsLinkedBatch(t, base, key, "V-NOEORI", ddsPlots(1, -1.3, 6.1, "V-NOEORI")...)
	e = apitest.WantError(t, ddsCreate(t, base, key, ddsBody(noEORI, noEORIBatch)), http.StatusUnprocessableEntity, "BUSINESS_RULE", "EU_SYSTEM_RULE")
	if d := e.Detail(t, "statement.operator.eori"); !strings.Contains(d.Issue, "EORI") || !strings.Contains(d.Issue, "IMPORT") {
		t.Errorf("EORI refusal: %+v, want the rule named", d)
	}
	if strings.Contains(e.Message, "split") {
		t.Errorf("the EORI refusal hints at split: %q", e.Message)
	}
	// ... which "split" does not cure.
	b := ddsBody(noEORI, noEORIBatch)
	b["split"] = true
	apitest.WantError(t, ddsCreate(t, base, key, b), http.StatusUnprocessableEntity, "BUSINESS_RULE", "EU_SYSTEM_RULE")

	// 1,001 unnamed plots: 1,001 producers of one commodity, over the EU's
	// 1,000 per commodity.
	ddsMapOperator(t, base, key, "V-BIG", ddsOperatorUUID, ddsEORI)
	big, bigIDs := ddsLinkedBatch(t, base, key, "V-BIG", ddsPlots(1001, -1.9, 7.0, "V-BIG")...)
	b = ddsBody(ddsOperatorUUID, big)
	b["internalReference"] = "BIG-LOT"
	e = apitest.WantError(t, ddsCreate(t, base, key, b), http.StatusUnprocessableEntity, "BUSINESS_RULE", "EU_SYSTEM_RULE")
	if d := e.Detail(t, "statement.commodities[0].producers"); !strings.Contains(d.Issue, "1,001") || !strings.Contains(d.Issue, "1,000") {
		t.Errorf("limit refusal: %+v, want 1,001 producers against the limit of 1,000", d)
	}
	if !strings.Contains(e.Message, "split") {
		t.Errorf("limit refusal message %q does not hint at split", e.Message)
	}
	// With "split": a list of statements that each keep every limit. By
	// the rule of euis.Split the commodity is divided into entries of
	// 1,000 and 1 producers, its net mass apportioned to the millionth,
	// and both entries fit in one statement (at most 100 commodities and
	// 10,000 producers).
	b["split"] = true
	r = ddsCreate(t, base, key, b).WantStatus(t, http.StatusOK)
	var parts []json.RawMessage
	r.Decode(t, &parts)
	producers, weight := 0, 0.0
	places := map[string]bool{}
	var sizes []int
	var weights []float64
	for i, raw := range parts {
		v := ddsDecode(t, r, raw)
		s := ddsStatementOf(t, v)
		if v.Status != "DRAFT" || !slices.Equal(v.BatchIDs, []string{big}) || s.InternalReferenceNumber != polStr(v.InternalReference) {
			t.Errorf("statement %d: status %s batches %v internalReference %v (statement %q)", i, v.Status, v.BatchIDs,
				polStr(v.InternalReference), s.InternalReferenceNumber)
		}
		if len(s.Commodities) > 100 {
			t.Errorf("statement %d: %d commodities", i, len(s.Commodities))
		}
		for ci, c := range s.Commodities {
			if len(c.Producers) > 1000 || c.HSHeading != "180100" || c.Position != ci+1 {
				t.Errorf("statement %d: commodity %d at position %d, HS %s, %d producers", i, ci, c.Position, c.HSHeading, len(c.Producers))
			}
			for j, pr := range c.Producers {
				if pr.Position != j+1 {
					t.Errorf("statement %d: producer %d at position %d", i, j, pr.Position)
				}
				fc := ddsGeolocation(t, pr.GeometryGeojson)
				places[strings.Join(ddsNumbers(fc.Features[0].Geometry.Coordinates), ",")] = true
			}
			producers += len(c.Producers)
			weight += c.NetWeightKg
			sizes = append(sizes, len(c.Producers))
			weights = append(weights, c.NetWeightKg)
		}
		if g := ddsGet(t, base, key, v.DDSID); !bytes.Equal(g.Statement, v.Statement) {
			t.Errorf("GET of statement %d differs from the answer", i)
		}
		if len(parts) == 1 && (v.SplitOf != nil || v.Part != nil || polStr(v.InternalReference) != "BIG-LOT") {
			t.Errorf("the one statement: splitOf %v part %v internalReference %v", polStr(v.SplitOf), v.Part, polStr(v.InternalReference))
		}
	}
	if producers != 1001 || len(places) != len(bigIDs) || math.Abs(weight-12500.5) > 1e-6 {
		t.Errorf("split: %d producers over %d distinct plots, %v kg in all; want the 1,001 plots and 12500.5 kg", producers, len(places), weight)
	}
	if len(parts) != 1 || !slices.Equal(sizes, []int{1000, 1}) || len(weights) != 2 ||
		math.Abs(weights[0]-12488.011988) > 1e-9 || math.Abs(weights[1]-12.488012) > 1e-9 {
		t.Errorf("split: %d statements, commodity entries of %v producers and %v kg; want 1 statement, [1000 1], [12488.011988 12.488012]",
			len(parts), sizes, weights)
	}
	// "split" on a statement within the limits: a list of one.
	b = ddsBody(ddsOperatorUUID, linked)
	b["split"] = true
	r = ddsCreate(t, base, key, b).WantStatus(t, http.StatusOK)
	parts = nil
	r.Decode(t, &parts)
	if len(parts) != 1 {
		t.Fatalf("split within the limits: %s", r.Body)
	}
	if v := ddsDecode(t, r, parts[0]); v.SplitOf != nil || v.Part != nil {
		t.Errorf("split within the limits: %+v", v)
	}

	// A draft is submitted once.
	d := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, linked))
	ddsSubmit(t, base, key, d.DDSID)
	apitest.WantError(t, ddsPost(t, base, key, d.DDSID, "submit"), http.StatusConflict, "CONFLICT", "DDS_NOT_DRAFT")
	ddsWaitStatus(t, base, key, d.DDSID, "VALIDATED")
	apitest.WantError(t, ddsPost(t, base, key, d.DDSID, "submit"), http.StatusConflict, "CONFLICT", "DDS_NOT_DRAFT")

	ddsProduction(t, p, eu)
}
