// The console's pages of simplified declarations (#/sd, #/sd/{sdId}): the
// one-time declarations of micro and small primary operators, beside the
// due-diligence statements and reached from their page. A declaration is
// filed through the API; here it is followed to the EU system's decision
// and, by a writer, withdrawn.

import { html, useEffect, useState } from "./standalone.module.js";
import * as api from "./api.js";
import { Problem } from "./pages.js";
import { Confirm, Loading, Status, StatusFilter, StatementTabs, Timeline, useLoad, when } from "./trade.js";

// How often a page that waits for the EU system asks again.
const pollMs = 1000;

const sdStatuses = ["DRAFT", "SUBMITTED", "VALIDATED", "REJECTED", "WITHDRAWN"];

const roles = { MICRO_OPERATOR: "Micro operator", REPRESENTATIVE_MSPO: "Representative" };

const enc = encodeURIComponent;

export function SimplifiedDeclarations({ id }) {
  return id ? html`<${Declaration} id=${id} key=${id} />` : html`<${DeclarationList} />`;
}

function DeclarationList() {
  const [status, setStatus] = useState("");
  const { data, error } = useLoad(() => api.getAll("/eudr/declarations/sd" + (status ? "?status=" + status : "")), [status]);
  return html`<section class="page trade">
    <${StatementTabs} current="sd" />
    <header class="trade-head"><h1>Simplified declarations</h1><${StatusFilter} value=${status} statuses=${sdStatuses} onChange=${setStatus} /></header>
    <p class="muted trade-intro">The one-time declarations of micro and small primary operators, filed through the API
      (POST /declarations/sd).</p>
    ${!data ? html`<${Loading} error=${error} />` : data.length === 0 ? html`<p class="muted">No declarations${status ? " " + status : ""}.</p>` : html`
    <table class="trade-table sd-table">
      <thead><tr><th>Declaration</th><th>Internal reference</th><th>Operator role</th><th>Status</th><th>Declaration number</th><th>Filed</th></tr></thead>
      <tbody>${data.map((d) => html`<tr key=${d.sdId} onClick=${() => (location.hash = "#/sd/" + enc(d.sdId))}>
        <td><a href=${"#/sd/" + enc(d.sdId)}>${d.sdId}</a></td><td>${d.internalReference}</td><td>${roles[d.operatorRole] || d.operatorRole}</td>
        <td><${Status} status=${d.status} /></td><td class="sd-number">${d.referenceNumber || "—"}</td><td>${when(d.createdAt)}</td>
      </tr>`)}</tbody>
    </table>`}
  </section>`;
}

// waiting says whether a declaration is about to change by itself: its
// filing is under way, or the EU system has not decided yet.
function waiting(d) {
  return d.status === "SUBMITTED" || (d.status === "DRAFT" && d.submission && d.submission.status !== "FAILED");
}

function Declaration({ id }) {
  const { data: d, error, reload } = useLoad(() => api.get("/eudr/declarations/sd/" + enc(id)), [id]);
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState(null);
  useEffect(() => {
    if (d && waiting(d)) {
      const t = setTimeout(reload, pollMs);
      return () => clearTimeout(t);
    }
  }, [d]);
  if (!d) return html`<section class="page trade"><h1>Simplified declaration</h1><${Loading} error=${error} /></section>`;

  const withdraw = async () => {
    setBusy(true);
    setActionError(null);
    try {
      await api.send("POST", `/eudr/declarations/sd/${enc(d.sdId)}/withdraw`);
    } catch (err) {
      setActionError(err);
    }
    setBusy(false);
    setAsking(false);
    reload();
  };
  const withdrawable = d.status === "SUBMITTED" || d.status === "VALIDATED";
  return html`<section class="page trade dds-page sd-page">
    <p class="trade-back"><a href="#/sd">All simplified declarations</a></p>
    <h1>${d.internalReference || d.sdId} <${Status} status=${d.status} /></h1>
    ${error && html`<${Problem} error=${error} />`}
    ${actionError && html`<${Problem} error=${actionError} />`}
    ${api.canWrite() && withdrawable && html`<div class="trade-actions sd-actions" data-write>
      <button type="button" class="sd-withdraw danger" disabled=${busy} onClick=${() => setAsking(true)}>Withdraw</button>
    </div>`}
    ${waiting(d) && html`<p class="muted dds-waiting">${d.status === "DRAFT" ? "Filing the declaration…" : "Waiting for the EU system to decide…"}</p>`}
    <${Submission} s=${d.submission} />
    ${d.reasons.length > 0 && html`<p class="console-error">Rejected: ${d.reasons.join("; ")}</p>`}
    <div class="cards">
      <div class="sd-main">
        <${Summary} d=${d} />
        ${d.statement && html`<${Commodities} commodities=${d.statement.commodities} />`}
      </div>
      <div class="card">
        <h2>History</h2>
        <${Timeline} history=${d.history} />
      </div>
    </div>
    ${asking && html`<${Confirm} title="Withdraw this declaration?" action="Withdraw" danger=${true} busy=${busy}
      onConfirm=${withdraw} onCancel=${() => setAsking(false)}>
      <p>The declaration ${d.referenceNumber || d.internalReference} is withdrawn in the EU information system${
        document.body.dataset.environment === "sandbox" ? " (in the sandbox, its simulator)" : ""}. <strong>This cannot be
        undone</strong>: its declaration number can no longer go with the products; the operator needs a new declaration.</p>
    </${Confirm}>`}
  </section>`;
}

