// One plot's panel (#/plots/{polygonId}): its verdict and why, the figures
// of its evidence, the datasets and thresholds it was judged with, its
// proof checked in this browser, and deleting it; and the toggles of the
// reference layers drawn on the map.

import { html, useEffect, useRef, useState } from "./standalone.module.js";
import * as api from "./api.js";
import { ReportButton, useAskFocus } from "./ui.js";
import { verifyEvidence } from "./proof.js";

// The cutoff of the regulation: loss after it is deforestation.
const cutoffYear = 2020;

// What a reason means, in words; failureDetail then says what was found.
const reasonWords = {
  DEFORESTATION_AFTER_CUTOFF: "Forest on this plot was lost after 31 December 2020.",
  PROTECTED_AREA_OVERLAP: "The plot overlaps a protected area.",
  RISK_SCORE_ABOVE_MAX: "The plot's risk score is above the maximum allowed.",
  NO_REFERENCE_COVERAGE: "No reference layer has data for the whole plot, so it was not judged.",
  OUTSIDE_PRODUCER_COUNTRY: "The plot does not lie in the country it was sent with (producerCountry): its coordinates, or its country, are wrong; latitude and longitude swapped is a common cause.",
};

function why(plot) {
  if (plot.eudrStatus === "COMPLIANT") return "No deforestation after 31 December 2020 and no protected area found on the plot beyond the thresholds below.";
  if (reasonWords[plot.failureReason]) return reasonWords[plot.failureReason];
  return "The plot could not be judged as sent: correct it, delete it here and submit it again.";
}

const ha = (n) => `${n.toFixed(2)} ha`;
const haPct = (h, pct) => `${ha(h)} (${pct.toFixed(1)} % of the plot)`;

// LossByYear is a bar per year of a loss-year layer's lossByYear; loss
// after the cutoff in red, before it muted, as the map's tiles draw them.
function LossByYear({ years }) {
  if (!years.length) return html`<p class="muted">No forest loss in any year.</p>`;
  const most = Math.max(...years.map((y) => y.ha));
  return html`<div class="loss-chart" role="img" aria-label="Forest loss by year">
    ${years.map((y) => html`<div class=${"loss-bar" + (y.year > cutoffYear ? " after-cutoff" : "")} key=${y.year}
        title=${`${y.year}: ${ha(y.ha)}, ${y.pixels} pixels`} data-year=${y.year} data-ha=${y.ha}>
      <span class="loss-value">${y.ha.toFixed(2)}</span>
      <span class="loss-fill" style=${{ height: `${Math.max(2, (y.ha / most) * 100)}%` }}></span>
      <span class="loss-year">${y.year}</span>
    </div>`)}
  </div>`;
}

// countryWords says what the producer country check found.
function countryWords(c) {
  const km = `${(c.bufferM / 1000).toFixed(0)} km`;
  switch (c.outcome) {
    case "IN_COUNTRY": return `in ${c.producerCountry} (or within ${km} of it)`;
    case "OUTSIDE": return c.foundIn.length ? `not in ${c.producerCountry}: in ${c.foundIn.join(", ")}` : `not in ${c.producerCountry}, nor in any country`;
    default: return `${c.producerCountry}: no boundary to check it against`;
  }
}

function Figures({ plot, doc }) {
  const r = doc.risk;
  const forest = doc.rasters.filter((x) => x.kind === "forest-2020" && x.covered);
  const loss = doc.rasters.filter((x) => x.kind === "loss-year" && x.covered);
  return html`<dl class="plot-figures">
    <dt>Area</dt><dd>${ha(doc.areaHa)}</dd>
    ${forest.map((x) => html`<dt>Forest 2020</dt><dd>${haPct(x.measuredHa, x.measuredPct)}</dd>`)}
    ${doc.lossInForest && html`<dt>Forest lost</dt><dd class="loss-in-forest">${haPct(doc.lossInForest.ha, doc.lossInForest.pct)}
      <br /><span class="muted">forest of 2020 lost after the cutoff</span></dd>`}
    ${r && html`<dt>Deforested</dt><dd>${haPct(r.deforestedHa, r.deforestedPct)}</dd>
      <dt>Protected area</dt><dd>${haPct(r.protectedHa, r.protectedPct)}</dd>
      <dt>Risk score</dt><dd>${r.riskScore} of 100</dd>`}
    <dt>Commodity</dt><dd>${plot.commodity}, ${plot.producerCountry}</dd>
    ${doc.countryCheck && html`<dt>Country</dt><dd class="plot-country">${countryWords(doc.countryCheck)}</dd>`}
    <dt>Screened</dt><dd>${doc.screenedAt}, engine ${doc.engineVersion}</dd>
  </dl>
  ${loss.map((x) => html`<h3>Forest loss by year</h3>
    <p class="muted chart-note">In ${x.name}, hectares of its pixels on the plot, forest or not, counted whole: along the
      plot's edge they may add up to more than the plot.</p>
    <${LossByYear} years=${x.lossByYear} />`)}`;
}

