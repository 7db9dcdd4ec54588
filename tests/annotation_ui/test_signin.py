"""Signing in to the UI: the same refusal for unknown names, slower retries after failures, events, and the
signed session token (on SQLite and PostgreSQL)."""

from __future__ import annotations

import base64

import pytest
from sqlalchemy import select
from ui_helpers import PASSWORD

from annotation_ui.logic import SignedIn
from annotation_ui.signin import (
    FAILED,
    SECRET_FILE,
    SIGNED_IN,
    failure_delay,
    issue_token,
    recent_failures,
    sign_in,
    verify_token,
)
from curation.errors import PermissionDenied
from curation.tables import Event


def events(ws, action: str) -> list[Event]:
    with ws.session() as s:
        return list(s.execute(select(Event).where(Event.action == action).order_by(Event.id)).scalars())


@pytest.mark.parametrize(("failures", "delay"), [(0, 0), (2, 0), (3, 1), (4, 2), (6, 8), (9, 30), (50, 30)])
def test_failure_delay_grows_then_stops_at_a_ceiling(failures, delay):
    assert failure_delay(failures) == delay


@pytest.mark.parametrize(
    ("name", "password"), [("rev1", "not-the-password"), ("nobody-here", PASSWORD), ("", PASSWORD)]
)
def test_unknown_names_and_wrong_passwords_get_the_same_answer_and_are_recorded(ui_workspace, name, password):
    with pytest.raises(PermissionDenied) as refused:
        sign_in(ui_workspace, name, password, sleep=lambda _s: None)
    assert str(refused.value) == "wrong name or password"
    (failed,) = events(ui_workspace, FAILED)
    assert failed.subject == f"person:{name}" and failed.after == {"via": "password"}


def test_repeated_failures_slow_down_and_a_success_resets(ui_workspace):
    waited: list[float] = []
    for _ in range(5):
        with pytest.raises(PermissionDenied):
            sign_in(ui_workspace, "rev1", "wrong-password", sleep=waited.append)
    assert waited == [0, 0, 0, 1, 2]
    assert recent_failures(ui_workspace, "rev2") == 0  # per name
    assert sign_in(ui_workspace, "rev1", PASSWORD, sleep=waited.append) == SignedIn("rev1", frozenset({"reviewer"}))
    assert waited[-1] == 4 and recent_failures(ui_workspace, "rev1") == 0
    assert [e.subject for e in events(ui_workspace, SIGNED_IN)] == ["person:rev1"]


def test_a_session_token_round_trips_and_refuses_tampering(ui_workspace):
    token = issue_token(ui_workspace, "rev2")
    assert verify_token(ui_workspace, token) == SignedIn("rev2", frozenset({"reviewer"}))
    assert (ui_workspace.root / SECRET_FILE).stat().st_mode & 0o077 == 0  # the key is its owner's only
    encoded, mac = token.rsplit(".", 1)
    payload = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
    forged = base64.urlsafe_b64encode(payload.replace("rev2", "maya").encode()).decode().rstrip("=")
    for bad in (None, "", "garbage", f"{forged}.{mac}", token[:-1] + ("0" if token[-1] != "0" else "1")):
        assert verify_token(ui_workspace, bad) is None
    assert verify_token(ui_workspace, issue_token(ui_workspace, "rev2", hours=-1)) is None  # expired
    ui_workspace.set_password("rev2", "a-new-password-9")
    assert verify_token(ui_workspace, token) is None  # a new password ends every session


def test_signing_out_ends_the_session_on_the_server(ui_workspace):
    from annotation_ui.signin import SIGNED_OUT, end_session

    token = issue_token(ui_workspace, "rev1")
    other = issue_token(ui_workspace, "rev1")  # the same person in another browser
    copied = str(token)
    end_session(ui_workspace, token)
    assert verify_token(ui_workspace, copied) is None  # a copied cookie stops working
    assert verify_token(ui_workspace, other) == SignedIn("rev1", frozenset({"reviewer"}))  # only that session ended
    (ended,) = events(ui_workspace, SIGNED_OUT)
    assert (ended.actor, ended.after) == ("rev1", {"why": "signed out"})
    end_session(ui_workspace, token)  # twice: nothing more happens
    assert len(events(ui_workspace, SIGNED_OUT)) == 1


def test_a_token_without_a_server_session_signs_nobody_in(ui_workspace):
    """A token signed with the workspace's key but naming no stored session (or the older three-part token)."""
    from annotation_ui.signin import _mac

    token = issue_token(ui_workspace, "rev1")
    encoded, _ = token.rsplit(".", 1)
    payload = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
    name, expiry, fingerprint, _session = payload.split("|")
    for forged in (f"{name}|{expiry}|{fingerprint}|{'0' * 32}", f"{name}|{expiry}|{fingerprint}"):
        body = base64.urlsafe_b64encode(forged.encode()).decode().rstrip("=")
        assert verify_token(ui_workspace, f"{body}.{_mac(ui_workspace, forged.encode())}") is None
