package main_test

// End-to-end tests of polygons (docs/screening.md, docs/sandbox.md,
// docs/jobs.md, docs/webhooks.md, errors as docs/api.md says) against the
// real binary: the sandbox fixture layers with every outcome and the signed
// polygon.verified and polygon.failed deliveries. This file also holds the
// GeoJSON builders, views and helpers the polygon tests share; the others
// are in e2e_polygons_*_test.go.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

const (
	polPath        = eudrAPI + "/polygons"
	polJobType     = "polygon_ingestion"
	polContentType = "application/geo+json"
	// polPage is how many results GET /jobs/{jobId} shows by default: the
	// first page of the job's results.
	polPage = 1000
)

var (
	// polIDPattern is storage.PolygonID: "pol_" + the job's ULID + "_"
	// + the feature index in six digits.
	polIDPattern  = regexp.MustCompile(`^pol_([0-9A-HJKMNP-TV-Z]{26})_(\d{6})$`)
	polSHAPattern = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// --- GeoJSON builders: every coordinate written as text, never re-encoded ---

// polBoxGeometry is a Polygon geometry of the box lon0, lat0, lon1, lat1
// (counter-clockwise), each coordinate written with dec decimals.
func polBoxGeometry(lon0, lat0, lon1, lat1 float64, dec int) string {
	return `{"type":"Polygon","coordinates":[` + polBoxRing(lon0, lat0, lon1, lat1, dec, false) + `]}`
}

// polBoxRing is the closed ring of a box, counter-clockwise or clockwise.
func polBoxRing(lon0, lat0, lon1, lat1 float64, dec int, clockwise bool) string {
	pts := [][2]float64{{lon0, lat0}, {lon1, lat0}, {lon1, lat1}, {lon0, lat1}, {lon0, lat0}}
	if clockwise {
		slices.Reverse(pts)
	}
	return polRing(pts, dec)
}

// polRing writes positions as a ring (no closing added).
func polRing(pts [][2]float64, dec int) string {
	parts := make([]string, len(pts))
	for i, q := range pts {
		parts[i] = "[" + strconv.FormatFloat(q[0], 'f', dec, 64) + "," + strconv.FormatFloat(q[1], 'f', dec, 64) + "]"
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// polSquare is a square plot of half-side half degrees around lon, lat, 6 decimals.
func polSquare(lon, lat, half float64) string {
	return polBoxGeometry(lon-half, lat-half, lon+half, lat+half, 6)
}

// polFeature is a compact Feature of geometry (a GeoJSON geometry object as
// text) and props.
func polFeature(geometry string, props map[string]any) string {
	pj, err := json.Marshal(props)
	if err != nil {
		panic(err)
	}
	return `{"type":"Feature","geometry":` + geometry + `,"properties":` + string(pj) + `}`
}

// polCollection wraps features in a FeatureCollection.
func polCollection(features ...string) string {
	return `{"type":"FeatureCollection","features":[` + strings.Join(features, ",") + `]}`
}

// polBoxHa is the area in hectares of a small box on the WGS84 ellipsoid
// (the lengths of a degree of latitude and longitude at its middle).
func polBoxHa(lon0, lat0, lon1, lat1 float64) float64 {
	phi := (lat0 + lat1) / 2 * math.Pi / 180
	mLat := 111132.954 - 559.822*math.Cos(2*phi) + 1.175*math.Cos(4*phi)
	mLon := 111412.84*math.Cos(phi) - 93.5*math.Cos(3*phi) + 0.118*math.Cos(5*phi)
	return math.Abs(lon1-lon0) * mLon * math.Abs(lat1-lat0) * mLat / 1e4
}

// polSHA256 is the hex SHA-256 of a feature's JSON with the whitespace
// between tokens removed, as the evidence's inputSha256 is defined.
func polSHA256(t testing.TB, feature string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(feature)); err != nil {
		t.Fatalf("compact %s: %v", feature, err)
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:])
}

// --- API views ---

type polRisk struct {
	DeforestedHa  float64 `json:"deforestedHa"`
	DeforestedPct float64 `json:"deforestedPct"`
	ProtectedHa   float64 `json:"protectedHa"`
	ProtectedPct  float64 `json:"protectedPct"`
	RiskScore     int     `json:"riskScore"`
}

func (r *polRisk) String() string {
	if r == nil {
		return "<null>"
	}
	return fmt.Sprintf("{deforestedHa %v deforestedPct %v protectedHa %v protectedPct %v riskScore %d}",
		r.DeforestedHa, r.DeforestedPct, r.ProtectedHa, r.ProtectedPct, r.RiskScore)
}

// polRecord is an item of GET /polygons, and with geometry GET /polygons/{id}.
type polRecord struct {
	PolygonID       string          `json:"polygonId"`
	JobID           string          `json:"jobId"`
	FeatureIndex    int             `json:"featureIndex"`
	ExternalID      *string         `json:"externalId"`
	SupplierID      *string         `json:"supplierId"`
	Commodity       string          `json:"commodity"`
	ProducerCountry string          `json:"producerCountry"`
	ProducerName    *string         `json:"producerName"`
	DeclaredAreaHa  *float64        `json:"declaredAreaHa"`
	GeometryType    string          `json:"geometryType"`
	AreaHa          float64         `json:"areaHa"`
	EUDRStatus      string          `json:"eudrStatus"`
	FailureReason   *string         `json:"failureReason"`
	Risk            *polRisk        `json:"risk"`
	ScreenedAt      string          `json:"screenedAt"`
	Geometry        json.RawMessage `json:"geometry"`
}

// polStatus is GET /polygons/{id}/status.
type polStatus struct {
	PolygonID     string   `json:"polygonId"`
	JobID         string   `json:"jobId"`
	EUDRStatus    string   `json:"eudrStatus"`
	FailureReason *string  `json:"failureReason"`
	AreaHa        float64  `json:"areaHa"`
	Risk          *polRisk `json:"risk"`
	ScreenedAt    string   `json:"screenedAt"`
}

type polEvidenceLayer struct {
	LayerID string `json:"layerId"`
	Name    string `json:"name"`
	Kind    string `json:"kind"`
	Version string `json:"version"`
	Source  string `json:"source"`
	SHA256  string `json:"sha256"`
	Covered bool   `json:"covered"`
}

type polEvidenceOverlap struct {
	LayerID    string   `json:"layerId"`
	Kind       string   `json:"kind"`
	OverlapHa  float64  `json:"overlapHa"`
	OverlapPct float64  `json:"overlapPct"`
	FeatureIDs []string `json:"featureIds"`
}

// polEvidence is GET /polygons/{id}/evidence.
type polEvidence struct {
	PolygonID     string   `json:"polygonId"`
	JobID         string   `json:"jobId"`
	FeatureIndex  int      `json:"featureIndex"`
	InputSHA256   string   `json:"inputSha256"`
	EUDRStatus    string   `json:"eudrStatus"`
	FailureReason *string  `json:"failureReason"`
	AreaHa        float64  `json:"areaHa"`
	Risk          *polRisk `json:"risk"`
	Rules         struct {
		MaxRiskScore        int     `json:"maxRiskScore"`
		OverlapThresholdPct float64 `json:"overlapThresholdPct"`
	} `json:"rules"`
	Layers        []polEvidenceLayer   `json:"layers"`
	Overlaps      []polEvidenceOverlap `json:"overlaps"`
	EngineVersion string               `json:"engineVersion"`
	AppVersion    string               `json:"appVersion"`
}

// polResult is an entry of a polygon job's results.
type polResult struct {
	FeatureIndex  int     `json:"featureIndex"`
	ExternalID    *string `json:"externalId"`
	PolygonID     string  `json:"polygonId"`
	EUDRStatus    string  `json:"eudrStatus"`
	FailureReason *string `json:"failureReason"`
	LedgerIndex   int64   `json:"ledgerIndex"`
}

// polJob is GET /jobs/{id} of a polygon_ingestion job.
type polJob struct {
	JobID    string `json:"jobId"`
	Type     string `json:"type"`
	Status   string `json:"status"`
	Progress struct {
		Total     int `json:"total"`
		Processed int `json:"processed"`
		Succeeded int `json:"succeeded"`
		Failed    int `json:"failed"`
		Percent   int `json:"percent"`
	} `json:"progress"`
	Results      []polResult       `json:"results"`
	ResultCounts jobResultCounts   `json:"resultCounts"`
	NextResults  *string           `json:"nextResults"`
	LedgerProofs []json.RawMessage `json:"ledgerProofs"`
	Error        *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	CreatedAt     string          `json:"createdAt"`
	StartedAt     *string         `json:"startedAt"`
	CompletedAt   *string         `json:"completedAt"`
	Attempts      int             `json:"attempts"`
	LastAttempt   json.RawMessage `json:"lastAttempt"`
	NextAttemptAt *string         `json:"nextAttemptAt"`
}

func (j polJob) finished() bool { return j.Status == "COMPLETED" || j.Status == "FAILED" }

// polStr is *s, or "<null>".
func polStr(s *string) string {
	if s == nil {
		return "<null>"
	}
	return *s
}

// --- API helpers ---

// polPost posts body as GeoJSON with key and Idempotency-Key ik.
func polPost(t testing.TB, base, key, ik string, body any) *apitest.Response {
	t.Helper()
	return apitest.Do(t, "POST", base+polPath, apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", ik, "Content-Type", polContentType)), body)
}

// polCheckAccepted checks a 202 of POST /polygons: exactly jobId and
// featureCount, and Location naming the job.
func polCheckAccepted(t testing.TB, r *apitest.Response, features int) string {
	t.Helper()
	r.WantStatus(t, http.StatusAccepted)
	var acc map[string]any
	r.Decode(t, &acc)
	id, _ := acc["jobId"].(string)
	if !jobIDPattern.MatchString(id) || acc["featureCount"] != float64(features) || len(acc) != 2 {
		t.Fatalf("%s: 202 body %s, want exactly a jobId and featureCount %d", r.Request, r.Body, features)
	}
	if loc := r.Header.Get("Location"); loc != eudrAPI+"/jobs/"+id {
		t.Errorf("%s: Location %q, want %s", r.Request, loc, eudrAPI+"/jobs/"+id)
	}
	return id
}

// polMustPost posts body with a fresh Idempotency-Key and returns the job's ID.
func polMustPost(t testing.TB, base, key string, body string, features int) string {
	t.Helper()
	return polCheckAccepted(t, polPost(t, base, key, apitest.NewIdemKey(), body), features)
}

// polCheckJob decodes and checks a GET /jobs answer of a polygon job
// (usable from any goroutine: it returns a message instead of failing).
func polCheckJob(r *apitest.Response, id string) (polJob, string) {
	var j polJob
	if r.Status != http.StatusOK {
		return j, fmt.Sprintf("%s: status %d, want 200: %s", r.Request, r.Status, r.Body)
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return j, fmt.Sprintf("%s: %v: %.2000s", r.Request, err, r.Body)
	}
	var probs []string
	p := j.Progress
	if j.JobID != id || j.Type != polJobType {
		probs = append(probs, fmt.Sprintf("jobId %q type %q, want %s %s", j.JobID, j.Type, id, polJobType))
	}
	if j.Results == nil || j.LedgerProofs == nil {
		probs = append(probs, "results and ledgerProofs must be arrays")
	}
	if p.Processed < 0 || p.Processed > p.Total || p.Succeeded+p.Failed != p.Processed {
		probs = append(probs, fmt.Sprintf("progress %+v does not add up", p))
	}
	// The answer shows the first page of the results, the counts of all
	// of them, and the proofs of the page's entries in the same order.
	if len(j.Results) != min(p.Processed, polPage) || (j.NextResults != nil) != (p.Processed > polPage) {
		probs = append(probs, fmt.Sprintf("%d results and next page %v with %d processed", len(j.Results), j.NextResults, p.Processed))
	}
	c := j.ResultCounts
	if sum := c.ByStatus["COMPLIANT"] + c.ByStatus["HIGH_RISK"] + c.ByStatus["FAILED"]; c.Total != p.Processed || sum != c.Total ||
		len(c.ByStatus) > 3 || c.ByStatus["FAILED"] != p.Failed {
		probs = append(probs, fmt.Sprintf("resultCounts %+v with progress %+v", c, p))
	}
	if len(j.LedgerProofs) != len(j.Results) {
		probs = append(probs, fmt.Sprintf("%d ledgerProofs for %d results", len(j.LedgerProofs), len(j.Results)))
	}
	for i, res := range j.Results {
		var proof struct{ Index int64 }
		if i < len(j.LedgerProofs) {
			json.Unmarshal(j.LedgerProofs[i], &proof)
		}
		if res.FeatureIndex != i || res.PolygonID != polIDOf(id, i) || (i < len(j.LedgerProofs) && proof.Index != res.LedgerIndex) {
			probs = append(probs, fmt.Sprintf("results[%d] is feature %d, polygon %s, entry %d (proof of %d)", i, res.FeatureIndex, res.PolygonID, res.LedgerIndex, proof.Index))
			break
		}
	}
	ra := r.Header.Get("Retry-After")
	switch j.Status {
	case "QUEUED", "RUNNING":
		if n, err := strconv.Atoi(ra); err != nil || n < 1 || n > 60 {
			probs = append(probs, fmt.Sprintf("Retry-After %q while %s, want 1-60", ra, j.Status))
		}
		if want := 100 * p.Processed / max(p.Total, 1); p.Percent != want {
			probs = append(probs, fmt.Sprintf("percent %d, want %d", p.Percent, want))
		}
	case "COMPLETED", "FAILED":
		if ra != "" || p.Percent != 100 || j.StartedAt == nil || j.CompletedAt == nil {
			probs = append(probs, fmt.Sprintf("finished job: Retry-After %q, percent %d, startedAt %v, completedAt %v", ra, p.Percent, j.StartedAt, j.CompletedAt))
		}
	default:
		probs = append(probs, "unknown status "+j.Status)
	}
	if len(probs) > 0 {
		return j, fmt.Sprintf("%s: %s: %.2000s", r.Request, strings.Join(probs, "; "), r.Body)
	}
	return j, ""
}

func polGetJob(t testing.TB, base, key, id string) polJob {
	t.Helper()
	j, msg := polCheckJob(apitest.Do(t, "GET", jobURL(base, id), apitest.WithKey(key), nil), id)
	if msg != "" {
		t.Fatal(msg)
	}
	return j
}

// polWaitJob polls a polygon job until it is finished and wants it COMPLETED.
func polWaitJob(t testing.TB, base, key, id string, timeout time.Duration) polJob {
	t.Helper()
	var j polJob
	waitUntil(t, timeout, "polygon job "+id+" to finish", func() bool {
		j = polGetJob(t, base, key, id)
		return j.finished()
	})
	if j.Status != "COMPLETED" || j.Error != nil {
		t.Fatalf("polygon job %s: %s, error %+v; want COMPLETED", id, j.Status, j.Error)
	}
	return j
}

// polAllResults returns every result of a finished polygon job j (as GET
// /jobs/{jobId} answered it): its first page, then the pages of GET
// /jobs/{jobId}/results from nextResults on, following each page's Link.
// It checks that they come in feature order, each once, and add up to the
// job's resultCounts.
func polAllResults(t testing.TB, base, key string, j polJob) []polResult {
	t.Helper()
	all := append([]polResult(nil), j.Results...)
	for next := j.NextResults; next != nil; {
		r := apitest.Do(t, "GET", base+*next, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		var page []polResult
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&page); err != nil || len(page) == 0 {
			t.Fatalf("%s: %d results, %v: %.300s", r.Request, len(page), err, r.Body)
		}
		all = append(all, page...)
		next = nil
		if link := r.Header.Get("Link"); link != "" {
			path, ok := strings.CutSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`)
			if cur := r.Header.Get("X-Next-Cursor"); !ok || cur != fmt.Sprintf("%s_%d", j.JobID, len(all)-1) || !strings.Contains(path, "cursor="+cur) {
				t.Fatalf("%s: Link %q, X-Next-Cursor %q after feature %d", r.Request, link, cur, len(all)-1)
			}
			next = &path
		}
	}
	counts := map[string]int{}
	for i, res := range all {
		if res.FeatureIndex != i || res.PolygonID != polIDOf(j.JobID, i) {
			t.Fatalf("job %s: result %d of the pages is feature %d, polygon %s", j.JobID, i, res.FeatureIndex, res.PolygonID)
		}
		counts[res.EUDRStatus]++
	}
	if len(all) != j.ResultCounts.Total || !maps.Equal(counts, j.ResultCounts.ByStatus) {
		t.Fatalf("job %s: the pages hold %d results counted %v; resultCounts %+v", j.JobID, len(all), counts, j.ResultCounts)
	}
	return all
}

// polIDOf is the polygon ID of feature index of job jobID.
func polIDOf(jobID string, index int) string {
	return fmt.Sprintf("pol_%s_%06d", strings.TrimPrefix(jobID, "job_"), index)
}

func polItemURL(base, id string) string { return base + polPath + "/" + id }

// polWalk lists GET /polygons with query and limit, following Link
// and X-Next-Cursor to the end, and fails t when a polygon shows up twice.
func polWalk(t testing.TB, base, key, query string, limit int) []polRecord {
	t.Helper()
	q := url.Values{}
	if query != "" {
		var err error
		if q, err = url.ParseQuery(query); err != nil {
			t.Fatal(err)
		}
	}
	q.Set("limit", strconv.Itoa(limit))
	next := base + polPath + "?" + q.Encode()
	var out []polRecord
	seen := map[string]bool{}
	for pages := 0; next != ""; pages++ {
		if pages > 100000/limit+2 {
			t.Fatalf("GET /polygons?%s: too many pages", query)
		}
		r := apitest.Do(t, "GET", next, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		var page []polRecord
		r.Decode(t, &page)
		if page == nil || len(page) > limit || (len(page) == 0 && pages > 0) {
			t.Fatalf("%s: page of %d polygons (limit %d): %.500s", r.Request, len(page), limit, r.Body)
		}
		for _, pol := range page {
			if seen[pol.PolygonID] {
				t.Errorf("%s: polygon %s listed twice", r.Request, pol.PolygonID)
			}
			seen[pol.PolygonID] = true
		}
		out = append(out, page...)
		next = ""
		link, cursor := r.Header.Get("Link"), r.Header.Get("X-Next-Cursor")
		if link == "" {
			if cursor != "" {
				t.Errorf("%s: X-Next-Cursor %q without Link", r.Request, cursor)
			}
			continue
		}
		m := linkNext.FindStringSubmatch(link)
		if m == nil || !strings.HasPrefix(m[1], polPath+"?") || len(page) == 0 {
			t.Fatalf("%s: Link %q, want <%s?...>; rel=\"next\"", r.Request, link, polPath)
		}
		u, err := url.Parse(m[1])
		if err != nil {
			t.Fatal(err)
		}
		nq := u.Query()
		if last := page[len(page)-1].PolygonID; cursor != last || nq.Get("cursor") != cursor {
			t.Errorf("%s: X-Next-Cursor %q, Link cursor %q, want the page's last polygonId %s", r.Request, cursor, nq.Get("cursor"), last)
		}
		for k := range q {
			if nq.Get(k) != q.Get(k) {
				t.Errorf("%s: Link %q does not keep %s=%s", r.Request, link, k, q.Get(k))
			}
		}
		next = base + m[1]
	}
	return out
}

func polIDs(list []polRecord) []string {
	out := make([]string, len(list))
	for i, p := range list {
		out[i] = p.PolygonID
	}
	return out
}

// polGetStatus reads a polygon's status and checks that risk is null
// exactly when the polygon is FAILED.
func polGetStatus(t testing.TB, base, key, id string) polStatus {
	t.Helper()
	r := apitest.Do(t, "GET", polItemURL(base, id)+"/status", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	var raw map[string]json.RawMessage
	r.Decode(t, &raw)
	for _, k := range []string{"polygonId", "jobId", "eudrStatus", "failureReason", "areaHa", "risk", "screenedAt"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("%s: no %s in %s", r.Request, k, r.Body)
		}
	}
	var s polStatus
	r.Decode(t, &s)
	if s.PolygonID != id {
		t.Errorf("%s: polygonId %s", r.Request, s.PolygonID)
	}
	if (s.EUDRStatus == "FAILED") != (string(raw["risk"]) == "null") {
		t.Errorf("%s: %s with risk %s; want risk null exactly when FAILED", r.Request, s.EUDRStatus, raw["risk"])
	}
	if (s.EUDRStatus == "COMPLIANT") != (string(raw["failureReason"]) == "null") {
		t.Errorf("%s: %s with failureReason %s; want null exactly when COMPLIANT", r.Request, s.EUDRStatus, raw["failureReason"])
	}
	apitest.ParseTime(t, s.ScreenedAt)
	return s
}

func polGetEvidence(t testing.TB, base, key, id string) polEvidence {
	t.Helper()
	var ev polEvidence
	apitest.Do(t, "GET", polItemURL(base, id)+"/evidence", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &ev)
	if ev.PolygonID != id || !polSHAPattern.MatchString(ev.InputSHA256) || ev.EngineVersion == "" ||
		ev.Layers == nil || ev.Overlaps == nil {
		t.Errorf("evidence of %s: %+v; want its polygonId, a hex inputSha256, an engineVersion, layers and overlaps arrays", id, ev)
	}
	return ev
}

func polNear(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// --- sandbox fixtures ---

// polFixture is a feature of TestPolygon_SandboxFixtures with its expected outcome.
type polFixture struct {
	externalID string // "" sends none
	feature    string // the feature as sent
	geometry   string
	supplier   string // "" sends none
	commodity  string
	country    string // producerCountry: where the plot lies
	status     string
	reason     string
	areaHa     float64 // expected areaHa within 1 %; 0: not checked
	declared   *float64
}

func TestPolygon_SandboxFixtures(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, noRateLimit...)
	key := p.createKey(t, sandbox)
	sub := subscribe(t, p, key, rc, "/polygons", "polygon.verified", "polygon.failed")
	base := p.SandboxURL

	const h = 0.001 // half-side: plots of 0.002 degrees
	fix := []polFixture{
		{externalID: "defo", geometry: polSquare(-61.5, -10.5, h), supplier: "V-1", commodity: "cattle", country: "BR",
			status: "HIGH_RISK", reason: "DEFORESTATION_AFTER_CUTOFF", areaHa: polBoxHa(-61.501, -10.501, -61.499, -10.499)},
		{externalID: "protected", geometry: polSquare(-54.5, -4.5, h), supplier: "V-2", commodity: "soya", country: "BR",
			status: "HIGH_RISK", reason: "PROTECTED_AREA_OVERLAP", areaHa: polBoxHa(-54.501, -4.501, -54.499, -4.499)},
		{externalID: "nodata", geometry: polSquare(10.5, 10.5, h), supplier: "V-1", commodity: "cocoa", country: "NG",
			status: "FAILED", reason: "NO_REFERENCE_COVERAGE", areaHa: polBoxHa(10.499, 10.499, 10.501, 10.501)},
		{externalID: "clean", geometry: polSquare(-1.5, 6.5, h), supplier: "V-3", commodity: "cocoa", country: "GH",
			status: "COMPLIANT", areaHa: polBoxHa(-1.501, 6.499, -1.499, 6.501)},
		{ // no externalId, no supplier
			geometry: `{"type":"Polygon","coordinates":[` + polBoxRing(-1.41, 6.59, -1.406, 6.594, 6, false) + "," +
				polBoxRing(-1.409, 6.591, -1.407, 6.593, 6, true) + `]}`,
			commodity: "coffee", country: "GH", status: "FAILED", reason: "HOLES_NOT_SUPPORTED"},
		{externalID: "bowtie", geometry: `{"type":"Polygon","coordinates":[` +
			polRing([][2]float64{{-1.3, 6.4}, {-1.298, 6.402}, {-1.298, 6.4}, {-1.3, 6.402}, {-1.3, 6.4}}, 6) + `]}`,
			supplier: "V-2", commodity: "coffee", country: "GH", status: "FAILED", reason: "SELF_INTERSECTION"},
		{externalID: "coarse", geometry: polBoxGeometry(-1.201, 6.299, -1.199, 6.301, 4), supplier: "V-1", commodity: "rubber", country: "GH",
			status: "FAILED", reason: "INSUFFICIENT_PRECISION"},
		{externalID: "mismatch", geometry: polSquare(-1.1, 6.2, h), supplier: "V-3", commodity: "wood", country: "GH",
			status: "FAILED", reason: "AREA_MISMATCH", areaHa: polBoxHa(-1.101, 6.199, -1.099, 6.201)},
		{externalID: "point", geometry: `{"type":"Point","coordinates":[-1.000000,6.100000]}`, supplier: "V-3", commodity: "oil_palm", country: "GH",
			status: "COMPLIANT", areaHa: 2},
	}
	// Declared areas: 3 % off for the clean plot (within the 10 %
	// tolerance), 50 % off for the mismatch, 2 ha for the point.
	areas := map[string]float64{"clean": 1.03 * fix[3].areaHa, "mismatch": 1.5 * fix[7].areaHa, "point": 2}
	features := make([]string, len(fix))
	for i := range fix {
		f := &fix[i]
		props := map[string]any{"commodity": f.commodity, "producerCountry": f.country}
		if f.externalID != "" {
			props["externalId"] = f.externalID
		}
		if f.supplier != "" {
			props["supplierId"] = f.supplier
		}
		if a, ok := areas[f.externalID]; ok {
			props["area"] = a
			f.declared = &a
		}
		f.feature = polFeature(f.geometry, props)
		features[i] = f.feature
	}
	// One feature is sent indented: its inputSha256 is of the compacted JSON.
	var indented bytes.Buffer
	if err := json.Indent(&indented, []byte(fix[3].feature), "", "  "); err != nil {
		t.Fatal(err)
	}
	features[3] = indented.String()
	body := polCollection(features...)

	r := polPost(t, base, key, apitest.NewIdemKey(), body)
	jobID := polCheckAccepted(t, r, len(fix))
	job := polWaitJob(t, base, key, jobID, 20*time.Second)
	if pr := job.Progress; pr.Total != 9 || pr.Processed != 9 || pr.Succeeded != 4 || pr.Failed != 5 || pr.Percent != 100 {
		t.Errorf("job progress %+v, want 9 processed: 4 succeeded (COMPLIANT, HIGH_RISK), 5 failed", pr)
	}
	if len(job.Results) != len(fix) {
		t.Fatalf("job results: %d, want %d", len(job.Results), len(fix))
	}
	ids := make([]string, len(fix))
	for i, f := range fix {
		res := job.Results[i]
		ids[i] = res.PolygonID
		m := polIDPattern.FindStringSubmatch(res.PolygonID)
		if m == nil || "job_"+m[1] != jobID || m[2] != fmt.Sprintf("%06d", i) {
			t.Errorf("results[%d]: polygonId %q, want pol_<job ULID>_%06d", i, res.PolygonID, i)
		}
		wantExt := (*string)(nil)
		if f.externalID != "" {
			wantExt = &f.externalID
		}
		wantReason := (*string)(nil)
		if f.reason != "" {
			wantReason = &f.reason
		}
		if res.FeatureIndex != i || polStr(res.ExternalID) != polStr(wantExt) || res.EUDRStatus != f.status || polStr(res.FailureReason) != polStr(wantReason) {
			t.Errorf("results[%d] = {featureIndex %d, externalId %s, %s %s}, want {%d, %s, %s %s}", i,
				res.FeatureIndex, polStr(res.ExternalID), res.EUDRStatus, polStr(res.FailureReason), i, polStr(wantExt), f.status, polStr(wantReason))
		}
	}

	sandboxLayers := apitest.Do(t, "GET", base+eudrAPI+"/layers", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Array(t)
	layerSHA := map[string]string{}
	for _, l := range sandboxLayers {
		layerSHA[l["layerId"].(string)] = l["sha256"].(string)
	}

	t.Run("StatusRecordEvidence", func(t *testing.T) {
		for i, f := range fix {
			id := ids[i]
			s := polGetStatus(t, base, key, id)
			if s.JobID != jobID || s.EUDRStatus != f.status || (f.reason != "" && polStr(s.FailureReason) != f.reason) {
				t.Errorf("%s (%s): status %s %s, want %s %s", id, f.externalID, s.EUDRStatus, polStr(s.FailureReason), f.status, f.reason)
			}
			if f.areaHa > 0 && !polNear(s.AreaHa, f.areaHa, f.areaHa/100) {
				t.Errorf("%s (%s): areaHa %v, want about %v", id, f.externalID, s.AreaHa, f.areaHa)
			}
			switch {
			case s.Risk == nil:
			case f.reason == "DEFORESTATION_AFTER_CUTOFF":
				if !polNear(s.Risk.DeforestedPct, 100, 0.01) || s.Risk.RiskScore != 100 || !polNear(s.Risk.DeforestedHa, s.AreaHa, s.AreaHa/1000) {
					t.Errorf("%s (defo): risk %+v, want deforestedPct 100, deforestedHa the area %v, riskScore 100", id, *s.Risk, s.AreaHa)
				}
			case f.reason == "PROTECTED_AREA_OVERLAP":
				if !polNear(s.Risk.ProtectedPct, 100, 0.01) || s.Risk.DeforestedPct != 0 || s.Risk.RiskScore < 75 || s.Risk.RiskScore > 100 {
					t.Errorf("%s (protected): risk %+v, want protectedPct 100, no deforestation, riskScore 75-100", id, *s.Risk)
				}
			default: // COMPLIANT, outside every fixture box
				if s.Risk.DeforestedPct != 0 || s.Risk.ProtectedPct != 0 || s.Risk.RiskScore < 0 || s.Risk.RiskScore > 50 {
					t.Errorf("%s (%s): risk %+v, want no overlap and riskScore 0-50 (risk.max_score)", id, f.externalID, *s.Risk)
				}
			}

			var rec polRecord
			apitest.Do(t, "GET", polItemURL(base, id), apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &rec)
			wantType := "Polygon"
			if strings.Contains(f.geometry, `"Point"`) {
				wantType = "Point"
			}
			if rec.PolygonID != id || rec.JobID != jobID || rec.FeatureIndex != i || rec.Commodity != f.commodity ||
				rec.ProducerCountry != f.country || polStr(rec.SupplierID) != polStr(polOptional(f.supplier)) ||
				polStr(rec.ExternalID) != polStr(polOptional(f.externalID)) || rec.GeometryType != wantType ||
				rec.EUDRStatus != s.EUDRStatus || rec.AreaHa != s.AreaHa || rec.ScreenedAt != s.ScreenedAt {
				t.Errorf("GET %s: %+v; want feature %d (%s) as sent and as its status %+v", id, rec, i, f.externalID, s)
			}
			if (rec.DeclaredAreaHa == nil) != (f.declared == nil) || f.declared != nil && *rec.DeclaredAreaHa != *f.declared {
				t.Errorf("GET %s: declaredAreaHa %v, want %v", id, rec.DeclaredAreaHa, f.declared)
			}
			// The geometry as sent: coordinates keep their written decimals.
			if string(rec.Geometry) != f.geometry {
				t.Errorf("GET %s: geometry %s, want as sent %s", id, rec.Geometry, f.geometry)
			}

			ev := polGetEvidence(t, base, key, id)
			if want := polSHA256(t, features[i]); ev.InputSHA256 != want {
				t.Errorf("evidence of %s (%s): inputSha256 %s, want %s (SHA-256 of the feature compacted)", id, f.externalID, ev.InputSHA256, want)
			}
			if ev.JobID != jobID || ev.FeatureIndex != i || ev.EUDRStatus != f.status || polStr(ev.FailureReason) != polStr(s.FailureReason) ||
				ev.AreaHa != s.AreaHa || (ev.Risk == nil) != (s.Risk == nil) || ev.Risk != nil && *ev.Risk != *s.Risk ||
				ev.AppVersion != testVersion || ev.Rules.MaxRiskScore != 50 || ev.Rules.OverlapThresholdPct != 0 {
				t.Errorf("evidence of %s (%s): %+v; want the status %+v, appVersion %s, the default rules", id, f.externalID, ev, s, testVersion)
			}
			// Plots refused by their geometry alone were not screened: no layers.
			screened := f.status != "FAILED" || f.reason == "NO_REFERENCE_COVERAGE"
			if !screened {
				if len(ev.Layers) != 0 || len(ev.Overlaps) != 0 {
					t.Errorf("evidence of %s (%s): layers %+v overlaps %+v, want none (not screened)", id, f.externalID, ev.Layers, ev.Overlaps)
				}
				continue
			}
			if len(ev.Layers) != len(sandboxLayers) {
				t.Errorf("evidence of %s (%s): %d layers, want the %d sandbox layers", id, f.externalID, len(ev.Layers), len(sandboxLayers))
			}
			for _, l := range ev.Layers {
				if l.Name == "" || l.Version == "" || l.SHA256 != layerSHA[l.LayerID] || !polSHAPattern.MatchString(l.SHA256) ||
					l.Covered != (f.reason != "NO_REFERENCE_COVERAGE") {
					t.Errorf("evidence of %s (%s): layer %+v; want name, version, the sha256 GET /layers lists (%s), covered unless NO_REFERENCE_COVERAGE",
						id, f.externalID, l, layerSHA[l.LayerID])
				}
			}
			wantKind := map[string]string{"DEFORESTATION_AFTER_CUTOFF": "deforestation", "PROTECTED_AREA_OVERLAP": "protected_area"}[f.reason]
			if wantKind == "" {
				if len(ev.Overlaps) != 0 {
					t.Errorf("evidence of %s (%s): overlaps %+v, want none", id, f.externalID, ev.Overlaps)
				}
			} else if len(ev.Overlaps) != 1 || ev.Overlaps[0].Kind != wantKind || !polNear(ev.Overlaps[0].OverlapPct, 100, 0.01) ||
				len(ev.Overlaps[0].FeatureIDs) != 1 || ev.Overlaps[0].OverlapHa <= 0 {
				t.Errorf("evidence of %s (%s): overlaps %+v, want one whole-plot %s overlap naming its feature", id, f.externalID, ev.Overlaps, wantKind)
			}
		}
	})

	// A second job, to tell the jobId filter from the others.
	other := polFeature(polSquare(-1.6, 6.6, h), map[string]any{"commodity": "cocoa", "producerCountry": "GH", "supplierId": "V-1", "externalId": "other"})
	otherJob := polMustPost(t, base, key, polCollection(other), 1)
	polWaitJob(t, base, key, otherJob, 20*time.Second)
	otherID := polIDOf(otherJob, 0)

	t.Run("ListAndFilters", func(t *testing.T) {
		byIndex := func(idx ...int) []string { // newest first: the last feature first
			var out []string
			for i := len(idx) - 1; i >= 0; i-- {
				out = append(out, ids[idx[i]])
			}
			return out
		}
		all := append([]string{otherID}, byIndex(0, 1, 2, 3, 4, 5, 6, 7, 8)...)
		for _, c := range []struct {
			query string
			want  []string
		}{
			{"", all},
			{"jobId=" + jobID, byIndex(0, 1, 2, 3, 4, 5, 6, 7, 8)},
			{"jobId=" + otherJob, []string{otherID}},
			{"eudrStatus=HIGH_RISK", byIndex(0, 1)},
			{"eudrStatus=COMPLIANT", append([]string{otherID}, byIndex(3, 8)...)},
			{"eudrStatus=FAILED", byIndex(2, 4, 5, 6, 7)},
			{"supplierId=V-1", append([]string{otherID}, byIndex(0, 2, 6)...)},
			{"supplierId=V-9", nil},
			{"commodity=coffee", byIndex(4, 5)},
			{"commodity=cocoa", append([]string{otherID}, byIndex(2, 3)...)},
			{"commodity=cocoa&eudrStatus=COMPLIANT&jobId=" + jobID, byIndex(3)},
			{"jobId=job_01JD3R7F5G6H7J8K9M0N1P2Q3R", nil},
			{"jobId=bat_" + strings.TrimPrefix(jobID, "job_"), nil},
		} {
			var got []polRecord
			r := apitest.Do(t, "GET", base+polPath+"?"+c.query, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
			r.Decode(t, &got)
			if got == nil {
				t.Errorf("GET /polygons?%s: %s, want an array", c.query, r.Body)
			}
			if g := polIDs(got); !slices.Equal(g, c.want) {
				t.Errorf("GET /polygons?%s: %q, want %q", c.query, g, c.want)
			}
		}
		for _, c := range []struct{ query, field string }{
			{"eudrStatus=compliant", "query.eudrStatus"},
			{"eudrStatus=PENDING", "query.eudrStatus"},
			{"commodity=banana", "query.commodity"},
		} {
			e := apitest.WantError(t, apitest.Do(t, "GET", base+polPath+"?"+c.query, apitest.WithKey(key), nil), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
			if len(e.Details) == 1 && e.Details[0].Field != c.field {
				t.Errorf("GET /polygons?%s: detail field %q, want %s", c.query, e.Details[0].Field, c.field)
			}
		}

		// Pages of 2 visit every polygon once, in the order of the full list.
		if got := polIDs(polWalk(t, base, key, "", 2)); !slices.Equal(got, all) {
			t.Errorf("walking pages of 2: %q, want %q", got, all)
		}
		if got := polIDs(polWalk(t, base, key, "eudrStatus=FAILED", 2)); !slices.Equal(got, byIndex(2, 4, 5, 6, 7)) {
			t.Errorf("walking FAILED in pages of 2: %q", got)
		}
	})

	t.Run("Events", func(t *testing.T) {
		var verifiedIDs, failedIDs []string
		reasons := map[string]string{}
		for i, f := range fix {
			if f.status == "FAILED" {
				failedIDs = append(failedIDs, ids[i])
				reasons[ids[i]] = f.reason
			} else {
				verifiedIDs = append(verifiedIDs, ids[i])
			}
		}
		type key2 struct{ typ, job string }
		deliveries := func() map[key2][]apitest.Delivery {
			out := map[key2][]apitest.Delivery{}
			for _, r := range rc.Requests("/polygons", "") {
				k := key2{r.Env.EventType, dataField(&r, "jobId")}
				out[k] = append(out[k], r)
			}
			return out
		}
		want := []key2{{"polygon.verified", jobID}, {"polygon.failed", jobID}, {"polygon.verified", otherJob}}
		waitUntil(t, 15*time.Second, "polygon.verified and polygon.failed of both jobs delivered", func() bool {
			got := deliveries()
			for _, k := range want {
				if len(got[k]) == 0 || !rc.IsDelivered("/polygons", got[k][0].Env.EventID) {
					return false
				}
			}
			return true
		})
		wantData := map[key2][]byte{
			want[0]: mustJSON(t, map[string]any{"jobId": jobID, "polygonIds": verifiedIDs}),
			want[1]: mustJSON(t, map[string]any{"jobId": jobID, "polygonIds": failedIDs, "reasons": reasons}),
			want[2]: mustJSON(t, map[string]any{"jobId": otherJob, "polygonIds": []string{otherID}}),
		}
		got := deliveries()
		if n := len(rc.Requests("/polygons", "")); n != 3 {
			t.Errorf("the receiver got %d requests, want 3: %v", n, got)
		}
		for _, k := range want {
			if len(got[k]) != 1 {
				t.Errorf("%s of %s: %d deliveries, want 1", k.typ, k.job, len(got[k]))
				continue
			}
			r := got[k][0]
			apitest.CheckSignatures(t, r, sub.SigningSecret)
			if r.SigErr != nil || r.EnvErr != nil || !eventIDPattern.MatchString(r.Env.EventID) || r.Header.Get("X-Service-Event-Type") != k.typ ||
				r.Header.Get("X-Service-Event-Id") != r.Env.EventID {
				t.Errorf("%s of %s: signature %v, envelope %v, headers %v: %s", k.typ, k.job, r.SigErr, r.EnvErr, r.Header, r.Body)
			}
			// Compare the polygon lists in any order, but exactly.
			var d map[string]any
			json.Unmarshal(r.Env.Data, &d)
			if l, ok := d["polygonIds"].([]any); ok {
				sort.Slice(l, func(a, b int) bool { return fmt.Sprint(l[a]) < fmt.Sprint(l[b]) })
			}
			if !sameJSON(t, mustJSON(t, d), wantData[k]) {
				t.Errorf("%s of %s: data %s, want %s", k.typ, k.job, r.Env.Data, wantData[k])
			}
		}
	})

	t.Run("Delete", func(t *testing.T) {
		id := ids[3]
		r := apitest.Do(t, "DELETE", polItemURL(base, id), apitest.WithKey(key), nil).WantStatus(t, http.StatusNoContent)
		if len(r.Body) != 0 {
			t.Errorf("DELETE %s: 204 with body %s", id, r.Body)
		}
		for _, u := range []string{polItemURL(base, id), polItemURL(base, id) + "/status", polItemURL(base, id) + "/evidence"} {
			apitest.WantError(t, apitest.Do(t, "GET", u, apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
		}
		apitest.WantError(t, apitest.Do(t, "DELETE", polItemURL(base, id), apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "GET", polItemURL(base, "pol_01JD3R7F5G6H7J8K9M0N1P2Q3R_000000"), apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
		for _, l := range polWalk(t, base, key, "jobId="+jobID, 1000) {
			if l.PolygonID == id {
				t.Errorf("deleted polygon %s still listed", id)
			}
		}
		if l := polWalk(t, base, key, "jobId="+jobID, 1000); len(l) != len(fix)-1 {
			t.Errorf("job %s lists %d polygons after one delete, want %d", jobID, len(l), len(fix)-1)
		}
		// The job's record of what it did is kept.
		j := polGetJob(t, base, key, jobID)
		if len(j.Results) != len(fix) || j.Results[3].PolygonID != id || j.Results[3].EUDRStatus != "COMPLIANT" || j.Progress.Processed != len(fix) {
			t.Errorf("job after the delete: results %+v progress %+v, want all %d results kept", j.Results, j.Progress, len(fix))
		}
		// Another polygon is untouched.
		if s := polGetStatus(t, base, key, ids[0]); s.EUDRStatus != "HIGH_RISK" {
			t.Errorf("polygon %s after deleting another: %+v", ids[0], s)
		}
	})
}
