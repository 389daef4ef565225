// The console's one door to the API: every request of the console goes
// through here, with the credential the user signed in with. Today that
// is an API key, held in this module's memory only (never in storage: a
// reload signs out); a session cookie can replace it without the pages
// noticing, since they only call signIn, signOut, signedIn and the readers.

const base = document.body.dataset.api; // "/api/v1/enterprise"

// The largest page the API serves: a map of every plot takes a request per
// thousand plots.
const pageLimit = 1000;

let credential = null; // the headers that authenticate a request

// ApiError is a refused request, with the API's error envelope.
export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.message ? body.message : `the appliance answered ${status}`);
    this.status = status;
    this.code = body && body.code;
    this.details = (body && body.details) || [];
  }
}

async function request(path) {
  const res = await fetch(base + path, {
    headers: { Accept: "application/json", ...(credential || {}) },
    credentials: "same-origin",
    cache: "no-store",
  });
  if (!res.ok) {
    let body = null;
    try {
      body = await res.json();
    } catch {
      // not an envelope: the status says enough
    }
    throw new ApiError(res.status, body);
  }
  return { data: await res.json(), next: res.headers.get("X-Next-Cursor") };
}

// signIn checks the key against the API before keeping it, so a wrong key
// is told at once; it returns the health of the environment.
export async function signIn(apiKey) {
  credential = { "X-API-Key": apiKey };
  try {
    return await health();
  } catch (err) {
    credential = null;
    throw err;
  }
}

export function signOut() {
  credential = null;
}

export function signedIn() {
  return credential !== null;
}

export async function get(path) {
  return (await request(path)).data;
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
// Each call carries an Idempotency-Key of its own, so a retried click is
// not done twice by the appliance. It answers the body, or null for 204.
export async function send(method, path, body) {
  const headers = { Accept: "application/json", "Idempotency-Key": crypto.randomUUID(), ...(credential || {}) };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: "same-origin",
    cache: "no-store",
  });
  if (!res.ok) {
    let envelope = null;
    try {
      envelope = await res.json();
    } catch {
      // not an envelope: the status says enough
    }
    throw new ApiError(res.status, envelope);
  }
  return res.status === 204 ? null : res.json();
}

export const health = () => get("/eudr/health");

// polygons lists every plot of the environment, with its geometry when
// asked (one request per thousand plots either way).
export const polygons = ({ geometry = false } = {}, onPage) =>
  getAll("/eudr/polygons" + (geometry ? "?include=geometry" : ""), onPage);
