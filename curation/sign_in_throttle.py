"""The throttle on failed password sign-ins, per typed name, known or not: like the refusal's words and the work
behind them (``annotation_ui.signin``), it never tells which names exist.

After ``FREE_FAILURES`` recent failures on a name, the next attempt on it is not checked before a delay has
passed since the last failure (1 s, then 2, 4, ... up to ``MAX_DELAY_S``). An attempt that comes earlier is
refused at once, without checking its password, with the seconds left to wait (:class:`Throttled`): it costs
the server no password check and holds no thread asleep, and it neither counts as a failure nor extends the
wait. Unknown names are throttled exactly as known ones.

The throttle is held in the store (table ``sign_in_throttle``), under the write lock with the name's row locked
(``SELECT ... FOR UPDATE`` on PostgreSQL, the ``BEGIN IMMEDIATE`` transaction on SQLite), so that it holds across
threads and app processes. An attempt let through counts as a failure, in the transaction that lets it through,
until it is known to have succeeded; once that count earns a delay, no other attempt on the name is let through
while it is being checked, and the next one only the delay after it ended. Of N parallel attempts on a throttled
name one is checked and the others are told to wait: the checks that N attempts get are spaced as N sequential
attempts' are. (The password check runs outside the lock: the write lock is the workspace's, and a check takes
tens of milliseconds.)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from math import ceil

from sqlalchemy import delete, select
from sqlmodel import Session, col

from .errors import PermissionDenied
from .work_tables import SignInThrottle
from .workspace import Workspace

FREE_FAILURES = 3
"""Failures in the window before each further attempt is held off."""
WINDOW = timedelta(minutes=15)
"""A name's failures are forgotten this long after its last attempt (and at its next success)."""
MAX_DELAY_S = 30.0
CHECK_HOLD = timedelta(seconds=10)
"""The longest an attempt let through under the throttle holds the name's next attempts off while its password
is checked, should its process die before it ends (a check takes well under a second)."""
KEY_LENGTH = 200
"""Names are compared on their first 200 characters (a person's name is at most that long)."""


def failure_delay(failures: int) -> float:
    """Seconds the next attempt waits after ``failures`` recent failures: 0, then 1, 2, 4, ... 30."""
    if failures < FREE_FAILURES:
        return 0.0
    return min(MAX_DELAY_S, 2.0 ** (failures - FREE_FAILURES))


class Throttled(PermissionDenied):
    """An attempt on a name that came before the name's delay had passed; its password was not checked."""

    def __init__(self, wait_s: float) -> None:
        self.wait_s = wait_s
        super().__init__(f"too many failed attempts on this name: wait {max(1, ceil(wait_s))} s and try again")


@dataclass(frozen=True)
class Attempt:
    """An attempt let through: the name's row, the count of failures it makes if it fails, and whether other
    attempts on the name wait for it to end."""

    name: str
    failures: int
    holds: bool


def _aware(at: datetime) -> datetime:
    """SQLite gives back naive datetimes (stored as UTC)."""
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _key(name: str) -> str:
    return name[:KEY_LENGTH]


def _wait(row: SignInThrottle | None, now: datetime) -> float:
    """Seconds before the next attempt on the row's name may be checked (while an attempt is being checked, at
    least the delay that will follow it)."""
    if row is None or _aware(row.last_at) < now - WINDOW:
        return 0.0
    wait = (_aware(row.next_at) - now).total_seconds()
    if row.checking_until is not None and _aware(row.checking_until) > now:
        wait = max(wait, failure_delay(row.failures))
    return max(0.0, wait)


def begin_attempt(ws: Workspace, name: str, now: datetime) -> Attempt:
    """Let an attempt on NAME through, counted as a failure until :func:`end_attempt` says otherwise; or refuse
    it (:class:`Throttled`) while the name's delay runs. A first look without the write lock refuses an attempt
    that is plainly early (a burst of them does not queue up on the lock); the decision is taken with the
    name's row locked."""
    key = _key(name)
    with ws.session() as s:
        early = _wait(s.get(SignInThrottle, key), now)
    if early > 0:
        raise Throttled(early)
    with ws.writing() as s:
        s.execute(delete(SignInThrottle).where(col(SignInThrottle.last_at) < now - WINDOW))
        row = s.scalars(select(SignInThrottle).where(col(SignInThrottle.name) == key).with_for_update()).first()
        wait = _wait(row, now)
        if wait > 0:
            raise Throttled(wait)
        if row is None:
            row = SignInThrottle(name=key, failures=0, next_at=now, last_at=now)
        row.failures += 1
        row.last_at = now
        delay = failure_delay(row.failures)
        row.next_at = now + timedelta(seconds=delay)
        row.checking_until = now + CHECK_HOLD if delay > 0 else None
        s.add(row)
        return Attempt(key, row.failures, holds=delay > 0)


def end_attempt(s: Session, attempt: Attempt, ok: bool, now: datetime) -> None:
    """Settle an attempt, in the caller's write transaction: a success forgets the name's failures; a failure
    holds the next attempt off until its delay has passed from now (the end of the check), and an attempt that
    held the others off while it was checked lets them go."""
    row = s.get(SignInThrottle, attempt.name, with_for_update=True)
    if ok:
        if row is not None:
            s.delete(row)
        return
    if row is None:  # forgotten meanwhile (a success on the name): this failure starts a new count
        delay = timedelta(seconds=failure_delay(1))
        row = SignInThrottle(name=attempt.name, failures=1, next_at=now + delay, last_at=now)
    else:
        row.next_at = max(_aware(row.next_at), now + timedelta(seconds=failure_delay(attempt.failures)))
        if attempt.holds:
            row.checking_until = None
        row.last_at = max(_aware(row.last_at), now)
    s.add(row)


def recent_failures(ws: Workspace, name: str, now: datetime) -> int:
    """Failures on NAME in the window since its last successful password sign-in (attempts being checked now
    count as failures until they end)."""
    with ws.session() as s:
        row = s.get(SignInThrottle, _key(name))
    if row is None or _aware(row.last_at) < now - WINDOW:
        return 0
    return row.failures
