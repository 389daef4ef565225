// The console's one door to the API: every request of the console goes
// through here, with the credential the user signed in with. That is
// either a console session (a user's name and password: an HttpOnly
// cookie the browser sends by itself, and a CSRF token held in this
// module's memory for writes) or an API key, held in memory only (never
// in storage: a reload signs out). Pages do not tell them apart: they call
// the readers, send and canWrite.

const base = document.body.dataset.api; // "/api/v1/enterprise"

// The largest page the API serves: a map of every plot takes a request per
// thousand plots.
const pageLimit = 1000;

let credential = null; // the headers of an API key sign-in
let keyScopes = []; // what that key may do (GET /auth/whoami)
let session = null; // who is signed in by cookie, with the CSRF token
let onEnded = () => {}; // told when the appliance ends the session

// onSessionEnded sets what to do when a request finds the session ended
// (unused for auth.session_idle, past auth.session_max, the password
// reset): the page asks to sign in again.
export function onSessionEnded(fn) {
  onEnded = fn;
}

// ApiError is a refused request, with the API's error envelope.
export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `the appliance answered ${status}`);
    this.status = status;
    this.code = body && body.code;
    this.details = (body && body.details) || [];
    // The API words every 401 and 403 for keys: a user signing in, and a
    // reader, are told in their own words.
    if (this.details.some((d) => d.code === "INVALID_CREDENTIALS")) {
      this.message = "The username or password is wrong";
      this.details = [];
    }
    if (this.details.some((d) => d.code === "SCOPE_REQUIRED")) {
      this.message = "Not allowed: you are signed in to read only";
    }
  }
}

async function refused(res) {
  if (res.status === 401 && session) {
    session = null;
    onEnded();
  }
  let body = null;
  try {
    body = await res.json();
  } catch {
    // not an envelope: the status says enough
  }
  return new ApiError(res.status, body);
}

async function request(path, { text = false } = {}) {
  const res = await fetch(base + path, {
    headers: { Accept: "application/json", ...(credential || {}) },
    credentials: "same-origin",
    cache: "no-store",
  });
  if (!res.ok) throw await refused(res);
  return { data: await (text ? res.text() : res.json()), next: res.headers.get("X-Next-Cursor") };
}

// write sends a change with a body of its type (or none): the
// credential, the session's CSRF token and an Idempotency-Key of its own,
// so a retried click is not done twice by the appliance.
async function write(method, path, body, contentType) {
  const headers = { Accept: "application/json", "Idempotency-Key": crypto.randomUUID(), ...(credential || {}) };
  if (session) headers["X-CSRF-Token"] = session.csrfToken;
  if (body !== undefined) headers["Content-Type"] = contentType;
  const res = await fetch(base + path, { method, headers, body, credentials: "same-origin", cache: "no-store" });
  if (!res.ok) throw await refused(res);
  const text = await res.text();
  return text ? JSON.parse(text) : null;
}

// signIn checks the key against the API before keeping it, so a wrong key
// is told at once, and learns its scopes; it returns the health of the
// environment.
export async function signIn(apiKey) {
  credential = { "X-API-Key": apiKey };
  try {
    keyScopes = (await get("/auth/whoami")).scopes;
    return await health();
  } catch (err) {
    credential = null;
    throw err;
  }
}

// signInUser opens a console session with a user's name and password.
export async function signInUser(username, password) {
  const res = await fetch(base + "/auth/session", {
    method: "POST",
    headers: { Accept: "application/json", "Content-Type": "application/json" },
    body: JSON.stringify({ username, password }),
    credentials: "same-origin",
    cache: "no-store",
  });
  if (!res.ok) throw await refused(res);
  credential = null;
  session = await res.json();
  return session;
}

// restore finds the session of a reloaded page: the cookie survived, and
// the appliance gives the CSRF token again. It answers the session, or
// null when there is none. The appliance marks the page (data-session)
// "1" when its request carried a session cookie, and "maybe" when it came
// from a link on another site, which the browser sends without the
// SameSite=Strict cookie (this page's own request carries it). Without
// either there is nothing to ask (the answer would be a 401), and the
// console keeps nothing in the browser's storage to remember it by.
export async function restore() {
  if (document.body.dataset.session === "") return null;
  try {
    session = await get("/auth/session");
    return session;
  } catch {
    return null;
  }
}

// signOut ends the session on the appliance (or forgets the key).
export async function signOut() {
  const was = session;
  credential = null;
  if (!was) return;
  try {
    await fetch(base + "/auth/session", {
      method: "DELETE",
      headers: { Accept: "application/json", "X-CSRF-Token": was.csrfToken },
      credentials: "same-origin",
      cache: "no-store",
    });
  } finally {
    session = null;
  }
}

export function signedIn() {
  return credential !== null || session !== null;
}

