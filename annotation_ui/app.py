"""The annotation UI's one entrypoint: routes every page with ``st.navigation``, per the person's roles and the
kinds the workspace holds.

Started by ``curate ui``; the workspace comes from ``$CURATE_WORKSPACE``.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import streamlit as st

from annotation_ui.browser_preload import preload_dashboard_code
from annotation_ui.components import current_user, guarded, workspace, write_session_cookie
from annotation_ui.judge_ui import JUDGE_PAGES, judge_pages_for
from annotation_ui.logic import PAGES_BY_ROLE, SIGN_IN, PageSpec, SignedIn, closed_page_note, every_page, pages_for
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


def roles_of(spec: PageSpec) -> tuple[str, ...]:
    """Who may open a page: its role in PAGES_BY_ROLE; review pages are reviewers'; judge pages are reviewers'
    and maintainers'."""
    if spec in JUDGE_PAGES:
        return ("reviewer", "maintainer")
    return (next((role for role, specs in PAGES_BY_ROLE.items() if spec in specs), "reviewer"),)


def closed_pages(user: SignedIn, shown: list[PageSpec], present: list[str]) -> list[st.Page]:
    """Every other page at its own address, hidden from the menu: opened by its address, it says why it is not
    this person's page (instead of Streamlit's bare "Page not found")."""
    open_paths = {spec.path for spec in shown}
    closed: dict[str, PageSpec] = {}
    for spec in every_page() + JUDGE_PAGES:
        if spec.path not in open_paths:
            closed.setdefault(spec.path, spec)

    def explain(spec: PageSpec) -> st.Page:
        def body() -> None:
            st.title(spec.title)
            st.warning(closed_page_note(spec, roles_of(spec), user, present), icon=":material/block:")

        return st.Page(body, title=spec.title, url_path=Path(spec.path).stem, visibility="hidden")

    return [explain(spec) for spec in closed.values()]


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
    menu = {section: [page(spec) for spec in specs] for section, specs in sections.items()}
    menu["Account"] += closed_pages(user, [spec for specs in sections.values() for spec in specs], sorted(present))
    navigation = st.navigation(menu)
with st.sidebar:
    write_session_cookie()
    if user is not None:
        st.caption(f"Signed in as **{user.name}** ({', '.join(sorted(user.roles))})")
        if "maintainer" in user.roles:  # the server's folders are the maintainers' business only
            st.caption(f"Workspace: `{workspace().root}`")
            preload_dashboard_code()
with guarded(f"page {navigation.title}"):
    navigation.run()
