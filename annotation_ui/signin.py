"""Signing in to the UI: password checks, throttled per name after repeated failures
(``curation.sign_in_throttle``) and recorded as events, and a signed session token (kept in a cookie) so that a
reload or a deep link keeps the person signed in.

The token is ``base64(name|expiry|password-fingerprint|session-id).hmac``, signed with a secret kept in the
workspace folder (created on first use, readable by its owner only). The session id names a row of
``sign_in_session``: signing out ends it on the server, so a copied cookie stops working; changing the
password and the expiry end every session too.

An unknown name and a wrong password get the same words after the same work (an unknown name's password is
checked against a dummy hash made with the same parameters), and the same throttle: neither the answer, its
time, nor the throttle tells which names exist.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from curation.errors import NotFoundError, PermissionDenied
from curation.reservations import release_in
from curation.sign_in_throttle import begin_attempt, end_attempt
from curation.tables import Person, utcnow
from curation.work_tables import SignInSession
from curation.workspace import Workspace, check_password, dummy_password_hash, record_event

from .logic import SignedIn

COOKIE = "omnicurate_session"
SECRET_FILE = ".ui-session-key"
SESSION_HOURS = 12
SIGNED_IN, FAILED, SIGNED_OUT = "ui.sign_in", "ui.sign_in_failed", "ui.sign_out"
REFUSED = "wrong name or password"
"""The same words for an unknown name and a wrong password: the page never tells which names exist."""


def _subject(name: str) -> str:
    return f"person:{name[:150]}"


dummy_password_hash()  # made now, when the app loads: not during the first attempt on an unknown name


def sign_in(
    ws: Workspace, name: str, password: str, *, clock: Callable[[], datetime] = utcnow, via: str = "password"
) -> SignedIn:
    """Check a name and password; a failure is recorded and holds later attempts on that name off for longer.

    An attempt on a name whose delay has not passed is refused at once (``curation.sign_in_throttle.Throttled``,
    naming the seconds to wait), its password unchecked and nothing recorded."""
    name = name.strip()
    attempt = begin_attempt(ws, name, clock())
    with ws.session() as s:
        person = s.get(Person, name)
    ok = check_password(password, person.password_hash if person is not None else None)
    with ws.writing() as s:
        end_attempt(s, attempt, ok, clock())
        record_event(s, name[:150] or "?", SIGNED_IN if ok else FAILED, _subject(name), None, {"via": via})
    if not ok or person is None:
        raise PermissionDenied(REFUSED)
    return SignedIn(person.name, frozenset(person.role_set))


def record_sign_in(ws: Workspace, user: SignedIn, via: str) -> None:
    """Record a sign-in that did not go through a password (a provider, a restored session)."""
    with ws.writing() as s:
        record_event(s, user.name, SIGNED_IN, _subject(user.name), None, {"via": via})


def _secret(ws: Workspace) -> bytes:
    path = Path(ws.root) / SECRET_FILE
    try:
        return path.read_bytes()
    except FileNotFoundError:
        key = os.urandom(32)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(key)
        return key
    except OSError as exc:
        raise NotFoundError(f"cannot read the UI's session key {path}: {exc.strerror}") from exc


def _fingerprint(person: Person) -> str:
    return hashlib.sha256((person.password_hash or "").encode()).hexdigest()[:16]


def _mac(ws: Workspace, payload: bytes) -> str:
    return hmac.new(_secret(ws), payload, hashlib.sha256).hexdigest()


def issue_token(ws: Workspace, name: str, hours: float = SESSION_HOURS) -> str:
    """A new session for NAME (a row that a sign-out ends) and its signed token."""
    with ws.session() as s:
        person = s.get(Person, name)
    if person is None:
        raise NotFoundError(f"no person named {name!r}")
    expiry = int(time.time() + hours * 3600)
    session_id = secrets.token_hex(16)
    with ws.writing() as s:
        s.add(SignInSession(id=session_id, person=name, expires_at=datetime.fromtimestamp(expiry, UTC)))
    payload = f"{name}|{expiry}|{_fingerprint(person)}|{session_id}".encode()
    return base64.urlsafe_b64encode(payload).decode().rstrip("=") + "." + _mac(ws, payload)


def _session_id(ws: Workspace, token: str | None) -> tuple[str, str] | None:
    """(person, session id) of a token whose signature holds and which has not expired; else None."""
    if not token or "." not in token:
        return None
    encoded, mac = token.rsplit(".", 1)
    try:
        payload = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))
        name, expiry_text, fingerprint, session_id = payload.decode().split("|")
        expiry = int(expiry_text)
    except ValueError:
        return None  # forged, truncated, or made before sessions were kept on the server
    if not hmac.compare_digest(mac, _mac(ws, payload)) or expiry < time.time():
        return None
    with ws.session() as s:
        person = s.get(Person, name)
    if person is None or not hmac.compare_digest(fingerprint, _fingerprint(person)):
        return None  # the password changed since: every session of the person ended
    return name, session_id


def verify_token(ws: Workspace, token: str | None) -> SignedIn | None:
    """The person a token signs in, or None when it is missing, forged, expired, outdated or signed out."""
    found = _session_id(ws, token)
    if found is None:
        return None
    name, session_id = found
    with ws.session() as s:
        row = s.get(SignInSession, session_id)
        person = s.get(Person, name)
        if row is None or row.person != name or row.ended_at is not None or person is None:
            return None
        return SignedIn(person.name, frozenset(person.role_set))


def end_session(ws: Workspace, token: str | None, why: str = "signed out") -> None:
    """End the session a token names on the server (a sign-out): the token, wherever copied, signs nobody in,
    and the queue entries the person held are released."""
    found = _session_id(ws, token)
    if found is None:
        return
    name, session_id = found
    with ws.writing() as s:
        row = s.get(SignInSession, session_id)
        if row is not None and row.ended_at is None:
            row.ended_at, row.ended_why = utcnow(), why
            s.add(row)
            record_event(s, name, SIGNED_OUT, _subject(name), None, {"why": why})
        release_in(s, name)  # a sign-out hands back every entry the person held
