// The console's pages of webhook subscriptions, their deliveries and the
// dead-letter queue (#/webhooks, #/webhooks/{webhookId}). It also holds the
// small pieces the operations pages share (admin.js imports them): the
// confirmation step and a secret shown once.

import { html, useEffect, useState } from "./standalone.module.js";
import * as api from "./api.js";
import { useAskFocus } from "./ui.js";
import { Problem } from "./pages.js";

export function when(ts) {
  return ts ? new Date(ts).toLocaleString() : "never";
}

// ago says how long ago ts was, in the largest whole unit.
export function ago(ts) {
  const s = Math.max(0, Math.round((Date.now() - new Date(ts).getTime()) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

// Confirm is a button that asks once more, in the page, before doing what
// it says: a browser dialog would stop the page and cannot be styled.
export function Confirm({ label, question, confirmLabel, onConfirm, className = "" }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [cancel, opener] = useAskFocus(asking);
  if (!asking) return html`<button type="button" class=${className} data-write onClick=${() => setAsking(true)} ref=${opener}>${label}</button>`;
  const yes = async () => {
    setBusy(true);
    try {
      await onConfirm();
    } finally {
      setBusy(false);
      setAsking(false);
    }
  };
  return html`<span class="ops-confirm" role="group" data-write onKeyDown=${(e) => { if (e.key === "Escape" && !busy) setAsking(false); }}>
    <span>${question}</span>
    <button type="button" class="danger ops-confirm-yes" disabled=${busy} onClick=${yes}>${confirmLabel || label}</button>
    <button type="button" class="secondary" disabled=${busy} onClick=${() => setAsking(false)} ref=${cancel}>Cancel</button>
  </span>`;
}

// OnceSecret shows a secret the appliance will not show again, with a copy
// button and a warning; Done forgets it.
export function OnceSecret({ title, value, onDone }) {
  const [copied, setCopied] = useState(false);
  const copy = async (e) => {
    const input = e.target.closest(".once-secret").querySelector("input");
    input.select();
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      document.execCommand("copy"); // without the clipboard API (plain http): the selection
    }
    setCopied(true);
  };
  return html`<div class="card once-secret" role="alert">
    <h2>${title}</h2>
    <p class="warning">Copy it now: it is shown this once and cannot be shown again.</p>
    <div class="once-secret-value">
      <input readonly value=${value} aria-label=${title} onFocus=${(e) => e.target.select()} />
      <button type="button" onClick=${copy}>${copied ? "Copied" : "Copy"}</button>
    </div>
    <button type="button" class="secondary" onClick=${onDone}>Done</button>
  </div>`;
}

export function Webhooks({ id }) {
  return id ? html`<${Subscription} id=${id} key=${id} />` : html`<${WebhookList} />`;
}

function WebhookList() {
  const [subs, setSubs] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    api.getAll("/eudr/webhooks").then(setSubs, setError);
  }, []);
  return html`<section class="page ops">
    <h1>Webhooks</h1>
    ${error && html`<${Problem} error=${error} />`}
    <div class="card">
      <h2>Subscriptions</h2>
      ${!subs && !error && html`<p class="muted">Loading…</p>`}
      ${subs && subs.length === 0 && html`<p class="muted">No subscription: register one with POST /eudr/webhooks.</p>`}
      ${subs && subs.length > 0 && html`<table class="ops-table webhooks-table">
        <thead><tr><th>Receiver</th><th>Events</th><th>Secret</th><th>Created</th></tr></thead>
        <tbody>${subs.map((s) => html`<tr key=${s.webhookId}>
          <td><a href=${"#/webhooks/" + encodeURIComponent(s.webhookId)}>${s.targetUrl}</a></td>
          <td>${s.eventTypes.join(", ")}</td><td><code>${s.signingSecret}</code></td><td>${when(s.createdAt)}</td>
        </tr>`)}</tbody>
      </table>`}
    </div>
    <${DeadLetters} subs=${subs} />
  </section>`;
}

// The DLQ page holds at most this many entries; the API's largest page.
const dlqLimit = 1000;

