package main_test

// End-to-end test of simplified declarations (docs/simplified.md) against
// the real binary and the sandbox's simulated EU information system: a
// representative files a micro operator's declaration whose producer is
// located by postal address, and follows it to VALIDATED with its
// sdIdentifier and declaration number, each change in the ledger; then
// withdraws it.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

const sdPath = eudrAPI + "/declarations/sd"

var sdReferencePattern = regexp.MustCompile(`^S[0-9]{2}FR[0-9A-Z]{9}$`)

type sdView struct {
	SDID               string  `json:"sdId"`
	Status             string  `json:"status"`
	OperatorRole       string  `json:"operatorRole"`
	InternalReference  string  `json:"internalReference"`
	SDIdentifier       *string `json:"sdIdentifier"`
	ReferenceNumber    *string `json:"referenceNumber"`
	VerificationNumber *string `json:"verificationNumber"`
	EUStatus           *string `json:"euStatus"`
	Reasons            []string
	History            []struct {
		Status      string `json:"status"`
		Actor       string `json:"actor"`
		LedgerIndex *int64 `json:"ledgerIndex"`
	} `json:"history"`
	Submission json.RawMessage `json:"submission"`
	Statement  json.RawMessage `json:"statement"`
}

func sdGet(t testing.TB, base, key, ref string) sdView {
	t.Helper()
	var v sdView
	apitest.Do(t, "GET", base+sdPath+"/"+ref, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &v)
	return v
}

func sdHistory(v sdView) string {
	var out []string
	for _, h := range v.History {
		out = append(out, h.Status)
	}
	return strings.Join(out, " ")
}

