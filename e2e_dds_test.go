package main_test

// End-to-end tests of due-diligence statements (docs/dds.md) against the
// real binary and the sandbox's simulated EU information system, sped up
// with eu_system.sandbox_delay and eu_system.sandbox_poll_schedule: the
// whole sandbox flow from plots to a revoked statement, with its Annex II
// payload, its signed dds.* deliveries (apitest.Receiver) and the ledger
// entry of every state change, down to `eudr ledger verify` on the stopped
// store; and the simulator's rejections. This file also holds what the
// statement tests share; the others are in e2e_dds_*_test.go.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
	"golang.org/x/mod/sumdb/tlog"
)

const (
	ddsPath    = eudrAPI + "/declarations/dds"
	ddsJobType = "dds_submission"
	// ddsWait bounds every wait for a status or a delivery.
	ddsWait = 20 * time.Second
	// ddsZeroUUID is the operator UUID the sandbox always rejects.
	ddsZeroUUID = "00000000-0000-0000-0000-000000000000"
	// ddsOperatorUUID is the EU operator of the supplier mappings that
	// file statements: an importer established in the Netherlands.
	ddsOperatorUUID = "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b"
	ddsEORI         = "NL123456789"
	// ddsMismatch matches no supplier mapping of these tests.
	ddsMismatch = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	ddsReceiver = "/dds"
)

// ddsFast makes the simulated EU system decide 1s after submission and
// the job poll it soon after, and keeps rate limits out of the way.
var ddsFast = append([]string{"EUDR_EU_SYSTEM_SANDBOX_DELAY=1s", "EUDR_EU_SYSTEM_SANDBOX_POLL_SCHEDULE=200ms,500ms,1s"}, noRateLimit...)

var (
	ddsIDPattern           = regexp.MustCompile(`^dds_[0-9A-HJKMNP-TV-Z]{26}$`)
	ddsUUIDPattern         = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	ddsVerificationPattern = regexp.MustCompile(`^[0-9A-Z]{8}$`)
	// ddsSixDecimals is a coordinate as the EU system keeps it.
	ddsSixDecimals = regexp.MustCompile(`^-?[0-9]+\.[0-9]{6}$`)
)

// --- views ---

// ddsView is a DDS as GET /declarations/dds/{ddsId} answers it; lists
// and revoke leave out the statement.
type ddsView struct {
	DDSID                string            `json:"ddsId"`
	Status               string            `json:"status"`
	BatchIDs             []string          `json:"batchIds"`
	ActivityType         string            `json:"activityType"`
	OperatorUUID         string            `json:"operatorUuid"`
	InternalReference    *string           `json:"internalReference"`
	ReferencedStatements []json.RawMessage `json:"referencedStatements"`
	EUUUID               *string           `json:"euUuid"`
	ReferenceNumber      *string           `json:"referenceNumber"`
	VerificationNumber   *string           `json:"verificationNumber"`
	Reasons              []string          `json:"reasons"`
	SplitOf              *string           `json:"splitOf"`
	Part                 *int              `json:"part"`
	History              []ddsChange       `json:"history"`
	CreatedAt            string            `json:"createdAt"`
	SubmittedAt          *string           `json:"submittedAt"`
	Submission           *ddsSubmission    `json:"submission"`
	Statement            json.RawMessage   `json:"statement"`
}

// ddsSubmission is a DDS's submission job while it is under way or after
// it failed.
type ddsSubmission struct {
	JobID         string          `json:"jobId"`
	Status        string          `json:"status"`
	Attempts      int             `json:"attempts"`
	LastAttempt   *jobAttemptView `json:"lastAttempt"`
	NextAttemptAt *string         `json:"nextAttemptAt"`
	Error         json.RawMessage `json:"error"`
}

