// The console's pages: the overview and the plots (with their upload).
// Each reads what it shows through api.js when it opens.

import { html, useEffect, useMemo, useRef, useState } from "./standalone.module.js";
import * as api from "./api.js";
import { PlotMap, verdictColours, verdicts } from "./map.js";
import { PlotUpload } from "./upload.js";
import { Overlays, PlotPanel } from "./plot.js";

// The table beside the map lists this many plots; the map draws them all.
const tableRows = 200;

// The overview counts dead letters up to this many (one request).
const dlqCounted = 1000;

const verdictLabels = { COMPLIANT: "Compliant", HIGH_RISK: "High risk", FAILED: "Failed" };

function Verdict({ status }) {
  return html`<span class="verdict" style=${{ "--verdict": verdictColours[status] || verdictColours.FAILED }}>
    ${verdictLabels[status] || status}</span>`;
}

export function Problem({ error }) {
  return html`<p class="console-message console-error" role="alert">${error.message}${
    error.details && error.details.length ? ": " + error.details.map((d) => `${d.field} ${d.issue}`).join("; ") : ""}</p>`;
}

function count(items, key) {
  const out = {};
  for (const it of items) out[it[key]] = (out[it[key]] || 0) + 1;
  return out;
}

function formatBytes(n) {
  if (n < 1 << 20) return `${(n / 1024).toFixed(0)} KiB`;
  return `${(n / (1 << 20)).toFixed(1)} MiB`;
}

export function Overview() {
  const [health, setHealth] = useState(null);
  const [plots, setPlots] = useState(null);
  const [error, setError] = useState(null);
  const [dlq, setDlq] = useState(null);
  const [checkpoint, setCheckpoint] = useState(null);
  useEffect(() => {
    api.health().then(setHealth, setError);
    api.polygons().then(setPlots, setError);
    // The API's largest page: past it the card says "1000 or more".
    api.get(`/eudr/webhooks/dlq?limit=${dlqCounted}`).then((l) => setDlq(l.retrievedCount), setError);
    // 404: the ledger has no entries yet.
    api.get("/eudr/ledger/checkpoint").then(setCheckpoint, (err) => (err.status === 404 ? setCheckpoint(false) : setError(err)));
  }, []);
  const byVerdict = plots ? count(plots, "eudrStatus") : {};
  const byCommodity = plots ? Object.entries(count(plots, "commodity")).sort((a, b) => b[1] - a[1]) : [];
  return html`<section class="overview">
    <h1>Overview</h1>
    ${error && html`<${Problem} error=${error} />`}
    <div class="cards">
      <div class="card">
        <h2>Appliance</h2>
        ${health ? html`<dl>
          <dt>Status</dt><dd class="health-status">${health.status}</dd>
          <dt>Environment</dt><dd>${health.environment}</dd>
          <dt>Version</dt><dd>${health.version}</dd>
          <dt>Up for</dt><dd>${Math.floor(health.uptimeSeconds / 3600)} h ${Math.floor(health.uptimeSeconds / 60) % 60} min</dd>
          <dt>Store</dt><dd>${health.store.status}, schema ${health.store.schemaVersion}, ${formatBytes(health.store.sizeBytes)}</dd>
        </dl>` : html`<p class="muted">Loading…</p>`}
      </div>
      <div class="card">
        <h2>Plots by verdict</h2>
        ${plots ? html`<ul class="counts">
          ${verdicts.map((v) => html`<li><${Verdict} status=${v} /><strong data-verdict=${v}>${byVerdict[v] || 0}</strong></li>`)}
          <li><span>All plots</span><strong data-verdict="ALL">${plots.length}</strong></li>
        </ul>
        <a href="#/plots">Open the map</a>` : html`<p class="muted">Loading…</p>`}
      </div>
      <div class="card">
        <h2>Operations</h2>
        <dl>
          <dt>Dead letters</dt><dd>${dlq === null ? "…" : html`<a href="#/webhooks" class=${dlq ? "overview-dlq attention" : "overview-dlq"}
            data-dlq=${dlq}>${dlq >= dlqCounted ? `${dlqCounted} or more` : dlq}</a>`}</dd>
          <dt>Ledger</dt><dd class="overview-ledger">${checkpoint === null ? "…" : checkpoint === false ? "no entries yet"
            : html`<a href="#/ledger">${checkpoint.treeSize} entries</a>, signed`}</dd>
        </dl>
      </div>
      <div class="card">
        <h2>Plots by commodity</h2>
        ${plots ? html`<ul class="counts">
          ${byCommodity.map(([c, n]) => html`<li><span>${c}</span><strong>${n}</strong></li>`)}
        </ul>` : html`<p class="muted">Loading…</p>`}
      </div>
    </div>
  </section>`;
}

