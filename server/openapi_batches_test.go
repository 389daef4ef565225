package server

import (
	"context"
	"fmt"
	"maps"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/risk"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// batches drives POST /batches and the batch routes, and the 409 of
// deleting a polygon in use. Plots are screened first (the sandbox
// fixtures: COMPLIANT plots from Ghana and Russia, a coffee plot, a
// deforestation one). With the job runner stopped: refusals (400 with every
// problem, 404 naming each missing reference, 422 naming each refused
// polygon, idempotency, scopes) and two accepted batches, ASSESSING with
// their risk assessment pending. Then the runner assesses them, VERIFIED
// and HIGH_RISK, and their batch.risk_assessed events reach a subscription
// of the receiver at base. It leaves no job queued.
func (c *oaConformance) batches(recv *apitest.Receiver, base string, rw, ro, live []string) {
	t := c.t
	t.Helper()
	const (
		batches    = eudrPrefix + "/batches"
		batch      = batches + "/{batchId}"
		assessment = batch + "/risk-assessment"
		polygons   = eudrPrefix + "/polygons"
		polygon    = polygons + "/{polygonId}"
		suppliers  = eudrPrefix + "/suppliers"
		job        = eudrPrefix + "/jobs/{jobId}"
	)
	with, idem, problems := oaWith, oaIdem, oaProblems
	run := func(what string, jobs ...string) {
		oaRunUntil(t, c.a.jobs, what, func() bool {
			for _, j := range jobs {
				if !c.jobFinished(j) {
					return false
				}
			}
			return true
		})
	}

	// A supplier and its screened plots.
	c.do(oaCall{method: "POST", target: suppliers, op: suppliers, hdr: idem(rw, "bat-sup"), want: 200,
		body: `{"erpVendorId":"B-1","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6d","name":"Batch supplier","country":"GH"}`})
	plotOf := func(commodity, country string, lon, lat float64) string {
		return `{"type":"Feature","geometry":{"type":"Polygon","coordinates":` + square(lon, lat, 0.001) +
			`},"properties":{"commodity":"` + commodity + `","producerCountry":"` + country + `","supplierId":"B-1"}}`
	}
	an := c.do(oaCall{method: "POST", target: polygons, op: polygons, hdr: with(idem(rw, "bat-pol"), "Content-Type", "application/geo+json"), want: 202,
		body: collection(plotOf("cocoa", "GH", -1.3, 7), plotOf("cocoa", "RU", 40, 55), plotOf("coffee", "GH", -1.2, 7),
			plotOf("cocoa", "BR", -61.5, -10.5))})
	polJob := fmt.Sprint(an.body["jobId"])
	run("the batch plots to be screened", polJob)
	gh, ru, coffee, defo := storage.PolygonID(polJob, 0), storage.PolygonID(polJob, 1), storage.PolygonID(polJob, 2), storage.PolygonID(polJob, 3)
	body := func(ref string, ids ...string) string {
		return `{"batchReference":"` + ref + `","commodity":"cocoa","hsCode":"1801","supplierId":"B-1","polygonIds":["` +
			strings.Join(ids, `","`) + `"],"quantity":{"netMassKg":1000}}`
	}

	// Refusals, nothing registered: the Idempotency-Key first, then every
	// problem of the body, every missing reference, every refused polygon.
	an = c.do(oaCall{method: "POST", target: batches, op: batches, body: body("x", gh), hdr: rw, want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("batch without Idempotency-Key: detail %q", an.detail())
	}
	an = c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, "bat-bad"), want: 400,
		body: `{"batchReference":"","commodity":"cocoa","hsCode":"3401","supplierId":"B-1","polygonIds":["a","a"],` +
			`"quantity":{"netMassKg":-1,"supplementaryUnitType":"KGM"},"harvestStart":"2026-02-30","color":"red"}`})
	want := map[string]bool{
		apierr.DetailUnknownField + " at color": true, apierr.DetailRequired + " at batchReference": true, apierr.DetailHSCodeNotInAnnexI + " at hsCode": true,
		apierr.DetailInvalidValue + " at polygonIds[1]": true, apierr.DetailInvalidValue + " at quantity.netMassKg": true,
		apierr.DetailRequired + " at quantity.supplementaryUnit": true, apierr.DetailInvalidValue + " at quantity.supplementaryUnitType": true,
		apierr.DetailInvalidValue + " at harvestStart": true,
	}
	if got := problems(an); !maps.Equal(got, want) {
		t.Errorf("a batch with eight problems: %v, want %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
	}
	c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, "bat-bad"), body: `{"batchReference":`, want: 400})
	an = c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, "bat-404"), want: 404,
		body: strings.Replace(body("x", gh, "pol_nope"), `"B-1"`, `"B-9"`, 1)})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailSupplierNotFound + " at supplierId": true, apierr.DetailPolygonNotFound + " at polygonIds[1]": true}) {
		t.Errorf("a batch with two missing references: %v", slices.Sorted(maps.Keys(got)))
	}
	an = c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, "bat-422"), want: 422, body: body("x", gh, coffee, defo)})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailCommodityMismatch + " at polygonIds[1]": true, apierr.DetailPolygonNotCompliant + " at polygonIds[2]": true}) {
		t.Errorf("a batch with two refused polygons: %v", slices.Sorted(maps.Keys(got)))
	}
	// A coffee code on a cocoa batch is a rule broken, not a malformed body;
	// with a malformed body only the body's problems are answered.
	an = c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, "bat-422"), want: 422,
		body: strings.Replace(body("x", gh, coffee), `"1801"`, `"0901"`, 1)})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailHSCodeNotInAnnexI + " at hsCode": true, apierr.DetailCommodityMismatch + " at polygonIds[1]": true}) {
		t.Errorf("a batch of a coffee code with a coffee plot: %v", slices.Sorted(maps.Keys(got)))
	}
	ex := oaMust(t, c.doc, "/components/responses/BatchBusinessRule/content/application~1json/example/details/0/issue")
	if got, want := oaList(an.body["details"])[0].(map[string]any)["issue"], ex; got != want {
		t.Errorf("hsCode 0901 on a cocoa batch: issue %q, want the example's %q", got, want)
	}
	an = c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, "bat-422"), want: 400,
		body: strings.NewReplacer(`"1801"`, `"0901"`, `"netMassKg":1000`, `"netMassKg":-1`).Replace(body("x", gh))})
	if got := problems(an); !maps.Equal(got, map[string]bool{apierr.DetailInvalidValue + " at quantity.netMassKg": true}) {
		t.Errorf("a batch of a coffee code without a mass: %v, want the mass only", slices.Sorted(maps.Keys(got)))
	}
	c.do(oaCall{method: "POST", target: batches, op: batches, hdr: with(idem(rw, "bat-xml"), "Content-Type", "application/xml"), body: body("x", gh), want: 415})
	c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(ro, "bat-ro"), body: body("x", gh), want: 403})
	c.do(oaCall{method: "POST", target: batches, op: batches, body: body("x", gh), want: 401})
	c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, "bat-big"), body: body(strings.Repeat("x", 5000), gh), want: 413})
	inflight := httptest.NewRequest("POST", batches, strings.NewReader(body("x", gh)))
	err := c.a.db.Update(context.Background(), func(tx *storage.Tx) error {
		return tx.PutIdempotency(storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}, &storage.IdempotencyRecord{Key: "bat-busy",
			Fingerprint: fingerprint(inflight, []byte(body("x", gh))), State: storage.IdemInFlight, Owner: c.a.runID,
			CreatedAt: tx.Now(), ExpiresAt: tx.Now().Add(time.Hour)})
	})
	if err != nil {
		t.Fatal(err)
	}
	c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, "bat-busy"), body: body("x", gh), want: 423})
	an = c.do(oaCall{method: "GET", target: batches, op: batches, hdr: ro, want: 200})
	if len(an.list) != 0 {
		t.Errorf("batches after refusals only: %v", oaShort(an.list))
	}

	// Accepted: ASSESSING until the runner runs; a replay answers the same.
	an = c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, "bat-gh"), body: body("GH-1", gh), want: 202})
	ghBatch, ghJob := fmt.Sprint(an.body["batchId"]), fmt.Sprint(an.body["jobId"])
	if an.rec.Header().Get("Location") != eudrPrefix+"/jobs/"+ghJob {
		t.Errorf("batch: Location %q", an.rec.Header().Get("Location"))
	}
	an = c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, "bat-gh"), body: body("GH-1", gh), want: 202})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["batchId"] != ghBatch {
		t.Errorf("replayed batch: %v", an.body)
	}
	c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, "bat-gh"), body: body("GH-2", gh), want: 409})
	an = c.do(oaCall{method: "POST", target: batches, op: batches, hdr: idem(rw, "bat-ru"), body: body("RU-1", ru, gh), want: 202})
	ruBatch, ruJob := fmt.Sprint(an.body["batchId"]), fmt.Sprint(an.body["jobId"])
	an = c.do(oaCall{method: "GET", target: eudrPrefix + "/batches/" + ghBatch + "/risk-assessment", op: assessment, hdr: ro, want: 200})
	if an.body["status"] != storage.BatchAssessing || an.body["riskScore"] != nil || an.rec.Header().Get("Retry-After") == "" {
		t.Errorf("risk assessment while ASSESSING: %v, Retry-After %q", oaShort(an.body), an.rec.Header().Get("Retry-After"))
	}
	an = c.do(oaCall{method: "GET", target: batches + "?status=ASSESSING", op: batches, hdr: ro, want: 200})
	if len(an.list) != 2 {
		t.Errorf("ASSESSING batches: %v", oaShort(an.list))
	}
	an = c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + ghJob, op: job, hdr: ro, want: 200})
	if an.body["type"] != work.BatchRiskAssessment || an.body["status"] != storage.JobQueued {
		t.Errorf("queued batch job: %v", oaShort(an.body))
	}

	// A polygon in a batch cannot be deleted.
	an = c.do(oaCall{method: "DELETE", target: polygons + "/" + gh, op: polygon, hdr: rw, want: 409})
	if an.detail() != apierr.DetailPolygonInUse || !strings.Contains(an.rec.Body.String(), ghBatch) || !strings.Contains(an.rec.Body.String(), ruBatch) {
		t.Errorf("deleting a polygon in two batches: %s", an.rec.Body)
	}

	// The runner assesses them; the events go to a subscription.
	an = c.do(oaCall{method: "POST", target: eudrPrefix + "/webhooks", op: eudrPrefix + "/webhooks", hdr: idem(rw, "bat-wh"), want: 200,
		body: `{"targetUrl":"` + base + `/batches","eventTypes":["batch.risk_assessed"]}`})
	secret := fmt.Sprint(an.body["signingSecret"])
	recv.SetSecret("/batches", secret)
	run("the batch jobs to finish", ghJob, ruJob)
	for _, b := range []struct {
		id, job, status, level string
		score                  float64
	}{
		// B-1's record: 3 COMPLIANT plots and 1 HIGH_RISK (the
		// deforestation fixture), a quarter: supplier_history 13.
		{ghBatch, ghJob, storage.BatchVerified, risk.LevelNegligible, 13},
		{ruBatch, ruJob, storage.BatchHighRisk, risk.LevelNotNegligible, 100},
	} {
		an = c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + b.job, op: job, hdr: ro, want: 200})
		res := oaList(an.body["results"])
		if an.body["status"] != storage.JobCompleted || len(res) != 1 || res[0].(map[string]any)["status"] != b.status {
			t.Errorf("batch job %s: %v", b.job, oaShort(an.body))
		}
		an = c.do(oaCall{method: "GET", target: eudrPrefix + "/batches/" + b.id, op: batch, hdr: ro, want: 200})
		if an.body["status"] != b.status || an.body["riskScore"] != b.score || an.body["riskLevel"] != b.level || len(oaList(an.body["polygonIds"])) == 0 {
			t.Errorf("batch %s: %v, want %s %v", b.id, oaShort(an.body), b.status, b.score)
		}
		an = c.do(oaCall{method: "GET", target: eudrPrefix + "/batches/" + b.id + "/risk-assessment", op: assessment, hdr: ro, want: 200})
		names := []string{}
		for _, f := range oaList(an.body["factors"]) {
			names = append(names, fmt.Sprint(f.(map[string]any)["name"]))
		}
		if an.body["status"] != b.status || an.body["riskScore"] != b.score || an.rec.Header().Get("Retry-After") != "" ||
			!slices.Equal(names, []string{risk.FactorCountryBenchmark, risk.FactorPlotRisk, risk.FactorSupplierHistory}) {
			t.Errorf("risk assessment of %s: %s", b.id, an.rec.Body)
		}
	}

	// Lists: newest first, filters, pages; other environments, unknown IDs.
	an = c.do(oaCall{method: "GET", target: batches + "?limit=1", op: batches, hdr: ro, want: 200})
	next := an.rec.Header().Get("X-Next-Cursor")
	if len(an.list) != 1 || next != ruBatch || an.list[0].(map[string]any)["polygonIds"] != nil {
		t.Errorf("batches with limit=1: %v, X-Next-Cursor %q", oaShort(an.list), next)
	}
	an = c.do(oaCall{method: "GET", target: batches + "?limit=1&cursor=" + next, op: batches, hdr: ro, want: 200})
	if len(an.list) != 1 || an.list[0].(map[string]any)["batchId"] != ghBatch || an.rec.Header().Get("Link") != "" {
		t.Errorf("second page of batches: %v", oaShort(an.list))
	}
	for q, n := range map[string]int{"status=VERIFIED": 1, "status=HIGH_RISK&supplierId=B-1": 1, "supplierId=B-2": 0} {
		if an = c.do(oaCall{method: "GET", target: batches + "?" + q, op: batches, hdr: ro, want: 200}); len(an.list) != n {
			t.Errorf("batches?%s: %d, want %d", q, len(an.list), n)
		}
	}
	an = c.do(oaCall{method: "GET", target: batches + "?status=done&limit=0", op: batches, hdr: ro, want: 400})
	if got := problems(an); len(got) != 2 || !got[apierr.DetailInvalidValue+" at query.status"] {
		t.Errorf("batches with two bad parameters: %v", slices.Sorted(maps.Keys(got)))
	}
	c.do(oaCall{method: "GET", target: batches, op: batches, want: 401})
	for _, path := range []string{batch, assessment} {
		target := strings.Replace(path, "{batchId}", ghBatch, 1)
		c.do(oaCall{env: storage.Production, method: "GET", target: target, op: path, hdr: live, want: 404})
		c.do(oaCall{method: "GET", target: strings.Replace(path, "{batchId}", "bat_nope", 1), op: path, hdr: ro, want: 404})
		c.do(oaCall{method: "GET", target: target, op: path, want: 401})
	}
	an = c.do(oaCall{env: storage.Production, method: "GET", target: batches, op: batches, hdr: live, want: 200})
	if len(an.list) != 0 {
		t.Errorf("production lists the sandbox's batches: %v", oaShort(an.list))
	}

	// The events: one per batch, as documented, with the batch's score.
	oaEventually(t, "the two batch.risk_assessed events", func() bool { return len(recv.Requests("/batches", "")) >= 2 })
	got := map[string]float64{}
	for _, d := range recv.Requests("/batches", "") {
		if d.Header.Get(webhooksig.HeaderEventType) != event.BatchRiskAssessed {
			t.Errorf("delivery to /batches of %s", d.Header.Get(webhooksig.HeaderEventType))
			continue
		}
		if env := c.checkDelivery(event.BatchRiskAssessed, d, secret); env != nil {
			data, _ := env["data"].(map[string]any)
			got[fmt.Sprint(data["batchId"])], _ = data["riskScore"].(float64)
			if len(oaList(data["factors"])) != 3 {
				t.Errorf("batch.risk_assessed without its three factors: %v", oaShort(data))
			}
		}
	}
	if want := map[string]float64{ghBatch: 13, ruBatch: 100}; !reflect.DeepEqual(got, want) {
		t.Errorf("batch.risk_assessed scores: %v, want %v", got, want)
	}
}
