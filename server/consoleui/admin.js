// The console's pages of API keys, supplier mappings and the ledger.

import { html } from "./standalone.module.js";

export function Keys({ id }) {
  return html`<section class="page"><h1>Keys</h1>${id ? html`<p>${id}</p>` : null}</section>`;
}

export function Suppliers({ id }) {
  return html`<section class="page"><h1>Suppliers</h1>${id ? html`<p>${id}</p>` : null}</section>`;
}

export function Ledger({ id }) {
  return html`<section class="page"><h1>Ledger</h1>${id ? html`<p>${id}</p>` : null}</section>`;
}
