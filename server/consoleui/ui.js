// Small pieces the pages share: where the keyboard's focus goes around a
// question the page asks before a change.

import { useEffect, useRef } from "./standalone.module.js";

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
