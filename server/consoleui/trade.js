// The console's pages of batches, shipments and due-diligence statements:
// lists with their filters, one item's page, and the statement's actions
// (draft, submit, revoke, amend), each change behind a confirmation where
// it cannot be undone. The pieces the simplified declarations' pages share
// with them (sd.js) are exported.

import { html, useEffect, useState } from "./standalone.module.js";
import * as api from "./api.js";
import { ReportButton, useModalFocus } from "./ui.js";
import { Problem } from "./pages.js";

// How often a page that waits for the appliance or the EU system asks again.
const pollMs = 1000;

const batchStatuses = ["ASSESSING", "VERIFIED", "HIGH_RISK"];
const ddsStatuses = ["DRAFT", "SUBMITTED", "VALIDATED", "REJECTED", "REVOKED"];
const activityTypes = ["IMPORT", "EXPORT", "DOMESTIC"];

const enc = encodeURIComponent;

// useLoad runs load when the page opens and whenever deps change; reload
// runs it again without blanking what is shown.
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null });
  const [round, setRound] = useState(0);
  useEffect(() => {
    let live = true;
    load().then((data) => live && setState({ data, error: null }), (error) => live && setState((s) => ({ data: s.data, error })));
    return () => { live = false; };
  }, [...deps, round]);
  return { ...state, reload: () => setRound((r) => r + 1) };
}

export function when(t) {
  return t ? new Date(t).toLocaleString() : "—";
}

export function Status({ status }) {
  return html`<span class=${"trade-status trade-status-" + (status || "none").toLowerCase()}>${status || "—"}</span>`;
}

export function Loading({ error }) {
  return error ? html`<${Problem} error=${error} />` : html`<p class="muted">Loading…</p>`;
}

export function StatusFilter({ value, statuses, onChange }) {
  return html`<select aria-label="Status" class="trade-filter" value=${value} onChange=${(e) => onChange(e.target.value)}>
    <option value="">Every status</option>
    ${statuses.map((s) => html`<option value=${s}>${s}</option>`)}
  </select>`;
}

// Confirm is a modal question before a change that cannot be undone.
export function Confirm({ title, children, action, danger, onConfirm, onCancel, busy }) {
  const cancel = useModalFocus();
  return html`<div class="trade-modal" role="dialog" aria-modal="true" aria-labelledby="trade-confirm-title"
    onKeyDown=${(e) => { if (e.key === "Escape" && !busy) onCancel(); }}>
    <div class="card trade-confirm">
      <h2 id="trade-confirm-title">${title}</h2>
      ${children}
      <div class="trade-actions">
        <button type="button" class="secondary" onClick=${onCancel} disabled=${busy} ref=${cancel}>Cancel</button>
        <button type="button" class=${"confirm" + (danger ? " danger" : "")} onClick=${onConfirm} disabled=${busy}>${action}</button>
      </div>
    </div>
  </div>`;
}

// --- Batches ---

export function Batches({ id }) {
  return id ? html`<${Batch} id=${id} key=${id} />` : html`<${BatchList} />`;
}

function BatchList() {
  const [status, setStatus] = useState("");
  const { data, error } = useLoad(() => api.getAll("/eudr/batches" + (status ? "?status=" + status : "")), [status]);
  return html`<section class="page trade">
    <header class="trade-head"><h1>Batches</h1><${StatusFilter} value=${status} statuses=${batchStatuses} onChange=${setStatus} /></header>
    ${!data ? html`<${Loading} error=${error} />` : data.length === 0 ? html`<p class="muted">No batches${status ? " " + status : ""}.</p>` : html`
    <table class="trade-table batches-table">
      <thead><tr><th>Reference</th><th>Commodity</th><th>Status</th><th>Risk</th><th class="number">Plots</th><th>Registered</th></tr></thead>
      <tbody>${data.map((b) => html`<tr key=${b.batchId} onClick=${() => (location.hash = "#/batches/" + enc(b.batchId))}>
        <td><a href=${"#/batches/" + enc(b.batchId)}>${b.batchReference}</a></td><td>${b.commodity} (${b.hsCode})</td>
        <td><${Status} status=${b.status} /></td>
        <td>${b.riskLevel ? `${b.riskLevel}, ${b.riskScore}` : "—"}</td><td class="number">${b.polygonCount}</td><td>${when(b.createdAt)}</td>
      </tr>`)}</tbody>
    </table>`}
  </section>`;
}