// Repair lists what the appliance changed in the plot before screening it
// (sent with repair), beside the hash of the plot as sent.
function Repair({ repair }) {
  return html`<div class="plot-repair">
    ${repair.changes.length === 0 ? html`<p class="muted">Sent with repair: nothing needed repairing.</p>`
      : html`<ul>${repair.changes.map((c) => html`<li data-change=${c.code}><strong>${c.code}</strong> ${c.message}</li>`)}</ul>`}
    ${repair.unrepaired && html`<p class="console-error">Not repaired: ${repair.unrepaired.detail}</p>`}
    <p class="muted">As sent, SHA-256 <code class="sha256">${repair.originalSha256}</code></p>
  </div>`;
}

function Datasets({ doc }) {
  const rows = [...doc.layers, ...doc.rasters.filter((x) => !doc.layers.some((l) => l.layerId === x.layerId))];
  if (!rows.length) return html`<p class="muted">None: the plot was not screened against the reference layers.</p>`;
  return html`<table class="datasets">
    <thead><tr><th>Dataset</th><th>Version</th><th>SHA-256</th></tr></thead>
    <tbody>${rows.map((l) => html`<tr key=${l.layerId} class=${l.covered ? "" : "not-covering"}>
      <td>${l.name}<br /><span class="muted">${l.kind}${l.covered ? "" : ", no data here"}</span></td>
      <td class="version">${l.version}</td><td class="sha256">${l.sha256}</td>
    </tr>`)}</tbody>
  </table>`;
}

function Thresholds({ rules }) {
  return html`<dl class="plot-figures">
    <dt>Cutoff</dt><dd>${rules.cutoff}</dd>
    <dt>Overlap</dt><dd>more than ${rules.overlapThresholdPct} % of the plot</dd>
    ${rules.lossThresholdPct !== undefined && html`<dt>Forest lost</dt>
      <dd>more than ${rules.lossThresholdPct} % of the plot or ${rules.lossThresholdHa} ha</dd>`}
    <dt>Risk score</dt><dd>at most ${rules.maxRiskScore}</dd>
    <dt>Declared area</dt><dd>within ${rules.areaTolerancePct} %</dd>
  </dl>`;
}

function Proof({ steps, ledger }) {
  return html`<div class="proof">
    <p class="muted">Checked in this browser, not taken from the server: the document's hash, its ledger entry
      ${ledger ? ` (${ledger.index} of ${ledger.treeSize})` : ""}, the inclusion proof and the checkpoint's signature.</p>
    ${!steps ? html`<p class="muted">Checking…</p>` : html`<ol class="proof-steps">
      ${steps.map((s) => html`<li class=${"proof-step " + (s.ok ? "passed" : "failed")} data-step=${s.name} data-ok=${String(s.ok)}>
        <span class="proof-mark" aria-label=${s.ok ? "passed" : "failed"}>${s.ok ? "✓" : "✗"}</span>
        <span><strong>${s.title}</strong><br /><span class="proof-detail">${s.detail}</span></span>
      </li>`)}
    </ol>`}
  </div>`;
}

// Delete asks first; a plot a batch uses is refused (409 POLYGON_IN_USE),
// which is said in words.
function Delete({ plot, Problem, onDeleted }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [cancel, opener] = useAskFocus(asking);
  const inUse = error && error.details.some((d) => d.code === "POLYGON_IN_USE");
  const remove = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.deletePolygon(plot.polygonId);
      onDeleted(plot.polygonId);
    } catch (err) {
      setError(err);
      setAsking(false);
    } finally {
      setBusy(false);
    }
  };
  return html`<div class="plot-delete" data-write onKeyDown=${(e) => { if (e.key === "Escape" && !busy) setAsking(false); }}>
    ${inUse && html`<p class="console-message console-error" role="alert">A batch uses this plot, so it stays: delete
      the batch or take the plot out of it first.<br />${error.details.map((d) => d.issue).join("; ")}</p>`}
    ${error && !inUse && html`<${Problem} error=${error} />`}
    ${asking ? html`<p>Delete this plot, its geometry and its evidence? Its ledger entry stays. Submit the corrected
      plot again afterwards.</p>
      <div class="buttons">
        <button type="button" class="danger confirm-delete" disabled=${busy} onClick=${remove}>Delete the plot</button>
        <button type="button" class="secondary" disabled=${busy} onClick=${() => setAsking(false)} ref=${cancel}>Cancel</button>
      </div>`
    : html`<button type="button" class="secondary ask-delete" onClick=${() => setAsking(true)} ref=${opener}>Delete…</button>`}
  </div>`;
}