function DeadLetters({ subs }) {
  const [list, setList] = useState(null);
  const [selected, setSelected] = useState(new Set());
  const [error, setError] = useState(null);
  const [done, setDone] = useState("");
  const load = () => api.get(`/eudr/webhooks/dlq?limit=${dlqLimit}`).then((l) => {
    setList(l.messages);
    setSelected(new Set());
  }, setError);
  useEffect(() => { load(); }, []);
  const target = (m) => m.targetUrl || (subs || []).find((s) => s.webhookId === m.webhookId)?.targetUrl || m.webhookId;
  // act replays or acknowledges ids (one event or the selection) and reloads.
  const act = async (what, ids) => {
    setError(null);
    setDone("");
    try {
      if (what === "replay") await api.send("POST", "/eudr/webhooks/dlq/replay-bulk", { eventIds: ids });
      else await api.send("DELETE", "/eudr/webhooks/dlq", { eventIds: ids });
      setDone(`${ids.length} ${ids.length === 1 ? "event" : "events"} ${what === "replay" ? "sent again" : "acknowledged"}.`);
    } catch (err) {
      setError(err);
    }
    await load();
  };
  const toggle = (id) => {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  };
  const ids = list ? [...new Set(list.map((m) => m.eventId))] : [];
  const all = list && list.length > 0 && ids.every((id) => selected.has(id));
  const chosen = [...selected];
  const write = api.canWrite();
  return html`<div class="card dlq">
    <h2>Dead letters <span class="ops-count" data-dlq-count=${list ? list.length : ""}>${list ? list.length : ""}</span></h2>
    <p class="muted">Events every attempt failed for (or the receiver answered 410 Gone). Replay sends them again,
      five attempts from the start; acknowledge deletes them for good.</p>
    ${error && html`<${Problem} error=${error} />`}
    ${done && html`<p class="console-message console-done" role="status">${done}</p>`}
    ${!list && !error && html`<p class="muted">Loading…</p>`}
    ${list && list.length === 0 && html`<p class="muted dlq-empty">The dead-letter queue is empty.</p>`}
    ${list && list.length > 0 && html`
      ${write && html`<div class="ops-toolbar" data-write>
        <button type="button" class="dlq-replay-selected" disabled=${!chosen.length} onClick=${() => act("replay", chosen)}>
          Replay selected (${chosen.length})</button>
        ${chosen.length > 0 && html`<${Confirm} label=${`Acknowledge selected (${chosen.length})`} className="secondary dlq-ack-selected"
          question=${`Delete ${chosen.length} dead letters for good?`} confirmLabel="Acknowledge" onConfirm=${() => act("acknowledge", chosen)} />`}
      </div>`}
      ${list.length === dlqLimit && html`<p class="muted">The newest ${dlqLimit} are listed.</p>`}
      <table class="ops-table dlq-table">
        <thead><tr>
          ${write && html`<th data-write><input type="checkbox" aria-label="Select all" checked=${all}
            onChange=${() => setSelected(all ? new Set() : new Set(ids))} /></th>`}
          <th>Event</th><th>Receiver</th><th>Attempts</th><th>Last answer</th><th>Failed</th>${write && html`<th></th>`}
        </tr></thead>
        <tbody>${list.map((m) => html`<tr key=${m.eventId + m.webhookId} data-event-id=${m.eventId}>
          ${write && html`<td data-write><input type="checkbox" aria-label=${"Select " + m.eventId} checked=${selected.has(m.eventId)}
            onChange=${() => toggle(m.eventId)} /></td>`}
          <td><strong>${m.eventType}</strong><br /><code class="muted">${m.eventId}</code></td>
          <td><a href=${"#/webhooks/" + encodeURIComponent(m.webhookId)}>${target(m)}</a></td>
          <td class="number">${m.attempts}</td>
          <td>${m.lastStatus ? html`<span class="ops-http-status bad">${m.lastStatus}</span> ` : ""}${m.lastError === `HTTP ${m.lastStatus}` ? "" : m.lastError}</td>
          <td>${when(m.failedAt)}</td>
          ${write && html`<td class="ops-row-actions" data-write>
            <button type="button" class="secondary dlq-replay" onClick=${() => act("replay", [m.eventId])}>Replay</button>
            <${Confirm} label="Acknowledge" className="secondary dlq-ack" question="Delete it for good?"
              onConfirm=${() => act("acknowledge", [m.eventId])} />
          </td>`}
        </tr>`)}</tbody>
      </table>`}
  </div>`;
}