function Submission({ s }) {
  if (!s) return null;
  if (s.error) return html`<p class="console-error">The filing failed: ${s.error.message}</p>`;
  if (s.lastAttempt) {
    return html`<p class="muted">The EU system could not take it (${s.lastAttempt.message}); trying again at ${when(s.nextAttemptAt)}.</p>`;
  }
  return null;
}

// operatorText names the declaring operator: a representative files for
// a named operator; a micro operator files for itself, known to the EU
// system by its web-service profile and not named in the declaration.
function operatorText(d) {
  const op = d.statement && d.statement.operator;
  if (!op) return d.operatorRole === "MICRO_OPERATOR" ? "the micro operator itself (known to the EU system by its profile)" : "—";
  const ids = (op.identifiers || []).map((i) => `${i.type.toUpperCase()} ${i.value}`);
  if (op.eori) ids.unshift("EORI " + op.eori);
  return `${op.name}${op.country ? ` (${op.country})` : ""}${ids.length ? ", " + ids.join(", ") : ""}`;
}

function Summary({ d }) {
  const st = d.statement;
  return html`<div class="card dds-summary sd-summary">
    <h2>Declaration</h2>
    <dl>
      <dt>Declaration</dt><dd>${d.sdId}</dd>
      <dt>Operator role</dt><dd>${roles[d.operatorRole] || d.operatorRole} (${d.operatorRole})</dd>
      ${st && html`<dt>Activity</dt><dd>${st.activityType}${st.countryOfActivity ? ` in ${st.countryOfActivity}` : ""}${
        st.borderCrossCountry ? `, border ${st.borderCrossCountry}` : ""}</dd>`}
      <dt>Operator</dt><dd class="sd-operator">${operatorText(d)}</dd>
      <dt>EU identifier</dt><dd class="trade-hash sd-identifier">${d.sdIdentifier || "—"}</dd>
      <dt>Declaration number</dt><dd class="sd-reference">${d.referenceNumber || "—"}</dd>
      <dt>Verification number</dt><dd class="sd-verification">${d.verificationNumber || "—"}</dd>
      <dt>EU status</dt><dd>${d.euStatus || "—"}</dd>
      <dt>Filed</dt><dd>${when(d.createdAt)}</dd>
    </dl>
  </div>`;
}

// whereProduced says where a producer produces: exactly one kind of location
// per producer, by the EU system's rules.
function whereProduced(p) {
  if (p.postalAddresses) {
    return { kind: "Postal address", text: p.postalAddresses.map((a) =>
      [a.producerStreet, `${a.producerPostalCode} ${a.producerCity}`].filter(Boolean).join(", ")).join("; ") };
  }
  if (p.cadastralIdentifiers) return { kind: "Cadastral", text: p.cadastralIdentifiers.join("; ") };
  if (p.geometryGeoJSON) return { kind: "Geometry", text: geometryText(p.geometryGeoJSON) };
  return { kind: "—", text: "" };
}

// geometryText counts the shapes of a producer's GeoJSON by type.
function geometryText(g) {
  const types = {};
  const walk = (o) => {
    if (!o) return;
    if (o.type === "FeatureCollection") o.features.forEach(walk);
    else if (o.type === "Feature") walk(o.geometry);
    else if (o.type === "GeometryCollection") o.geometries.forEach(walk);
    else types[o.type] = (types[o.type] || 0) + 1;
  };
  walk(g);
  return Object.entries(types).map(([t, n]) => (n > 1 ? `${n} × ${t}` : t)).join(", ");
}

function Commodities({ commodities }) {
  return html`<div class="card sd-commodities">
    <h2>Commodities and producers</h2>
    <table class="trade-table">
      <thead><tr><th>#</th><th>HS</th><th>Goods</th><th class="number">Net mass (kg)</th><th>Producer</th><th>Location</th></tr></thead>
      <tbody>${commodities.map((c, i) => (c.producers.length ? c.producers : [null]).map((p, j) => {
        const loc = p ? whereProduced(p) : { kind: "—", text: "" };
        return html`<tr class=${j > 0 ? "sd-more" : ""}>
          ${j === 0 && html`<td rowspan=${c.producers.length || 1}>${i + 1}</td><td rowspan=${c.producers.length || 1}>${c.hsHeading}</td>
            <td rowspan=${c.producers.length || 1}>${c.descriptionOfGoods}</td>
            <td rowspan=${c.producers.length || 1} class="number">${quantities(c)}${c.percentageEstimation != null
              && html`<div class="muted sd-estimate">estimated ± ${c.percentageEstimation} %</div>`}</td>`}
          <td>${p ? `${p.name || "unnamed"} (${p.country})` : "—"}</td>
          <td class="sd-location"><span class="sd-location-kind">${loc.kind}</span> ${loc.text}</td>
        </tr>`;
      }))}</tbody>
    </table>
  </div>`;
}

function quantities(c) {
  const out = [];
  if (c.netWeightKg != null) out.push(c.netWeightKg.toLocaleString());
  if (c.supplementaryUnit != null) out.push(`${c.supplementaryUnit.toLocaleString()} ${c.supplementaryUnitType || ""}`.trim());
  return out.join(", ") || "—";
}
