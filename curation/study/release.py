"""Reading a story release and drawing the study's fixed window of transitions from it."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError

from curation.errors import CheckFailed, NotFoundError, Problem, ValidationFailed
from curation.jsonl import not_a_file, pydantic_problems, read_json_document, read_models, sha256_regular
from curation.schema import Identifier

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


class _Listed(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)
    path: StrictStr
    sha256: StrictStr


class _Manifest(BaseModel):
    """What the study reads of a release's ``manifest.json`` (its other fields are the release's own)."""

    model_config = ConfigDict(extra="allow", strict=True)
    kind: StrictStr
    name: StrictStr = ""
    version: StrictStr = ""
    files: list[_Listed] = []


class ReleasedTransition(BaseModel):
    """One line of a story release's ``data/transitions.jsonl`` (``TRANSITION_COLUMNS``), as the study shows it;
    an unknown field, a wrong type, NaN or a second line of one id refuses the release, each as FILE:LINE."""

    model_config = ConfigDict(extra="forbid", strict=True, allow_inf_nan=False)
    id: Identifier
    title: StrictStr
    current_text: StrictStr
    current_image: StrictStr
    next_text: StrictStr
    next_image: StrictStr
    book_meta: dict[str, Any]
    conditions: dict[str, Any]
    speech: dict[str, Any]
    book: StrictStr = ""
    page: StrictInt = 0
    collection: StrictStr = ""
    license: StrictStr = ""
    provenance: dict[str, Any] = {}
    revision: StrictInt = 0
    duplicate_clusters: list[StrictStr] = []
    origin: dict[str, Any] | None = None


def read_release(folder: Path) -> StoryRelease:
    """A story release as built by ``curate release build``; its data file must match its manifest. Both files
    are read by the shared reader (regular files, bounded, no NaN, no key given twice) and checked by their
    models, every problem named FILE:LINE."""
    manifest_path = folder / "manifest.json"
    if (not_a_file(manifest_path) or "").startswith("does not exist"):
        raise NotFoundError(f"{folder} is not a release: it has no manifest.json")
    document = read_json_document(manifest_path)
    try:
        manifest = _Manifest.model_validate(document)
    except ValidationError as exc:
        raise ValidationFailed([replace(p, line=None) for p in pydantic_problems(exc, str(manifest_path), 0)]) from None
    if manifest.kind != KIND:
        shown = json.dumps(manifest.kind, ensure_ascii=False)
        problem = Problem(f"the release's kind is {shown}; a story study needs a {KIND} release", "kind")
        raise ValidationFailed([replace(problem, file=str(manifest_path))])
    listed = {f.path: f.sha256 for f in manifest.files}
    data = folder / DATA_FILE
    if DATA_FILE not in listed or (not_a_file(data) or "").startswith("does not exist"):
        raise NotFoundError(f"{folder}: the release has no {DATA_FILE}")
    if sha256_regular(data) != listed[DATA_FILE]:  # a FIFO or a folder in its place is named, never read
        raise CheckFailed(f"{data} does not match the SHA-256 in its manifest; run `curate release verify {folder}`")
    records: dict[str, dict[str, Any]] = {}
    problems: list[Problem] = []
    first: dict[str, int] = {}
    for number, line in read_models(data, ReleasedTransition, problems):
        if line.id in first:
            problems.append(Problem(f"given twice (first on line {first[line.id]})", "id", number, str(data)))
            continue
        first[line.id] = number
        records[line.id] = line.model_dump(mode="json")
    if problems:
        raise ValidationFailed(problems, f"{len(problems)} problem(s); the release was not read")
    manifest_sha256 = sha256_regular(manifest_path)
    return StoryRelease(
        folder=folder,
        name=manifest.name or folder.name,
        version=manifest.version,
        manifest_sha256=manifest_sha256,
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
