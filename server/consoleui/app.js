// The console's entry: sign-in, the navigation and a router by the URL's
// hash (#/overview, #/plots, #/plots/{polygonId}).

import { html, render, useEffect, useState } from "./standalone.module.js";
import * as api from "./api.js";
import { Overview, Plots, Problem } from "./pages.js";
import { Batches, Shipments, Statements } from "./trade.js";
import { Webhooks } from "./webhooks.js";
import { Keys, Suppliers, Ledger } from "./admin.js";

// pages are the console's pages by the first part of the hash, each with
// its navigation label; the second part, if any, is what it opens.
const pages = {
  overview: { label: "Overview", component: Overview },
  plots: { label: "Plots", component: Plots },
  batches: { label: "Batches", component: Batches },
  shipments: { label: "Shipments", component: Shipments },
  dds: { label: "Statements", component: Statements },
  webhooks: { label: "Webhooks", component: Webhooks },
  keys: { label: "Keys", component: Keys },
  suppliers: { label: "Suppliers", component: Suppliers },
  ledger: { label: "Ledger", component: Ledger },
};

function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] in pages) return { page: parts[0], id: parts.slice(1).join("/") };
  return { page: "overview", id: "" };
}

function SignIn({ onSignedIn }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await api.signIn(key.trim()));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card sign-in" onSubmit=${submit}>
    <h1>Sign in</h1>
    <p class="muted">With an API key of this environment (${document.body.dataset.environment}). It is kept in this tab's
      memory only: reloading the page signs you out.</p>
    <label>API key <input id="api-key" type="password" autocomplete="off" required value=${key}
      onInput=${(e) => setKey(e.target.value)} /></label>
    ${error && html`<${Problem} error=${error} />`}
    <button type="submit" disabled=${busy}>Sign in</button>
  </form>`;
}

function Nav({ page, onSignOut }) {
  return html`
    ${Object.entries(pages).map(([name, p]) => html`<a href=${"#/" + name} class=${page === name ? "active" : ""}>${p.label}</a>`)}
    <button type="button" class="sign-out" onClick=${onSignOut}>Sign out</button>`;
}

function App() {
  const [where, setWhere] = useState(route());
  const [signedIn, setSignedIn] = useState(api.signedIn());
  useEffect(() => {
    const onHash = () => setWhere(route());
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);
  const nav = document.getElementById("console-nav");
  useEffect(() => {
    render(signedIn ? html`<${Nav} page=${where.page} onSignOut=${() => { api.signOut(); setSignedIn(false); }} />` : null, nav);
  }, [signedIn, where.page]);
  if (!signedIn) return html`<${SignIn} onSignedIn=${() => setSignedIn(true)} />`;
  if (where.page === "plots") return html`<${Plots} selected=${where.id} />`;
  const Page = pages[where.page].component;
  return html`<${Page} id=${where.id} />`;
}

render(html`<${App} />`, document.getElementById("console"));
