"""Sign in with a name and password, or through an OIDC provider when secrets.toml configures one.

The page never lists who has an account; a wrong name and a wrong password get the same answer after the same
work, repeated failures on a name hold its next attempt off longer each time (an earlier attempt is told how
long to wait, its password unchecked), and every attempt checked is an event.
"""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import current_user, remember, show_error, sign_out, workspace
from annotation_ui.logic import oidc_providers, sign_in_by_email
from annotation_ui.signin import record_sign_in, sign_in
from curation.errors import CurateError

ws = workspace()
user = current_user()
providers = oidc_providers(st.secrets)

if providers and user is None and st.user.is_logged_in and st.user.get("email"):
    try:
        person = sign_in_by_email(ws, str(st.user.get("email")))
        record_sign_in(ws, person, via="oidc")
        remember(person)
        st.rerun()
    except CurateError as exc:
        show_error(exc)

st.title("omnicurate")
if user is not None:
    st.write(f"You are signed in as **{user.name}** ({', '.join(sorted(user.roles))}). Pick a page on the left.")
    if st.button("Sign out", icon=":material/logout:"):
        sign_out()
        if providers and st.user.is_logged_in:
            st.logout()
        st.rerun()
    st.stop()

st.write("Author, review and curate omni-modal (text + image + audio) benchmark items.")
with st.form("sign-in"):
    name = st.text_input("Your name", key="sign-in-name", autocomplete="username")
    password = st.text_input("Password", type="password", key="sign-in-password", autocomplete="current-password")
    submitted = st.form_submit_button("Sign in", type="primary")
if submitted:
    if not name.strip():
        st.error("Type your name first.")
    else:
        try:
            with st.spinner("Checking…"):
                remember(sign_in(ws, name, password))
            st.rerun()
        except CurateError as exc:
            show_error(exc)
st.caption("No password yet? A maintainer sets one with `curate people passwd NAME`.")
for provider in providers:
    label = f"Sign in with {provider}" if provider else "Sign in with your organisation's provider"
    if st.button(label, icon=":material/key:", key=f"oidc-{provider}"):
        st.login(provider)
