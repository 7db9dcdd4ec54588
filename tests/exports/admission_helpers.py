"""The demo release, built once per test module, and a tamperer that fixes up the hashes after an edit."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from exports.writer import canonical_json
from tests.conftest import DemoTemplates


def template_release(demo_templates: DemoTemplates, kind: str, version: str) -> Path:
    """The KIND demo template's release, read only: tests tamper with copies (``copy_release``)."""
    template, _db = demo_templates[kind]["sqlite"]
    return template / "releases" / version


def build_demo_workspace(directory: Path) -> Any:
    from omnicurate.demo import build_demo

    return build_demo(directory, log=lambda _: None)


def copy_release(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def lines(folder: Path, rel: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / rel).read_text(encoding="utf-8").splitlines() if line.strip()]


def edit_line(folder: Path, rel: str, find: Callable[[dict[str, Any]], bool], change: Callable[[dict], None]) -> int:
    """Change the first record of REL that ``find`` accepts; re-hash it in croissant.json and manifest.json
    (so only a check of the content, not of the hashes, can catch it). Returns the edited line's number."""
    path = folder / rel
    raw = path.read_text(encoding="utf-8").split("\n")
    for number, line in enumerate(raw, start=1):
        if line.strip() and find(json.loads(line)):
            record = json.loads(line)
            change(record)
            raw[number - 1] = json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
            path.write_text("\n".join(raw), encoding="utf-8")
            rehash(folder, rel)
            return number
    raise AssertionError(f"no record of {rel} matched")


def rehash(folder: Path, rel: str) -> None:
    """Fix up the hashes a tamperer would: the file's in croissant.json, then both in manifest.json."""
    digest = hashlib.sha256((folder / rel).read_bytes())
    croissant = json.loads((folder / "croissant.json").read_text(encoding="utf-8"))
    for entry in croissant.get("distribution", []):
        if entry.get("contentUrl") == rel:
            entry["sha256"] = digest.hexdigest()
            entry["contentSize"] = f"{(folder / rel).stat().st_size} B"
    (folder / "croissant.json").write_bytes(canonical_json(croissant))
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    for entry in manifest["files"]:
        if entry["path"] in (rel, "croissant.json"):
            data = (folder / entry["path"]).read_bytes()
            entry["sha256"] = hashlib.sha256(data).hexdigest()
            entry["size"] = len(data)
    (folder / "manifest.json").write_bytes(canonical_json(manifest))
