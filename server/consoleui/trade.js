// The console's pages of batches, shipments and due-diligence statements.

import { html } from "./standalone.module.js";

export function Batches({ id }) {
  return html`<section class="page"><h1>Batches</h1>${id ? html`<p>${id}</p>` : null}</section>`;
}

export function Shipments({ id }) {
  return html`<section class="page"><h1>Shipments</h1>${id ? html`<p>${id}</p>` : null}</section>`;
}

export function Statements({ id }) {
  return html`<section class="page"><h1>Statements</h1>${id ? html`<p>${id}</p>` : null}</section>`;
}
