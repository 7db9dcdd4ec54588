"""Signing in to the UI: the same refusal after the same work for unknown names, a throttle per name that
holds under concurrency, events, and the signed session token (on SQLite and PostgreSQL)."""

from __future__ import annotations

import base64
import hashlib
import statistics
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from sqlalchemy import select
from ui_helpers import PASSWORD

import curation.sign_in_throttle as throttle
import curation.workspace as workspace_module
from annotation_ui.logic import SignedIn
from annotation_ui.signin import FAILED, SECRET_FILE, SIGNED_IN, issue_token, sign_in, verify_token
from curation.errors import PermissionDenied
from curation.sign_in_throttle import Throttled, failure_delay, recent_failures
from curation.tables import Event, utcnow

REFUSED = "wrong name or password"


class Clock:
    """A clock that moves only when told."""

    def __init__(self) -> None:
        self.now = utcnow()

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def events(ws, action: str) -> list[Event]:
    with ws.session() as s:
        return list(s.execute(select(Event).where(Event.action == action).order_by(Event.id)).scalars())


@pytest.fixture
def people(workspace):
    """A workspace with rev1 (who has a password) and nothing else: cheaper than ``ui_workspace``."""
    workspace.add_person("rev1", ["reviewer"])
    workspace.set_password("rev1", PASSWORD)
    return workspace


@pytest.mark.parametrize(("failures", "delay"), [(0, 0), (2, 0), (3, 1), (4, 2), (6, 8), (9, 30), (50, 30)])
def test_failure_delay_grows_then_stops_at_a_ceiling(failures, delay):
    assert failure_delay(failures) == delay


@pytest.mark.parametrize(
    ("name", "password"), [("rev1", "not-the-password"), ("nobody-here", PASSWORD), ("", PASSWORD)]
)
def test_unknown_names_and_wrong_passwords_get_the_same_answer_and_are_recorded(people, name, password):
    with pytest.raises(PermissionDenied) as refused:
        sign_in(people, name, password)
    assert str(refused.value) == REFUSED
    (failed,) = events(people, FAILED)
    assert failed.subject == f"person:{name}" and failed.after == {"via": "password"}


def waits_after_failures(ws, name: str, clock: Clock, failures: int) -> list[float]:
    """Fail NAME's password FAILURES times, each as soon as the throttle lets it through: the waits it named."""
    waited: list[float] = []
    for _ in range(failures):
        try:
            sign_in(ws, name, "wrong-password", clock=clock)
        except Throttled as early:
            waited.append(early.wait_s)
            clock.advance(early.wait_s)
            with pytest.raises(PermissionDenied, match=REFUSED):
                sign_in(ws, name, "wrong-password", clock=clock)
        except PermissionDenied as refused:
            assert str(refused) == REFUSED
            waited.append(0)
    return waited


def test_repeated_failures_hold_the_next_attempt_off_and_a_success_resets(people):
    clock = Clock()
    assert waits_after_failures(people, "rev1", clock, 5) == [0, 0, 0, 1, 2]
    assert recent_failures(people, "rev1", clock()) == 5
    assert recent_failures(people, "rev2", clock()) == 0  # per name
    clock.advance(3.5)  # the fifth failure holds the next attempt off for 4 s: even the right password waits
    with pytest.raises(Throttled, match="too many failed attempts on this name: wait 1 s and try again"):
        sign_in(people, "rev1", PASSWORD, clock=clock)
    clock.advance(0.5)
    assert sign_in(people, "rev1", PASSWORD, clock=clock) == SignedIn("rev1", frozenset({"reviewer"}))
    assert recent_failures(people, "rev1", clock()) == 0
    assert [e.subject for e in events(people, SIGNED_IN)] == ["person:rev1"]
    assert len(events(people, FAILED)) == 5  # a refusal by the throttle is not recorded


def test_failures_are_forgotten_after_the_window(people):
    clock = Clock()
    waits_after_failures(people, "rev1", clock, 6)
    clock.advance(throttle.WINDOW.total_seconds() + 1)
    assert recent_failures(people, "rev1", clock()) == 0
    assert waits_after_failures(people, "rev1", clock, 4) == [0, 0, 0, 1]


def test_an_unknown_name_is_throttled_as_a_known_one(people):
    clock = Clock()
    assert waits_after_failures(people, "nobody-here", clock, 7) == waits_after_failures(people, "rev1", clock, 7)
    assert recent_failures(people, "nobody-here", clock()) == recent_failures(people, "rev1", clock())


