"""Reading a story release and drawing the study's fixed window of transitions from it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curation.errors import CheckFailed, NotFoundError, Problem, ValidationFailed

KIND = "story_transition"
DATA_FILE = "data/transitions.jsonl"
WINDOW_SIZE = 10
"""App. F.5: "a fixed common window of 10 story transitions"."""


@dataclass(frozen=True)
class StoryRelease:
    folder: Path
    name: str
    version: str
    manifest_sha256: str
    records: dict[str, dict[str, Any]]
    """Transition id -> its line of ``data/transitions.jsonl``, in file order."""

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"


def read_release(folder: Path) -> StoryRelease:
    """A story release as built by ``curate release build``; its data file must match its manifest."""
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise NotFoundError(f"{folder} is not a release: it has no manifest.json")
    raw = manifest_path.read_bytes()
    try:
        manifest = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValidationFailed([Problem(f"not JSON: {exc.msg}", file=str(manifest_path))]) from None
    if not isinstance(manifest, dict) or manifest.get("kind") != KIND:
        kind = manifest.get("kind") if isinstance(manifest, dict) else None
        raise ValidationFailed(
            [
                Problem(
                    f"the release's kind is {kind!r}; a story study needs a {KIND} release",
                    "kind",
                    file=str(manifest_path),
                )
            ]
        )
    listed = {f.get("path"): f.get("sha256") for f in manifest.get("files", []) if isinstance(f, dict)}
    data = folder / DATA_FILE
    if DATA_FILE not in listed or not data.is_file():
        raise NotFoundError(f"{folder}: the release has no {DATA_FILE}")
    body = data.read_bytes()
    if hashlib.sha256(body).hexdigest() != listed[DATA_FILE]:
        raise CheckFailed(f"{data} does not match the SHA-256 in its manifest; run `curate release verify {folder}`")
    records: dict[str, dict[str, Any]] = {}
    for line in body.decode("utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            records[record["id"]] = record
    return StoryRelease(
        folder=folder,
        name=str(manifest.get("name", folder.name)),
        version=str(manifest.get("version", "")),
        manifest_sha256=hashlib.sha256(raw).hexdigest(),
        records=records,
    )


def draw_key(seed: int, transition: str) -> str:
    return hashlib.sha256(f"{seed}|{transition}".encode()).hexdigest()


def choose_window(
    release: StoryRelease, size: int = WINDOW_SIZE, seed: int = 0, chosen: Sequence[str] = ()
) -> list[str]:
    """The study's window, in release order: the named transitions, or ``size`` drawn with ``seed``.

    The draw ranks every transition by SHA-256 of (seed, id), so it depends only on the seed and the set of
    ids — not on the file's order, the platform or the Python version.
    """
    ids = list(release.records)
    if chosen:
        unknown = [t for t in chosen if t not in release.records]
        twice = sorted({t for t in chosen if list(chosen).count(t) > 1})
        problems = [Problem(f"{t!r} is not a transition of {release.label}", "transition") for t in unknown]
        problems += [Problem(f"{t!r} is named twice", "transition") for t in twice]
        if problems:
            raise ValidationFailed(problems, "no window")
        wanted = set(chosen)
        return [t for t in ids if t in wanted]
    if size < 1:
        raise ValidationFailed([Problem("the window holds at least one transition", "size")])
    if size > len(ids):
        raise ValidationFailed(
            [Problem(f"{release.label} has {len(ids)} transitions; a window of {size} is larger", "size")]
        )
    drawn = set(sorted(ids, key=lambda t: draw_key(seed, t))[:size])
    return [t for t in ids if t in drawn]
