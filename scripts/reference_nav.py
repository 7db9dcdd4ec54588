"""The nav of mkdocs.yml, written by scripts/gen_reference.py: the guides in reading order, every page under
docs/kinds/, any other page, then the reference pages (a new page joins the nav when the script runs again)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# ---- the manual's navigation -------------------------------------------------------------------------------

DOCS = ROOT / "docs"
MKDOCS = ROOT / "mkdocs.yml"
NAV_MARK = "# generated nav (scripts/gen_reference.py): do not edit below this line\n"
GUIDES = (
    ("Home", "index.md"),
    ("Getting started", "getting-started.md"),
    ("CLI conventions", "cli-conventions.md"),
    ("The annotation UI", "ui.md"),
    ("Label Studio", "labelstudio.md"),
    ("Releases", "releases.md"),
    ("Development", "development.md"),
)
"""The guides, in reading order; then every page under docs/kinds/, the reference, and any other page."""
REFERENCE_PAGES = (
    ("Commands", "reference/cli.md"),
    ("Interchange formats", "reference/formats.md"),
    ("Settings (curate.toml)", "reference/settings.md"),
    ("Reason codes", "reference/reasons.md"),
    ("Vocabularies", "reference/vocabularies.md"),
    ("Screening prompts", "reference/prompts.md"),
)


def _title(page: Path) -> str:
    """A page's first ``# heading``, else its file name."""
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return line[2:].strip().replace('"', "'")  # whole: pages of one kind share the part before a colon
    return page.stem.replace("-", " ").replace("_", " ")


def _entry(title: str, path: str, indent: str = "  ") -> str:
    return f'{indent}- "{title}": {path}\n'


def mkdocs_config(docs: Path | None = None, config: Path | None = None) -> str:
    """mkdocs.yml with its nav rebuilt: the guides, every kind page (docs/kinds/*.md, written by whoever adds a
    kind), the reference, then any other page under docs/ so that none is left out."""
    docs, config = docs or DOCS, config or MKDOCS
    head = config.read_text(encoding="utf-8").split(NAV_MARK)[0]
    listed = {path for _, path in (*GUIDES, *REFERENCE_PAGES)}
    nav = "nav:\n" + "".join(_entry(t, p) for t, p in GUIDES if (docs / p).is_file())
    kinds = sorted((docs / "kinds").glob("*.md")) if (docs / "kinds").is_dir() else []
    if kinds:
        nav += "  - Kinds:\n" + "".join(_entry(_title(k), k.relative_to(docs).as_posix(), "      ") for k in kinds)
    others = sorted(
        p for p in docs.rglob("*.md") if p.relative_to(docs).as_posix() not in listed and p.parent.name != "kinds"
        and "reference" not in p.relative_to(docs).parts
    )  # fmt: skip
    if others:
        nav += "  - More:\n" + "".join(_entry(_title(p), p.relative_to(docs).as_posix(), "      ") for p in others)
    nav += "  - Reference:\n" + "".join(_entry(t, p, "      ") for t, p in REFERENCE_PAGES)
    return head + NAV_MARK + nav
