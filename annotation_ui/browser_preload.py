"""The dashboard's browser code, loaded while a maintainer is still on the page they signed in to.

Streamlit's browser app loads the code of a chart or table kind only when a page first shows one. On the
dashboard that is Plotly (4.7 MB of JavaScript) and the table grid (1.3 MB): in Chromium on 2 cores, reading
and running them was most of the dashboard's first render (2.0-2.9 s from the click, against 0.2 s on the
server). So, once per browser session of a maintainer, a script imports those modules in the background. It
imports them at the addresses Streamlit's own code imports them from, so the browser keeps one copy and the
dashboard later finds them loaded. Nothing is drawn, and nothing is fetched from another machine. When all
are loaded, the page's root element says so (``data-dashboard-code="loaded"``), for tests and benchmarks.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import streamlit as st

CHUNKS = ("PlotlyChart", "DataFrame", "Metric")
"""The browser modules the dashboard needs that no page before it loads (Streamlit's build names them NAME.HASH.js)."""
PRELOADED = "dashboard-code-preloaded"
"""Session key: this tab was already sent the preload script."""

_SCRIPT = """<script>
(() => {
  const entry = document.querySelector('script[type="module"][src*="/static/js/index."]');
  if (!entry) return;
  const loading = %s.map(name => import(new URL(name, entry.src).href));
  Promise.all(loading).then(() => { document.documentElement.dataset.dashboardCode = "loaded"; }, () => {});
})();
</script>"""


@cache
def chunk_files() -> tuple[str, ...]:
    """The file names of CHUNKS in this Streamlit's build (none if its layout is not the one expected: then
    nothing is preloaded and the dashboard loads them itself, as before)."""
    js = Path(st.__file__).parent / "static" / "static" / "js"
    found = []
    for name in CHUNKS:
        matches = sorted(p.name for p in js.glob(f"{name}.*.js"))
        if len(matches) == 1:
            found.append(matches[0])
    return tuple(found)


def preload_dashboard_code() -> None:
    """Send this tab the script that loads the dashboard's browser code, once per session."""
    if st.session_state.get(PRELOADED) or not chunk_files():
        return
    st.session_state[PRELOADED] = True
    st.html(_SCRIPT % json.dumps(list(chunk_files())), unsafe_allow_javascript=True)
