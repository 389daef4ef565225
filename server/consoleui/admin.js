// The console's pages of API keys, supplier mappings and the ledger
// (#/keys, #/suppliers, #/ledger, #/ledger/{index}).

import { html, useEffect, useState } from "./standalone.module.js";
import * as api from "./api.js";
import { Problem } from "./pages.js";
import { Confirm, OnceSecret, when } from "./webhooks.js";

// refusedFor tells why key management refused the user (the detail code),
// so that the page can say it plainly: JWT_REQUIRED for an API key (it takes
// a signed-in user), ADMIN_REQUIRED for a user who is not an administrator.
const refusedFor = (err, code) => err && err.status === 403 && err.details.some((d) => d.code === code);

export function Keys() {
  const [keys, setKeys] = useState(null);
  const [error, setError] = useState(null);
  const [secret, setSecret] = useState(null); // { title, value } of a value shown once
  const load = () => api.getAll("/api-keys").then(setKeys, setError);
  useEffect(() => { load(); }, []);
  // change runs a create, rotate or revoke and shows a new value once.
  const change = async (method, path, body, title) => {
    setError(null);
    try {
      const r = await api.send(method, path, body);
      if (r && r.key) setSecret({ title, value: r.key });
    } catch (err) {
      setError(err);
    }
    await load();
  };
  const write = api.canWrite();
  if (refusedFor(error, "JWT_REQUIRED") && !keys) {
    return html`<section class="page ops">
      <h1>Keys</h1>
      <p class="console-message console-notice keys-need-user" role="alert">API keys are managed by a signed-in user,
        not with an API key: sign out and sign in with your username and password to create, rotate or revoke
        keys (or use <code>eudr admin create-key</code> on the appliance).</p>
    </section>`;
  }
  if (refusedFor(error, "ADMIN_REQUIRED") && !keys) {
    return html`<section class="page ops">
      <h1>Keys</h1>
      <p class="console-message console-notice" role="alert">Only an administrator of your organisation manages its API keys.</p>
    </section>`;
  }
  return html`<section class="page ops">
    <h1>Keys</h1>
    ${error && html`<${Problem} error=${error} />`}
    ${secret && html`<${OnceSecret} title=${secret.title} value=${secret.value} onDone=${() => setSecret(null)} />`}
    ${write && html`<${NewKey} onCreate=${(body) => change("POST", "/api-keys", body, `New key ${body.name}`)} />`}
    <div class="card">
      <h2>Active keys</h2>
      ${!keys && !error && html`<p class="muted">Loading…</p>`}
      ${keys && html`<table class="ops-table keys-table">
        <thead><tr><th>Name</th><th>Environment</th><th>Scopes</th><th>Key</th><th>Created</th><th>Last used</th>${write && html`<th></th>`}</tr></thead>
        <tbody>${keys.map((k) => html`<tr key=${k.keyId} data-name=${k.name}>
          <td>${k.name || html`<span class="muted">(no name)</span>`}</td><td>${k.environment}</td><td>${k.scopes.join(", ")}</td>
          <td><code>${k.prefix}…${k.last4}</code></td><td>${when(k.createdAt)}${k.rotatedAt ? html`<br /><span class="muted">rotated ${when(k.rotatedAt)}</span>` : ""}</td>
          <td>${when(k.lastUsedAt)}</td>
          ${write && html`<td class="ops-row-actions" data-write>
            <${Confirm} label="Rotate" className="secondary key-rotate" confirmLabel="Rotate" question="The old value stops working at once. Rotate?"
              onConfirm=${() => change("POST", `/api-keys/${encodeURIComponent(k.keyId)}/rotate`, undefined, `New value of ${k.name || k.keyId}`)} />
            <${Confirm} label="Revoke" className="secondary key-revoke" confirmLabel="Revoke" question="Requests with this key are refused from now on. Revoke?"
              onConfirm=${() => change("DELETE", `/api-keys/${encodeURIComponent(k.keyId)}`)} />
          </td>`}
        </tr>`)}</tbody>
      </table>`}
    </div>
  </section>`;
}

