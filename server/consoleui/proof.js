// A plot's evidence, verified in this browser rather than taken on the
// appliance's word: the steps of POST /evidence/verify that need no access
// to the appliance's store, recomputed here with WebCrypto from the
// document as GET /polygons/{id}/evidence answers it and the ledger's
// verifier key (GET /ledger/public-key).
//
//  1. document: the document without its "ledger" member, in canonical
//     JSON (keys sorted at every level, no whitespace, no HTML escaping,
//     numbers as written), hashes to the evidenceSha256 the entry records;
//  2. entry: SHA-256(0x00 || the entry's bytes) is its transactionHash;
//  3. inclusion: the RFC 6962 proof leads from that leaf to rootHash in a
//     tree of treeSize entries;
//  4. checkpoint: the checkpoint note is signed (Ed25519) by the verifier
//     key and states that tree.
//
// Each step is checked on its own, so a changed document fails the first
// step and not the others. The module has no page: plot.js shows its
// results.

const enc = new TextEncoder();

// JsonNumber is a number of a parsed document, kept as it was written:
// "19.350000" must hash as "19.350000", which a JavaScript number forgets.
class JsonNumber {
  constructor(text) {
    this.text = text;
  }
}

// Sticky (y): they match at lastIndex only, without copying the text.
const numberAt = /-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
const stringAt = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;