// jobAttemptView is the last failed attempt of a job that is trying again.
type jobAttemptView struct {
	At      string `json:"at"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

type ddsChange struct {
	At          string  `json:"at"`
	Status      string  `json:"status"`
	Actor       string  `json:"actor"`
	Note        *string `json:"note"`
	LedgerIndex *int64  `json:"ledgerIndex"`
}

// ddsStatement is the Annex II payload (the members these tests read).
type ddsStatement struct {
	OperatorRole            string `json:"operatorRole"`
	InternalReferenceNumber string `json:"internalReferenceNumber"`
	ActivityType            string `json:"activityType"`
	Operator                struct {
		Name    string `json:"name"`
		Country string `json:"country"`
		EORI    string `json:"eori"`
	} `json:"operator"`
	CountryOfActivity     string   `json:"countryOfActivity"`
	BorderCrossCountry    string   `json:"borderCrossCountry"`
	OperatorUUID          string   `json:"operatorUuid"`
	SupplierOperatorUUIDs []string `json:"supplierOperatorUuids"`
	Commodities           []struct {
		Position           int     `json:"position"`
		HSHeading          string  `json:"hsHeading"`
		DescriptionOfGoods string  `json:"descriptionOfGoods"`
		NetWeightKg        float64 `json:"netWeightKg"`
		Producers          []struct {
			Position        int             `json:"position"`
			Country         string          `json:"country"`
			Name            string          `json:"name"`
			GeometryGeojson json.RawMessage `json:"geometryGeojson"`
		} `json:"producers"`
	} `json:"commodities"`
}

// ddsCollection is a producer's geolocation, numbers as written.
type ddsCollection struct {
	Type     string `json:"type"`
	Features []struct {
		Type     string `json:"type"`
		Geometry struct {
			Type        string `json:"type"`
			Coordinates any    `json:"coordinates"`
		} `json:"geometry"`
		Properties map[string]any `json:"properties"`
	} `json:"features"`
}

// --- helpers ---

// ddsDecode decodes a DDS strictly and checks what every answer holds.
func ddsDecode(t testing.TB, r *apitest.Response, raw []byte) ddsView {
	t.Helper()
	var v ddsView
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: DDS: %v: %s", r.Request, err, raw)
	}
	if !ddsIDPattern.MatchString(v.DDSID) || v.BatchIDs == nil || v.Reasons == nil || v.ReferencedStatements == nil || len(v.History) == 0 {
		t.Fatalf("%s: DDS ddsId %q, batchIds, reasons and referencedStatements arrays, a history: %s", r.Request, v.DDSID, raw)
	}
	apitest.ParseTime(t, v.CreatedAt)
	if v.History[0].Status != "DRAFT" || v.History[len(v.History)-1].Status != v.Status {
		t.Errorf("%s: history %s ends elsewhere than status %s or does not start at DRAFT", r.Request, ddsHistory(v), v.Status)
	}
	for i, h := range v.History {
		apitest.ParseTime(t, h.At)
		if h.LedgerIndex == nil || h.Actor == "" {
			t.Errorf("%s: history[%d] %+v without ledgerIndex or actor", r.Request, i, h)
		}
		if i > 0 && h.LedgerIndex != nil && v.History[i-1].LedgerIndex != nil && *h.LedgerIndex <= *v.History[i-1].LedgerIndex {
			t.Errorf("%s: history ledger indexes do not increase: %s", r.Request, raw)
		}
	}
	return v
}

// ddsHistory is the statuses of a DDS's history, space-separated.
func ddsHistory(v ddsView) string {
	var s []string
	for _, h := range v.History {
		s = append(s, h.Status)
	}
	return strings.Join(s, " ")
}

func ddsActors(v ddsView) []string {
	var s []string
	for _, h := range v.History {
		s = append(s, h.Actor)
	}
	return s
}

// ddsMapOperator maps vendor to EU operator uuid, an importer established in
// the Netherlands, with eori ("" for none).
func ddsMapOperator(t testing.TB, base, key, vendor, uuid, eori string) {
	t.Helper()
	body := map[string]any{"erpVendorId": vendor, "euOperatorUuid": uuid, "name": "Importer " + vendor + " BV",
		"country": "NL", "role": "OPERATOR"}
	if eori != "" {
		body["eori"] = eori
	}
	postSupplier(t, base, key, apitest.NewIdemKey(), body).WantStatus(t, http.StatusOK)
}

// ddsPlots is n compliant cocoa plots from Ghana on a grid, supplied by
// vendor, unnamed: each a producer of its own.
func ddsPlots(n int, lon0, lat0 float64, vendor string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = ledPlot(lon0+float64(i%50)*0.005, lat0+float64(i/50)*0.005, "GH", vendor)
	}
	return out
}

// ddsVerifiedBatch screens features (all must be COMPLIANT) and registers
// a VERIFIED batch of cocoa beans (HS 18010000, 12,500.5 kg) of them from
// vendor; it returns the batch and polygon IDs.
func ddsVerifiedBatch(t testing.TB, base, key, vendor string, features ...string) (string, []string) {
	t.Helper()
	want := make([]string, len(features))
	for i := range want {
		want[i] = "COMPLIANT"
	}
	_, ids := ledScreen(t, base, key, want, features...)
	return ledVerified(t, base, key, vendor, ids...), ids
}

// ddsLink links a batch to a fresh shipment entering at Rotterdam and waits
// for the link's job.
func ddsLink(t testing.TB, base, key, batchID string) {
	t.Helper()
	acc := ledAccepted(t, ledLink(t, base, key, batchID, "SHP-"+apitest.RandHex(4)), "linkId", "jobId")
	if j := ledWaitJob(t, base, key, acc["jobId"], ledLinkJobType); j.Status != "COMPLETED" {
		t.Fatalf("link job %s: %s %+v", j.JobID, j.Status, j.Error)
	}
}

// ddsLinkedBatch is ddsVerifiedBatch linked to a shipment.
func ddsLinkedBatch(t testing.TB, base, key, vendor string, features ...string) (string, []string) {
	t.Helper()
	batch, ids := ddsVerifiedBatch(t, base, key, vendor, features...)
	ddsLink(t, base, key, batch)
	return batch, ids
}

// ddsBody is a POST /declarations/dds body: an IMPORT by operator.
func ddsBody(operator string, batchIDs ...string) map[string]any {
	return map[string]any{"batchIds": batchIDs, "activityType": "IMPORT", "operatorUuid": operator}
}

// ddsCreate posts a draft with a fresh Idempotency-Key.
func ddsCreate(t testing.TB, base, key string, body any) *apitest.Response {
	t.Helper()
	return apitest.Do(t, "POST", base+ddsPath, idem(key), body)
}

// ddsDraft posts a draft that must be made, and returns it.
func ddsDraft(t testing.TB, base, key string, body any) ddsView {
	t.Helper()
	r := ddsCreate(t, base, key, body).WantStatus(t, http.StatusOK)
	d := ddsDecode(t, r, r.Body)
	if d.Status != "DRAFT" || ddsHistory(d) != "DRAFT" || d.EUUUID != nil || d.ReferenceNumber != nil ||
		d.VerificationNumber != nil || d.SubmittedAt != nil || len(d.Statement) == 0 {
		t.Fatalf("%s: a new draft: %s", r.Request, r.Body)
	}
	return d
}

// ddsGet reads a DDS.
func ddsGet(t testing.TB, base, key, id string) ddsView {
	t.Helper()
	r := apitest.Do(t, "GET", base+ddsPath+"/"+id, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	v := ddsDecode(t, r, r.Body)
	if v.DDSID != id || len(v.Statement) == 0 {
		t.Fatalf("%s: %s", r.Request, r.Body)
	}
	return v
}

// ddsList lists the DDSs with query ("status=X") and returns their IDs,
// checking that the list leaves out the statements.
func ddsList(t testing.TB, base, key, query string) []string {
	t.Helper()
	r := apitest.Do(t, "GET", base+ddsPath+"?"+query, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	var items []json.RawMessage
	r.Decode(t, &items)
	if items == nil {
		t.Fatalf("%s: not an array: %s", r.Request, r.Body)
	}
	ids := []string{}
	for _, it := range items {
		v := ddsDecode(t, r, it)
		if v.Statement != nil {
			t.Errorf("%s: a list item carries its statement", r.Request)
		}
		ids = append(ids, v.DDSID)
	}
	return ids
}

// ddsSubmitWith posts a submit with Idempotency-Key ik, which must be
// accepted: exactly {"jobId"} and Location. It returns the response and
// the job ID.
func ddsSubmitWith(t testing.TB, base, key, id, ik string) (*apitest.Response, string) {
	t.Helper()
	r := apitest.Do(t, "POST", base+ddsPath+"/"+id+"/submit", apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", ik)), nil)
	r.WantStatus(t, http.StatusAccepted)
	return r, checkAccepted(t, r)
}

// ddsSubmit submits a DDS with a fresh Idempotency-Key and returns the job ID.
func ddsSubmit(t testing.TB, base, key, id string) string {
	t.Helper()
	_, job := ddsSubmitWith(t, base, key, id, apitest.NewIdemKey())
	return job
}

// ddsPost posts to a DDS's action (submit, revoke) with a fresh
// Idempotency-Key.
func ddsPost(t testing.TB, base, key, ref, action string) *apitest.Response {
	t.Helper()
	return apitest.Do(t, "POST", base+ddsPath+"/"+ref+"/"+action, idem(key), nil)
}

// ddsWaitStatus polls a DDS until it has status want.
func ddsWaitStatus(t testing.TB, base, key, id, want string) ddsView {
	t.Helper()
	var v ddsView
	waitUntil(t, ddsWait, "dds "+id+" to be "+want, func() bool {
		v = ddsGet(t, base, key, id)
		return v.Status == want
	})
	return v
}

// ddsEventData reads a delivery's data and checks its members are exactly keys.
func ddsEventData(t testing.TB, r apitest.Delivery, keys ...string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(r.Env.Data, &m); err != nil {
		t.Fatalf("%s data: %v: %s", r.Env.EventType, err, r.Env.Data)
	}
	if got := ledSortedKeys(m); !slices.Equal(got, keys) {
		t.Errorf("%s data members %v, want %v: %s", r.Env.EventType, got, keys, r.Env.Data)
	}
	return m
}

func ddsString(t testing.TB, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Errorf("%s is not a string", raw)
	}
	return s
}

// ddsDeliveries is what the receiver's ddsReceiver path got of event type
// typ about DDS id, in arrival order.
func ddsDeliveries(rc *apitest.Receiver, typ, id string) []apitest.Delivery {
	var out []apitest.Delivery
	for _, r := range rc.Requests(ddsReceiver, "") {
		if r.Env.EventType == typ && dataField(&r, "ddsId") == id {
			out = append(out, r)
		}
	}
	return out
}

// ddsWaitEvent waits until the receiver has accepted a typ delivery about
// DDS id and returns it, its signatures checked with secret.
func ddsWaitEvent(t testing.TB, rc *apitest.Receiver, secret, typ, id string) apitest.Delivery {
	t.Helper()
	var got apitest.Delivery
	waitUntil(t, ddsWait, typ+" of "+id, func() bool {
		for _, r := range ddsDeliveries(rc, typ, id) {
			if r.Status/100 == 2 {
				got = r
				return true
			}
		}
		return false
	})
	if got.SigErr != nil || got.Header.Get("X-Service-Event-Type") != typ {
		t.Errorf("%s delivery: signature %v, X-Service-Event-Type %q", typ, got.SigErr, got.Header.Get("X-Service-Event-Type"))
	}
	apitest.CheckSignatures(t, got, secret)
	return got
}

// ddsStatementOf decodes a DDS's Annex II payload.
func ddsStatementOf(t testing.TB, v ddsView) ddsStatement {
	t.Helper()
	var s ddsStatement
	if err := json.Unmarshal(v.Statement, &s); err != nil {
		t.Fatalf("dds %s statement: %v: %s", v.DDSID, err, v.Statement)
	}
	return s
}

// ddsGeolocation decodes a producer's geolocation, which must be a GeoJSON
// FeatureCollection (not base64 text), keeping numbers as written.
func ddsGeolocation(t testing.TB, raw json.RawMessage) ddsCollection {
	t.Helper()
	var c ddsCollection
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil || c.Type != "FeatureCollection" || len(c.Features) == 0 {
		t.Fatalf("geometryGeojson is not a GeoJSON FeatureCollection (%v): %.300s", err, raw)
	}
	return c
}

// ddsNumbers is every number of decoded coordinates, as written.
func ddsNumbers(v any) []string {
	switch x := v.(type) {
	case json.Number:
		return []string{x.String()}
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, ddsNumbers(e)...)
		}
		return out
	}
	return []string{fmt.Sprintf("<%T %v>", v, v)}
}

// ddsCheckLedger checks the ledger entry of every history entry of v: the
// entry names the DDS, the status, the actor and the SHA-256 of the
// statement (as GET serves it), and is included in the signed checkpoint.
func ddsCheckLedger(t testing.TB, base, key string, v ddsView, statement []byte) {
	t.Helper()
	var cp ledCheckpoint
	ledGet(t, base, key, "/ledger/checkpoint", &cp)
	size, root := ledOpenCheckpoint(t, base, key, cp.Note)
	sum := sha256.Sum256(statement)
	for _, h := range v.History {
		var e ledEntry
		ledGet(t, base, key, fmt.Sprintf("/ledger/entries/%d", *h.LedgerIndex), &e)
		data, err := base64.StdEncoding.DecodeString(e.Data)
		if err != nil || e.LeafHash != ledLeaf(data) || e.Index != *h.LedgerIndex {
			t.Errorf("entry %d of %s: index %d, leafHash %s, data %q (%v)", *h.LedgerIndex, h.Status, e.Index, e.LeafHash, e.Data, err)
			continue
		}
		var f map[string]any
		if err := json.Unmarshal(data, &f); err != nil {
			t.Fatalf("entry %d: %v: %s", e.Index, err, data)
		}
		if f["type"] != "dds.status" || f["ddsId"] != v.DDSID || f["status"] != h.Status || f["actor"] != h.Actor ||
			f["statementSha256"] != hex.EncodeToString(sum[:]) {
			t.Errorf("entry %d of %s %s by %s, statement sha256 %x: %s", e.Index, v.DDSID, h.Status, h.Actor, sum, data)
		}
		switch h.Status {
		case "DRAFT":
			if f["euUuid"] != nil || f["referenceNumber"] != nil {
				t.Errorf("the DRAFT entry names EU numbers: %s", data)
			}
		case "SUBMITTED":
			if f["euUuid"] != polStr(v.EUUUID) {
				t.Errorf("the SUBMITTED entry does not name EU UUID %s: %s", polStr(v.EUUUID), data)
			}
		case "VALIDATED":
			if f["euUuid"] != polStr(v.EUUUID) || f["referenceNumber"] != polStr(v.ReferenceNumber) || f["verificationNumber"] != polStr(v.VerificationNumber) {
				t.Errorf("the VALIDATED entry does not name the EU numbers of %+v: %s", v, data)
			}
		}
		var inc ledInclusion
		ledGet(t, base, key, fmt.Sprintf("/ledger/proofs/inclusion?index=%d&treeSize=%d", e.Index, size), &inc)
		if err := tlog.CheckRecord(ledHashes(t, inc.Proof), size, root, e.Index, ledHash(t, e.LeafHash)); err != nil {
			t.Errorf("entry %d (%s) is not proved in the signed checkpoint of %d: %v", e.Index, h.Status, size, err)
		}
	}
}

// ddsReferencePattern is the form of a reference number the simulator
// gives a statement submitted at submittedAt for country: YY, the country,
// 10 digits or capital letters.
func ddsReferencePattern(t testing.TB, submittedAt *string, country string) *regexp.Regexp {
	t.Helper()
	if submittedAt == nil {
		t.Fatal("no submittedAt")
	}
	yy := apitest.ParseTime(t, *submittedAt).UTC().Year() % 100
	return regexp.MustCompile(fmt.Sprintf(`^%02d%s[0-9A-Z]{10}$`, yy, country))
}

// --- the sandbox flow ---

func TestDDS_SandboxFlow(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, ddsFast...)
	k := p.CreateKey(t, sandbox)
	key, base := k.Key, p.SandboxURL
	reg := subscribe(t, p, key, rc, ddsReceiver, "dds.submitted", "dds.validated", "dds.rejected")
	ddsMapOperator(t, base, key, "V-DDS", ddsOperatorUUID, ddsEORI)

	// Two plots: a polygon written with 1 and 8 decimals, and a named
	// point with its area.
	polygon := polFeature(`{"type":"Polygon","coordinates":[[[-1.6,6.7],[-1.59876543,6.7],[-1.59876543,6.70123456],[-1.6,6.70123456],[-1.6,6.7]]]}`,
		map[string]any{"commodity": "cocoa", "producerCountry": "GH", "supplierId": "V-DDS"})
	point := polFeature(`{"type":"Point","coordinates":[-1.65123461,6.65123449]}`,
		map[string]any{"commodity": "cocoa", "producerCountry": "GH", "supplierId": "V-DDS", "area": 2.5,
			"producerName": "Kwame Mensah", "productionPlace": "Ahafo"})
	batch, _ := ddsLinkedBatch(t, base, key, "V-DDS", polygon, point)

	body := ddsBody(ddsOperatorUUID, batch)
	body["internalReference"] = "PO-4711"
	d := ddsDraft(t, base, key, body)
	if d.ActivityType != "IMPORT" || d.OperatorUUID != ddsOperatorUUID || !slices.Equal(d.BatchIDs, []string{batch}) ||
		polStr(d.InternalReference) != "PO-4711" || d.SplitOf != nil || d.Part != nil || len(d.Reasons) != 0 ||
		!slices.Equal(ddsActors(d), []string{k.KeyID}) {
		t.Errorf("draft: %+v", d)
	}

	// The Annex II payload.
	s := ddsStatementOf(t, d)
	if s.OperatorRole != "OPERATOR" || s.ActivityType != "IMPORT" || s.InternalReferenceNumber != "PO-4711" ||
		s.Operator.Name != "Importer V-DDS BV" || s.Operator.Country != "NL" || s.Operator.EORI != ddsEORI ||
		s.CountryOfActivity != "NL" || s.BorderCrossCountry != "NL" || s.OperatorUUID != ddsOperatorUUID {
		t.Errorf("statement head: %.600s", d.Statement)
	}
	if len(s.Commodities) != 1 {
		t.Fatalf("statement commodities: %.600s", d.Statement)
	}
	c := s.Commodities[0]
	if c.Position != 1 || c.HSHeading != "180100" || c.NetWeightKg != 12500.5 || !strings.HasPrefix(c.DescriptionOfGoods, "cocoa") ||
		len(c.Producers) != 2 {
		t.Fatalf("commodity: position %d, hsHeading %q, netWeightKg %v, description %q, %d producers; want 1, 180100, 12500.5, cocoa..., 2",
			c.Position, c.HSHeading, c.NetWeightKg, c.DescriptionOfGoods, len(c.Producers))
	}
	// Each plot is a producer of its own (the polygon unnamed, the point
	// named), its geolocation a FeatureCollection with the EU's
	// properties and every coordinate at exactly 6 decimals, rounded.
	wantCoords := map[string][]string{
		"Polygon": {"-1.600000", "6.700000", "-1.598765", "6.700000", "-1.598765", "6.701235", "-1.600000", "6.701235", "-1.600000", "6.700000"},
		"Point":   {"-1.651235", "6.651234"},
	}
	seen := map[string]bool{}
	for j, pr := range c.Producers {
		fc := ddsGeolocation(t, pr.GeometryGeojson)
		if pr.Position != j+1 || pr.Country != "GH" || len(fc.Features) != 1 {
			t.Errorf("producer %d: position %d country %q, %d features: %s", j, pr.Position, pr.Country, len(fc.Features), pr.GeometryGeojson)
			continue
		}
		f := fc.Features[0]
		typ := f.Geometry.Type
		seen[typ] = true
		nums := ddsNumbers(f.Geometry.Coordinates)
		for _, n := range nums {
			if !ddsSixDecimals.MatchString(n) {
				t.Errorf("producer %d (%s): coordinate %s is not written with 6 decimals: %s", j, typ, n, pr.GeometryGeojson)
			}
		}
		if !slices.Equal(nums, wantCoords[typ]) {
			t.Errorf("producer %d (%s): coordinates %v, want %v", j, typ, nums, wantCoords[typ])
		}
		props := f.Properties
		if f.Type != "Feature" || props["ProducerCountry"] != "GH" {
			t.Errorf("producer %d: feature %s without ProducerCountry GH: %s", j, f.Type, pr.GeometryGeojson)
		}
		switch typ {
		case "Polygon":
			if pr.Name != "" || props["ProducerName"] != nil || props["Area"] != nil {
				t.Errorf("the unnamed polygon: name %q, properties %v", pr.Name, props)
			}
		case "Point":
			if pr.Name != "Kwame Mensah" || props["ProducerName"] != "Kwame Mensah" || props["ProductionPlace"] != "Ahafo" ||
				props["Area"] != json.Number("2.5") {
				t.Errorf("the named point: name %q, properties %v", pr.Name, props)
			}
		}
	}
	if !seen["Polygon"] || !seen["Point"] {
		t.Errorf("producers of %v, want the polygon and the point", seen)
	}
	if !slices.Equal(s.SupplierOperatorUUIDs, []string{ddsOperatorUUID}) {
		t.Errorf("supplierOperatorUuids %v", s.SupplierOperatorUUIDs)
	}
	// GET answers the draft as made, and lists it as a DRAFT.
	if g := ddsGet(t, base, key, d.DDSID); !bytes.Equal(g.Statement, d.Statement) || ddsHistory(g) != "DRAFT" {
		t.Errorf("GET of the draft: %s %.200s", ddsHistory(g), g.Statement)
	}
	if ids := ddsList(t, base, key, "status=DRAFT"); !slices.Equal(ids, []string{d.DDSID}) {
		t.Errorf("DRAFT list %v", ids)
	}

	// Submit: 202 with Location; the same request again is the same
	// answer replayed, another one is 409.
	ik := apitest.NewIdemKey()
	_, jobID := ddsSubmitWith(t, base, key, d.DDSID, ik)
	replay, again := ddsSubmitWith(t, base, key, d.DDSID, ik)
	if again != jobID || replay.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replayed submit: job %s (first %s), Idempotent-Replayed %q", again, jobID, replay.Header.Get("Idempotent-Replayed"))
	}
	apitest.WantError(t, ddsPost(t, base, key, d.DDSID, "submit"), http.StatusConflict, "CONFLICT", "DDS_NOT_DRAFT")

	// dds.submitted, then dds.validated a second later.
	sub := ddsWaitEvent(t, rc, reg.SigningSecret, "dds.submitted", d.DDSID)
	sd := ddsEventData(t, sub, "ddsId", "euUuid", "referenceNumber")
	euUUID := ddsString(t, sd["euUuid"])
	if !ddsUUIDPattern.MatchString(euUUID) || string(sd["referenceNumber"]) != "null" {
		t.Errorf("dds.submitted data: %s", sub.Env.Data)
	}
	val := ddsWaitEvent(t, rc, reg.SigningSecret, "dds.validated", d.DDSID)
	vd := ddsEventData(t, val, "ddsId", "referenceNumber", "verificationNumber")
	if !sub.At.Before(val.At) {
		t.Errorf("dds.validated arrived at %s, before dds.submitted at %s", val.At, sub.At)
	}
	if j := ledWaitJob(t, base, key, jobID, ddsJobType); j.Status != "COMPLETED" || j.Error != nil {
		t.Errorf("submission job %s: %s %+v", jobID, j.Status, j.Error)
	}

	v := ddsGet(t, base, key, d.DDSID)
	if v.Status != "VALIDATED" || ddsHistory(v) != "DRAFT SUBMITTED VALIDATED" ||
		!slices.Equal(ddsActors(v), []string{k.KeyID, "eu-system", "eu-system"}) {
		t.Fatalf("after dds.validated: %s by %v", ddsHistory(v), ddsActors(v))
	}
	ref := polStr(v.ReferenceNumber)
	if pat := ddsReferencePattern(t, v.SubmittedAt, "NL"); !pat.MatchString(ref) {
		t.Errorf("referenceNumber %q, want %s", ref, pat)
	}
	if !ddsVerificationPattern.MatchString(polStr(v.VerificationNumber)) || polStr(v.EUUUID) != euUUID {
		t.Errorf("verificationNumber %q, euUuid %q (dds.submitted named %s)", polStr(v.VerificationNumber), polStr(v.EUUUID), euUUID)
	}
	if ddsString(t, vd["referenceNumber"]) != ref || ddsString(t, vd["verificationNumber"]) != polStr(v.VerificationNumber) {
		t.Errorf("dds.validated data %s, want the DDS's numbers %s %s", val.Env.Data, ref, polStr(v.VerificationNumber))
	}
	if !bytes.Equal(v.Statement, d.Statement) {
		t.Error("the statement changed on filing")
	}
	ddsCheckLedger(t, base, key, v, v.Statement)
	apitest.WantError(t, ddsPost(t, base, key, d.DDSID, "submit"), http.StatusConflict, "CONFLICT", "DDS_NOT_DRAFT")

	// Revoke by the EU reference number: once.
	r := ddsPost(t, base, key, ref, "revoke").WantStatus(t, http.StatusOK)
	rv := ddsDecode(t, r, r.Body)
	if rv.DDSID != d.DDSID || rv.Status != "REVOKED" || ddsHistory(rv) != "DRAFT SUBMITTED VALIDATED REVOKED" ||
		rv.History[3].Actor != k.KeyID || polStr(rv.ReferenceNumber) != ref {
		t.Errorf("revoke: %s", r.Body)
	}
	apitest.WantError(t, ddsPost(t, base, key, ref, "revoke"), http.StatusConflict, "CONFLICT", "DDS_NOT_REVOCABLE")
	apitest.WantError(t, ddsPost(t, base, key, d.DDSID, "revoke"), http.StatusConflict, "CONFLICT", "DDS_NOT_REVOCABLE")
	apitest.WantError(t, ddsPost(t, base, key, d.DDSID, "submit"), http.StatusConflict, "CONFLICT", "DDS_NOT_DRAFT")
	apitest.WantError(t, ddsPost(t, base, key, "26NLZZZZZZZZZZ", "revoke"), http.StatusNotFound, "NOT_FOUND")
	if ids := ddsList(t, base, key, "status=REVOKED"); !slices.Equal(ids, []string{d.DDSID}) {
		t.Errorf("REVOKED list %v, want [%s]", ids, d.DDSID)
	}
	for _, st := range []string{"DRAFT", "SUBMITTED", "VALIDATED", "REJECTED"} {
		if ids := ddsList(t, base, key, "status="+st); len(ids) != 0 {
			t.Errorf("%s list %v, want none", st, ids)
		}
	}
	apitest.WantError(t, apitest.Do(t, "GET", base+ddsPath+"?status=FILED", apitest.WithKey(key), nil), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
	final := ddsGet(t, base, key, d.DDSID)
	ddsCheckLedger(t, base, key, final, final.Statement)

	// One delivery of each event, none rejected.
	for typ, n := range map[string]int{"dds.submitted": 1, "dds.validated": 1, "dds.rejected": 0} {
		if got := len(ddsDeliveries(rc, typ, d.DDSID)); got != n {
			t.Errorf("%d %s deliveries, want %d", got, typ, n)
		}
	}

	// The ledger still verifies offline once the appliance is stopped.
	entries := ledWalk(t, base, key)
	p.Stop(t)
	ledVerifyOK(t, p.DataDir, len(entries))
}

// --- rejections ---

func TestDDS_Rejected(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, ddsFast...)
	key, base := p.createKey(t, sandbox), p.SandboxURL
	reg := subscribe(t, p, key, rc, ddsReceiver, "dds.submitted", "dds.validated", "dds.rejected")
	ddsMapOperator(t, base, key, "V-REJ", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-REJ", ddsPlots(1, -1.4, 6.4, "V-REJ")...)

	// The zero UUID, and one that none of the batches' mappings has.
	cases := []struct{ name, operator string }{{"zero", ddsZeroUUID}, {"unmapped", ddsMismatch}}
	drafts := make([]ddsView, len(cases))
	for i, c := range cases {
		drafts[i] = ddsDraft(t, base, key, ddsBody(c.operator, batch))
		// The statement names the batch's operator mapping, and the
		// operator UUID asked for.
		s := ddsStatementOf(t, drafts[i])
		if drafts[i].OperatorUUID != c.operator || s.OperatorUUID != c.operator || s.Operator.EORI != ddsEORI {
			t.Errorf("%s: draft operator %s, statement operator %s %+v", c.name, drafts[i].OperatorUUID, s.OperatorUUID, s.Operator)
		}
		ddsSubmit(t, base, key, drafts[i].DDSID)
	}
	for i, c := range cases {
		d := drafts[i]
		ev := ddsWaitEvent(t, rc, reg.SigningSecret, "dds.rejected", d.DDSID)
		data := ddsEventData(t, ev, "ddsId", "reasons")
		var reasons []string
		json.Unmarshal(data["reasons"], &reasons)
		if !slices.Equal(reasons, []string{"OPERATOR_UUID_MISMATCH"}) {
			t.Errorf("%s: dds.rejected reasons %s, want [OPERATOR_UUID_MISMATCH]", c.name, data["reasons"])
		}
		v := ddsWaitStatus(t, base, key, d.DDSID, "REJECTED")
		if ddsHistory(v) != "DRAFT SUBMITTED REJECTED" || !slices.Equal(v.Reasons, []string{"OPERATOR_UUID_MISMATCH"}) ||
			v.ReferenceNumber != nil || v.VerificationNumber != nil || !ddsUUIDPattern.MatchString(polStr(v.EUUUID)) {
			t.Errorf("%s: rejected DDS %s reasons %v, reference %v, verification %v, euUuid %v",
				c.name, ddsHistory(v), v.Reasons, v.ReferenceNumber, v.VerificationNumber, polStr(v.EUUUID))
		}
		if len(ddsDeliveries(rc, "dds.submitted", d.DDSID)) == 0 {
			t.Errorf("%s: no dds.submitted before the rejection", c.name)
		}
		ddsCheckLedger(t, base, key, v, v.Statement)
		apitest.WantError(t, ddsPost(t, base, key, d.DDSID, "revoke"), http.StatusConflict, "CONFLICT", "DDS_NOT_REVOCABLE")
		apitest.WantError(t, ddsPost(t, base, key, d.DDSID, "submit"), http.StatusConflict, "CONFLICT", "DDS_NOT_DRAFT")
		if got := ddsGet(t, base, key, d.DDSID); got.Status != "REJECTED" {
			t.Errorf("%s: %s after the refused revoke", c.name, got.Status)
		}
		if n := len(ddsDeliveries(rc, "dds.validated", d.DDSID)); n != 0 {
			t.Errorf("%s: %d dds.validated deliveries of a rejected statement", c.name, n)
		}
	}
	if ids := ddsList(t, base, key, "status=REJECTED"); len(ids) != 2 || !slices.Contains(ids, drafts[0].DDSID) || !slices.Contains(ids, drafts[1].DDSID) {
		t.Errorf("REJECTED list %v", ids)
	}
}
