package main_test

// End-to-end test of the rest of the simplified-declaration service
// (docs/simplified.md) against the real binary and the sandbox's simulated
// EU information system: a validated declaration is updated, listed by its
// new internal reference, looked up by its numbers as another operator
// would, and refused an update once withdrawn.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

// TestSD_UpdateAndLookUp: POST /declarations/sd/{sdId}/update replaces a
// VALIDATED declaration's content, the status unchanged, with a history
// entry and an sd.status ledger entry whose statementSha256 is new; a
// replay answers the same; a change of role is a 400. GET
// /declarations/sd?internalReference= finds it by its new reference.
// POST /declarations/sd-references/lookup answers the declaration as
// updated, postal address included, and GET of the number answers what
// was stored; a wrong verification number is found false. Once withdrawn,
// an update is 409 SD_NOT_UPDATABLE.
func TestSD_UpdateAndLookUp(t *testing.T) {
	t.Parallel()
	p := startServer(t, ddsFast...)
	k := p.CreateKey(t, sandbox)
	key, base := k.Key, p.SandboxURL
	declaration := func(description string) map[string]any {
		return map[string]any{
			"operatorRole": "REPRESENTATIVE_MSPO", "activityType": "DOMESTIC", "countryOfActivity": "FR", "internalReference": "LOT-2026-A",
			"operator": map[string]any{"name": "Ferme Dupont", "country": "FR", "identifiers": []any{map[string]any{"type": "vat", "value": "FR40303265045"}}},
			"commodities": []any{map[string]any{"hsHeading": "4403", "descriptionOfGoods": description, "netWeightKg": json.Number("1200.5"), "percentageEstimation": 5,
				"producers": []any{map[string]any{"country": "FR", "name": "Ferme Dupont",
					"postalAddresses": []any{map[string]any{"producerStreet": "1 Chemin des Vignes", "producerPostalCode": "21000", "producerCity": "Dijon"}}}}}},
		}
	}
	var acc struct{ SDID string }
	apitest.Do(t, "POST", base+sdPath, idem(key), declaration("Oak logs")).WantStatus(t, http.StatusAccepted).Decode(t, &acc)
	var v sdView
	waitUntil(t, ddsWait, "the declaration VALIDATED", func() bool {
		v = sdGet(t, base, key, acc.SDID)
		return v.Status == "VALIDATED" || v.Status == "REJECTED"
	})
	if v.Status != "VALIDATED" {
		t.Fatalf("filed: %+v", v)
	}

	changed := declaration("Oak logs, sawn")
	changed["internalReference"] = "LOT-2026-B"
	hdr := idem(key)
	r := apitest.Do(t, "POST", base+sdPath+"/"+acc.SDID+"/update", hdr, changed).WantStatus(t, http.StatusOK)
	var u sdView
	r.Decode(t, &u)
	if u.Status != "VALIDATED" || sdHistory(u) != "DRAFT SUBMITTED VALIDATED VALIDATED" || u.History[3].Actor != k.KeyID ||
		u.InternalReference != "LOT-2026-B" || *u.ReferenceNumber != *v.ReferenceNumber || !strings.Contains(string(u.Statement), "Oak logs, sawn") {
		t.Fatalf("updated: %s", r.Body)
	}
	if replay := apitest.Do(t, "POST", base+sdPath+"/"+acc.SDID+"/update", hdr, changed).WantStatus(t, http.StatusOK); string(replay.Body) != string(r.Body) {
		t.Errorf("replay: %s", replay.Body)
	}
	sums := map[string]bool{}
	for _, h := range u.History[2:] {
		var e ledEntry
		ledGet(t, base, key, fmt.Sprintf("/ledger/entries/%d", *h.LedgerIndex), &e)
		data, _ := base64.StdEncoding.DecodeString(e.Data)
		var f map[string]any
		if err := json.Unmarshal(data, &f); err != nil || f["type"] != "sd.status" || f["status"] != "VALIDATED" {
			t.Errorf("ledger entry %d: %s", e.Index, data)
		}
		sums[fmt.Sprint(f["statementSha256"])] = true
	}
	if len(sums) != 2 {
		t.Errorf("the update's ledger entry does not anchor a new statement hash: %v", sums)
	}
	micro := declaration("Oak logs, sawn")
	micro["operatorRole"] = "MICRO_OPERATOR"
	if bad := apitest.Do(t, "POST", base+sdPath+"/"+acc.SDID+"/update", idem(key), micro).WantStatus(t, http.StatusBadRequest); !strings.Contains(string(bad.Body), `"field":"operatorRole"`) {
		t.Errorf("a change of role: %s", bad.Body)
	}
	var list []sdView
	apitest.Do(t, "GET", base+sdPath+"?internalReference=LOT-2026-B", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &list)
	if len(list) != 1 || list[0].SDID != acc.SDID {
		t.Errorf("by the new internal reference: %+v", list)
	}

	lookupPath := eudrAPI + "/declarations/sd-references"
	pair := map[string]any{"referenceNumber": *v.ReferenceNumber, "verificationNumber": *v.VerificationNumber}
	var found struct {
		Found       bool
		Declaration json.RawMessage
		Actor       string
	}
	l := apitest.Do(t, "POST", base+lookupPath+"/lookup", idem(key), pair).WantStatus(t, http.StatusOK)
	l.Decode(t, &found)
	if !found.Found || found.Actor != k.KeyID || !strings.Contains(string(found.Declaration), "Oak logs, sawn") ||
		!strings.Contains(string(found.Declaration), `"producerCity":"Dijon"`) || !strings.Contains(string(found.Declaration), `"operatorRole":"REPRESENTATIVE_MSPO"`) {
		t.Errorf("look-up: %s", l.Body)
	}
	if stored := apitest.Do(t, "GET", base+lookupPath+"/"+*v.ReferenceNumber, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK); string(stored.Body) != string(l.Body) {
		t.Errorf("stored look-up %s, want %s", stored.Body, l.Body)
	}
	pair["verificationNumber"] = "WRONG999"
	if nf := apitest.Do(t, "POST", base+lookupPath+"/lookup", idem(key), pair).WantStatus(t, http.StatusOK); !strings.Contains(string(nf.Body), `"found":false`) ||
		!strings.Contains(string(nf.Body), `"declaration":null`) {
		t.Errorf("a wrong verification number: %s", nf.Body)
	}

	apitest.Do(t, "POST", base+sdPath+"/"+acc.SDID+"/withdraw", idem(key), nil).WantStatus(t, http.StatusOK)
	if again := apitest.Do(t, "POST", base+sdPath+"/"+acc.SDID+"/update", idem(key), declaration("Oak logs")).WantStatus(t, http.StatusConflict); !strings.Contains(string(again.Body), "SD_NOT_UPDATABLE") {
		t.Errorf("updating a withdrawn declaration: %s", again.Body)
	}
}
