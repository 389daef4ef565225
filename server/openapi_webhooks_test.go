package server

// Conformance of the webhook, DLQ and sandbox routes, and of the
// deliveries a receiver gets.

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"time"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// webhooks drives the webhook, DLQ, sandbox event and job routes: a sandbox
// key registers webhooks to the receiver at base (trusted through
// webhooks.ca_file), the dispatcher really delivers, /gone's 410 fills the
// DLQ.
func (c *oaConformance) webhooks(recv *apitest.Receiver, base string, rw, ro, live []string) {
	t := c.t
	t.Helper()
	const (
		webhooks   = eudrPrefix + "/webhooks"
		webhook    = webhooks + "/{webhookId}"
		rotate     = webhook + "/rotate-secret"
		ping       = webhook + "/ping"
		deliveries = webhook + "/deliveries"
		dlq        = webhooks + "/dlq"
		replayBulk = dlq + "/replay-bulk"
		replay     = dlq + "/{eventId}/replay"
		dlqEvent   = dlq + "/{eventId}"
		events     = eudrPrefix + "/sandbox/events"
		jobs       = eudrPrefix + "/sandbox/jobs"
		job        = eudrPrefix + "/jobs/{jobId}"
	)
	jsonCT := []string{"Content-Type", "application/json"}
	with, idem := oaWith, oaIdem
	tenant := storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}

	// The dispatcher sends queued deliveries (ping does not need it).
	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		c.a.dispatcher.Run(ctx)
	}()
	defer func() { stop(); <-stopped }()

	an := c.do(oaCall{method: "GET", target: webhooks + "/dlq", op: dlq, hdr: ro, want: 200})
	if an.body["retrievedCount"] != 0.0 || len(oaList(an.body["messages"])) != 0 {
		t.Errorf("empty DLQ: got %v", an.body)
	}

	// Registration.
	okBody := `{"targetUrl":"` + base + `/ok","eventTypes":["polygon.verified","polygon.failed","polygon.verified"]}`
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, body: okBody, hdr: with(rw, jsonCT...), want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("register without Idempotency-Key: detail %q", an.detail())
	}
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, hdr: idem(rw, "w-bad"), want: 400,
		body: `{"targetUrl":"http://example.com/hook","eventTypes":["polygon.verified","webhook.ping"]}`})
	if ds := oaList(an.body["details"]); len(ds) != 2 || an.detail() != apierr.DetailInvalidValue {
		t.Errorf("plain HTTP and webhook.ping: details %v, want two INVALID_VALUE", oaShort(ds))
	}
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, hdr: idem(rw, "w-bad"), want: 400,
		body: `{"targetUrl":"https://example.com/hook","eventTypes":[]}`})
	if an.detail() != apierr.DetailRequired {
		t.Errorf("no event types: detail %q, want %s", an.detail(), apierr.DetailRequired)
	}
	c.do(oaCall{method: "POST", target: webhooks, op: webhooks, hdr: idem(rw, "w-bad"), want: 400,
		body: `{"targetUrl":"https://example.com/hook","eventTypes":["job.failed"],"secret":"x"}`})
	c.do(oaCall{method: "POST", target: webhooks, op: webhooks, body: okBody, hdr: idem(ro, "w-ro"), want: 403})
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, body: okBody, hdr: idem(rw, "w-1"), want: 200})
	okID, okSecret := fmt.Sprint(an.body["webhookId"]), fmt.Sprint(an.body["signingSecret"])
	recv.SetSecret("/ok", okSecret)
	if !strings.HasPrefix(okSecret, webhooksig.SecretPrefix) || strings.Contains(okSecret, "*") ||
		!reflect.DeepEqual(an.body["eventTypes"], []any{"polygon.verified", "polygon.failed"}) {
		t.Errorf("registration: secret %q, eventTypes %v", okSecret, an.body["eventTypes"])
	}
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, body: okBody, hdr: idem(rw, "w-1"), want: 200})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["signingSecret"] != okSecret || an.body["webhookId"] != okID {
		t.Errorf("replayed registration: Idempotent-Replayed %q, webhook %v, secret %v; want true and the first answer (%s, %s)",
			an.rec.Header().Get("Idempotent-Replayed"), an.body["webhookId"], an.body["signingSecret"], okID, okSecret)
	}
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, hdr: idem(rw, "w-2"), want: 409,
		body: `{"targetUrl":"` + base + `/ok","eventTypes":["job.failed","polygon.failed"]}`})
	if an.detail() != apierr.DetailWebhookDuplicate {
		t.Errorf("duplicate webhook: detail %q, want %s", an.detail(), apierr.DetailWebhookDuplicate)
	}
	an = c.do(oaCall{method: "POST", target: webhooks, op: webhooks, hdr: idem(rw, "w-3"), want: 200,
		body: `{"targetUrl":"` + base + `/gone","eventTypes":["job.failed"]}`})
	goneID := fmt.Sprint(an.body["webhookId"])
	recv.SetSecret("/gone", fmt.Sprint(an.body["signingSecret"]))
	an = c.do(oaCall{env: storage.Production, method: "POST", target: webhooks, op: webhooks, hdr: idem(live, "w-live"), want: 400,
		body: `{"targetUrl":"` + base + `/ok","eventTypes":["polygon.verified"]}`})
	if an.detail() != apierr.DetailTargetNotAllowed {
		t.Errorf("loopback target in production: detail %q, want %s", an.detail(), apierr.DetailTargetNotAllowed)
	}

	// Lists show the secrets redacted.
	an = c.do(oaCall{method: "GET", target: webhooks, op: webhooks, hdr: ro, want: 200})
	if len(an.list) != 2 {
		t.Errorf("webhook list: %d items, want 2", len(an.list))
	}
	for _, it := range an.list {
		if sec := fmt.Sprint(it.(map[string]any)["signingSecret"]); !strings.HasPrefix(sec, webhooksig.SecretPrefix+"****") {
			t.Errorf("webhook list shows the secret %q", sec)
		}
	}
	an = c.do(oaCall{method: "GET", target: webhooks + "?limit=1", op: webhooks, hdr: ro, want: 200})
	next := an.rec.Header().Get("X-Next-Cursor")
	if len(an.list) != 1 || next == "" || an.rec.Header().Get("Link") == "" {
		t.Errorf("webhook list with limit=1: %d items, X-Next-Cursor %q", len(an.list), next)
	}
	an = c.do(oaCall{method: "GET", target: webhooks + "?limit=1&cursor=" + next, op: webhooks, hdr: ro, want: 200})
	if len(an.list) != 1 || an.rec.Header().Get("Link") != "" {
		t.Errorf("last webhook page: %d items, Link %q", len(an.list), an.rec.Header().Get("Link"))
	}
	c.do(oaCall{method: "GET", target: webhooks + "?limit=x", op: webhooks, hdr: ro, want: 400})

	// Rotation: the new secret signs what follows.
	an = c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/rotate-secret", op: rotate, hdr: rw, want: 200})
	if an.body["webhookId"] != okID || an.body["signingSecret"] == okSecret {
		t.Errorf("rotate: %v; want webhook %s with a new secret", an.body, okID)
	}
	recv.SetSecret("/ok", fmt.Sprint(an.body["signingSecret"]))
	an = c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/rotate-secret", op: rotate, hdr: idem(rw, "rot-1"), want: 200})
	okSecret = fmt.Sprint(an.body["signingSecret"])
	recv.SetSecret("/ok", okSecret)
	an = c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/rotate-secret", op: rotate, hdr: idem(rw, "rot-1"), want: 200})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["signingSecret"] != okSecret {
		t.Errorf("replayed rotation: Idempotent-Replayed %q, secret %v; want true and the first answer's %s",
			an.rec.Header().Get("Idempotent-Replayed"), an.body["signingSecret"], okSecret)
	}
	c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/rotate-secret", op: rotate, hdr: idem(rw, "rot-1"),
		body: `{}`, want: 409})
	c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/rotate-secret", op: rotate, hdr: idem(rw, "bad key"), want: 400})
	c.do(oaCall{method: "POST", target: webhooks + "/wh_nope/rotate-secret", op: rotate, hdr: rw, want: 404})
	c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/rotate-secret", op: rotate, hdr: ro, want: 403})

	// Ping: sent now, {} whatever the answer, the attempt in the log.
	an = c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/ping", op: ping, hdr: rw, want: 200})
	if len(an.body) != 0 || an.rec.Body.String() != "{}\n" {
		t.Errorf("ping: body %q, want {}", an.rec.Body.String())
	}
	an = c.do(oaCall{method: "GET", target: webhooks + "/" + okID + "/deliveries", op: deliveries, hdr: ro, want: 200})
	if len(an.list) != 1 {
		t.Fatalf("deliveries after a ping: %d, want 1", len(an.list))
	}
	att := an.list[0].(map[string]any)
	if att["eventType"] != event.WebhookPing || att["status"] != 200.0 || att["errorClass"] != "" || att["nextRetry"] != nil ||
		att["responseBody"] != "ok" {
		t.Errorf("ping attempt: %v", att)
	}
	if d, ok := oaFind(recv, fmt.Sprint(att["eventId"])); !ok {
		t.Error("the receiver got no ping")
	} else if env := c.checkDelivery(event.WebhookPing, d, okSecret); env != nil {
		if _, ok := env["nextRetry"]; ok || env["attempt"] != 0.0 || oaShort(env["data"]) != `{"webhookId":"`+okID+`"}` {
			t.Errorf("ping envelope: %s", d.Body)
		}
	}
	c.do(oaCall{method: "POST", target: webhooks + "/" + goneID + "/ping", op: ping, hdr: idem(rw, "ping-1"), want: 200})
	c.do(oaCall{method: "POST", target: webhooks + "/wh_nope/ping", op: ping, hdr: rw, want: 404})
	c.do(oaCall{method: "POST", target: webhooks + "/" + okID + "/ping", op: ping, hdr: ro, want: 403})
	an = c.do(oaCall{method: "GET", target: webhooks + "/" + goneID + "/deliveries?limit=1", op: deliveries, hdr: ro, want: 200})
	if len(an.list) != 1 || an.list[0].(map[string]any)["status"] != 410.0 || an.list[0].(map[string]any)["deadLettered"] != false {
		t.Errorf("ping answered 410: %v; want status 410, not dead-lettered", oaShort(an.list))
	}
	c.do(oaCall{method: "GET", target: webhooks + "/" + okID + "/deliveries?limit=1001", op: deliveries, hdr: ro, want: 400})
	c.do(oaCall{method: "GET", target: webhooks + "/wh_nope/deliveries", op: deliveries, hdr: ro, want: 404})

	// Sandbox events go through the real pipeline; production has no such route.
	testJobID := storage.NewID("job", time.Now())
	verified := `{"eventType":"polygon.verified","data":{"jobId":"` + testJobID + `","polygonIds":["` + storage.PolygonID(testJobID, 0) + `"]}}`
	an = c.do(oaCall{method: "POST", target: events, op: events, body: verified, hdr: rw, want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("sandbox event without Idempotency-Key: detail %q", an.detail())
	}
	an = c.do(oaCall{method: "POST", target: events, op: events, body: `{"eventType":"webhook.ping","data":[1]}`, hdr: idem(rw, "e-bad"), want: 400})
	if ds := oaList(an.body["details"]); len(ds) != 2 {
		t.Errorf("sandbox event of a bad type and data: details %v, want 2", oaShort(ds))
	}
	c.do(oaCall{method: "POST", target: events, op: events, body: `{}`, hdr: idem(rw, "e-bad"), want: 400})
	c.do(oaCall{method: "POST", target: events, op: events, body: verified, hdr: idem(ro, "e-ro"), want: 403})
	an = c.do(oaCall{method: "POST", target: events, op: events, body: verified, hdr: idem(rw, "e-1"), want: 202})
	verifiedID := fmt.Sprint(an.body["eventId"])
	if an.body["deliveries"] != 1.0 {
		t.Errorf("polygon.verified: %v deliveries, want 1", an.body["deliveries"])
	}
	an = c.do(oaCall{method: "POST", target: events, op: events, body: verified, hdr: idem(rw, "e-1"), want: 202})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["eventId"] != verifiedID {
		t.Errorf("replayed sandbox event: Idempotent-Replayed %q, eventId %v", an.rec.Header().Get("Idempotent-Replayed"), an.body["eventId"])
	}
	an = c.do(oaCall{method: "POST", target: events, op: events, hdr: idem(rw, "e-2"), want: 202,
		body: `{"eventType":"job.failed","data":{"jobId":"` + storage.NewID("job", time.Now()) + `","type":"polygon_ingestion","error":{"code":"JOB_FAILED","message":"boom"}}}`})
	failedID := fmt.Sprint(an.body["eventId"])
	an = c.do(oaCall{method: "POST", target: events, op: events, body: `{"eventType":"report.ready"}`, hdr: idem(rw, "e-3"), want: 202})
	if an.body["deliveries"] != 0.0 {
		t.Errorf("report.ready nobody subscribed to: %v deliveries, want 0", an.body["deliveries"])
	}
	c.do(oaCall{env: storage.Production, method: "POST", target: events, op: events, body: verified, hdr: idem(live, "e-live"), want: 404})

	var d apitest.Delivery
	oaEventually(t, "the polygon.verified delivery", func() (ok bool) { d, ok = oaFind(recv, verifiedID); return ok })
	if env := c.checkDelivery(event.PolygonVerified, d, okSecret); env != nil {
		if _, ok := env["nextRetry"]; !ok || env["attempt"] != 0.0 || d.Path != "/ok" {
			t.Errorf("first delivery to %s: %s; want attempt 0 with nextRetry", d.Path, d.Body)
		}
	}

	// The DLQ: /gone's 410 dead-letters job.failed at once.
	deadLettered := func() bool {
		var n int
		err := c.a.db.View(context.Background(), func(tx *storage.Tx) error {
			dls, _, err := queue.FindDeadLetterPage(tx.Tx, event.Scope(tenant), queue.DLQFilter{EventIDs: []string{failedID}})
			n = len(dls)
			return err
		})
		return err == nil && n == 1
	}
	oaEventually(t, "job.failed in the DLQ", deadLettered)
	an = c.do(oaCall{method: "GET", target: dlq, op: dlq, hdr: ro, want: 200})
	msgs := oaList(an.body["messages"])
	if an.body["retrievedCount"] != 1.0 || len(msgs) != 1 {
		t.Fatalf("DLQ: %v, want one entry", an.body)
	}
	m := msgs[0].(map[string]any)
	if m["eventId"] != failedID || m["webhookId"] != goneID || m["lastStatus"] != 410.0 || m["attempts"] != 1.0 {
		t.Errorf("DLQ entry: %v", m)
	}
	for _, e := range c.sc.check(map[string]any{"$ref": "#/components/schemas/JobFailedData"}, m["data"], "DLQ data") {
		t.Error(e)
	}
	an = c.do(oaCall{method: "GET", target: dlq + "?eventType=polygon.verified&startDate=2020-01-01&endDate=2099-12-31T00:00:00Z&limit=5", op: dlq, hdr: ro, want: 200})
	if an.body["retrievedCount"] != 0.0 {
		t.Errorf("DLQ filtered to polygon.verified: %v", an.body)
	}
	an = c.do(oaCall{method: "GET", target: dlq + "?eventType=webhook.ping&startDate=yesterday&limit=0", op: dlq, hdr: ro, want: 400})
	if ds := oaList(an.body["details"]); len(ds) != 3 {
		t.Errorf("DLQ with three bad filters: details %v, want 3", oaShort(ds))
	}
	c.do(oaCall{method: "GET", target: dlq + "?startDate=2026-11-21&endDate=2026-11-20", op: dlq, hdr: ro, want: 400})
	an = c.do(oaCall{method: "GET", target: dlq + "?cursor=%21", op: dlq, hdr: ro, want: 400})
	if an.detail() != apierr.DetailInvalidValue || oaList(an.body["details"])[0].(map[string]any)["field"] != "query.cursor" {
		t.Errorf("DLQ with a malformed cursor: %v, want INVALID_VALUE at query.cursor", an.body)
	}

	// Replay and acknowledgement.
	c.do(oaCall{method: "POST", target: dlq + "/evt_nope/replay", op: replay, hdr: rw, want: 404})
	c.do(oaCall{method: "POST", target: dlq + "/" + failedID + "/replay", op: replay, hdr: ro, want: 403})
	an = c.do(oaCall{method: "POST", target: dlq + "/" + failedID + "/replay", op: replay, hdr: idem(rw, "dlq-1"), want: 200})
	if got := an.rec.Header().Get("X-Replayed-Count"); got != "1" {
		t.Errorf("replay: X-Replayed-Count %q, want 1", got)
	}
	an = c.do(oaCall{method: "POST", target: dlq + "/" + failedID + "/replay", op: replay, hdr: idem(rw, "dlq-1"), want: 200})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.rec.Header().Get("X-Replayed-Count") != "1" {
		t.Errorf("replayed replay: Idempotent-Replayed %q, X-Replayed-Count %q", an.rec.Header().Get("Idempotent-Replayed"),
			an.rec.Header().Get("X-Replayed-Count"))
	}
	oaEventually(t, "job.failed back in the DLQ", deadLettered)
	c.do(oaCall{method: "POST", target: replayBulk + "?eventType=nope", op: replayBulk, hdr: rw, want: 400})
	c.do(oaCall{method: "POST", target: replayBulk, op: replayBulk, body: `{"eventIds":"x"}`, hdr: rw, want: 400})
	c.do(oaCall{method: "POST", target: replayBulk, op: replayBulk, body: `{"eventIds":[]}`, hdr: with(rw, "Content-Type", "text/plain"), want: 415})
	an = c.do(oaCall{method: "POST", target: replayBulk, op: replayBulk, body: `{"eventIds":["evt_nope"]}`, hdr: with(rw, jsonCT...), want: 200})
	if got := an.rec.Header().Get("X-Replayed-Count"); got != "0" {
		t.Errorf("bulk replay of an unknown event: X-Replayed-Count %q, want 0", got)
	}
	an = c.do(oaCall{method: "POST", target: replayBulk + "?eventType=job.failed&endDate=2099-01-01", op: replayBulk, hdr: idem(rw, "dlq-bulk-1"), want: 200})
	if got := an.rec.Header().Get("X-Replayed-Count"); got != "1" {
		t.Errorf("bulk replay of job.failed: X-Replayed-Count %q, want 1", got)
	}
	oaEventually(t, "job.failed back in the DLQ", deadLettered)
	an = c.do(oaCall{method: "DELETE", target: dlq, op: dlq, body: `{}`, hdr: rw, want: 400})
	if an.detail() != apierr.DetailRequired {
		t.Errorf("bulk acknowledgement without eventIds: detail %q, want %s", an.detail(), apierr.DetailRequired)
	}
	an = c.do(oaCall{method: "DELETE", target: dlq, op: dlq, hdr: rw, want: 400})
	if an.detail() != apierr.DetailMalformedJSON {
		t.Errorf("bulk acknowledgement without a body: detail %q, want %s", an.detail(), apierr.DetailMalformedJSON)
	}
	c.do(oaCall{method: "DELETE", target: dlq, op: dlq, body: `{"eventIds":["evt_nope"]}`, hdr: ro, want: 403})
	an = c.do(oaCall{method: "DELETE", target: dlq, op: dlq, body: `{"eventIds":["evt_nope"]}`, hdr: rw, want: 204})
	if got := an.rec.Header().Get("X-Acknowledged-Count"); got != "0" {
		t.Errorf("bulk acknowledgement of an unknown event: X-Acknowledged-Count %q, want 0", got)
	}
	c.do(oaCall{method: "DELETE", target: dlq + "/evt_nope", op: dlqEvent, hdr: rw, want: 404})
	an = c.do(oaCall{method: "DELETE", target: dlq + "/" + failedID, op: dlqEvent, hdr: rw, want: 204})
	if got := an.rec.Header().Get("X-Acknowledged-Count"); got != "1" {
		t.Errorf("acknowledgement: X-Acknowledged-Count %q, want 1", got)
	}
	c.do(oaCall{method: "DELETE", target: dlq + "/" + failedID, op: dlqEvent, hdr: rw, want: 404})
	an = c.do(oaCall{method: "GET", target: webhooks + "/" + goneID + "/deliveries", op: deliveries, hdr: ro, want: 200})
	if len(an.list) == 0 || an.list[0].(map[string]any)["deadLettered"] != true {
		t.Errorf("deliveries of /gone: newest %v, want a dead-lettering attempt", oaShort(an.list))
	}

	// Deletion.
	c.do(oaCall{method: "DELETE", target: webhooks + "/" + goneID, op: webhook, hdr: ro, want: 403})
	c.do(oaCall{method: "DELETE", target: webhooks + "/" + goneID, op: webhook, hdr: rw, want: 204})
	c.do(oaCall{method: "DELETE", target: webhooks + "/" + goneID, op: webhook, hdr: rw, want: 404})
	c.do(oaCall{method: "GET", target: webhooks + "/" + goneID + "/deliveries", op: deliveries, hdr: ro, want: 404})

	// Sandbox test jobs: queued here, run by the job runner, followed with
	// GET /jobs; one fails and fires job.failed. Production has no such route.
	c.sandboxJobs(recv, base, rw, ro, live)
	c.listenerCertificate(rw, ro, live)

	// Polygons: queued jobs (Retry-After while not finished), screened
	// by the job runner, their polygons and events.
	c.polygons(recv, base, rw, ro, live)

	// Batches: registered from screened plots, assessed by the job
	// runner, their risk assessments and events; a polygon in use.
	c.batches(recv, base, rw, ro, live)

	// Shipments, the ledger and evidence: batches linked to shipments by
	// the job runner, their events; every ledger route checked as a
	// client would; evidence verified and tampered with.
	c.ledgerAndShipments(recv, base, rw, ro, live)

	// Due-diligence statements, the EU system credentials and archive
	// reports, on an appliance of their own whose clock the test moves.
	c.dds(recv, base)

	// Jobs: a fatal failure, answered without Retry-After.
	var failed *storage.Job
	err := c.a.db.Update(context.Background(), func(tx *storage.Tx) error {
		now := tx.Now()
		failed = &storage.Job{ID: storage.NewID("job", now), Type: "shipment_link", Status: storage.JobFailed,
			Progress: storage.JobProgress{Total: 1, Processed: 1, Failed: 1},
			Error:    &storage.JobError{Code: apierr.JobFailed, Message: "boom"}, CreatedAt: now, StartedAt: &now, CompletedAt: &now}
		return tx.PutJob(tenant, failed)
	})
	if err != nil {
		t.Fatal(err)
	}
	an = c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + failed.ID, op: job, hdr: ro, want: 200})
	if an.rec.Header().Get("Retry-After") != "" || an.body["error"] == nil {
		t.Errorf("failed job: Retry-After %q, error %v", an.rec.Header().Get("Retry-After"), an.body["error"])
	}
	c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/job_nope", op: job, hdr: ro, want: 404})
	c.do(oaCall{env: storage.Production, method: "GET", target: eudrPrefix + "/jobs/" + failed.ID, op: job, hdr: live, want: 404})
	c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + failed.ID, op: job, want: 401})
}