function NewKey({ onCreate }) {
  const [name, setName] = useState("");
  const [writeScope, setWriteScope] = useState(false);
  const submit = (e) => {
    e.preventDefault();
    onCreate({ name: name.trim(), environment: document.body.dataset.environment, scopes: writeScope ? ["read", "write"] : ["read"] });
    setName("");
    setWriteScope(false);
  };
  return html`<form class="card ops-form keys-new" data-write onSubmit=${submit}>
    <h2>New key (${document.body.dataset.environment})</h2>
    <label>Name <input name="name" value=${name} maxlength="100" required onInput=${(e) => setName(e.target.value)} /></label>
    <label class="inline"><input type="checkbox" checked=${writeScope} onChange=${(e) => setWriteScope(e.target.checked)} />
      May change data (scope <code>write</code>); without it, read only</label>
    <button type="submit">Create key</button>
  </form>`;
}

const emptySupplier = { erpVendorId: "", euOperatorUuid: "", name: "", country: "", eori: "", role: "OPERATOR" };

export function Suppliers() {
  const [list, setList] = useState(null);
  const [error, setError] = useState(null);
  const [form, setForm] = useState(emptySupplier);
  const [editing, setEditing] = useState(false);
  const load = () => api.getAll("/eudr/suppliers").then(setList, setError);
  useEffect(() => { load(); }, []);
  const field = (name) => (e) => setForm({ ...form, [name]: e.target.value });
  const save = async (e) => {
    e.preventDefault();
    setError(null);
    try {
      // An upsert by erpVendorId: saving an existing one replaces it.
      await api.send("POST", "/eudr/suppliers", { ...form, eori: form.eori.trim() || null });
      setForm(emptySupplier);
      setEditing(false);
    } catch (err) {
      setError(err);
    }
    await load();
  };
  const remove = async (s) => {
    setError(null);
    try {
      await api.send("DELETE", "/eudr/suppliers/" + encodeURIComponent(s.erpVendorId));
    } catch (err) {
      setError(err);
    }
    await load();
  };
  const edit = (s) => {
    setForm({ erpVendorId: s.erpVendorId, euOperatorUuid: s.euOperatorUuid, name: s.name, country: s.country, eori: s.eori || "", role: s.role });
    setEditing(true);
  };
  const write = api.canWrite();
  return html`<section class="page ops">
    <h1>Suppliers</h1>
    <p class="muted">Each of your ERP's vendors and its operator in the EU information system.</p>
    ${error && html`<${Problem} error=${error} />`}
    ${write && html`<form class="card ops-form supplier-form" data-write onSubmit=${save}>
      <h2>${editing ? `Edit ${form.erpVendorId}` : "New supplier"}</h2>
      <div class="ops-form-grid">
        <label>ERP vendor ID <input name="erpVendorId" required value=${form.erpVendorId} readonly=${editing} onInput=${field("erpVendorId")} /></label>
        <label>Name <input name="name" required value=${form.name} onInput=${field("name")} /></label>
        <label>EU operator UUID <input name="euOperatorUuid" required value=${form.euOperatorUuid} placeholder="xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" onInput=${field("euOperatorUuid")} /></label>
        <label>Country <input name="country" required value=${form.country} maxlength="2" placeholder="CI" onInput=${field("country")} /></label>
        <label>EORI (optional) <input name="eori" value=${form.eori} onInput=${field("eori")} /></label>
        <label>Role <select name="role" value=${form.role} onChange=${field("role")}>
          <option value="OPERATOR">Operator</option><option value="TRADER">Trader</option></select></label>
      </div>
      <div class="ops-toolbar">
        <button type="submit">${editing ? "Save" : "Add supplier"}</button>
        ${editing && html`<button type="button" class="secondary" onClick=${() => { setForm(emptySupplier); setEditing(false); }}>Cancel</button>`}
      </div>
    </form>`}
    <div class="card">
      ${!list && !error && html`<p class="muted">Loading…</p>`}
      ${list && list.length === 0 && html`<p class="muted">No supplier yet.</p>`}
      ${list && list.length > 0 && html`<table class="ops-table suppliers-table">
        <thead><tr><th>ERP vendor</th><th>Name</th><th>Country</th><th>EU operator</th><th>EORI</th><th>Role</th><th>Updated</th>${write && html`<th></th>`}</tr></thead>
        <tbody>${list.map((s) => html`<tr key=${s.supplierId} data-vendor=${s.erpVendorId}>
          <td>${s.erpVendorId}</td><td>${s.name}</td><td>${s.country}</td><td><code>${s.euOperatorUuid}</code></td>
          <td>${s.eori || ""}</td><td>${s.role}</td><td>${when(s.updatedAt)}</td>
          ${write && html`<td class="ops-row-actions" data-write>
            <button type="button" class="secondary" aria-label=${"Edit " + s.erpVendorId} onClick=${() => edit(s)}>Edit</button>
            <${Confirm} label="Delete" className="secondary" confirmLabel="Delete" question=${`Delete ${s.erpVendorId}?`} onConfirm=${() => remove(s)} />
          </td>`}
        </tr>`)}</tbody>
      </table>`}
    </div>
  </section>`;
}

