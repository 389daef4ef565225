package main_test

// End-to-end tests of due-diligence statements (API.md section 7, README
// "Due-diligence statements") against the real binary and the sandbox's
// simulated EU information system, sped up with
// eu_system.sandbox_delay and eu_system.sandbox_poll_schedule: the whole
// sandbox flow from plots to a revoked statement, with its Annex II
// payload, its signed dds.* deliveries (apitest.Receiver) and the ledger
// entry of every state change, down to `eudr ledger verify` on the stopped
// store; the simulator's
// rejections; every refusal of the endpoints, the EU system's limits and
// splitting, production without and with EU system credentials (whose
// auth key never shows); a statement that is being followed when the
// appliance is killed with SIGKILL; and referenced statements, which
// group the statements they name or keep a statement from being filed.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
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

// --- 1. the sandbox flow ---

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

// --- 2. rejections ---

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

// --- 3. refusals, limits, production ---

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

// ddsFakeEU records what the appliance sends to the EU system and answers
// 503: the system is down.
type ddsFakeEU struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []string // header and body of each request
}

func newDDSFakeEU(t testing.TB) *ddsFakeEU {
	f := &ddsFakeEU{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", r.Method, r.URL)
		r.Header.Write(&b)
		b.Write(body)
		f.mu.Lock()
		f.reqs = append(f.reqs, b.String())
		f.mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *ddsFakeEU) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reqs)
}