// TestSD_SandboxFlow: POST /declarations/sd answers 202 with the sdId and
// the sd_submission job (a replay answers the same and files nothing
// more); the declaration goes DRAFT -> SUBMITTED -> VALIDATED in the
// sandbox with an sdIdentifier, an S-number and a verification number,
// keeps its postal address as given, is found by each of its names, and
// every change has its sd.status ledger entry. Withdrawing
// it marks it WITHDRAWN; withdrawing again is 409. A producer without a
// location is a 422 at its path.
func TestSD_SandboxFlow(t *testing.T) {
	t.Parallel()
	p := startServer(t, ddsFast...)
	k := p.CreateKey(t, sandbox)
	key, base := k.Key, p.SandboxURL
	body := map[string]any{
		"operatorRole": "REPRESENTATIVE_MSPO", "activityType": "DOMESTIC", "countryOfActivity": "FR",
		"operator": map[string]any{"name": "Ferme Dupont", "country": "FR", "identifiers": []any{map[string]any{"type": "vat", "value": "FR40303265045"}}},
		"commodities": []any{map[string]any{"hsHeading": "4403", "descriptionOfGoods": "Oak logs", "netWeightKg": json.Number("9999999999.999999"), "percentageEstimation": 5,
			"producers": []any{map[string]any{"country": "FR", "name": "Ferme Dupont",
				"postalAddresses": []any{map[string]any{"producerStreet": "1 Chemin des Vignes", "producerPostalCode": "21000", "producerCity": "Dijon"}}}}}},
	}
	hdr := apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey()))
	r := apitest.Do(t, "POST", base+sdPath, hdr, body).WantStatus(t, http.StatusAccepted)
	var acc struct{ SDID, JobID string }
	r.Decode(t, &acc)
	if !strings.HasPrefix(acc.SDID, "sd_") || !jobIDPattern.MatchString(acc.JobID) || r.Header.Get("Location") != eudrAPI+"/jobs/"+acc.JobID {
		t.Fatalf("202: %s, Location %s", r.Body, r.Header.Get("Location"))
	}
	replay := apitest.Do(t, "POST", base+sdPath, hdr, body).WantStatus(t, http.StatusAccepted)
	if string(replay.Body) != string(r.Body) || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %s", replay.Body)
	}

	var v sdView
	waitUntil(t, ddsWait, "the declaration VALIDATED", func() bool {
		v = sdGet(t, base, key, acc.SDID)
		return v.Status == "VALIDATED" || v.Status == "REJECTED"
	})
	if v.Status != "VALIDATED" || v.SDIdentifier == nil || !ddsUUIDPattern.MatchString(*v.SDIdentifier) || v.ReferenceNumber == nil ||
		!sdReferencePattern.MatchString(*v.ReferenceNumber) || v.VerificationNumber == nil || !ddsVerificationPattern.MatchString(*v.VerificationNumber) ||
		sdHistory(v) != "DRAFT SUBMITTED VALIDATED" || v.History[0].Actor != k.KeyID || v.OperatorRole != "REPRESENTATIVE_MSPO" ||
		len(v.InternalReference) != 14 || string(v.Submission) != "null" {
		t.Fatalf("validated: %+v", v)
	}
	for _, want := range []string{`"producerPostalCode":"21000"`, `"producerCity":"Dijon"`, `"netWeightKg":9999999999.999999`} {
		if !strings.Contains(string(v.Statement), want) {
			t.Errorf("statement lacks %s: %s", want, v.Statement)
		}
	}
	for _, ref := range []string{*v.SDIdentifier, *v.ReferenceNumber} {
		if got := sdGet(t, base, key, ref); got.SDID != acc.SDID {
			t.Errorf("by %s: %s", ref, got.SDID)
		}
	}
	var job struct {
		Type, Status string
		LedgerProofs []json.RawMessage
	}
	apitest.Do(t, "GET", base+eudrAPI+"/jobs/"+acc.JobID, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &job)
	if job.Type != "sd_submission" || job.Status != "COMPLETED" || len(job.LedgerProofs) != 2 {
		t.Errorf("job %+v", job)
	}
	for _, h := range v.History {
		var e ledEntry
		ledGet(t, base, key, fmt.Sprintf("/ledger/entries/%d", *h.LedgerIndex), &e)
		data, _ := base64.StdEncoding.DecodeString(e.Data)
		var f map[string]any
		if err := json.Unmarshal(data, &f); err != nil || f["type"] != "sd.status" || f["sdId"] != acc.SDID || f["status"] != h.Status {
			t.Errorf("ledger entry %d: %s", e.Index, data)
		}
	}

	w := apitest.Do(t, "POST", base+sdPath+"/"+*v.ReferenceNumber+"/withdraw", idem(key), nil).WantStatus(t, http.StatusOK)
	var wv sdView
	w.Decode(t, &wv)
	if wv.Status != "WITHDRAWN" || sdHistory(wv) != "DRAFT SUBMITTED VALIDATED WITHDRAWN" || wv.Statement != nil {
		t.Errorf("withdrawn: %s", w.Body)
	}
	// Listed by its status, without its statement; a status that is none
	// is a 400 naming the parameter.
	for status, want := range map[string]int{"WITHDRAWN": 1, "VALIDATED": 0, "": 1} {
		var list []sdView
		apitest.Do(t, "GET", base+sdPath+"?status="+status, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &list)
		if len(list) != want || (want == 1 && (list[0].SDID != acc.SDID || list[0].Statement != nil || list[0].Status != "WITHDRAWN")) {
			t.Errorf("GET %s?status=%s: %+v; want %d declarations", sdPath, status, list, want)
		}
	}
	if bad := apitest.Do(t, "GET", base+sdPath+"?status=REVOKED&limit=0", apitest.WithKey(key), nil).WantStatus(t, http.StatusBadRequest); !strings.Contains(string(bad.Body), "query.status") ||
		!strings.Contains(string(bad.Body), "query.limit") {
		t.Errorf("a bad status and limit: %s; want both named", bad.Body)
	}
	again := apitest.Do(t, "POST", base+sdPath+"/"+acc.SDID+"/withdraw", idem(key), nil).WantStatus(t, http.StatusConflict)
	if !strings.Contains(string(again.Body), "SD_NOT_WITHDRAWABLE") {
		t.Errorf("withdrawing again: %s", again.Body)
	}

	delete(body["commodities"].([]any)[0].(map[string]any)["producers"].([]any)[0].(map[string]any), "postalAddresses")
	bad := apitest.Do(t, "POST", base+sdPath, idem(key), body).WantStatus(t, http.StatusUnprocessableEntity)
	if !strings.Contains(string(bad.Body), `"field":"commodities[0].producers[0]"`) || !strings.Contains(string(bad.Body), "LOCATION_REQUIRED") {
		t.Errorf("no location: %s", bad.Body)
	}
}