// decodeEntry turns an entry's base64 data into pretty-printed JSON (or the
// text as is, should it not be JSON).
function decodeEntry(data) {
  const text = new TextDecoder().decode(Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export function Ledger({ id }) {
  const [checkpoint, setCheckpoint] = useState(null);
  const [key, setKey] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    api.get("/eudr/ledger/checkpoint").then(setCheckpoint, (err) => (err.status === 404 ? setCheckpoint(false) : setError(err)));
    api.get("/eudr/ledger/public-key").then(setKey, setError);
  }, []);
  const latest = checkpoint ? checkpoint.treeSize - 1 : -1;
  const index = id === "" ? latest : Number(id);
  return html`<section class="page ops">
    <h1>Ledger</h1>
    ${error && html`<${Problem} error=${error} />`}
    <div class="cards">
      <div class="card ledger-checkpoint">
        <h2>Latest checkpoint</h2>
        ${checkpoint === null && !error && html`<p class="muted">Loading…</p>`}
        ${checkpoint === false && html`<p class="muted">The ledger has no entries yet: nothing was screened or linked in this environment.</p>`}
        ${checkpoint && html`<dl>
          <dt>Entries</dt><dd data-tree-size=${checkpoint.treeSize}>${checkpoint.treeSize}</dd>
          <dt>Root hash</dt><dd><code>${checkpoint.rootHash}</code></dd>
        </dl>
        <h3>Signed note</h3>
        <pre class="ledger-note">${checkpoint.note}</pre>`}
      </div>
      <div class="card">
        <h2>Verifier key</h2>
        ${key ? html`<dl><dt>Name</dt><dd>${key.keyName}</dd><dt>Key</dt><dd><code>${key.verifierKey}</code></dd></dl>
          <p class="muted">Whoever holds this key can check the checkpoints, entries and proofs offline.</p>` : html`<p class="muted">Loading…</p>`}
      </div>
    </div>
    ${checkpoint && (Number.isInteger(index) && index >= 0
      ? html`<${LedgerEntry} index=${index} last=${latest} key=${index} />`
      : html`<p class="console-message console-error">${id} is not an entry number.</p>`)}
  </section>`;
}

function LedgerEntry({ index, last }) {
  const [entry, setEntry] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    api.get(`/eudr/ledger/entries/${index}`).then(setEntry, setError);
  }, []);
  return html`<div class="card ledger-entry" data-index=${index}>
    <h2>Entry ${index} <span class="muted">of ${last + 1}</span>
      <span class="ledger-pager">
        ${index > 0 ? html`<a class="entry-prev" href=${`#/ledger/${index - 1}`}>← ${index - 1}</a>` : ""}
        ${index < last ? html`<a class="entry-next" href=${`#/ledger/${index + 1}`}>${index + 1} →</a>` : ""}
        ${index !== last ? html`<a href=${`#/ledger/${last}`}>Latest</a>` : ""}
      </span>
    </h2>
    ${error && html`<${Problem} error=${error} />`}
    ${entry && html`<dl><dt>Leaf hash</dt><dd><code>${entry.leafHash}</code></dd></dl>
      <pre class="entry-data">${decodeEntry(entry.data)}</pre>`}
  </div>`;
}