function Batch({ id }) {
  const { data, error } = useLoad(async () => {
    const [batch, risk, shipments] = await Promise.all([
      api.get("/eudr/batches/" + enc(id)),
      api.get(`/eudr/batches/${enc(id)}/risk-assessment`),
      api.get("/eudr/shipments?batchId=" + enc(id)),
    ]);
    // The mapping may have been deleted since: the batch keeps its ID.
    const supplier = await api.get("/eudr/suppliers/" + enc(batch.supplierId)).catch(() => null);
    return { batch, risk, shipments, supplier };
  }, [id]);
  if (!data) return html`<section class="page trade"><h1>Batch</h1><${Loading} error=${error} /></section>`;
  const { batch: b, risk, shipments, supplier } = data;
  // A batch is linked to one shipment at most, but a link refused or
  // failed before it leaves its shipment behind: all are listed, newest
  // first.
  const linked = shipments.find((s) => s.status === "LINKED");
  const q = b.quantity;
  return html`<section class="page trade batch-page">
    <p class="trade-back"><a href="#/batches">All batches</a></p>
    <h1>${b.batchReference} <${Status} status=${b.status} /></h1>
    ${error && html`<${Problem} error=${error} />`}
    ${b.status !== "ASSESSING" && html`<${ReportButton} kind="batch" id=${b.batchId} />`}
    <div class="cards">
      <div class="card">
        <h2>Batch</h2>
        <dl>
          <dt>Batch</dt><dd>${b.batchId}</dd>
          <dt>Commodity</dt><dd>${b.commodity}, HS ${b.hsCode}</dd>
          <dt>Supplier</dt><dd>${supplier ? `${supplier.name} (${supplier.country}), ` : ""}${b.supplierId}</dd>
          <dt>Quantity</dt><dd>${q.netMassKg.toLocaleString()} kg${q.supplementaryUnit != null ? `, ${q.supplementaryUnit} ${q.supplementaryUnitType}` : ""}</dd>
          <dt>Harvest</dt><dd>${b.harvestStart || "?"} to ${b.harvestEnd || "?"}</dd>
          <dt>Registered</dt><dd>${when(b.createdAt)}</dd>
          <dt>${shipments.length > 1 ? "Shipments" : "Shipment"}</dt><dd class="batch-shipment">${shipments.length
            ? html`<ul class="trade-shipments">${shipments.map((sh) => html`<li>
                <a href=${"#/shipments/" + enc(sh.shipmentId)}>${sh.shipmentId}</a> <${Status} status=${sh.status} /></li>`)}</ul>`
            : "not linked to a shipment"}</dd>
        </dl>
      </div>
      <div class="card">
        <h2>Plots (${b.polygonIds.length})</h2>
        <ul class="trade-plots">${b.polygonIds.map((p) => html`<li><a href=${"#/plots/" + enc(p)}>${p}</a></li>`)}</ul>
      </div>
    </div>
    <${RiskAssessment} risk=${risk} />
    ${b.status === "VERIFIED" && api.canWrite() && (linked
      ? html`<${DraftStatement} batch=${b} operatorUuid=${supplier ? supplier.euOperatorUuid : ""} />`
      : html`<p class="muted">A statement can be drafted once the batch is linked to a shipment (POST /shipments/link).</p>`)}
  </section>`;
}

function RiskAssessment({ risk }) {
  if (risk.status === "ASSESSING") return html`<div class="card"><h2>Risk assessment</h2><p class="muted">The batch is being assessed.</p></div>`;
  return html`<div class="card risk-assessment">
    <h2>Risk assessment: ${risk.riskLevel}, score ${risk.riskScore} (negligible at most ${risk.maxScore})</h2>
    <table class="trade-table risk-factors">
      <thead><tr><th>Factor</th><th>Score</th><th>Inputs</th><th>Why</th></tr></thead>
      <tbody>${risk.factors.map((f) => html`<tr data-factor=${f.name}>
        <td>${f.name}</td><td class="number">${f.score}</td><td><${FactorInputs} name=${f.name} inputs=${f.inputs} /></td><td>${f.explanation}</td>
      </tr>`)}</tbody>
    </table>
    <p class="muted">Assessed ${when(risk.assessedAt)} by ${risk.engineVersion} (appliance ${risk.appVersion}).</p>
  </div>`;
}

