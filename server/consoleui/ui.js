// Small pieces the pages share: where the keyboard's focus goes around a
// question the page asks before a change, and the button that saves a
// record's PDF report.

import { html, useEffect, useRef, useState } from "./standalone.module.js";
import * as api from "./api.js";

// useAskFocus is the focus of a question asked in the page in place of the
// button that asked it (Delete…, Replay…): when open turns true the focus
// goes to the question's Cancel (the safe answer), and when it turns false
// again back to the button, so a keyboard user carries on where they were.
// It answers the refs to put on the Cancel and on the button.
export function useAskFocus(open) {
  const cancel = useRef(null);
  const opener = useRef(null);
  const wasOpen = useRef(open);
  useEffect(() => {
    if (open && cancel.current) cancel.current.focus();
    if (!open && wasOpen.current && opener.current) opener.current.focus();
    wasOpen.current = open;
  }, [open]);
  return [cancel, opener];
}

// useModalFocus is the focus of a modal dialog, drawn while it is open: its
// Cancel takes the focus when it opens, and the element that had it (the
// button that opened it) gets it back when it closes, if still on the page.
// It answers the ref to put on the Cancel.
export function useModalFocus() {
  const cancel = useRef(null);
  useEffect(() => {
    const opener = document.activeElement;
    if (cancel.current) cancel.current.focus();
    return () => {
      if (opener && opener.isConnected && opener !== document.body) opener.focus();
    };
  }, []);
  return cancel;
}

// ReportButton saves the PDF report of a record (kind: "polygon", "batch"
// or "dds") and then says the file's SHA-256 and the ledger entry that
// records it, so that a copy handed on can be checked against them.
export function ReportButton({ kind, id }) {
  const [state, setState] = useState({});
  const save = async () => {
    setState({ busy: true });
    try {
      setState({ saved: await api.download(api.reportPath(kind, id), id + ".pdf") });
    } catch (err) {
      setState({ error: err });
    }
  };
  const { busy, saved, error } = state;
  return html`<div class="report-download">
    <button type="button" class="secondary report-button" disabled=${busy} onClick=${save}>
      ${busy ? "Preparing the PDF…" : "PDF report"}</button>
    ${saved && html`<span class="muted report-saved" role="status">Saved ${id}.pdf: SHA-256${" "}<code
      class="report-sha256">${saved.sha256}</code>, recorded in ledger entry${" "}<a class="report-ledger-index"
      href=${"#/ledger/" + saved.ledgerIndex}>${saved.ledgerIndex}</a></span>`}
    ${error && html`<span class="console-error" role="alert">The report could not be made: ${error.message}</span>`}
  </div>`;
}
