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

// The overview shows this many queued and this many running jobs, and
// reads them again this often while any are.
const jobsShown = 20;
const jobsRefreshMillis = 2000;

const batchStatuses = ["ASSESSING", "VERIFIED", "HIGH_RISK"];
const statementStatuses = ["DRAFT", "SUBMITTED", "VALIDATED", "REJECTED", "REVOKED"];

// The filters of the plots map besides verdict: key is the map feature's
// property (map.js), field the plot's.
const plotFilters = [
  { key: "commodity", field: "commodity", label: "Commodity", all: "All commodities" },
  { key: "supplier", field: "supplierId", label: "Supplier", all: "All suppliers" },
  { key: "job", field: "jobId", label: "Job", all: "All jobs" },
  { key: "country", field: "producerCountry", label: "Producer country", all: "All countries" },
];

const verdictLabels = { COMPLIANT: "Compliant", HIGH_RISK: "High risk", FAILED: "Failed" };

function Verdict({ status }) {
  return html`<span class="verdict" style=${{ "--verdict": verdictColours[status] || verdictColours.FAILED }}>
    ${verdictLabels[status] || status}</span>`;
}

// Problem shows a refusal: the envelope's message, then each detail at its
// field; a detail that only repeats the message (a 409's, often) is not
// said twice.
export function Problem({ error }) {
  const details = (error.details || []).filter((d) => d.issue !== error.message);
  return html`<p class="console-message console-error" role="alert">${error.message}${
    details.length ? ": " + details.map((d) => `${d.field} ${d.issue}`).join("; ") : ""}</p>`;
}

function count(items, key) {
  const out = {};
  for (const it of items) out[it[key]] = (out[it[key]] || 0) + 1;
  return out;
}

// ago says how long before now an RFC 3339 time is, in words.
function ago(time) {
  const minutes = Math.max(0, Math.floor((Date.now() - Date.parse(time)) / 60000));
  if (minutes < 1) return "less than a minute ago";
  if (minutes < 120) return `${minutes} minute${minutes === 1 ? "" : "s"} ago`;
  if (minutes < 48 * 60) return `${Math.floor(minutes / 60)} hours ago`;
  return `${Math.floor(minutes / 1440)} days ago`;
}

// jobLink is where a job's work is seen, when a page shows it.
function jobLink(job) {
  return { polygon_ingestion: "#/plots", batch_risk_assessment: "#/batches", shipment_link: "#/shipments",
    dds_submission: "#/dds", sd_submission: "#/sd" }[job.type];
}

function StatusCounts({ items, statuses, kind }) {
  if (!items) return html`<p class="muted">Loading…</p>`;
  const by = count(items, "status");
  return html`<ul class="counts">
    ${statuses.map((s) => html`<li><span>${s}</span><strong data-status=${s}>${by[s] || 0}</strong></li>`)}
    <li><span>All</span><strong data-status="ALL">${items.length}</strong></li>
  </ul>
  <a href=${"#/" + kind}>Open the list</a>`;
}

// JobsCard shows the jobs queued and running, each running one with its
// progress, read again every few seconds while there are any.
function JobsCard({ onError }) {
  const [jobs, setJobs] = useState(null);
  useEffect(() => {
    let timer = null;
    let stopped = false;
    const load = () => Promise.all(["RUNNING", "QUEUED"].map((s) => api.get(`/eudr/jobs?status=${s}&limit=${jobsShown}`)))
      .then(([running, queued]) => {
        if (stopped) return;
        setJobs({ running, queued });
        if (running.length || queued.length) timer = setTimeout(load, jobsRefreshMillis);
      }, onError);
    load();
    return () => { stopped = true; clearTimeout(timer); };
  }, []);
  if (!jobs) return html`<div class="card overview-jobs"><h2>Jobs</h2><p class="muted">Loading…</p></div>`;
  const more = (list) => (list.length >= jobsShown ? `${jobsShown} or more` : list.length);
  return html`<div class="card overview-jobs">
    <h2>Jobs</h2>
    <dl>
      <dt>Running</dt><dd data-jobs="RUNNING">${more(jobs.running)}</dd>
      <dt>Queued</dt><dd data-jobs="QUEUED">${more(jobs.queued)}</dd>
    </dl>
    ${!jobs.running.length && !jobs.queued.length && html`<p class="muted">No work waiting.</p>`}
    <ul class="job-list">
      ${[...jobs.running, ...jobs.queued].map((j) => html`<li class="job" data-job=${j.jobId}>
        <div class="job-head">
          ${jobLink(j) ? html`<a href=${jobLink(j)}>${j.type}</a>` : html`<span>${j.type}</span>`}
          <span class="muted">${j.status === "RUNNING" ? `${j.progress.processed} of ${j.progress.total}` : "queued"}</span>
        </div>
        ${j.status === "RUNNING" && html`<progress max="100" value=${j.progress.percent}
          aria-label=${`${j.type} ${j.progress.percent}%`}></progress>`}
        ${j.lastAttempt && html`<p class="attention">Trying again: ${j.lastAttempt.message}</p>`}
      </li>`)}
    </ul>
  </div>`;
}

