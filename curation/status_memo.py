"""Statuses kept between runs of ``curate status`` and ``curate funnel``, group by group.

A group's statuses and staffing gaps depend only on what its own derivation reads (``split_derivation``): its
items' and records' rows, the decisions, gate results, former authors and exposures about its items and its
perturbed modality; and, for every group alike, the review settings, the gate mode, the reviewers and the code
that derives. A run must read the rows anyway to know what changed; it hashes each group's inputs as read and
derives only the groups whose hash is not the one kept, so a status after a few reviews costs the read, not
a derivation of 10,000 items.

The hash covers every value the derivation is given, as read, written by ``marshal`` version 2: it spells
each value with its type and marks neither shared objects nor interned strings (version 3 does both), so the
same values give the same bytes in every run and any changed value (``1`` for ``1.0`` too) changes them.
Rows the database hands over in no set order (records, decisions, gate results) are put in order first. The
code is covered by the size and change time of every module of this package and the Python version, so an
upgrade or an edit derives everything again.

The memo is one file in the workspace (``.cache/statuses.json``), written whole and swapped in, so a reader
never sees half of one. One that is missing, unreadable or of another format is ignored; one that cannot be
written is not written: the statuses are the same either way.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import uuid
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson

from .split_derivation import Derived, StatusRows, derive_statuses, merged
from .staffing import StaffingGap
from .workflow import ItemStatus

__all__ = ["MEMO_PATH", "memoized_statuses"]

MEMO_PATH = Path(".cache") / "statuses.json"
"""Where, under the workspace's folder, the memo lives."""

FORMAT = 1
"""The memo's layout; a memo of another is ignored."""


def memoized_statuses(ws) -> Derived:  # type: ignore[no-untyped-def]
    """``split_derivation.derive_statuses(ws)``: every item's status in id order and the staffing gaps, deriving
    only the groups whose inputs changed since the memo was written."""
    with ws.session() as session:
        rows = StatusRows.load(session)
    shared = _shared_key(ws, rows)
    path = ws.root / MEMO_PATH
    stored = _read(path, _hex(shared))
    if not stored:  # nothing to keep: derive every group, and hash them while a forked child derives its half
        hashed: list[tuple[dict[str, str], dict[str, list[str]]]] = []
        derived = derive_statuses(ws, rows, meanwhile=lambda: hashed.append(group_keys(rows, shared)))
        _write(path, _hex(shared), _entries(*derived, hashed[0][0]))
        return derived
    keys, members = group_keys(rows, shared)
    kept = {g: found for g, entry in stored.items() if (found := _kept(entry, keys.get(g), members.get(g)))}
    changed = keys.keys() - kept.keys()
    statuses: list[ItemStatus] = []
    gaps: dict[str, StaffingGap] = {}
    if changed:
        statuses, gaps = derive_statuses(ws, rows.of_groups(changed) if kept else rows)
    entries = {g: stored[g] for g in kept} | _entries(statuses, gaps, keys)
    for kept_statuses, kept_gaps in kept.values():
        statuses += kept_statuses
        gaps.update(kept_gaps)
    if entries.keys() != stored.keys() or changed:
        _write(path, _hex(shared), entries)
    return merged(rows, statuses, gaps)