// sandboxJobs drives POST /sandbox/jobs and GET /jobs on the jobs it
// queues: validation, idempotency, the 202 with Location, a job followed
// from QUEUED to COMPLETED by the job runner (run here until it returns),
// and a job that fails at failAtItem, whose job.failed reaches a
// subscription of the receiver at base. It leaves no job queued.
func (c *oaConformance) sandboxJobs(recv *apitest.Receiver, base string, rw, ro, live []string) {
	t := c.t
	t.Helper()
	const (
		jobs = eudrPrefix + "/sandbox/jobs"
		job  = eudrPrefix + "/jobs/{jobId}"
	)
	with, idem := oaWith, oaIdem
	get := func(id string) oaAnswer {
		t.Helper()
		return c.do(oaCall{method: "GET", target: eudrPrefix + "/jobs/" + id, op: job, hdr: ro, want: 200})
	}
	progress := func(an oaAnswer) map[string]any { p, _ := an.body["progress"].(map[string]any); return p }

	// Validation: the Idempotency-Key first, then every problem of the body.
	an := c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{}`, hdr: rw, want: 400})
	if an.detail() != apierr.DetailIdempotencyKeyMissing {
		t.Errorf("sandbox job without Idempotency-Key: detail %q, want %s", an.detail(), apierr.DetailIdempotencyKeyMissing)
	}
	an = c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{"items":0,"itemMillis":1001,"failAtItem":-1,"extra":1}`,
		hdr: idem(rw, "j-bad"), want: 400})
	fields := map[string]string{}
	for _, dv := range oaList(an.body["details"]) {
		dm, _ := dv.(map[string]any)
		fields[fmt.Sprint(dm["field"])] = fmt.Sprint(dm["code"])
	}
	if want := map[string]string{"items": apierr.DetailInvalidValue, "itemMillis": apierr.DetailInvalidValue, "failAtItem": apierr.DetailInvalidValue,
		"extra": apierr.DetailUnknownField}; !maps.Equal(fields, want) {
		t.Errorf("sandbox job with four bad members: details %v, want %v", fields, want)
	}
	for _, body := range []string{`{"items":1001}`, `{"items":"ten"}`, `{"items":2.5}`, `{"items":3,"failAtItem":3}`, `{"itemMillis":-1}`} {
		an = c.do(oaCall{method: "POST", target: jobs, op: jobs, body: body, hdr: idem(rw, "j-bad"), want: 400})
		if ds := oaList(an.body["details"]); len(ds) != 1 || an.detail() != apierr.DetailInvalidValue {
			t.Errorf("sandbox job %s: details %v, want one INVALID_VALUE", body, oaShort(ds))
		}
	}
	c.do(oaCall{method: "POST", target: jobs, op: jobs, hdr: idem(rw, "j-bad"), want: 400})
	c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{}`, hdr: idem(ro, "j-ro"), want: 403})
	c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{}`, hdr: with(idem(rw, "j-xml"), "Content-Type", "application/xml"), want: 415})
	c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{}`, want: 401})
	c.do(oaCall{env: storage.Production, method: "POST", target: jobs, op: jobs, body: `{}`, hdr: idem(live, "j-live"), want: 404})

	// Accepted: 202 with the jobId and its path in Location; the job waits
	// QUEUED (the runner is not running yet) with the default item count.
	an = c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{}`, hdr: idem(rw, "j-1"), want: 202})
	defID, loc := fmt.Sprint(an.body["jobId"]), an.rec.Header().Get("Location")
	if loc != eudrPrefix+"/jobs/"+defID {
		t.Errorf("sandbox job: Location %q, want %s", loc, eudrPrefix+"/jobs/"+defID)
	}
	an = c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{}`, hdr: idem(rw, "j-1"), want: 202})
	if an.rec.Header().Get("Idempotent-Replayed") != "true" || an.body["jobId"] != defID || an.rec.Header().Get("Location") != loc {
		t.Errorf("replayed sandbox job: Idempotent-Replayed %q, jobId %v, Location %q; want true, %s, %s",
			an.rec.Header().Get("Idempotent-Replayed"), an.body["jobId"], an.rec.Header().Get("Location"), defID, loc)
	}
	c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{"items":2}`, hdr: idem(rw, "j-1"), want: 409})
	an = get(defID)
	defItems := oaMust(t, c.doc, "/components/schemas/SandboxJobRequest/properties/items/default")
	if an.body["status"] != storage.JobQueued || an.body["type"] != work.SandboxTest || an.rec.Header().Get("Retry-After") == "" ||
		progress(an)["total"] != defItems || progress(an)["processed"] != 0.0 || progress(an)["percent"] != 0.0 {
		t.Errorf("queued sandbox job: %v, Retry-After %q; want QUEUED %s of %v items with Retry-After",
			oaShort(an.body), an.rec.Header().Get("Retry-After"), work.SandboxTest, defItems)
	}

	// A job that fails at its second item, with a job.failed subscription.
	an = c.do(oaCall{method: "POST", target: eudrPrefix + "/webhooks", op: eudrPrefix + "/webhooks", hdr: idem(rw, "j-wh"), want: 200,
		body: `{"targetUrl":"` + base + `/jobs","eventTypes":["job.failed"]}`})
	secret := fmt.Sprint(an.body["signingSecret"])
	recv.SetSecret("/jobs", secret)
	an = c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{"items":3,"itemMillis":0,"failAtItem":1}`, hdr: idem(rw, "j-2"), want: 202})
	failID := fmt.Sprint(an.body["jobId"])
	an = c.do(oaCall{method: "POST", target: jobs, op: jobs, body: `{"items":2,"itemMillis":1}`, hdr: idem(rw, "j-3"), want: 202})
	twoID := fmt.Sprint(an.body["jobId"])

	ctx, stop := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := c.a.jobs.Run(ctx); err != nil {
			t.Errorf("job runner: %v", err)
		}
	}()
	oaEventually(t, "the sandbox jobs to finish", func() bool {
		return c.jobFinished(defID) && c.jobFinished(twoID) && c.jobFinished(failID)
	})
	stop()
	<-stopped

	for _, id := range []string{defID, twoID} {
		an = get(id)
		p := progress(an)
		if an.body["status"] != storage.JobCompleted || an.rec.Header().Get("Retry-After") != "" || p["percent"] != 100.0 ||
			p["processed"] != p["total"] || p["succeeded"] != p["total"] || p["failed"] != 0.0 || an.body["error"] != nil ||
			an.body["startedAt"] == nil || an.body["completedAt"] == nil {
			t.Errorf("completed sandbox job %s: %v, Retry-After %q", id, oaShort(an.body), an.rec.Header().Get("Retry-After"))
		}
	}
	an = get(failID)
	p, jerr := progress(an), an.body["error"]
	if an.body["status"] != storage.JobFailed || an.rec.Header().Get("Retry-After") != "" || p["processed"] != 1.0 || p["total"] != 3.0 ||
		p["percent"] != 100.0 {
		t.Errorf("failed sandbox job: %v, Retry-After %q; want FAILED after 1 of 3 items", oaShort(an.body), an.rec.Header().Get("Retry-After"))
	}
	if em, _ := jerr.(map[string]any); em["code"] != apierr.JobFailed || fmt.Sprint(em["message"]) == "" {
		t.Errorf("failed sandbox job: error %v, want code %s and a message", oaShort(jerr), apierr.JobFailed)
	}

	var d apitest.Delivery
	oaEventually(t, "the job.failed delivery", func() (ok bool) { d, ok = oaFindPath(recv, "/jobs"); return ok })
	if env := c.checkDelivery(event.JobFailed, d, secret); env != nil {
		data, _ := env["data"].(map[string]any)
		if env["eventType"] != event.JobFailed || data["jobId"] != failID || data["type"] != work.SandboxTest ||
			!reflect.DeepEqual(data["error"], jerr) {
			t.Errorf("job.failed of the sandbox job: %s; want jobId %s, type %s and the job's error %s", d.Body, failID, work.SandboxTest, oaShort(jerr))
		}
	}

	// The job is the sandbox's: production does not know it.
	c.do(oaCall{env: storage.Production, method: "GET", target: eudrPrefix + "/jobs/" + defID, op: job, hdr: live, want: 404})
}

// listenerCertificate drives POST /sandbox/webhook-listener-certificate:
// issued (Cache-Control: no-store, an Idempotency-Key ignored), every
// refusal documented, and no such route in production.
func (c *oaConformance) listenerCertificate(rw, ro, live []string) {
	t := c.t
	t.Helper()
	const cert = eudrPrefix + "/sandbox/webhook-listener-certificate"
	with := oaWith
	an := c.do(oaCall{method: "POST", target: cert, op: cert, body: `{"hostnames":["host.docker.internal","192.168.1.20"]}`, hdr: rw, want: 200})
	if an.rec.Header().Get("Cache-Control") != "no-store" || len(oaList(an.body["hostnames"])) != 5 {
		t.Errorf("listener certificate: Cache-Control %q, hostnames %v", an.rec.Header().Get("Cache-Control"), an.body["hostnames"])
	}
	again := c.do(oaCall{method: "POST", target: cert, op: cert, body: `{}`, hdr: oaIdem(rw, "cert-1"), want: 200})
	replay := c.do(oaCall{method: "POST", target: cert, op: cert, body: `{}`, hdr: oaIdem(rw, "cert-1"), want: 200})
	if replay.rec.Header().Get("Idempotent-Replayed") != "" || replay.body["privateKey"] == again.body["privateKey"] {
		t.Error("listener certificate: a request with the same Idempotency-Key was replayed")
	}
	an = c.do(oaCall{method: "POST", target: cert, op: cert, body: `{"hostnames":["example.com","8.8.8.8"],"x":1}`, hdr: rw, want: 400})
	if p := oaProblems(an); !p["INVALID_VALUE at hostnames[0]"] || !p["INVALID_VALUE at hostnames[1]"] || !p["UNKNOWN_FIELD at x"] {
		t.Errorf("listener certificate for public names: details %v", oaShort(an.body["details"]))
	}
	c.do(oaCall{method: "POST", target: cert, op: cert, hdr: rw, want: 400})
	c.do(oaCall{method: "POST", target: cert, op: cert, body: `{}`, hdr: ro, want: 403})
	c.do(oaCall{method: "POST", target: cert, op: cert, body: `{}`, hdr: live, want: 403})
	c.do(oaCall{method: "POST", target: cert, op: cert, body: `{}`, hdr: with(rw, "Content-Type", "text/plain"), want: 415})
	c.do(oaCall{method: "POST", target: cert, op: cert, body: `{}`, want: 401})
	c.do(oaCall{env: storage.Production, method: "POST", target: cert, op: cert, body: `{}`, hdr: live, want: 404})
}
