// The console's pages of webhook subscriptions, their deliveries and the dead-letter queue.

import { html } from "./standalone.module.js";

export function Webhooks({ id }) {
  return html`<section class="page"><h1>Webhooks</h1>${id ? html`<p>${id}</p>` : null}</section>`;
}