def test_a_throttled_attempt_is_refused_without_checking_its_password(people, monkeypatch):
    clock = Clock()
    waits_after_failures(people, "rev1", clock, 4)
    checked: list[str] = []
    monkeypatch.setattr(workspace_module, "verify_password", lambda password, _stored: checked.append(password))
    with pytest.raises(Throttled) as early:
        sign_in(people, "rev1", PASSWORD, clock=clock)
    assert early.value.wait_s == 2 and checked == []


@pytest.fixture
def scrypt_calls(monkeypatch) -> list[tuple[int, int, int]]:
    """The (n, r, p) of every scrypt the sign-in computes."""
    calls: list[tuple[int, int, int]] = []
    real = hashlib.scrypt

    def scrypt(password: bytes, *, salt: bytes, n: int, r: int, p: int, **kw) -> bytes:
        calls.append((n, r, p))
        return real(password, salt=salt, n=n, r=r, p=p, **kw)

    monkeypatch.setattr(hashlib, "scrypt", scrypt)
    return calls


def test_an_unknown_name_costs_the_same_password_check_as_a_wrong_password(people, scrypt_calls):
    """One scrypt with the stored hashes' parameters, whether the name is a person's, with a password or
    without, or nobody's: the time a refusal takes does not tell which names exist."""
    people.add_person("no-password-yet", ["reviewer"])
    for name in ("rev1", "nobody-here", "no-password-yet", ""):
        scrypt_calls.clear()
        with pytest.raises(PermissionDenied, match=REFUSED):
            sign_in(people, name, "not-the-password")
        assert scrypt_calls == [(2**14, 8, 1)], name


def test_an_unknown_name_is_refused_in_about_the_time_of_a_wrong_password(people):
    """The medians of interleaved tries within 1.5x of each other, in this thread's CPU time (the work done, which
    other load on the machine does not stretch: wall-clock medians once missed 1.5x in a full parallel run);
    before the dummy hash an unknown name was refused ~25x sooner."""
    ticks = iter(range(10**6))

    def clock() -> datetime:  # every attempt an hour after the last: the throttle never waits here
        return utcnow() + timedelta(hours=next(ticks))

    def refused_in(name: str) -> float:
        start = time.thread_time()
        with pytest.raises(PermissionDenied, match=REFUSED):
            sign_in(people, name, "not-the-password", clock=clock)
        return time.thread_time() - start

    known, unknown = [], []
    for _ in range(7):
        known.append(refused_in("rev1"))
        unknown.append(refused_in("nobody-here"))
    ratio = statistics.median(known) / statistics.median(unknown)
    assert 1 / 1.5 < ratio < 1.5, (known, unknown)


PARALLEL, DELAY_S = 8, 0.08


def small_delay(failures: int) -> float:
    return 0.0 if failures < throttle.FREE_FAILURES else DELAY_S


def answered(ws, name: str, password: str, clock: Callable[[], datetime] = utcnow) -> str:
    """Try until the throttle lets the attempt through, waiting as long as each refusal says: the answer."""
    while True:
        try:
            sign_in(ws, name, password, clock=clock)
            return "signed in"
        except Throttled as early:
            time.sleep(early.wait_s)
        except PermissionDenied as refused:
            return str(refused)


@pytest.mark.parametrize("name", ["rev1", "nobody-here"])
def test_parallel_attempts_on_a_throttled_name_are_checked_as_far_apart_as_sequential_ones(people, monkeypatch, name):
    """After 7 failures, 8 threads try the name at once (each retrying when told to wait): the password checks
    come one at a time, each at least the delay after the failure before it, as 8 sequential attempts would."""
    monkeypatch.setattr(throttle, "failure_delay", small_delay)
    for _ in range(7):
        assert answered(people, name, "wrong-password") == REFUSED
    checks: list[tuple[float, float]] = []
    real = workspace_module.verify_password

    def verify(password: str, stored: str) -> bool:
        start = time.time()
        ok = real(password, stored)
        checks.append((start, time.time()))
        return ok

    monkeypatch.setattr(workspace_module, "verify_password", verify)
    answers: list[str] = []
    go = threading.Barrier(PARALLEL)

    def attempt() -> None:
        go.wait()
        answers.append(answered(people, name, "wrong-password"))

    threads = [threading.Thread(target=attempt) for _ in range(PARALLEL)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert answers == [REFUSED] * PARALLEL
    checks.sort()
    assert len(checks) == PARALLEL
    gaps = [later[0] - earlier[1] for earlier, later in zip(checks, checks[1:], strict=False)]
    assert min(gaps) >= DELAY_S - 0.01, gaps  # one at a time, each the delay after the one before
    assert checks[-1][1] - checks[0][0] >= (PARALLEL - 1) * DELAY_S
    assert recent_failures(people, name, utcnow()) == 7 + PARALLEL


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