function FactorInputs({ name, inputs }) {
  if (name === "country_benchmark") {
    return html`<span>benchmark ${inputs.benchmarkVersion}: ${inputs.countries.map((c) =>
      `${c.country} ${c.riskClass} (${c.polygonCount} plot${c.polygonCount === 1 ? "" : "s"}, ${c.areaHa.toFixed(2)} ha)`).join("; ")}</span>`;
  }
  return html`<dl class="trade-inputs">${Object.entries(inputs).map(([k, v]) => html`<dt>${k}</dt><dd>${k === "maxRiskPolygonId" ? html`<a href=${"#/plots/" + enc(v)}>${v}</a>` : String(v)}</dd>`)}</dl>`;
}

// DraftStatement makes a DRAFT statement of the batch and opens it.
function DraftStatement({ batch, operatorUuid }) {
  const [activityType, setActivityType] = useState("IMPORT");
  const [operator, setOperator] = useState(operatorUuid);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const dds = await api.send("POST", "/eudr/declarations/dds", { batchIds: [batch.batchId], activityType, operatorUuid: operator.trim() });
      location.hash = "#/dds/" + enc(dds.ddsId);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return html`<form class="card draft-form" data-write onSubmit=${submit}>
    <h2>Draft a due-diligence statement</h2>
    <p class="muted">A draft is not filed: it is built from this batch, and can be checked before it is submitted.</p>
    <label>Activity <select name="activityType" value=${activityType} onChange=${(e) => setActivityType(e.target.value)}>
      ${activityTypes.map((a) => html`<option value=${a}>${a}</option>`)}
    </select></label>
    <label>Operator (EU operator UUID) <input name="operatorUuid" required value=${operator} onInput=${(e) => setOperator(e.target.value)} /></label>
    ${error && html`<${Problem} error=${error} />`}
    <div class="trade-actions"><button type="submit" disabled=${busy}>Draft the statement</button></div>
  </form>`;
}

// --- Shipments ---

export function Shipments({ id }) {
  return id ? html`<${Shipment} id=${id} key=${id} />` : html`<${ShipmentList} />`;
}

function ShipmentList() {
  const { data, error } = useLoad(() => api.getAll("/eudr/shipments"), []);
  return html`<section class="page trade">
    <header class="trade-head"><h1>Shipments</h1></header>
    ${!data ? html`<${Loading} error=${error} />` : data.length === 0 ? html`<p class="muted">No shipments.</p>` : html`
    <table class="trade-table shipments-table">
      <thead><tr><th>Shipment</th><th>Batch</th><th>Status</th><th>Port of entry</th><th>Containers</th><th>Linked</th></tr></thead>
      <tbody>${data.map((s) => html`<tr key=${s.shipmentId} onClick=${() => (location.hash = "#/shipments/" + enc(s.shipmentId))}>
        <td><a href=${"#/shipments/" + enc(s.shipmentId)}>${s.shipmentId}</a></td><td>${s.batchId}</td><td><${Status} status=${s.status} /></td>
        <td>${s.portOfEntry || "—"}</td><td>${s.containerNumbers.join(", ") || "—"}</td><td>${when(s.linkedAt)}</td>
      </tr>`)}</tbody>
    </table>`}
  </section>`;
}

