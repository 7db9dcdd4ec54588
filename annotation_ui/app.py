"""The annotation UI's one entrypoint: routes every page with ``st.navigation``, per the person's roles.

Started by ``curate ui``; the workspace comes from ``$CURATE_WORKSPACE``.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from annotation_ui.components import current_user, workspace, write_session_cookie
from annotation_ui.judge_ui import judge_pages_for
from annotation_ui.logic import pages_for

HERE = Path(__file__).parent


@st.cache_resource(show_spinner=False)
def page_icon():  # type: ignore[no-untyped-def]
    """The tab icon, drawn here: a Material icon name would make the browser fetch it from Google's fonts
    server, and nothing in a page may be fetched from another machine."""
    from PIL import Image, ImageDraw

    icon = Image.new("RGBA", (32, 32), (0, 0, 0, 0))
    draw = ImageDraw.Draw(icon)
    draw.rounded_rectangle((1, 1, 30, 30), radius=6, fill=(255, 75, 75, 255))
    draw.line((8, 17, 14, 23, 24, 9), fill=(255, 255, 255, 255), width=4)
    return icon


st.set_page_config(page_title="omnicurate", page_icon=page_icon(), layout="wide")
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
    write_session_cookie()
    st.caption(f"Workspace: `{workspace().root}`")
    if user is not None:
        st.caption(f"Signed in as **{user.name}** ({', '.join(sorted(user.roles))})")
navigation.run()
