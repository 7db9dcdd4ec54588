"""``curate doctor``: which optional packages, tools, backends and services this machine has, and how to add each.

Nothing is imported to find out (``importlib.util.find_spec``), so it answers in a moment even where torch is
installed; services are asked over HTTP with a short timeout.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from .common import JsonFlag, out_console, print_json, workspace_dir

INSTALL_TORCH = "pip install torch==2.13.0 (CPU; or your GPU's build), then pip install -e '.[checker]'"


@dataclass(frozen=True)
class Check:
    kind: str
    """extra, tool, backend, service or filesystem."""
    name: str
    ok: bool
    used_for: str
    how_to_add: str
    detail: str = ""


def _has(*modules: str) -> bool:
    try:
        return all(importlib.util.find_spec(m) is not None for m in modules)
    except (ImportError, ValueError):
        return False


EXTRAS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("postgres", ("psycopg",), "a PostgreSQL workspace (curate init --db postgresql+psycopg://...)"),
    ("media", ("pyloudnorm", "soxr", "imagehash", "av"), "curate media normalize, curate audit"),
    ("screening", ("py3langid",), "curate screen (the language step)"),
    ("stats", ("krippendorff", "sklearn", "scipy", "matplotlib"), "curate stats, curate agreement, reports"),
    ("labelstudio", ("label_studio_sdk", "httpx"), "curate ls, curate campaign, curate judge ls"),
    ("release", ("pyarrow",), "curate release build (data/items.parquet)"),
    ("release-check", ("datasets", "mlcroissant"), "loading a release with datasets; Croissant checks (tests)"),
    ("ui", ("streamlit", "plotly"), "curate ui"),
    ("checker", ("torch", "transformers", "lmformatenforcer"), "transformers: probes and screening models"),
)

TOOLS: tuple[tuple[str, str, str], ...] = (
    (
        "fpcalc",
        "chromaprint beside the built-in spectral hash in the audio audit (clips of 3 s or more)",
        "apt-get install libchromaprint-tools",
    ),
    ("ffmpeg", "tests (an independent loudness meter) and benchmarks/media_normalize.py", "apt-get install ffmpeg"),
    ("sox", "scripts that regenerate the demo media", "apt-get install sox"),
    ("espeak-ng", "scripts that regenerate the demo speech", "apt-get install espeak-ng"),
    ("chromium", "the browser tests (pytest -m browser)", "apt-get install chromium"),
)


def _reachable(url: str) -> str:
    """'' when the server answers, else why not."""
    try:
        with urllib.request.urlopen(url, timeout=3) as response:  # noqa: S310 (the user's own server)
            return "" if response.status < 500 else f"HTTP {response.status}"
    except OSError as exc:
        return str(getattr(exc, "reason", exc))


def _filesystem(workspace: Path) -> Check:
    """Whether the workspace's file system clones copies: a release built inside it then writes no media."""
    from exports.writer import copies_clone  # the release modules load the database layer: only in a workspace

    clones = copies_clone(workspace)
    return Check(
        "filesystem",
        "copy-on-write copies",
        clones is True,
        "release builds inside the workspace clone the store's media instead of writing every byte again",
        "keep the workspace on XFS (mkfs.xfs -m reflink=1) or Btrfs",
        f"{workspace}" + (": not writable, so not known" if clones is None else ""),
    )


def checks(workspace: Path | None = None) -> list[Check]:
    """Every part this machine has or lacks; with ``workspace``, also what its file system does with copies."""
    found: list[Check] = []
    for extra, modules, used in EXTRAS:
        missing = [m for m in modules if not _has(m)]
        how = INSTALL_TORCH if extra == "checker" else f"pip install -e '.[{extra}]'"
        found.append(Check("extra", extra, not missing, used, how, f"missing: {', '.join(missing)}" if missing else ""))
    for tool, used, how in TOOLS:
        path = shutil.which(tool)
        found.append(Check("tool", tool, path is not None, used, how, path or "not on the PATH"))
    found.append(Check("backend", "replay:FILE", True, "recorded model outputs (probes, drafts, screening)", ""))
    found.append(
        Check("backend", "openai:URL#MODEL", _has("httpx"), "any OpenAI-compatible server", "pip install httpx")
    )
    found.append(
        Check(
            "backend",
            "transformers:PATH",
            _has("torch", "transformers"),
            "a local model folder (probes; screening needs lm-format-enforcer too)",
            INSTALL_TORCH,
        )
    )
    found.append(Check("backend", "vllm:PATH", _has("vllm"), "vLLM's offline engine (GPU)", "pip install -e '.[vllm]'"))
    gpu = shutil.which("nvidia-smi") is not None
    found.append(
        Check("service", "GPU", gpu, "the vllm: backend, gpu tests", "a machine with an NVIDIA GPU and driver")
    )
    url = os.environ.get("LABEL_STUDIO_URL", "")
    if url:
        why = _reachable(f"{url.rstrip('/')}/health")
        found.append(
            Check("service", "Label Studio", not why, "curate ls, campaigns", "curate ls up", f"{url} {why}".strip())
        )
    else:
        found.append(
            Check(
                "service",
                "Label Studio",
                False,
                "curate ls, campaigns",
                "curate ls up (a local server), then export what it prints",
                "LABEL_STUDIO_URL is not set",
            )
        )
    pg = os.environ.get("CURATE_TEST_PG_URL", "")
    found.append(
        Check(
            "service",
            "PostgreSQL for tests",
            bool(pg),
            "the tests' PostgreSQL runs (-m service)",
            "bash .ci/run starts one; or set CURATE_TEST_PG_URL=postgresql+psycopg://USER@HOST:PORT/postgres",
            "" if pg else "CURATE_TEST_PG_URL is not set",
        )
    )
    if workspace is not None:
        found.append(_filesystem(workspace))
    return found


def doctor_cmd(json_out: JsonFlag = False) -> None:
    """What this machine has: optional extras, system tools, model backends and services, and how to add each.

    Always exits 0: it is a report."""
    where = workspace_dir()
    workspace = (where / "curate.toml").is_file()
    found = checks(where if workspace else None)
    if json_out:
        print_json(
            {
                "python": sys.version.split()[0],
                "workspace": str(where) if workspace else None,
                "checks": [asdict(c) for c in found],
            }
        )
        return
    out_console.print(
        f"Python {sys.version.split()[0]}; workspace: {where if workspace else 'none here'}", highlight=False
    )
    table = Table("kind", "name", "here", "used for", "how to add")
    for c in found:
        cells = (c.kind, c.name, "yes" if c.ok else "no", c.used_for, "" if c.ok else c.how_to_add)
        table.add_row(*(escape(cell) for cell in cells))  # '.[checker]' is not markup
    out_console.print(table)
    missing = sum(not c.ok for c in found)
    out_console.print(
        f"{len(found) - missing} of {len(found)} present" + (f"; {missing} can be added" if missing else "")
    )
