"""The annotation UI's one entrypoint: routes every page with ``st.navigation``, per the person's roles and the
kinds the workspace holds.

Started by ``curate ui``; the workspace comes from ``$CURATE_WORKSPACE``.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import streamlit as st

from annotation_ui.components import current_user, guarded, workspace, write_session_cookie
from annotation_ui.judge_ui import JUDGE_PAGES, judge_pages_for
from annotation_ui.logic import SIGN_IN, PageSpec, every_page, pages_for
from curation.kinds import kinds_present

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


def sign_in_here() -> None:
    """The sign-in page, run at the address of another page: after signing in, the rerun opens that page."""
    runpy.run_path(str(HERE / SIGN_IN.path), run_name="__main__")


def page(spec: PageSpec) -> st.Page:
    return st.Page(HERE / spec.path, title=spec.title, icon=spec.icon)


st.set_page_config(page_title="omnicurate", page_icon=page_icon(), layout="wide")
user = current_user()
if user is None:  # every address of the app leads to the sign-in form, and stays the address (a deep link)
    deep_links = [
        st.Page(sign_in_here, title=spec.title, url_path=Path(spec.path).stem) for spec in every_page() + JUDGE_PAGES
    ]
    navigation = st.navigation([page(SIGN_IN), *deep_links], position="hidden")
else:
    present = kinds_present(workspace())
    sections = pages_for(user, present)
    account = sections.pop("Account")
    sections.update(judge_pages_for(user, present))
    sections["Account"] = account
    navigation = st.navigation({section: [page(spec) for spec in specs] for section, specs in sections.items()})
with st.sidebar:
    write_session_cookie()
    if user is not None:
        st.caption(f"Signed in as **{user.name}** ({', '.join(sorted(user.roles))})")
        if "maintainer" in user.roles:  # the server's folders are the maintainers' business only
            st.caption(f"Workspace: `{workspace().root}`")
with guarded(f"page {navigation.title}"):
    navigation.run()