def group_keys(rows: StatusRows, shared: bytes) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Group -> the hash of everything its derivation reads (``shared``: what every group's reads alike), and
    group -> its items' ids in id order."""
    inputs: dict[str, list[Any]] = defaultdict(list)
    members: dict[str, list[str]] = defaultdict(list)
    group_of: dict[str, str] = {}
    for row in rows.items:
        group_of[row[0]] = row[1]
        members[row[1]].append(row[0])
        inputs[row[1]].append(tuple(row))
    records = sorted(rows.records, key=itemgetter(0, -1))  # by subject, then id (read in no set order)
    for subject, of_subject in groupby(records, key=itemgetter(0)):
        if subject.startswith("item:"):
            group = group_of.get(subject[5:])
        elif subject.startswith("group:"):
            group = subject[6:]
        else:
            continue
        if group in inputs:
            inputs[group].extend(map(tuple, of_subject))
    rest = rows.rest
    about_items: dict[str, list[Any]] = defaultdict(list)
    for item, former in rows.former.items():
        about_items[item].append(("former", sorted(former)))
    for item, shown in (rest.shown or {}).items():
        about_items[item].append(("shown", sorted(shown)))
    for decision in sorted(rest.decisions, key=lambda d: d.id or 0):
        about_items[decision.item_id].append(("decision", _columns(decision)))
    for gate in sorted(rest.gates, key=lambda g: (g.item_id, g.gate)):
        about_items[gate.item_id].append(("gate", _columns(gate)))
    for item in sorted(about_items):  # each in an order of its own: the rows come in none
        group = group_of.get(item)
        if group is not None:
            inputs[group].append(tuple(about_items[item]))
    keys = {}
    for group, values in inputs.items():
        values.append(("perturbed", rest.perturbed.get(group)))
        keys[group] = _hex(shared + _bytes(values))
    return keys, members


def _shared_key(ws, rows: StatusRows) -> bytes:  # type: ignore[no-untyped-def]
    """What every group's derivation reads alike: the format, the code, the settings, the reviewers and their
    languages and qualifications."""
    settings = (ws.settings.review.model_dump_json(), ws.settings.gates.model_dump_json())
    people = (rows.rest.reviewers, rows.rest.abilities.key())
    return _bytes([FORMAT, sys.version, _code_stamp(), settings, people, rows.rest.shown is None])


def _code_stamp() -> list[tuple[str, int, int]]:
    """Each module of this package: its path, size and change time (what an upgrade or an edit changes)."""
    root = Path(__file__).parent
    stamp = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(f for f in files if f.endswith(".py")):
            info = os.stat(os.path.join(folder, name))
            stamp.append((os.path.relpath(os.path.join(folder, name), root), info.st_size, info.st_mtime_ns))
    return stamp


def _hex(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=20).hexdigest()


def _columns(row: Any) -> tuple[Any, ...]:
    """A table row's values, in column order (dates as text)."""
    values = (getattr(row, column.key) for column in row.__table__.columns)
    return tuple(v.isoformat() if isinstance(v, datetime) else v for v in values)


def _bytes(values: Any) -> bytes:
    try:
        return marshal.dumps(values, 2)
    except ValueError:  # a value marshal does not write (none the tables hold today): its repr
        return repr(values).encode("utf-8", "surrogatepass")


def _entries(
    statuses: Iterable[ItemStatus], gaps: Mapping[str, StaffingGap], keys: Mapping[str, str]
) -> dict[str, list[Any]]:
    """The memo's entries of the groups just derived: group -> [key, statuses, gaps by item] (orjson writes
    the dataclasses as objects of their fields)."""
    entries: dict[str, list[Any]] = {}
    for st in statuses:
        entry = entries.setdefault(st.group, [keys[st.group], [], {}])
        entry[1].append(st)
        if st.id in gaps:
            entry[2][st.id] = gaps[st.id]
    return entries


def _kept(
    entry: list[Any], key: str | None, items: list[str] | None
) -> tuple[list[ItemStatus], dict[str, StaffingGap]] | None:
    """A memo entry's statuses and gaps when its key is the group's and it holds a status of each of the
    group's items; None otherwise (the group is derived again)."""
    if key is None or entry[0] != key:
        return None
    try:
        statuses = [ItemStatus(**doc) for doc in entry[1]]
        gaps = {item: StaffingGap(**{**doc, "stages": tuple(doc["stages"])}) for item, doc in entry[2].items()}
    except (TypeError, KeyError, AttributeError):  # an entry not written by this format
        return None
    if [st.id for st in statuses] != items or not gaps.keys() <= set(items):
        return None  # another group's entry, or a damaged one: the key alone is not trusted
    return statuses, gaps


def _read(path: Path, shared: str) -> dict[str, list[Any]]:
    """The memo's entries; none when it is missing, unreadable, of another format, or written under other
    settings, reviewers or code than ``shared`` hashes (then no group's key could match)."""
    try:
        memo = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    if not isinstance(memo, dict) or memo.get("format") != FORMAT or memo.get("shared") != shared:
        return {}
    groups = memo.get("groups")
    if not isinstance(groups, dict):
        return {}
    return {g: e for g, e in groups.items() if isinstance(e, list) and len(e) == 3}


def _write(path: Path, shared: str, entries: dict[str, list[Any]]) -> None:
    """The memo, swapped in whole; nothing when the folder cannot be written (a read-only workspace)."""
    data = orjson.dumps({"format": FORMAT, "shared": shared, "groups": entries})
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}")
    with contextlib.suppress(OSError):
        path.parent.mkdir(exist_ok=True)
        try:
            with open(temporary, "xb") as out:  # read and write as the workspace's other files (the umask)
                out.write(data)
            os.replace(temporary, path)
        finally:
            temporary.unlink(missing_ok=True)
