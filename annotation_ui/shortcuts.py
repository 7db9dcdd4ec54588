"""Keyboard shortcuts of the high-volume pages.

Buttons take Streamlit's own ``shortcut=`` (Streamlit shows the key on the button and ignores it while a text
box has the focus). Checkboxes and radios have no such option, so :func:`number_keys` adds one small script:
the keys 1–9 tick the page's n-th checkbox, or choose the n-th option of one radio, by clicking its input as a person
would (the widget then reports its change the usual way). The script acts only while its marker is on the page,
ignores keys typed into a text box and keys with Ctrl, Alt or Cmd, and loads nothing from anywhere.
"""

from __future__ import annotations

import json

import streamlit as st

PREVIOUS, NEXT, SUBMIT = "P", "N", "Ctrl+Enter"
"""The letters avoid C and R (Streamlit's own) and the arrows (they move between a radio's options)."""

_SCRIPT = """<span data-omni-keys="%(scope)s" hidden></span><script>
(() => {
  const keys = (window.__omniKeys = window.__omniKeys || {});
  keys[%(scope_js)s] = %(spec)s;
  if (window.__omniKeysInstalled) return;
  window.__omniKeysInstalled = true;
  document.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
    const target = event.target;
    const typing = target && (target.isContentEditable || target.tagName === "TEXTAREA" || target.tagName === "SELECT"
      || (target.tagName === "INPUT" && !["checkbox", "radio"].includes(target.type)));
    const n = Number(event.key);
    if (typing || !Number.isInteger(n) || n < 1 || n > 9) return;
    for (const [scope, spec] of Object.entries(keys)) {
      if (!document.querySelector(`[data-omni-keys="${scope}"]`)) continue;
      let inputs = [];
      if (spec.kind === "checkbox") {
        inputs = document.querySelectorAll('[data-testid="stMain"] [data-testid="stCheckbox"] input[type="checkbox"]');
      } else {
        const radio = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stRadio"]')].find((w) =>
          (w.querySelector('[data-testid="stWidgetLabel"]')?.textContent || "").trim().startsWith(spec.label));
        inputs = radio ? radio.querySelectorAll('input[type="radio"]') : [];
      }
      const input = inputs[n - 1];
      if (input) {
        input.click();  // the input itself: its label's press handler would swallow a scripted click
        event.preventDefault();
      }
      return;
    }
  });
})();
</script>"""


def number_keys(scope: str, kind: str, label: str = "") -> None:
    """Keys 1–9 for this page: tick the n-th checkbox (``kind="checkbox"``) or choose the n-th option of the
    radio whose label starts with LABEL (``kind="radio"``). SCOPE names the page (letters and dashes)."""
    spec = json.dumps({"kind": kind, "label": label})
    st.html(_SCRIPT % {"scope": scope, "scope_js": json.dumps(scope), "spec": spec}, unsafe_allow_javascript=True)


def keys_help(*pairs: tuple[str, str]) -> None:
    """The page's shortcuts, said on the page: ("1–4", "tick an option"), ("P / N", "previous / next view")."""
    st.caption("Keyboard: " + " · ".join(f"{keys} {what}" for keys, what in pairs))
