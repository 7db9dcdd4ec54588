"""Sign in with a name and password, or through an OIDC provider when secrets.toml configures one."""

from __future__ import annotations

import streamlit as st

from annotation_ui.components import USER_KEY, current_user, show_error, workspace
from annotation_ui.logic import oidc_providers, sign_in, sign_in_by_email
from curation.errors import CurateError

ws = workspace()
user = current_user()
providers = oidc_providers(st.secrets)

if providers and user is None and st.user.is_logged_in and st.user.get("email"):
    try:
        st.session_state[USER_KEY] = sign_in_by_email(ws, str(st.user.get("email")))
        st.rerun()
    except CurateError as exc:
        show_error(exc)

st.title("omnicurate")
if user is not None:
    st.write(f"You are signed in as **{user.name}** ({', '.join(sorted(user.roles))}). Pick a page on the left.")
    if st.button("Sign out", icon=":material/logout:"):
        del st.session_state[USER_KEY]
        if providers and st.user.is_logged_in:
            st.logout()
        st.rerun()
    st.stop()

st.write("Author, review and curate omni-modal (text + image + audio) benchmark items.")
with st.form("sign-in"):
    names = [p.name for p in ws.people()]
    name = st.selectbox("Your name", names, index=None, placeholder="Pick your name", key="sign-in-name")
    password = st.text_input("Password", type="password", key="sign-in-password")
    submitted = st.form_submit_button("Sign in", type="primary")
if submitted:
    if not name:
        st.error("Pick your name first.")
    else:
        try:
            st.session_state[USER_KEY] = sign_in(ws, name, password)
            st.rerun()
        except CurateError as exc:
            show_error(exc)
st.caption("No password yet? A maintainer sets one with `curate people passwd NAME`.")
for provider in providers:
    label = f"Sign in with {provider}" if provider else "Sign in with your organisation's provider"
    if st.button(label, icon=":material/key:", key=f"oidc-{provider}"):
        st.login(provider)