// What each outcome of a call to the EU information system means.
const euOutcomes = {
  ok: "answered",
  rejected: "rejected the statement on its rules",
  fault: "refused the call",
  transient: "did not answer (trying again)",
  error: "could not be called",
};

// EUSystemCard shows how the EU information system (the sandbox's
// simulator on the sandbox listener) last answered this organisation.
function EUSystemCard({ health }) {
  const last = health && health.euSystem.lastAnswer;
  return html`<div class="card overview-eu">
    <h2>EU information system</h2>
    ${!health ? html`<p class="muted">Loading…</p>` : !last ? html`<p class="muted">No call since the appliance started.</p>`
      : html`<dl>
        <dt>Last answer</dt><dd class=${last.outcome === "ok" ? "overview-eu-outcome" : "overview-eu-outcome attention"}
          data-outcome=${last.outcome}>${euOutcomes[last.outcome] || last.outcome}</dd>
        <dt>To</dt><dd><code>${last.operation}</code></dd>
        <dt>When</dt><dd title=${last.at}>${ago(last.at)}</dd>
      </dl>
      ${last.message && html`<p class="overview-eu-message">${last.message}</p>`}`}
  </div>`;
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
  const [batches, setBatches] = useState(null);
  const [statements, setStatements] = useState(null);
  useEffect(() => {
    api.getAll("/eudr/batches").then(setBatches, setError);
    api.getAll("/eudr/declarations/dds").then(setStatements, setError);
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
      <${JobsCard} onError=${setError} />
      <div class="card overview-batches">
        <h2>Batches by status</h2>
        <${StatusCounts} items=${batches} statuses=${batchStatuses} kind="batches" />
      </div>
      <div class="card overview-statements">
        <h2>Statements by status</h2>
        <${StatusCounts} items=${statements} statuses=${statementStatuses} kind="dds" />
      </div>
      <div class="card">
        <h2>Operations</h2>
        <dl>
          <dt>Dead letters</dt><dd>${dlq === null ? "…" : html`<a href="#/webhooks" class=${dlq ? "overview-dlq attention" : "overview-dlq"}
            data-dlq=${dlq}>${dlq >= dlqCounted ? `${dlqCounted} or more` : dlq}</a>`}</dd>
        </dl>
      </div>
      <div class="card">
        <h2>Ledger</h2>
        <dl>
          <dt>Entries</dt><dd class="overview-ledger">${checkpoint === null ? "…" : checkpoint === false ? "no entries yet"
            : html`<a href="#/ledger">${checkpoint.treeSize}</a>`}</dd>
          <dt>Last checkpoint</dt><dd class="overview-checkpoint">${checkpoint === null ? "…" : checkpoint === false ? "none yet"
            : checkpoint.signedAt ? html`<span title=${checkpoint.signedAt}>signed ${ago(checkpoint.signedAt)}</span>` : "signed"}</dd>
        </dl>
      </div>
      <${EUSystemCard} health=${health} />
      <div class="card">
        <h2>Plots by commodity</h2>
        ${plots ? html`<ul class="counts">
          ${byCommodity.map(([c, n]) => html`<li><span>${c}</span><strong>${n}</strong></li>`)}
        </ul>` : html`<p class="muted">Loading…</p>`}
      </div>
    </div>
  </section>`;
}

// uploadTime says when an upload was, as "26 Nov 14:02" (in the
// browser's time zone), with the year when it is not this one.
function uploadTime(time) {
  const d = new Date(time);
  const two = (n) => String(n).padStart(2, "0");
  const month = d.toLocaleString("en-GB", { month: "short" });
  const year = d.getFullYear() === new Date().getFullYear() ? "" : ` ${d.getFullYear()}`;
  return `${d.getDate()} ${month}${year} ${two(d.getHours())}:${two(d.getMinutes())}`;
}

// jobChoices are the choices of the job filter: a job's ID is not
// something a person knows a job by, so each is named by its upload's
// time (the job's createdAt, or without it the first screening of its
// plots) and its number of plots, newest first.
function jobChoices(plots, created) {
  const jobs = new Map();
  for (const p of plots) {
    if (!p.jobId) continue;
    const j = jobs.get(p.jobId) || { value: p.jobId, plots: 0, time: created[p.jobId] || p.screenedAt };
    j.plots++;
    if (!created[p.jobId] && p.screenedAt < j.time) j.time = p.screenedAt;
    jobs.set(p.jobId, j);
  }
  return Array.from(jobs.values())
    .sort((a, b) => Date.parse(b.time) - Date.parse(a.time) || (a.value < b.value ? -1 : 1))
    .map((j) => ({ value: j.value, label: `Upload ${uploadTime(j.time)} · ${j.plots.toLocaleString("en-GB")} plot${j.plots === 1 ? "" : "s"}` }));
}

export function Plots({ selected }) {
  const mapElement = useRef(null);
  const legend = useRef(null);
  const plotMap = useRef(null);
  const [plots, setPlots] = useState(null);
  const [loaded, setLoaded] = useState(0);
  const [error, setError] = useState(null);
  const [shown, setShown] = useState(verdicts);
  // The plots' own properties to filter on, each "" for all.
  const [match, setMatch] = useState({ commodity: "", supplier: "", job: "", country: "" });
  const [overlayMap, setOverlayMap] = useState(null);
  const [noMap, setNoMap] = useState(false);
  // Layer ID -> how many of its features the map draws when the view
  // holds more (the API's cap); absent when it draws them all.
  const [truncated, setTruncated] = useState({});

  // Job ID -> its createdAt, for the plots' uploads (jobChoices).
  const [jobsCreated, setJobsCreated] = useState({});

  // load reads every plot and draws them, in place of those drawn before,
  // and the upload jobs that name the job filter's choices.
  const load = () => {
    performance.mark("plots:fetch");
    api.getAll("/eudr/jobs?type=polygon_ingestion").then((jobs) => {
      const created = {};
      for (const j of jobs) created[j.jobId] = j.createdAt;
      setJobsCreated(created);
    }, () => {}); // without them, the choices are named by the plots' screening time
    return api.polygons({ geometry: true }, (n) => {
      performance.mark(`plots:page ${n}`);
      setLoaded(n);
    }).then((list) => {
      performance.mark("plots:fetched");
      setPlots(list);
      return plotMap.current && plotMap.current.show(list);
    }).catch(setError);
  };
  useEffect(() => {
    const onTruncated = (id, n) => setTruncated((was) => {
      if ((was[id] || 0) === n) return was;
      const now = { ...was };
      if (n) now[id] = n;
      else delete now[id];
      return now;
    });
    // The plots are asked for first: making the map (its WebGL context)
    // takes a while, and the answers arrive meanwhile.
    load();
    // The map needs WebGL, which a browser may have turned off (a privacy
    // setting, a graphics driver it does not trust): the list still works.
    let m = null;
    try {
      m = new PlotMap(mapElement.current, { onSelect: (id) => (location.hash = `#/plots/${encodeURIComponent(id)}`),
        tileHeaders: api.headers, onTruncated, coveredLeft: () => (legend.current ? legend.current.offsetWidth + 10 : 0) });
    } catch {
      setNoMap(true);
    }
    plotMap.current = m;
    setOverlayMap(m);
    return () => m && m.remove();
  }, []);

  useEffect(() => {
    if (plots && plotMap.current) plotMap.current.ready.then(() => plotMap.current.only(shown, match));
  }, [plots, shown, match]);

  useEffect(() => {
    if (plots && selected && plotMap.current) plotMap.current.ready.then(() => plotMap.current.flyTo(selected));
  }, [plots, selected]);

  // The choices of each filter are the values of the plots loaded, the
  // jobs named by their upload (jobChoices).
  const choices = useMemo(() => {
    const out = {};
    for (const f of plotFilters) {
      out[f.key] = plots ? Object.keys(count(plots.filter((p) => p[f.field]), f.field)).sort().map((v) => ({ value: v, label: v })) : [];
    }
    out.job = jobChoices(plots || [], jobsCreated);
    return out;
  }, [plots, jobsCreated]);
  const listed = useMemo(() => (plots || []).filter((p) => shown.includes(p.eudrStatus) &&
    plotFilters.every((f) => !match[f.key] || p[f.field] === match[f.key])), [plots, shown, match]);
  const current = selected && plots && plots.find((p) => p.polygonId === selected);
  const toggle = (v) => setShown(shown.includes(v) ? shown.filter((s) => s !== v) : [...shown, v]);
  const deleted = (id) => {
    const rest = plots.filter((p) => p.polygonId !== id);
    setPlots(rest);
    if (plotMap.current) plotMap.current.show(rest);
    location.hash = "#/plots";
  };

  return html`<section class="plots">
    <div class="plots-map">
      <div class="map" ref=${mapElement}></div>
      ${noMap && html`<p class="map-unavailable" role="status">This browser cannot draw the map: its WebGL is turned off or unavailable. The plots are listed beside.</p>`}
      <div class="legend" aria-label="Verdicts" ref=${legend}>
        ${verdicts.map((v) => html`<label>
          <input type="checkbox" checked=${shown.includes(v)} onChange=${() => toggle(v)} />
          <${Verdict} status=${v} />
        </label>`)}
        ${plotFilters.map((f) => html`<select aria-label=${f.label} title=${f.label} data-filter=${f.key} value=${match[f.key]}
            onChange=${(e) => setMatch({ ...match, [f.key]: e.target.value })}>
          <option value="">${f.all}</option>
          ${choices[f.key].map((c) => html`<option value=${c.value} title=${c.value}>${c.label}</option>`)}
        </select>`)}
        <${Overlays} plotMap=${overlayMap} truncated=${truncated} />
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
            <td title=${p.polygonId}><a href=${`#/plots/${encodeURIComponent(p.polygonId)}`}>${p.externalId || p.polygonId}</a></td>
            <td>${p.commodity}</td><td>${p.producerCountry}</td>
            <td class="number">${p.areaHa.toFixed(2)}</td><td><${Verdict} status=${p.eudrStatus} /></td>
          </tr>`)}
        </tbody>
      </table>`}
    </aside>
  </section>`;
}