function Shipment({ id }) {
  const { data: s, error, reload } = useLoad(() => api.get("/eudr/shipments/" + enc(id)), [id]);
  // A link waits for its ledger entry: ask again until it has one.
  useEffect(() => {
    if (s && s.status === "PENDING") {
      const t = setTimeout(reload, pollMs);
      return () => clearTimeout(t);
    }
  }, [s]);
  if (!s) return html`<section class="page trade"><h1>Shipment</h1><${Loading} error=${error} /></section>`;
  return html`<section class="page trade shipment-page">
    <p class="trade-back"><a href="#/shipments">All shipments</a></p>
    <h1>${s.shipmentId} <${Status} status=${s.status} /></h1>
    <div class="card">
      <dl>
        <dt>Batch</dt><dd><a href=${"#/batches/" + enc(s.batchId)}>${s.batchId}</a></dd>
        <dt>Containers</dt><dd>${s.containerNumbers.join(", ") || "—"}</dd>
        <dt>Port of entry</dt><dd>${s.portOfEntry || "—"}</dd>
        <dt>Bill of lading</dt><dd>${s.billOfLading || "—"}</dd>
        <dt>ETA</dt><dd>${s.eta || "—"}</dd>
        <dt>Accepted</dt><dd>${when(s.createdAt)}</dd>
        <dt>Anchored</dt><dd>${when(s.linkedAt)}</dd>
        <dt>Transaction</dt><dd class="trade-hash shipment-tx">${s.transactionHash || "—"}</dd>
        <dt>Ledger entry</dt><dd>${s.ledgerIndex != null ? html`<a href=${"#/ledger/" + s.ledgerIndex}>#${s.ledgerIndex}</a>` : "—"}</dd>
        <dt>Checkpoint</dt><dd class="trade-hash">${s.treeSize != null ? `size ${s.treeSize}, root ${s.rootHash}` : "—"}</dd>
      </dl>
    </div>
  </section>`;
}

// --- Statements ---

export function Statements({ id }) {
  return id ? html`<${Statement} id=${id} key=${id} />` : html`<${StatementList} />`;
}

// StatementTabs lead from the due-diligence statements to the simplified
// declarations (sd.js) and back: both are statements to the EU system,
// under one entry of the navigation.
export function StatementTabs({ current }) {
  const tab = (page, label) => html`<a href=${"#/" + page} class=${page === current ? "active" : ""}
    aria-current=${page === current ? "page" : undefined}>${label}</a>`;
  return html`<nav class="trade-tabs" aria-label="Kinds of statement">
    ${tab("dds", "Due-diligence statements")}${tab("sd", "Simplified declarations")}
  </nav>`;
}

function StatementList() {
  const [status, setStatus] = useState("");
  const { data, error } = useLoad(() => api.getAll("/eudr/declarations/dds" + (status ? "?status=" + status : "")), [status]);
  return html`<section class="page trade">
    <${StatementTabs} current="dds" />
    <header class="trade-head"><h1>Due-diligence statements</h1><${StatusFilter} value=${status} statuses=${ddsStatuses} onChange=${setStatus} /></header>
    ${!data ? html`<${Loading} error=${error} />` : data.length === 0 ? html`<p class="muted">No statements${status ? " " + status : ""}.</p>` : html`
    <table class="trade-table dds-table">
      <thead><tr><th>Statement</th><th>Status</th><th>Activity</th><th class="number">Batches</th><th>Reference number</th><th>Drafted</th></tr></thead>
      <tbody>${data.map((d) => html`<tr key=${d.ddsId} onClick=${() => (location.hash = "#/dds/" + enc(d.ddsId))}>
        <td><a href=${"#/dds/" + enc(d.ddsId)}>${d.internalReference || d.ddsId}</a></td><td><${Status} status=${d.status} /></td>
        <td>${d.activityType}</td><td class="number">${d.batchIds.length}</td><td>${d.referenceNumber || "—"}</td><td>${when(d.createdAt)}</td>
      </tr>`)}</tbody>
    </table>`}
  </section>`;
}

// waiting says whether a statement is about to change by itself: its
// submission is under way, or the EU system has not decided yet.
function waiting(d) {
  return d.status === "SUBMITTED" || (d.status === "DRAFT" && d.submission && d.submission.status !== "FAILED");
}

function Statement({ id }) {
  const { data: d, error, reload } = useLoad(() => api.get("/eudr/declarations/dds/" + enc(id)), [id]);
  const [asking, setAsking] = useState(null); // "submit" or "revoke"
  const [amending, setAmending] = useState(false);
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState(null);
  useEffect(() => {
    if (d && waiting(d)) {
      const t = setTimeout(reload, pollMs);
      return () => clearTimeout(t);
    }
  }, [d]);
  if (!d) return html`<section class="page trade"><h1>Statement</h1><${Loading} error=${error} /></section>`;

  const act = async () => {
    setBusy(true);
    setActionError(null);
    try {
      if (asking === "submit") {
        // The page then follows the statement until it settles (waiting).
        await api.send("POST", `/eudr/declarations/dds/${enc(d.ddsId)}/submit`);
      } else {
        await api.send("POST", `/eudr/declarations/dds/${enc(d.ddsId)}/revoke`);
      }
    } catch (err) {
      setActionError(err);
    }
    setBusy(false);
    setAsking(null);
    reload();
  };
  const write = api.canWrite();
  return html`<section class="page trade dds-page">
    <p class="trade-back"><a href="#/dds">All statements</a></p>
    <h1>${d.internalReference || d.ddsId} <${Status} status=${d.status} /></h1>
    ${error && html`<${Problem} error=${error} />`}
    <${ReportButton} kind="dds" id=${d.ddsId} />
    ${actionError && html`<${Problem} error=${actionError} />`}
    ${write && (d.status === "DRAFT" || d.status === "SUBMITTED" || d.status === "VALIDATED") && html`<div class="trade-actions dds-actions" data-write>
      ${d.status === "DRAFT" && html`<button type="button" class="dds-submit" disabled=${busy || waiting(d)} onClick=${() => setAsking("submit")}>Submit to the EU system</button>`}
      ${d.status === "VALIDATED" && html`<button type="button" class="secondary dds-amend" disabled=${busy} onClick=${() => setAmending(true)}>Amend…</button>`}
      ${d.status !== "DRAFT" && html`<button type="button" class="dds-revoke danger" disabled=${busy} onClick=${() => setAsking("revoke")}>Revoke</button>`}
    </div>`}
    ${waiting(d) && html`<p class="muted dds-waiting">${d.status === "DRAFT" ? "Filing the statement…" : "Waiting for the EU system to decide…"}</p>`}
    <${Submission} s=${d.submission} />
    ${d.reasons.length > 0 && html`<p class="console-error">Rejected: ${d.reasons.join("; ")}</p>`}
    <div class="cards">
      <${StatementSummary} d=${d} />
      <div class="card">
        <h2>History</h2>
        <${Timeline} history=${d.history} />
      </div>
    </div>
    ${amending && html`<${Amend} d=${d} onDone=${() => { setAmending(false); reload(); }} onCancel=${() => setAmending(false)} />`}
    ${asking === "submit" && html`<${Confirm} title="Submit this statement?" action="Submit" busy=${busy} onConfirm=${act} onCancel=${() => setAsking(null)}>
      <p>The statement is filed to the EU information system${document.body.dataset.environment === "sandbox"
        ? " (in the sandbox, its simulator: nothing is filed for real)" : ""}. Once filed it cannot be changed or taken back
        into draft: only revoked.</p>
    </${Confirm}>`}
    ${asking === "revoke" && html`<${Confirm} title="Revoke this statement?" action="Revoke" danger=${true} busy=${busy} onConfirm=${act} onCancel=${() => setAsking(null)}>
      <p>The statement ${d.referenceNumber || ""} is withdrawn in the EU information system. <strong>This cannot be undone</strong>:
        a revoked statement cannot be used again; the goods need a new statement.</p>
    </${Confirm}>`}
  </section>`;
}

// massText is a net mass as the amendment form shows it: plain digits,
// not grouped, so that it can be edited and compared with what is typed.
const massText = (kg) => (kg == null ? "" : String(kg));

// quantity reads a net mass typed in the form. The appliance keeps a
// quantity digit for digit as sent, and a JavaScript number holds about
// 16 significant digits: a mass the number would not carry exactly is
// refused here rather than sent rounded.
function quantity(text) {
  if (!/^[0-9]+(\.[0-9]+)?$/.test(text)) return { error: "is not a number of kilograms, such as 12500.5" };
  const n = Number(text);
  const written = text.replace(/^0+(?=[0-9])/, "").replace(/(\.[0-9]*?)0+$/, "$1").replace(/\.$/, "");
  if (JSON.stringify(n) !== written) return { error: "has more digits than the console sends exactly: amend it through the API" };
  return { value: n };
}

// Amend corrects a VALIDATED statement: each commodity's description and
// net mass, prefilled, and why. Only what was changed is sent (POST
// /declarations/dds/{ddsId}/amend); the appliance refuses an amendment
// past the EU system's period, saying when it closed, and the form shows
// its answer as it came.
function Amend({ d, onDone, onCancel }) {
  const commodities = d.statement.commodities;
  const [fields, setFields] = useState(() => commodities.map((c) => ({ description: c.descriptionOfGoods || "", mass: massText(c.netWeightKg) })));
  const [justification, setJustification] = useState("");
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const cancel = useModalFocus();
  const set = (i, name, value) => {
    setFields((fs) => fs.map((f, j) => (j === i ? { ...f, [name]: value } : f)));
    setError(null); // what it said is about the form as it was
  };
  const submit = async (e) => {
    e.preventDefault();
    const changes = [];
    const problems = [];
    commodities.forEach((c, i) => {
      const change = { position: c.position };
      const description = fields[i].description.trim();
      if (description !== (c.descriptionOfGoods || "")) change.descriptionOfGoods = description;
      const mass = fields[i].mass.trim();
      if (mass !== massText(c.netWeightKg)) {
        const q = quantity(mass);
        if (q.error) problems.push({ field: `#${c.position}`, issue: "the net mass " + q.error });
        else change.netWeightKg = q.value;
      }
      if (Object.keys(change).length > 1) changes.push(change);
    });
    if (problems.length) return setError({ message: "Check the form", details: problems });
    if (!changes.length) return setError({ message: "Nothing to amend: change a description or a net mass first" });
    const body = { commodities: changes };
    if (justification.trim()) body.justification = justification.trim();
    setBusy(true);
    setError(null);
    try {
      await api.send("POST", `/eudr/declarations/dds/${enc(d.ddsId)}/amend`, body);
      onDone();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return html`<div class="trade-modal" role="dialog" aria-modal="true" aria-labelledby="dds-amend-title"
    onKeyDown=${(e) => { if (e.key === "Escape" && !busy) onCancel(); }}>
    <form class="card trade-confirm amend-form" data-write onSubmit=${submit}>
      <h2 id="dds-amend-title">Amend the statement ${d.referenceNumber || d.internalReference || d.ddsId}</h2>
      <p class="muted">The statement keeps its reference and verification numbers; only what you change is sent to the EU
        information system. Its batches, producers and operator cannot be amended: revoke it and draft again.</p>
      ${commodities.map((c, i) => html`<fieldset class="amend-commodity" key=${c.position}>
        <legend>#${c.position}, HS ${c.hsHeading}</legend>
        <label class="amend-description">Description of the goods <input name=${"descriptionOfGoods-" + c.position} maxLength="150"
          required value=${fields[i].description} onInput=${(e) => set(i, "description", e.target.value)} /></label>
        <label class="amend-mass">Net mass (kg) <input name=${"netWeightKg-" + c.position} inputMode="decimal" autocomplete="off"
          value=${fields[i].mass} onInput=${(e) => set(i, "mass", e.target.value)} /></label>
      </fieldset>`)}
      <label>Justification <textarea name="justification" maxLength="1000" rows="3" value=${justification}
        onInput=${(e) => { setJustification(e.target.value); setError(null); }}></textarea></label>
      <p class="muted amend-hint">Optional within 72 hours of the submission (${when(d.submittedAt)}); required for the 8 days
        after them${document.body.dataset.environment === "sandbox" ? " (the sandbox may be configured with shorter periods)" : ""};
        after that the statement can no longer be amended.</p>
      ${error && html`<${Problem} error=${error} />`}
      <div class="trade-actions">
        <button type="button" class="secondary" onClick=${onCancel} disabled=${busy} ref=${cancel}>Cancel</button>
        <button type="submit" class="confirm" disabled=${busy}>${busy ? "Amending…" : "Amend the statement"}</button>
      </div>
    </form>
  </div>`;
}