// ddsProduction: production drafts without EU system credentials, but
// does not submit (422 EU_SYSTEM_NOT_CONFIGURED); credentials are stored
// and shown without their auth key, which no response, log line or
// request to the EU system carries. An endpoint given through the API is
// https only; eu, on plain http, is the configured production endpoint.
func ddsProduction(t *testing.T, p *serverProc, eu *ddsFakeEU) {
	const authKey = "AuthKey-e2e-9f3Kq7ZxW2mLp"
	live, base := p.createKey(t, production), p.ProductionURL
	var bodies [][]byte
	keep := func(r *apitest.Response) *apitest.Response {
		bodies = append(bodies, r.Body)
		return r
	}

	// Production screens against imported layers: a deforestation layer
	// covering the plot's region, its loss elsewhere.
	layer := map[string]any{"name": "E2E DDS loss", "kind": "deforestation", "version": "1", "source": "e2e",
		"features": json.RawMessage(polCollection(polFeature(polBoxGeometry(-1.95, 6.05, -1.94, 6.06, 6), map[string]any{}))),
		"coverage": json.RawMessage(polCollection(polFeature(polBoxGeometry(-2, 6, -1, 7, 1), map[string]any{})))}
	apitest.Do(t, "POST", base+enterpriseAPI+"/layers", apitest.Merge(apitest.Bearer(p.Login(t)), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())), layer).WantStatus(t, http.StatusOK)
	ddsMapOperator(t, base, live, "V-LIVE", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, live, "V-LIVE", ddsPlots(1, -1.5, 6.5, "V-LIVE")...)
	d := ddsDraft(t, base, live, ddsBody(ddsOperatorUUID, batch))

	for range 2 { // nothing is recorded: the second answer is the same
		e := apitest.WantError(t, keep(ddsPost(t, base, live, d.DDSID, "submit")), http.StatusUnprocessableEntity, "BUSINESS_RULE", "EU_SYSTEM_NOT_CONFIGURED")
		if !strings.Contains(e.Message, "credentials/eu-system") {
			t.Errorf("not configured: %q does not say how to configure", e.Message)
		}
	}
	if v := ddsGet(t, base, live, d.DDSID); v.Status != "DRAFT" || ddsHistory(v) != "DRAFT" {
		t.Errorf("after refused submits: %s", ddsHistory(v))
	}
	credURL := base + eudrAPI + "/credentials/eu-system"
	apitest.WantError(t, keep(apitest.Do(t, "GET", credURL, apitest.WithKey(live), nil)), http.StatusNotFound, "NOT_FOUND")

	// A bad PUT lists its problems, without the key.
	e := apitest.WantError(t, keep(apitest.Do(t, "PUT", credURL, apitest.WithKey(live), map[string]any{"authKey": authKey})), http.StatusBadRequest,
		"VALIDATION_FAILED", "REQUIRED", "REQUIRED")
	e.Detail(t, "username")
	e.Detail(t, "clientId")
	apitest.WantError(t, keep(apitest.Do(t, "PUT", credURL, apitest.WithKey(live), map[string]any{"username": "op-user", "authKey": authKey,
		"clientId": "eudr-test", "endpoint": "ftp://relay.example/tracesnt"})), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
	endpoint := eu.srv.URL + "/tracesnt"
	e = apitest.WantError(t, keep(apitest.Do(t, "PUT", credURL, apitest.WithKey(live), map[string]any{"username": "op-user", "authKey": authKey,
		"clientId": "eudr-test", "endpoint": endpoint})), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
	if d := e.Detail(t, "endpoint"); !strings.Contains(d.Issue, "https URL without user name or password") {
		t.Errorf("plain http endpoint through the API: issue %q", d.Issue)
	}
	if n := len(eu.requests()); n != 0 {
		t.Fatalf("the EU system received %d requests before any submission", n)
	}

	put := keep(apitest.Do(t, "PUT", credURL, apitest.WithKey(live), map[string]any{"username": "op-user", "authKey": authKey,
		"clientId": "eudr-test", "endpoint": "production"})).WantStatus(t, http.StatusOK)
	get := keep(apitest.Do(t, "GET", credURL, apitest.WithKey(live), nil)).WantStatus(t, http.StatusOK)
	for _, r := range []*apitest.Response{put, get} {
		var c map[string]any
		r.Decode(t, &c)
		if got := ledSortedKeys(rawKeys(t, r.Body)); !slices.Equal(got, []string{"authKeySet", "clientId", "effectiveEndpoint", "endpoint", "updatedAt", "username"}) {
			t.Errorf("%s: members %v", r.Request, got)
		}
		if c["username"] != "op-user" || c["clientId"] != "eudr-test" || c["endpoint"] != "production" || c["effectiveEndpoint"] != endpoint ||
			c["authKeySet"] != true {
			t.Errorf("%s: %s", r.Request, r.Body)
		}
		if s, _ := c["updatedAt"].(string); s != "" {
			apitest.ParseTime(t, s)
		}
	}
	// The sandbox has no credentials of its own.
	apitest.WantError(t, keep(apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/credentials/eu-system", apitest.WithKey(p.createKey(t, sandbox)), nil)), http.StatusNotFound, "NOT_FOUND")

	// Now the statement goes to the EU system, which is down: the request
	// carries the username, not the key.
	_, jobID := ddsSubmitWith(t, base, live, d.DDSID, apitest.NewIdemKey())
	waitUntil(t, ddsWait, "a request to the EU system", func() bool { return len(eu.requests()) > 0 })
	for _, req := range eu.requests() {
		if !strings.Contains(req, "op-user") || strings.Contains(req, authKey) ||
			strings.Contains(req, base64.StdEncoding.EncodeToString([]byte(authKey))) {
			t.Errorf("request to the EU system: username there %v, auth key there %v:\n%.2000s",
				strings.Contains(req, "op-user"), strings.Contains(req, authKey), req)
		}
	}
	// The job stays RUNNING and says why: the outcome of its last attempt
	// and when it tries again (production's first poll delay, 30 min), on
	// the job and on the statement, which stays a DRAFT.
	var j jobView
	waitUntil(t, ddsWait, "the job to show its failed attempt", func() bool {
		r := keep(apitest.Do(t, "GET", jobURL(base, jobID), apitest.WithKey(live), nil)).WantStatus(t, http.StatusOK)
		j = jobView{}
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&j); err != nil {
			t.Fatalf("%s: %v: %s", r.Request, err, r.Body)
		}
		return j.Attempts > 0
	})
	var last jobAttemptView
	if err := json.Unmarshal(j.LastAttempt, &last); err != nil || j.Status != "RUNNING" || j.Error != nil || j.NextAttemptAt == nil ||
		last.Code != "EU_SYSTEM_UNAVAILABLE" || last.Message != "the EU information system answered HTTP 503 (Service Unavailable) to submitDds; trying again" {
		t.Fatalf("a submission job while the EU system answers 503: %+v (lastAttempt %s)", j, j.LastAttempt)
	}
	if wait := apitest.ParseTime(t, *j.NextAttemptAt).Sub(apitest.ParseTime(t, last.At)); wait != 30*time.Minute {
		t.Errorf("next attempt %s after the last, want 30m", wait)
	}
	dr := keep(apitest.Do(t, "GET", base+ddsPath+"/"+d.DDSID, apitest.WithKey(live), nil)).WantStatus(t, http.StatusOK)
	v := ddsDecode(t, dr, dr.Body)
	if sub := v.Submission; v.Status != "DRAFT" || sub == nil || sub.JobID != jobID || sub.Status != "RUNNING" ||
		sub.Attempts != j.Attempts || sub.LastAttempt == nil || *sub.LastAttempt != last || sub.NextAttemptAt == nil || *sub.NextAttemptAt != *j.NextAttemptAt {
		t.Errorf("the statement while its submission is retried: %s, submission %+v", v.Status, sub)
	}
	for _, b := range bodies {
		if bytes.Contains(b, []byte(authKey)) {
			t.Errorf("a response carries the auth key: %s", b)
		}
	}
	assertLogHasNoSecrets(t, p, authKey)
}

// rawKeys is the members of a JSON object.
func rawKeys(t testing.TB, body []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("not a JSON object: %s", body)
	}
	return m
}

// --- 4. kill -9 while a statement is followed ---

func TestDDS_CrashKill9(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, append([]string{jobsLeaseEnv, "EUDR_EU_SYSTEM_SANDBOX_DELAY=4s",
		"EUDR_EU_SYSTEM_SANDBOX_POLL_SCHEDULE=200ms,500ms,1s"}, noRateLimit...)...)
	key, base := p.createKey(t, sandbox), p.SandboxURL
	reg := subscribe(t, p, key, rc, ddsReceiver, "dds.submitted", "dds.validated", "dds.rejected")
	ddsMapOperator(t, base, key, "V-CRASH", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-CRASH", ddsPlots(2, -1.2, 6.6, "V-CRASH")...)

	// First a statement revoked while SUBMITTED: it stays REVOKED, and
	// is never validated.
	early := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	earlyJob := ddsSubmit(t, base, key, early.DDSID)
	ddsWaitEvent(t, rc, reg.SigningSecret, "dds.submitted", early.DDSID)
	r := ddsPost(t, base, key, early.DDSID, "revoke").WantStatus(t, http.StatusOK)
	if rv := ddsDecode(t, r, r.Body); rv.Status != "REVOKED" || ddsHistory(rv) != "DRAFT SUBMITTED REVOKED" {
		t.Errorf("revoke while SUBMITTED: %s", r.Body)
	}

	d := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	jobID := ddsSubmit(t, base, key, d.DDSID)

	// Killed while the EU system still processes the statement and the
	// job polls it.
	sub := ddsWaitEvent(t, rc, reg.SigningSecret, "dds.submitted", d.DDSID)
	euUUID := dataField(&sub, "euUuid")
	p.Kill(t)
	if !ddsUUIDPattern.MatchString(euUUID) {
		t.Fatalf("dds.submitted data %s", sub.Env.Data)
	}

	p = p.Restart(t)
	base = p.SandboxURL
	v := ddsWaitStatus(t, base, key, d.DDSID, "VALIDATED")
	if polStr(v.EUUUID) != euUUID || ddsHistory(v) != "DRAFT SUBMITTED VALIDATED" {
		t.Errorf("after the restart: euUuid %s (dds.submitted named %s), history %s", polStr(v.EUUUID), euUUID, ddsHistory(v))
	}
	if pat := ddsReferencePattern(t, v.SubmittedAt, "NL"); !pat.MatchString(polStr(v.ReferenceNumber)) {
		t.Errorf("referenceNumber %q, want %s", polStr(v.ReferenceNumber), pat)
	}
	// The EU system kept the statement SUBMITTED for its 4 seconds.
	if at := apitest.ParseTime(t, v.History[2].At); at.Sub(apitest.ParseTime(t, *v.SubmittedAt)) < 3500*time.Millisecond {
		t.Errorf("VALIDATED at %s, well before 4s after submission at %s", v.History[2].At, *v.SubmittedAt)
	}
	val := ddsWaitEvent(t, rc, reg.SigningSecret, "dds.validated", d.DDSID)
	if dataField(&val, "referenceNumber") != polStr(v.ReferenceNumber) || dataField(&val, "verificationNumber") != polStr(v.VerificationNumber) {
		t.Errorf("dds.validated data %s, want %s %s", val.Env.Data, polStr(v.ReferenceNumber), polStr(v.VerificationNumber))
	}
	if j := ledWaitJob(t, base, key, jobID, ddsJobType); j.Status != "COMPLETED" {
		t.Errorf("submission job after the restart: %s %+v", j.Status, j.Error)
	}
	// One event each (a delivery may be repeated after the kill, never
	// with another event ID), and one filing.
	for _, typ := range []string{"dds.submitted", "dds.validated"} {
		ids := map[string]bool{}
		for _, r := range ddsDeliveries(rc, typ, d.DDSID) {
			ids[r.Env.EventID] = true
			if typ == "dds.submitted" && dataField(&r, "euUuid") != euUUID {
				t.Errorf("a dds.submitted names EU UUID %s, not %s: the statement was filed twice", dataField(&r, "euUuid"), euUUID)
			}
		}
		if len(ids) != 1 {
			t.Errorf("%d %s events, want 1", len(ids), typ)
		}
	}
	if n := len(ddsDeliveries(rc, "dds.rejected", d.DDSID)); n != 0 {
		t.Errorf("%d dds.rejected deliveries", n)
	}
	ddsCheckLedger(t, base, key, v, v.Statement)

	// By now the EU system would have validated the revoked one.
	if e := ddsGet(t, base, key, early.DDSID); e.Status != "REVOKED" || ddsHistory(e) != "DRAFT SUBMITTED REVOKED" ||
		e.ReferenceNumber != nil || len(ddsDeliveries(rc, "dds.validated", early.DDSID)) != 0 {
		t.Errorf("the statement revoked while SUBMITTED: %s, reference %v, %d dds.validated", ddsHistory(e),
			polStr(e.ReferenceNumber), len(ddsDeliveries(rc, "dds.validated", early.DDSID)))
	} else {
		ddsCheckLedger(t, base, key, e, e.Statement)
	}
	if j := ledWaitJob(t, base, key, earlyJob, ddsJobType); j.Status != "COMPLETED" {
		t.Errorf("the revoked statement's job: %s %+v", j.Status, j.Error)
	}
	entries := ledWalk(t, base, key)
	p.Stop(t)
	ledVerifyOK(t, p.DataDir, len(entries))
}

// --- 5. referenced statements ---

// TestDDS_ReferencedStatements: a statement referencing a validated one is
// filed and groups it, which can then not be revoked; a statement
// referencing a grouped one, or with a wrong verification number, is
// rejected without being filed; revoking the grouping statement frees the
// first.
func TestDDS_ReferencedStatements(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, ddsFast...)
	key, base := p.createKey(t, sandbox), p.SandboxURL
	reg := subscribe(t, p, key, rc, ddsReceiver, "dds.submitted", "dds.validated", "dds.rejected")
	ddsMapOperator(t, base, key, "V-GRP", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-GRP", ddsPlots(1, -1.1, 6.5, "V-GRP")...)

	first := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	ddsSubmit(t, base, key, first.DDSID)
	v1 := ddsWaitStatus(t, base, key, first.DDSID, "VALIDATED")
	ref, ver := polStr(v1.ReferenceNumber), polStr(v1.VerificationNumber)
	refBody := func(verification string) map[string]any {
		b := ddsBody(ddsOperatorUUID, batch)
		b["referencedStatements"] = []map[string]string{{"referenceNumber": ref, "verificationNumber": verification}}
		return b
	}

	second := ddsDraft(t, base, key, refBody(ver))
	var refs []map[string]string
	for _, raw := range second.ReferencedStatements {
		var m map[string]string
		json.Unmarshal(raw, &m)
		refs = append(refs, m)
	}
	var sp struct {
		ReferencedStatements []map[string]string `json:"referencedStatements"`
	}
	json.Unmarshal(second.Statement, &sp)
	want := []map[string]string{{"referenceNumber": ref, "verificationNumber": ver}}
	if fmt.Sprint(refs) != fmt.Sprint(want) || fmt.Sprint(sp.ReferencedStatements) != fmt.Sprint(want) {
		t.Errorf("referenced statements: view %v, statement %v, want %v", refs, sp.ReferencedStatements, want)
	}
	ddsSubmit(t, base, key, second.DDSID)
	v2 := ddsWaitStatus(t, base, key, second.DDSID, "VALIDATED")

	// The first is grouped into the second now: the EU system refuses its
	// withdrawal.
	e := apitest.WantError(t, ddsPost(t, base, key, ref, "revoke"), http.StatusConflict, "CONFLICT", "DDS_NOT_REVOCABLE")
	if len(e.Details) == 1 && !strings.Contains(e.Details[0].Issue, "GROUPED") {
		t.Errorf("revoke of a grouped statement: %q does not say why", e.Details[0].Issue)
	}
	if g := ddsGet(t, base, key, first.DDSID); g.Status != "VALIDATED" {
		t.Errorf("the grouped statement is %s after the refused revoke", g.Status)
	}

	// Referencing the grouped statement, or with a wrong verification
	// number: rejected before filing.
	cases := []struct{ verification, reason string }{{ver, "REFERENCED_STATEMENT_EXISTING_NON_USABLE"}, {"WRONG1234", "REFERENCED_STATEMENT_NON_EXISTENT"}}
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = ddsDraft(t, base, key, refBody(c.verification)).DDSID
		ddsSubmit(t, base, key, ids[i])
	}
	for i, c := range cases {
		v := ddsWaitStatus(t, base, key, ids[i], "REJECTED")
		if ddsHistory(v) != "DRAFT REJECTED" || v.EUUUID != nil || v.SubmittedAt != nil || len(v.Reasons) != 1 ||
			!strings.HasPrefix(v.Reasons[0], c.reason) || !strings.Contains(v.Reasons[0], ref) {
			t.Errorf("%s: %s, euUuid %v, reasons %v; want DRAFT REJECTED, not filed, %s naming %s", c.reason, ddsHistory(v),
				polStr(v.EUUUID), v.Reasons, c.reason, ref)
		}
		ev := ddsWaitEvent(t, rc, reg.SigningSecret, "dds.rejected", ids[i])
		var reasons []string
		json.Unmarshal(ddsEventData(t, ev, "ddsId", "reasons")["reasons"], &reasons)
		if !slices.Equal(reasons, v.Reasons) {
			t.Errorf("dds.rejected reasons %v, want %v", reasons, v.Reasons)
		}
		if n := len(ddsDeliveries(rc, "dds.submitted", ids[i])); n != 0 {
			t.Errorf("%s: %d dds.submitted of a statement never filed", c.reason, n)
		}
		ddsCheckLedger(t, base, key, v, v.Statement)
	}

	// Revoking the grouping statement frees the first.
	ddsPost(t, base, key, polStr(v2.ReferenceNumber), "revoke").WantStatus(t, http.StatusOK)
	r := ddsPost(t, base, key, ref, "revoke").WantStatus(t, http.StatusOK)
	if v := ddsDecode(t, r, r.Body); v.DDSID != first.DDSID || v.Status != "REVOKED" {
		t.Errorf("revoke of the freed statement: %s", r.Body)
	}
}
