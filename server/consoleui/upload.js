// Uploading plots: a plot file (GeoJSON, KML, KMZ, a zipped Shapefile,
// CSV or an Excel workbook), dropped on the Plots page or chosen with the
// file picker, is sent as it is to POST /eudr/polygons; the job that
// screens it is followed until it ends.

import { html, useEffect, useRef, useState } from "./standalone.module.js";
import * as api from "./api.js";
import { verdictColours } from "./map.js";

// How often a running job is read again.
const pollMillis = 500;

// The first problems of a refused file are listed; the rest are counted.
const problemsListed = 50;

// PlotUpload is the drop zone and the upload's progress; onScreened hears
// when a job has screened its plots, to draw them.
export function PlotUpload({ onScreened }) {
  const [state, setState] = useState(null); // { name, job?, error? } of the last upload
  const [over, setOver] = useState(false);
  const [repair, setRepair] = useState(true);
  const input = useRef(null);
  const alive = useRef(true);
  useEffect(() => () => (alive.current = false), []);

  const follow = async (name, jobId) => {
    for (;;) {
      const job = await api.job(jobId);
      if (!alive.current) return;
      setState({ name, job });
      if (job.status === "COMPLETED" || job.status === "FAILED") {
        if (job.status === "COMPLETED") onScreened();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, pollMillis));
    }
  };

  const upload = async (file) => {
    if (!file) return;
    setState({ name: file.name });
    try {
      const accepted = await api.uploadPlots(file, { repair });
      await follow(file.name, accepted.jobId);
    } catch (error) {
      if (alive.current) setState({ name: file.name, error });
    }
  };

  const busy = state && !state.error && (!state.job || state.job.status === "QUEUED" || state.job.status === "RUNNING");
  const drop = (e) => {
    e.preventDefault();
    setOver(false);
    if (!busy) upload(e.dataTransfer.files[0]);
  };
  return html`<div class=${"card plot-upload" + (over ? " over" : "")} data-write
      onDragOver=${(e) => { e.preventDefault(); setOver(true); }} onDragLeave=${() => setOver(false)} onDrop=${drop}>
    <h2>Add plots</h2>
    <p class="muted">Drop a plot file here, or <label class="file-pick">choose a file<input id="plot-file" type="file" accept=${api.plotFileAccept}
        disabled=${busy} ref=${input} onChange=${(e) => { upload(e.target.files[0]); e.target.value = ""; }} /></label>:
      GeoJSON, KML or KMZ, a zipped Shapefile, CSV or Excel. Each plot needs a <code>commodity</code> and a <code>producerCountry</code>.</p>
    <label class="upload-repair"><input type="checkbox" checked=${repair} disabled=${busy} onChange=${(e) => setRepair(e.target.checked)} />
      Repair what can be repaired safely (each change is kept in the plot's evidence)</label>
    ${state && html`<${UploadState} ...${state} />`}
  </div>`;
}

function UploadState({ name, job, error }) {
  if (error) {
    const more = error.details.length - problemsListed;
    return html`<div class="upload-refused" role="alert">
      <p class="console-error">${error.details.length > 0
        ? `${name} was not accepted: ${error.details.length === 1 ? "one problem" : `${error.details.length} problems`}`
        : `${name}: ${error.message}`}</p>
      ${error.details.length > 0 && html`<ul class="upload-problems">
        ${error.details.slice(0, problemsListed).map((d) => html`<li><code>${d.field || "file"}</code> ${d.issue}</li>`)}
        ${more > 0 && html`<li class="muted">and ${more} more</li>`}
      </ul>`}
    </div>`;
  }
  if (!job) return html`<p class="upload-status muted">Sending ${name}…</p>`;
  const p = job.progress;
  const counts = Object.entries(job.resultCounts.byStatus);
  return html`<div class="upload-status" data-job-status=${job.status}>
    <p><strong>${name}</strong>: ${job.status === "COMPLETED" ? "screened" : job.status.toLowerCase()}, ${p.processed} of ${p.total} plots (${p.percent} %)</p>
    <progress max="100" value=${p.percent}></progress>
    ${counts.length > 0 && html`<p class="upload-counts">${counts.map(([status, n]) => html`<span class="verdict" data-status=${status}
      style=${{ "--verdict": verdictColours[status] || verdictColours.FAILED }}>${n} ${status.toLowerCase().replace("_", " ")}</span>`)}</p>`}
    ${job.error && html`<p class="console-error">${job.error.message || job.error.code}</p>`}
  </div>`;
}