// parseJSON reads JSON text as JSON.parse does, but numbers stay
// JsonNumbers and objects are Maps (a member named "__proto__" is a member
// like any other). For duplicate members the last one counts, as in Go.
export function parseJSON(text) {
  let i = 0;
  const fail = (what) => {
    throw new SyntaxError(`${what} at offset ${i} of the document`);
  };
  const space = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const value = () => {
    space();
    const c = text[i];
    if (c === "{") {
      i++;
      const obj = new Map();
      space();
      if (text[i] === "}") return i++, obj;
      for (;;) {
        space();
        if (text[i] !== '"') fail("expected a member name");
        const key = string();
        space();
        if (text[i++] !== ":") fail("expected ':'");
        obj.set(key, value());
        space();
        if (text[i] === ",") i++;
        else if (text[i] === "}") return i++, obj;
        else fail("expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++;
      const arr = [];
      space();
      if (text[i] === "]") return i++, arr;
      for (;;) {
        arr.push(value());
        space();
        if (text[i] === ",") i++;
        else if (text[i] === "]") return i++, arr;
        else fail("expected ',' or ']'");
      }
    }
    if (c === '"') return string();
    for (const [word, v] of [["true", true], ["false", false], ["null", null]]) {
      if (text.startsWith(word, i)) return (i += word.length), v;
    }
    numberAt.lastIndex = i;
    const m = numberAt.exec(text);
    if (!m) fail("expected a value");
    i += m[0].length;
    return new JsonNumber(m[0]);
  };
  const string = () => {
    stringAt.lastIndex = i;
    const m = stringAt.exec(text);
    if (!m) fail("expected a string");
    i += m[0].length;
    return JSON.parse(m[0]);
  };
  const out = value();
  space();
  if (i !== text.length) fail("data after the document");
  return out;
}

// codePointOrder compares strings as Go does (byte-wise in UTF-8, which is
// code point order), not by UTF-16 units as Array.prototype.sort.
function codePointOrder(a, b) {
  const x = Array.from(a), y = Array.from(b);
  for (let k = 0; k < Math.min(x.length, y.length); k++) {
    const d = x[k].codePointAt(0) - y[k].codePointAt(0);
    if (d) return d;
  }
  return x.length - y.length;
}

// quote writes a string as Go's encoding/json does without HTML escaping:
// as JSON.stringify, except that U+2028 and U+2029 are escaped and a lone
// surrogate (which Go cannot hold) becomes U+FFFD.
function quote(s) {
  return JSON.stringify(s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd"))
    .replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

// canonicalJSON writes a parsed value in the canonical form of the ledger
// (ledger.CanonicalJSON on the appliance).
export function canonicalJSON(v) {
  if (v instanceof JsonNumber) return v.text;
  if (v instanceof Map) {
    const keys = Array.from(v.keys()).sort(codePointOrder);
    return "{" + keys.map((k) => quote(k) + ":" + canonicalJSON(v.get(k))).join(",") + "}";
  }
  if (Array.isArray(v)) return "[" + v.map(canonicalJSON).join(",") + "]";
  if (typeof v === "string") return quote(v);
  return JSON.stringify(v); // true, false, null
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), (at += p.length);
  return out;
}

async function sha256(bytes) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

export const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

function fromBase64(s) {
  const bin = atob(s);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

function fromHex(s) {
  if (!/^[0-9a-f]{64}$/.test(s)) throw new Error(`${JSON.stringify(s)} is not a hex SHA-256 hash`);
  return Uint8Array.from(s.match(/../g), (b) => parseInt(b, 16));
}

const equal = (a, b) => a.length === b.length && a.every((x, k) => x === b[k]);

// leafHash and nodeHash are RFC 6962's (golang.org/x/mod/sumdb/tlog's).
export const leafHash = (data) => sha256(concat(Uint8Array.of(0), data));
const nodeHash = (left, right) => sha256(concat(Uint8Array.of(1), left, right));

// rootFromProof is the root of the tree of entries lo..hi-1 that proof
// puts leaf n in, its hashes ordered from the leaf up (tlog.CheckRecord).
async function rootFromProof(proof, lo, hi, n, leaf) {
  if (hi - lo === 1) {
    if (proof.length) throw new Error("the proof is longer than the tree is deep");
    return leaf;
  }
  if (!proof.length) throw new Error("the proof is shorter than the tree is deep");
  let k = 1; // the largest power of two below hi - lo
  while (k * 2 < hi - lo) k *= 2;
  const rest = proof.slice(0, -1), sibling = proof[proof.length - 1];
  if (n < lo + k) return nodeHash(await rootFromProof(rest, lo, lo + k, n, leaf), sibling);
  return nodeHash(sibling, await rootFromProof(rest, lo + k, hi, n, leaf));
}

// verifierKey reads a note verifier key: name+hash+base64(0x01 || key).
async function verifierKey(vkey) {
  // The key's base64 may hold "+" too: only the first two separate.
  const m = /^([^+\s]+)\+([0-9a-f]{8})\+([A-Za-z0-9+/]+=*)$/.exec(vkey);
  const raw = m ? fromBase64(m[3]) : new Uint8Array();
  if (raw.length !== 33 || raw[0] !== 1) throw new Error(`${JSON.stringify(vkey)} is not an Ed25519 note verifier key`);
  const [, name, keyHash] = m;
  // The key hash binds the name to the key: SHA-256(name \n 0x01 key)[:4].
  const h = await sha256(concat(enc.encode(name + "\n"), raw));
  if (hex(h.slice(0, 4)) !== keyHash) throw new Error("the verifier key's hash does not match its name and key");
  const key = await crypto.subtle.importKey("raw", raw.slice(1), { name: "Ed25519" }, false, ["verify"]);
  return { name, hash: h.slice(0, 4), key };
}

// openNote checks a signed note against the verifier key and returns its
// text (the signed message). Signatures by other keys are ignored.
async function openNote(note, vkey) {
  const v = await verifierKey(vkey);
  const cut = note.lastIndexOf("\n\n");
  if (cut < 0) throw new Error("the checkpoint is not a signed note: no blank line before its signatures");
  const text = note.slice(0, cut + 1);
  for (const line of note.slice(cut + 2).split("\n")) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!m || m[1] !== v.name) continue;
    const sig = fromBase64(m[2]);
    if (sig.length !== 68 || !equal(sig.slice(0, 4), v.hash)) continue;
    if (await crypto.subtle.verify({ name: "Ed25519" }, v.key, sig.slice(4), enc.encode(text))) return { text, name: v.name };
    throw new Error(`the signature of ${v.name} does not verify`);
  }
  throw new Error(`no signature by ${v.name} on the checkpoint`);
}

// step runs check, which answers a sentence saying what it found, and
// records it as passed or, when check throws, failed with the reason.
async function step(steps, name, title, check) {
  try {
    steps.push({ name, title, ok: true, detail: await check() });
  } catch (err) {
    steps.push({ name, title, ok: false, detail: err.message });
  }
}

// verifyEvidence checks the evidence document text (the answer of GET
// /polygons/{id}/evidence, as received) against the ledger's verifier key
// and returns the steps: [{name, title, ok, detail}].
export async function verifyEvidence(text, vkey) {
  const steps = [];
  let doc, ledger, entryBytes, entry;
  try {
    doc = parseJSON(text);
    ledger = doc instanceof Map && doc.get("ledger");
    if (!(ledger instanceof Map)) throw new Error("the document has no ledger member");
    entryBytes = fromBase64(ledger.get("data"));
    entry = JSON.parse(new TextDecoder().decode(entryBytes));
  } catch (err) {
    return [{ name: "document", title: "Evidence document", ok: false, detail: `unreadable: ${err.message}` }];
  }
  const field = (k) => {
    const v = ledger.get(k);
    return v instanceof JsonNumber ? Number(v.text) : v;
  };
  const index = field("index"), treeSize = field("treeSize");

  await step(steps, "document", "Document hash", async () => {
    const rest = new Map(doc);
    rest.delete("ledger");
    const got = hex(await sha256(enc.encode(canonicalJSON(rest))));
    if (got !== entry.evidenceSha256) throw new Error(`the document hashes to ${got}; the ledger entry records ${entry.evidenceSha256}`);
    return `SHA-256 of the document is ${got}, as ledger entry ${index} records`;
  });
  await step(steps, "entry", "Ledger entry", async () => {
    const got = hex(await leafHash(entryBytes));
    if (got !== field("transactionHash")) throw new Error(`the entry's bytes hash to ${got}, not ${field("transactionHash")}`);
    return `entry ${index} (${entry.type}, ${entry.eudrStatus}) hashes to ${got}`;
  });
  await step(steps, "inclusion", "Inclusion proof", async () => {
    if (!Number.isSafeInteger(index) || !Number.isSafeInteger(treeSize) || index < 0 || index >= treeSize) {
      throw new Error(`entry ${index} is not in a tree of ${treeSize} entries`);
    }
    const proof = field("proof").map(fromHex);
    const root = await rootFromProof(proof, 0, treeSize, index, await leafHash(entryBytes));
    if (hex(root) !== field("rootHash")) throw new Error(`the proof leads to root ${hex(root)}, not ${field("rootHash")}`);
    return `${proof.length} hashes lead from entry ${index} to the root of a tree of ${treeSize} entries`;
  });
  await step(steps, "checkpoint", "Signed checkpoint", async () => {
    const { text: body, name } = await openNote(field("checkpoint"), vkey);
    const [origin, size, root64] = body.split("\n");
    if (!origin.startsWith(name + "/")) throw new Error(`the checkpoint is of log ${origin}, not one of ${name}`);
    if (size !== String(treeSize) || hex(fromBase64(root64)) !== field("rootHash")) {
      throw new Error(`the checkpoint signs a tree of ${size} entries with root ${hex(fromBase64(root64))}, not the proof's`);
    }
    return `Ed25519 signature by ${name} over ${origin}, ${size} entries`;
  });
  return steps;
}

// The browser test changes a byte of a document and expects a failed step:
// a module cannot be reached from outside, and the page has no inline
// script, so the check is published on window on purpose. It reveals
// nothing: it verifies what it is given.
window.eudrProof = { verifyEvidence, canonicalJSON, parseJSON };