function Submission({ s }) {
  if (!s) return null;
  if (s.error) return html`<p class="console-error">The submission failed: ${s.error.message}</p>`;
  if (s.lastAttempt) {
    return html`<p class="muted">The EU system could not take it (${s.lastAttempt.message}); trying again at ${when(s.nextAttemptAt)}.</p>`;
  }
  return null;
}

function StatementSummary({ d }) {
  const st = d.statement;
  const plots = (c) => c.producers.reduce((n, p) => n + p.geometryGeojson.features.length, 0);
  return html`<div class="card dds-summary">
    <h2>Statement</h2>
    <dl>
      <dt>Statement</dt><dd>${d.ddsId}</dd>
      <dt>Activity</dt><dd>${d.activityType}${st.countryOfActivity ? ` in ${st.countryOfActivity}` : ""}${st.borderCrossCountry ? `, entry ${st.borderCrossCountry}` : ""}</dd>
      <dt>Operator</dt><dd>${st.operator.name} (${st.operator.country}${st.operator.eori ? ", EORI " + st.operator.eori : ""}), ${d.operatorUuid}</dd>
      <dt>Reference number</dt><dd class="dds-reference">${d.referenceNumber || "—"}</dd>
      <dt>Verification number</dt><dd class="dds-verification">${d.verificationNumber || "—"}</dd>
      <dt>Batches</dt><dd>${d.batchIds.map((b, i) => html`${i > 0 ? ", " : ""}<a href=${"#/batches/" + enc(b)}>${b}</a>`)}</dd>
      ${d.part && html`<dt>Part</dt><dd>${d.part} of the statement ${d.splitOf}</dd>`}
    </dl>
    <table class="trade-table dds-commodities">
      <thead><tr><th>#</th><th>HS</th><th>Goods</th><th class="number">Net mass (kg)</th><th class="number">Producers</th><th class="number">Plots</th></tr></thead>
      <tbody>${st.commodities.map((c) => html`<tr>
        <td>${c.position}</td><td>${c.hsHeading}</td><td>${c.descriptionOfGoods}</td>
        <td class="number">${c.netWeightKg != null ? c.netWeightKg.toLocaleString() : "—"}</td>
        <td class="number">${c.producers.length}</td><td class="number">${plots(c)}</td>
      </tr>`)}</tbody>
    </table>
  </div>`;
}