export function Plots({ selected }) {
  const mapElement = useRef(null);
  const plotMap = useRef(null);
  const [plots, setPlots] = useState(null);
  const [loaded, setLoaded] = useState(0);
  const [error, setError] = useState(null);
  const [shown, setShown] = useState(verdicts);
  const [commodity, setCommodity] = useState("");
  const [overlayMap, setOverlayMap] = useState(null);

  // load reads every plot and draws them, in place of those drawn before.
  const load = () => {
    const m = plotMap.current;
    return api.polygons({ geometry: true }, setLoaded).then((list) => {
      setPlots(list);
      return m.show(list);
    }).catch(setError);
  };
  useEffect(() => {
    const m = new PlotMap(mapElement.current, { onSelect: (id) => (location.hash = `#/plots/${encodeURIComponent(id)}`),
      tileHeaders: api.headers });
    plotMap.current = m;
    setOverlayMap(m);
    load();
    return () => m.remove();
  }, []);

  useEffect(() => {
    if (plots) plotMap.current.ready.then(() => plotMap.current.only(shown, commodity));
  }, [plots, shown, commodity]);

  useEffect(() => {
    if (plots && selected) plotMap.current.ready.then(() => plotMap.current.flyTo(selected));
  }, [plots, selected]);

  const commodities = useMemo(() => (plots ? Object.keys(count(plots, "commodity")).sort() : []), [plots]);
  const listed = useMemo(() => (plots || []).filter((p) => shown.includes(p.eudrStatus) && (!commodity || p.commodity === commodity)), [plots, shown, commodity]);
  const current = selected && plots && plots.find((p) => p.polygonId === selected);
  const toggle = (v) => setShown(shown.includes(v) ? shown.filter((s) => s !== v) : [...shown, v]);
  const deleted = (id) => {
    const rest = plots.filter((p) => p.polygonId !== id);
    setPlots(rest);
    plotMap.current.show(rest);
    location.hash = "#/plots";
  };

  return html`<section class="plots">
    <div class="plots-map">
      <div class="map" ref=${mapElement}></div>
      <div class="legend" aria-label="Verdicts">
        ${verdicts.map((v) => html`<label>
          <input type="checkbox" checked=${shown.includes(v)} onChange=${() => toggle(v)} />
          <${Verdict} status=${v} />
        </label>`)}
        <select aria-label="Commodity" value=${commodity} onChange=${(e) => setCommodity(e.target.value)}>
          <option value="">All commodities</option>
          ${commodities.map((c) => html`<option value=${c}>${c}</option>`)}
        </select>
        <${Overlays} plotMap=${overlayMap} />
      </div>
    </div>
    <aside class="plots-side">
      ${api.canWrite() && html`<${PlotUpload} onScreened=${load} />`}
      ${error && html`<${Problem} error=${error} />`}
      ${!plots && !error && html`<p class="muted">Loading plots… ${loaded || ""}</p>`}
      ${current && html`<${PlotPanel} plot=${current} Verdict=${Verdict} Problem=${Problem} onDeleted=${deleted} />`}
      ${plots && html`<p class="muted">${listed.length} of ${plots.length} plots${listed.length > tableRows ? `, the first ${tableRows} listed` : ""}</p>
      <table class="plots-table">
        <thead><tr><th>Plot</th><th>Commodity</th><th>Country</th><th>Area (ha)</th><th>Verdict</th></tr></thead>
        <tbody>
          ${listed.slice(0, tableRows).map((p) => html`<tr key=${p.polygonId} class=${p.polygonId === selected ? "selected" : ""}
              onClick=${() => (location.hash = `#/plots/${encodeURIComponent(p.polygonId)}`)}>
            <td title=${p.polygonId}>${p.externalId || p.polygonId}</td><td>${p.commodity}</td><td>${p.producerCountry}</td>
            <td class="number">${p.areaHa.toFixed(2)}</td><td><${Verdict} status=${p.eudrStatus} /></td>
          </tr>`)}
        </tbody>
      </table>`}
    </aside>
  </section>`;
}
