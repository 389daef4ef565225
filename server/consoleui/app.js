// The console's entry: sign-in (a user, or an API key), the navigation with
// who is signed in, and a router by the URL's hash (#/overview, #/plots,
// #/plots/{polygonId}).

import { html, render, useEffect, useState } from "./standalone.module.js";
import * as api from "./api.js";
import { Overview, Plots, Problem } from "./pages.js";
import { Batches, Shipments, Statements } from "./trade.js";
import { SimplifiedDeclarations } from "./sd.js";
import { Webhooks } from "./webhooks.js";
import { Keys, Suppliers, Ledger } from "./admin.js";

// pages are the console's pages by the first part of the hash, each with
// its navigation label; the second part, if any, is what it opens. A page
// with under has no entry of its own: it is reached from that page, whose
// entry shows as the current one (the navigation stays short).
const pages = {
  overview: { label: "Overview", component: Overview },
  plots: { label: "Plots", component: Plots },
  batches: { label: "Batches", component: Batches },
  shipments: { label: "Shipments", component: Shipments },
  dds: { label: "Statements", component: Statements },
  sd: { label: "Simplified declarations", component: SimplifiedDeclarations, under: "dds" },
  webhooks: { label: "Webhooks", component: Webhooks },
  keys: { label: "Keys", component: Keys },
  suppliers: { label: "Suppliers", component: Suppliers },
  ledger: { label: "Ledger", component: Ledger },
};

function route() {
  let parts;
  try {
    parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  } catch {
    // A link cut short or mangled (#/plots/%E0): the overview, not a
    // blank page.
    return { page: "overview", id: "" };
  }
  if (parts[0] in pages) return { page: parts[0], id: parts.slice(1).join("/") };
  return { page: "overview", id: "" };
}

// SignIn asks for a user's name and password; an API key is the other
// way in, for integrators who have one and no user.
function SignIn({ onSignedIn, ended }) {
  return html`<div class="sign-in-page">
    ${ended && html`<p class="console-error" role="alert">Your session has ended: sign in again.</p>`}
    <${UserSignIn} onSignedIn=${onSignedIn} />
    <${KeySignIn} onSignedIn=${onSignedIn} />
  </div>`;
}

// useSubmit runs a sign-in, keeping its error and whether it is under way.
function useSubmit(signIn, onSignedIn) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn();
      onSignedIn();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return { error, busy, submit };
}

function UserSignIn({ onSignedIn }) {
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const { error, busy, submit } = useSubmit(() => api.signInUser(username.trim(), password), onSignedIn);
  return html`<form class="card sign-in-user" onSubmit=${submit}>
    <h1>Sign in</h1>
    <p class="muted">With your user of this appliance, to the ${document.body.dataset.environment} environment.</p>
    <label>Username <input id="username" autocomplete="username" required value=${username}
      onInput=${(e) => setUsername(e.target.value)} /></label>
    <label>Password <input id="password" type="password" autocomplete="current-password" required value=${password}
      onInput=${(e) => setPassword(e.target.value)} /></label>
    ${error && html`<${Problem} error=${error} />`}
    <button type="submit" disabled=${busy}>Sign in</button>
  </form>`;
}

function KeySignIn({ onSignedIn }) {
  const [key, setKey] = useState("");
  const { error, busy, submit } = useSubmit(() => api.signIn(key.trim()), onSignedIn);
  return html`<form class="card sign-in" onSubmit=${submit}>
    <h2>Sign in with an API key</h2>
    <p class="muted">For integrators: a key of this environment. It is kept in this tab's memory only: reloading the
      page signs you out.</p>
    <label>API key <input id="api-key" type="password" autocomplete="off" required value=${key}
      onInput=${(e) => setKey(e.target.value)} /></label>
    ${error && html`<${Problem} error=${error} />`}
    <button type="submit" disabled=${busy}>Sign in with the key</button>
  </form>`;
}

function Nav({ page, onSignOut }) {
  const who = api.who();
  return html`
    ${Object.entries(pages).filter(([, p]) => !p.under).map(([name, p]) => html`<a href=${"#/" + name}
      class=${page === name || pages[page].under === name ? "active" : ""}>${p.label}</a>`)}
    <span class="console-user" title=${who.apiKey ? "Signed in with an API key" : "Signed in as"}>
      ${who.apiKey ? "API key" : who.username} <span class="console-role">${who.role}</span></span>
    <button type="button" class="sign-out" onClick=${onSignOut}>Sign out</button>`;
}

function App() {
  const [where, setWhere] = useState(route);
  // null while a reloaded page asks whether its session lives on.
  const [signedIn, setSignedIn] = useState(null);
  const [ended, setEnded] = useState(false);
  useEffect(() => {
    api.onSessionEnded(() => {
      setEnded(true);
      setSignedIn(false);
    });
    api.restore().then((s) => setSignedIn(s !== null));
    const onHash = () => setWhere(route());
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);
  const nav = document.getElementById("console-nav");
  useEffect(() => {
    const signOut = () => api.signOut().finally(() => setSignedIn(false));
    render(signedIn ? html`<${Nav} page=${where.page} onSignOut=${signOut} />` : null, nav);
  }, [signedIn, where.page]);
  if (signedIn === null) return html`<p class="console-message muted">Loading…</p>`;
  if (!signedIn) return html`<${SignIn} ended=${ended} onSignedIn=${() => { setEnded(false); setSignedIn(true); }} />`;
  if (where.page === "plots") return html`<${Plots} selected=${where.id} />`;
  const Page = pages[where.page].component;
  return html`<${Page} id=${where.id} />`;
}

render(html`<${App} />`, document.getElementById("console"));