// The deliveries page shows this many attempts, newest first.
const deliveryLimit = 100;

function Subscription({ id }) {
  const [sub, setSub] = useState(null);
  const [attempts, setAttempts] = useState(null);
  const [error, setError] = useState(null);
  const [secret, setSecret] = useState("");
  const [note, setNote] = useState("");
  const path = "/eudr/webhooks/" + encodeURIComponent(id);
  // A 404 is told once, by the subscription's absence from the list.
  const loadAttempts = () => api.get(`${path}/deliveries?limit=${deliveryLimit}`).then(setAttempts, (err) => err.status !== 404 && setError(err));
  useEffect(() => {
    // No route reads one subscription: it is found in the list.
    api.getAll("/eudr/webhooks").then((all) => setSub(all.find((s) => s.webhookId === id) || false), setError);
    loadAttempts();
  }, []);
  const ping = async () => {
    setError(null);
    setNote("");
    try {
      await api.send("POST", `${path}/ping`);
      setNote("Ping sent: its attempt is listed below.");
    } catch (err) {
      setError(err);
    }
    await loadAttempts();
  };
  const rotate = async () => {
    setError(null);
    try {
      const r = await api.send("POST", `${path}/rotate-secret`);
      setSecret(r.signingSecret);
      setSub({ ...sub, signingSecret: "whsec_****" + r.signingSecret.slice(-4) });
    } catch (err) {
      setError(err);
    }
  };
  const write = api.canWrite();
  return html`<section class="page ops">
    <p><a href="#/webhooks">← Webhooks</a></p>
    <h1>Webhook <code>${id}</code></h1>
    ${error && html`<${Problem} error=${error} />`}
    ${sub === false && html`<p class="console-message console-error">No subscription ${id} in this environment.</p>`}
    ${secret && html`<${OnceSecret} title="New signing secret" value=${secret} onDone=${() => setSecret("")} />`}
    ${sub && html`<div class="card">
      <dl>
        <dt>Receiver</dt><dd>${sub.targetUrl}</dd>
        <dt>Events</dt><dd>${sub.eventTypes.join(", ")}</dd>
        <dt>Secret</dt><dd><code>${sub.signingSecret}</code></dd>
        <dt>Created</dt><dd>${when(sub.createdAt)}</dd>
      </dl>
      ${write && html`<div class="ops-toolbar" data-write>
        <button type="button" class="webhook-ping" onClick=${ping}>Ping</button>
        <${Confirm} label="Rotate secret" className="secondary webhook-rotate" confirmLabel="Rotate"
          question="Every later delivery is signed with the new secret at once, with no overlap: the receiver must be given it. Rotate?"
          onConfirm=${rotate} />
      </div>`}
      ${note && html`<p class="console-message console-done" role="status">${note}</p>`}
    </div>`}
    ${sub !== false && html`<div class="card">
      <h2>Delivery attempts <button type="button" class="secondary small deliveries-refresh" onClick=${loadAttempts}>Refresh</button></h2>
      ${!attempts && !error && html`<p class="muted">Loading…</p>`}
      ${attempts && attempts.length === 0 && html`<p class="muted">No attempt yet.</p>`}
      ${attempts && attempts.length > 0 && html`<table class="ops-table deliveries-table">
        <thead><tr><th>When</th><th>Event</th><th>Attempt</th><th>Status</th><th>Latency</th><th>Error</th><th>Answer</th></tr></thead>
        <tbody>${attempts.map((a) => html`<tr data-event-type=${a.eventType} data-event-id=${a.eventId}>
          <td>${when(a.at)}</td>
          <td>${a.eventType}<br /><code class="muted">${a.eventId}</code></td>
          <td class="number">${a.attempt + 1}</td>
          <td><span class=${"ops-http-status " + (a.status >= 200 && a.status < 300 ? "good" : "bad")} data-status=${a.status}>${a.status || "none"}</span></td>
          <td class="number">${a.latencyMs.toFixed(a.latencyMs < 10 ? 1 : 0)} ms</td>
          <td>${a.error}${a.deadLettered ? html` <strong>(dead-lettered)</strong>` : ""}</td>
          <td><code class="ops-excerpt" title=${a.responseBody}>${a.responseBody.slice(0, 120)}</code></td>
        </tr>`)}</tbody>
      </table>`}
    </div>`}
  </section>`;
}