// amendedNote reads the note of an amendment's history entry, as the
// appliance writes it ("amended in the EU system (AVAILABLE):
// commodities[0].netWeightKg; statement sha256 <hex>; justification:
// <text>"), into its parts; null for any other note, shown as it is.
const amendedPattern = /^amended in the EU system \(([^)]*)\): (.*?); statement sha256 ([0-9a-f]{64})(?:; justification: ([\s\S]*))?$/;
function amendedNote(note) {
  const m = note && amendedPattern.exec(note);
  return m && { euStatus: m[1], changes: m[2].split(", "), sha256: m[3], justification: m[4] };
}

function Note({ h }) {
  const by = h.actor === "eu-system" ? "the EU system" : h.actor;
  const a = amendedNote(h.note);
  if (!a) return html`<div class="muted">by ${by}${h.note ? ": " + h.note : ""}</div>`;
  return html`<div class="muted">amended by ${by} (the EU system: ${a.euStatus})</div>
    <dl class="dds-amendment">
      <dt>Changed</dt><dd>${a.changes.join(", ")}</dd>
      ${a.justification && html`<dt>Why</dt><dd>${a.justification}</dd>`}
      <dt>Statement</dt><dd class="trade-hash" title="SHA-256 of the amended statement">sha256 ${a.sha256}</dd>
    </dl>`;
}

export function Timeline({ history }) {
  return html`<ol class="dds-timeline">${history.map((h) => html`<li class=${"dds-step-" + h.status.toLowerCase()} data-status=${h.status}>
    <div class="dds-timeline-head"><${Status} status=${h.status} /> <time>${when(h.at)}</time></div>
    <${Note} h=${h} />
    ${h.ledgerIndex != null && html`<div><a href=${"#/ledger/" + h.ledgerIndex}>ledger entry #${h.ledgerIndex}</a></div>`}
  </li>`)}</ol>`;
}
