"""The annotation UI's one entrypoint: routes every page with ``st.navigation``, per the person's roles.

Started by ``curate ui``; the workspace comes from ``$CURATE_WORKSPACE``.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from annotation_ui.components import current_user, workspace
from annotation_ui.judge_ui import judge_pages_for
from annotation_ui.logic import pages_for

HERE = Path(__file__).parent

st.set_page_config(page_title="omnicurate", page_icon=":material/library_add_check:", layout="wide")
user = current_user()
sections = pages_for(user)
account = sections.pop("Account", None)
sections.update(judge_pages_for(user))
if account is not None:
    sections["Account"] = account
navigation = st.navigation(
    {
        section: [st.Page(HERE / spec.path, title=spec.title, icon=spec.icon) for spec in specs]
        for section, specs in sections.items()
    }
)
with st.sidebar:
    st.caption(f"Workspace: `{workspace().root}`")
    if user is not None:
        st.caption(f"Signed in as **{user.name}** ({', '.join(sorted(user.roles))})")
navigation.run()