// PlotPanel is the panel of one plot of the list. Verdict and Problem are
// the pages' own components, passed in (pages.js imports this module).
export function PlotPanel({ plot, Verdict, Problem, onDeleted }) {
  const [doc, setDoc] = useState(null);
  const [steps, setSteps] = useState(null);
  const [error, setError] = useState(null);
  const panel = useRef(null);
  useEffect(() => {
    // A plot opened from the table below starts at its top.
    panel.current.scrollIntoView({ block: "nearest" });
    let current = true;
    setDoc(null);
    setSteps(null);
    setError(null);
    (async () => {
      const [text, key] = await Promise.all([api.evidence(plot.polygonId), api.publicKey()]);
      if (!current) return;
      setDoc(JSON.parse(text));
      const checked = await verifyEvidence(text, key.verifierKey);
      if (current) setSteps(checked);
    })().catch((err) => current && setError(err));
    return () => (current = false);
  }, [plot.polygonId]);

  return html`<div class="card plot-detail" ref=${panel}>
    <h2>${plot.externalId || plot.polygonId} <${Verdict} status=${plot.eudrStatus} /></h2>
    <p class="plot-why">${why(plot)}${plot.failureReason && html`<br /><strong>${plot.failureReason}</strong>`}
      ${plot.failureDetail && html`: ${plot.failureDetail}`}</p>
    <p class="muted plot-id">${plot.polygonId}</p>
    ${plot.eudrStatus !== "PENDING" && html`<${ReportButton} kind="polygon" id=${plot.polygonId} />`}
    ${error && html`<${Problem} error=${error} />`}
    ${!doc && !error && html`<p class="muted">Loading the evidence…</p>`}
    ${doc && html`<${Figures} plot=${plot} doc=${doc} />
      ${doc.repair && html`<h3>Repaired</h3><${Repair} repair=${doc.repair} />`}
      <h3>Proof</h3><${Proof} steps=${steps} ledger=${doc.ledger} />
      <h3>Datasets</h3><${Datasets} doc=${doc} />
      <h3>Thresholds applied</h3><${Thresholds} rules=${doc.rules} />`}
    ${api.canWrite() && html`<${Delete} plot=${plot} Problem=${Problem} onDeleted=${onDeleted} />`}
  </div>`;
}

// Overlays lists the environment's reference layers with a box each that
// shows it on the map: raster layers as their tiles (from the layer's
// minZoom on), vector layers as their features in the view inside the
// outline of their coverage; truncated says of a vector layer that the
// view holds more features than those drawn (layer ID -> how many are).
export function Overlays({ plotMap, truncated = {} }) {
  const [layers, setLayers] = useState([]);
  const [shown, setShown] = useState({});
  const [error, setError] = useState(null);
  useEffect(() => {
    if (!plotMap) return;
    api.layers().then((list) => {
      plotMap.addOverlays(list.map((l) => ({ id: l.layerId, name: l.name, bbox: l.coverage && l.coverage.bbox,
        tiles: l.raster ? api.tileURL(l.layerId) : null, minZoom: l.raster ? l.raster.minZoom : 0,
        features: l.raster ? null : (bbox) => api.get(`/eudr/layers/${encodeURIComponent(l.layerId)}/features?bbox=${bbox.join(",")}`) })));
      setLayers(list);
    }, setError); // the plots still show without their layers
  }, [plotMap]);
  if (error) return html`<p class="muted overlays-error">Reference layers not shown: ${error.message}</p>`;
  if (!layers.length) return null;
  const toggle = (id) => {
    const on = !shown[id];
    setShown({ ...shown, [id]: on });
    plotMap.showOverlay(id, on);
  };
  return html`<fieldset class="overlays">
    <legend>Reference layers</legend>
    ${layers.map((l) => html`<label key=${l.layerId} title=${`${l.kind}, version ${l.version}`}>
      <input type="checkbox" data-layer=${l.layerId} data-kind=${l.kind} checked=${!!shown[l.layerId]} onChange=${() => toggle(l.layerId)} />
      <span>${l.name}<span class="muted">${l.raster ? `, from zoom ${l.raster.minZoom}` : `, ${l.featureCount.toLocaleString("en-GB")} feature${l.featureCount === 1 ? "" : "s"}`}</span>
        ${truncated[l.layerId] && html`<span class="overlay-truncated" role="status" data-truncated=${l.layerId}>
          first ${truncated[l.layerId].toLocaleString("en-GB")} features in view: zoom in</span>`}</span>
    </label>`)}
  </fieldset>`;
}
