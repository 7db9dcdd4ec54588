"""Per-stage guidelines: Markdown files a maintainer writes in the workspace, ``guidelines/<page>.md``.

``<page>`` is a stage name (``grammar``, ``subset_checklist``, ``filter``, ``checklist_curation``, ...) or one of
the judge annotation pages (``score``, ``pair``). The annotation UI shows the file in a panel on that page and
``curate ls push`` sends it as the Label Studio project's instructions. Guidelines are maintainer text, so they
are rendered as Markdown (unlike what reviewers and authors type, which is always shown as typed).
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import Problem, ValidationFailed
from .jsonl import not_a_file, read_text_document
from .workspace import Workspace

GUIDELINES_DIR = "guidelines"
MAX_BYTES = 256_000
"""A guideline is a page of instructions, not a book: larger files are refused with their size."""
JUDGE_PAGES = ("score", "pair")
"""Judge Anything's annotation pages, which are no stage but have guidelines of their own."""
_NAME = re.compile(r"[a-z0-9_]{1,64}")


def guidelines_path(ws: Workspace, page: str) -> Path:
    """Where the guidelines of PAGE live (a stage name or ``score``/``pair``); never outside the folder."""
    if not _NAME.fullmatch(page):
        raise ValidationFailed([Problem(f"{page!r} is no stage or page name (lower-case letters, digits, _)", "page")])
    return Path(ws.root) / GUIDELINES_DIR / f"{page}.md"


def stage_guidelines(ws: Workspace, page: str) -> str | None:
    """The Markdown of PAGE's guidelines, or None when the maintainer wrote none.

    A file that is too large, not UTF-8, holds a NUL or is no regular file (a folder, a FIFO, a device) is refused
    with its path, the line and what to do, never shown half.
    """
    path = guidelines_path(ws, page)
    if (not_a_file(path) or "").startswith("does not exist"):
        return None
    text = read_text_document(path, MAX_BYTES, "guidelines")
    return text.strip() or None