// who is signed in: { username, role } of a session, or { apiKey: true,
// role } of a key, its role named by its scopes.
export function who() {
  if (session) return { username: session.username, role: session.role };
  return credential ? { apiKey: true, role: keyScopes.includes("write") ? "read-write" : "read-only" } : null;
}

// canWrite says whether to offer changes: a reader's session and a key
// without the write scope read only.
export function canWrite() {
  if (session) return session.role !== "reader";
  return credential !== null && keyScopes.includes("write");
}

export async function get(path) {
  return (await request(path)).data;
}

// getText is the body of a GET as the appliance sent it, unparsed: a
// document whose hash is checked must be read as it came.
export async function getText(path) {
  return (await request(path, { text: true })).data;
}

// headers are the credential's headers, for requests the console does not
// make itself: the map's tiles, which MapLibre fetches (a session's cookie
// goes with them by itself).
export function headers() {
  return { ...(credential || {}) };
}

// getAll follows the pages of a list to its end; onPage hears how many
// items have arrived so far.
export async function getAll(path, onPage) {
  const sep = path.includes("?") ? "&" : "?";
  let items = [];
  let cursor = "";
  do {
    const page = await request(`${path}${sep}limit=${pageLimit}${cursor ? "&cursor=" + encodeURIComponent(cursor) : ""}`);
    items = items.concat(page.data);
    if (onPage) onPage(items.length);
    cursor = page.next;
  } while (cursor);
  return items;
}

// send makes a change: a POST, PUT or DELETE with a JSON body (or none).
// It answers the body, or null when there is none (a 204, or a 200 whose
// headers say all, as a bulk replay's).
export function send(method, path, body) {
  return write(method, path, body === undefined ? undefined : JSON.stringify(body), "application/json");
}

export const health = () => get("/eudr/health");

// download saves the document at path (a PDF report) as filename. It is
// fetched like every request, with the credential (a key's sign-in has no
// cookie a plain link would carry), then handed to the browser as a file.
// It answers the document's SHA-256 and the ledger entry recording it.
export async function download(path, filename) {
  const res = await fetch(base + path, { headers: { ...(credential || {}) }, credentials: "same-origin", cache: "no-store" });
  if (!res.ok) throw await refused(res);
  const url = URL.createObjectURL(await res.blob());
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  // The browser has the file once the click is handled; a minute is ample.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return { sha256: res.headers.get("X-Content-SHA256"), ledgerIndex: res.headers.get("X-Ledger-Index") };
}

// reportPath is the path of the PDF report of a polygon, batch or dds.
export const reportPath = (kind, id) =>
  ({ polygon: "/eudr/polygons/", batch: "/eudr/batches/", dds: "/eudr/declarations/dds/" })[kind] + encodeURIComponent(id) + "/report.pdf";

// polygons lists every plot of the environment, with its geometry when
// asked (one request per thousand plots either way).
export const polygons = ({ geometry = false } = {}, onPage) =>
  getAll("/eudr/polygons" + (geometry ? "?include=geometry" : ""), onPage);

// The Content-Type of a plot file, by its name's extension.
const plotFileTypes = {
  geojson: "application/geo+json",
  json: "application/geo+json",
  kml: "application/vnd.google-earth.kml+xml",
  kmz: "application/vnd.google-earth.kmz",
  zip: "application/zip",
  csv: "text/csv",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
};

// plotFileAccept is what the file picker offers.
export const plotFileAccept = Object.keys(plotFileTypes).map((ext) => "." + ext).join(",");

// uploadPlots sends a plot file as it is, typed by its extension (one the
// appliance does not read is refused by it, 415, naming those it reads),
// and answers { jobId, featureCount } of the job that screens it.
// With repair, the appliance first repairs what it safely can (a ring left
// open, a figure 8, a hole...) and records each change in the plot's
// evidence.
export const uploadPlots = (file, { repair = false } = {}) => {
  const ext = file.name.includes(".") ? file.name.split(".").pop().toLowerCase() : "";
  return write("POST", "/eudr/polygons" + (repair ? "?repair=true" : ""), file, plotFileTypes[ext] || file.type || "application/octet-stream");
};

// job reads a job's state and counts; one result is enough, the counts
// cover them all.
export const job = (id) => get("/eudr/jobs/" + encodeURIComponent(id) + "?limit=1");

// evidence is a plot's evidence document as the appliance sent it (text),
// and publicKey the ledger's verifier key that checks its proof.
export const evidence = (polygonId) => getText(`/eudr/polygons/${encodeURIComponent(polygonId)}/evidence`);
export const publicKey = () => get("/eudr/ledger/public-key");

export const deletePolygon = (polygonId) => send("DELETE", `/eudr/polygons/${encodeURIComponent(polygonId)}`);

// layers lists the environment's reference layers; tileURL is the tile
// template of a raster layer, for the map.
export const layers = () => get("/eudr/layers");
export const tileURL = (layerId) => `${location.origin}${base}/eudr/layers/${encodeURIComponent(layerId)}/tiles/{z}/{x}/{y}.png`;
