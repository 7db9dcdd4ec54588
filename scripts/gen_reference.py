"""Write the manual's reference pages (docs/reference/*.md) from the code itself.

    python scripts/gen_reference.py           # (re)write the pages
    python scripts/gen_reference.py --check   # exit 1, naming the pages, when the committed ones disagree

* formats.md  — every interchange format from its Pydantic model: fields, types, required or not, an example
  line (validated by the model, so an example cannot drift), plus every public model of ``curation``
  (discovered, so a new one appears without editing this script);
* settings.md — every ``curate.toml`` setting with its type, default and meaning, from ``curation.config``;
* cli.md      — every ``curate`` command with its arguments and options, from the CLI itself (Click);
* reasons.md  — every reason code with its meaning, from ``curation.reasons``;
* prompts.md  — the screening prompts as shipped (App. D's text), their placeholders and how a workspace
  replaces them, from ``curation.screening.prompt_templates``;
* vocabularies.md — every closed list a field takes (the taxonomy's 18 leaves with their definitions, sources,
  modalities, stages, rubrics, licences) and the fixed values of every format's fields.

The formats and settings pages are written here; the others, the model tables and mkdocs.yml's nav by the
``scripts/reference_*.py`` modules beside it.

CI runs ``--check`` (.ci/run) and tests/scripts/test_gen_reference.py does too.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pydantic import BaseModel  # noqa: E402

from scripts.reference_commands import cli_page, reasons_page  # noqa: E402
from scripts.reference_common import HEADER  # noqa: E402
from scripts.reference_common import cell as _cell  # noqa: E402
from scripts.reference_formats import (  # noqa: E402
    FORMATS,
    HAND_WRITTEN_FORMATS,
    REPLAY_FORMATS,
    Format,
    unlisted_replay_models,
)
from scripts.reference_models import (  # noqa: E402
    _constraints,
    _default,
    _doc,
    _nested_models,
    attribute_docs,
    discovered_models,
    model_table,
    type_name,
)
from scripts.reference_nav import MKDOCS, mkdocs_config  # noqa: E402
from scripts.reference_nav import NAV_MARK as NAV_MARK  # noqa: E402  (tests read it here)
from scripts.reference_prompts import prompts_page  # noqa: E402
from scripts.reference_vocabularies import vocabularies_page  # noqa: E402

REFERENCE = ROOT / "docs" / "reference"


# ---- formats ------------------------------------------------------------------------------------------------


def _load(spec: str) -> type[BaseModel]:
    module, _, name = spec.partition(":")
    model = getattr(importlib.import_module(module), name)
    assert isinstance(model, type) and issubclass(model, BaseModel), spec
    return model


def _format_section(fmt: Format, shown: set[type[BaseModel]], nested: list[type[BaseModel]]) -> str:
    """A format's heading, model table and example lines, each example validated (an example that the model, or
    the format's own check, refuses fails the generator, and CI)."""
    model = _load(fmt.model)
    for example in fmt.examples:
        model.model_validate(example)
        if fmt.check is not None:
            fmt.check(example)
    out = [f"## {fmt.title}\n\nModel `{fmt.model}` · read by `{fmt.command}`\n\n"]
    if model not in shown and _doc(model):
        out.append(_doc(model) + "\n\n")
    if fmt.note:
        out.append(fmt.note + "\n\n")
    out.append(model_table(model) + "\n\n")
    if fmt.dispatch:
        out.append(
            f"A line also carries {', '.join(f'`{json.dumps({k: v})[1:-1]}`' for k, v in fmt.dispatch.items())}.\n\n"
        )
    lines = [{**dict(list(e.items())[:1]), **fmt.dispatch, **e} for e in fmt.examples]
    out.append("```json\n" + "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n```\n\n")
    shown.add(model)
    for info in model.model_fields.values():
        nested += [m for m in _nested_models(info.annotation) if m not in nested]
    return "".join(out)


def formats_page(
    formats: Iterable[Format] = FORMATS,
    settings_root: type[BaseModel] | None = None,
    replays: Iterable[Format] = REPLAY_FORMATS,
) -> str:
    replays = tuple(replays)
    unlisted = unlisted_replay_models(replays)
    if unlisted:
        raise SystemExit(
            f"replay or draft line models not in the reference: {', '.join(unlisted)}; "
            "add each to REPLAY_FORMATS in scripts/reference_formats.py with an example line"
        )
    settings_models = set(_section_models(settings_root or _settings_model()))
    out = [
        HEADER,
        "# Interchange formats\n\n",
        "JSON Lines, UTF-8, one object per line (a line ends at `\\n` only). Paths inside a file are relative to "
        "that file. Every import is all or nothing: each problem is reported as `FILE:LINE: field: problem` and "
        "nothing is imported until the file is clean. Unknown fields are refused. The closed lists fields take "
        "their values from (the taxonomy's leaves, provenance sources, stages, rubrics, licences) are in "
        "[Vocabularies](vocabularies.md). Replay and draft files, recorded model answers that stand in for a "
        "model (`--backend replay:FILE`), follow the [interchange files](#replay-and-draft-files).\n\n",
    ]
    shown: set[type[BaseModel]] = set()
    nested: list[type[BaseModel]] = []
    out += [_format_section(fmt, shown, nested) for fmt in formats]
    out.append(
        "## Replay and draft files\n\nA `replay:FILE` backend answers from recorded model outputs instead of a "
        "model: written by hand, or by a run that records them. A file is read whole and refused whole: every "
        "problem named `FILE:LINE`, nothing computed from it. A call the file has no line for stops the command, "
        "naming the call.\n\n"
    )
    out += [_format_section(fmt, shown, nested) for fmt in replays]
    out.append(HAND_WRITTEN_FORMATS + "\n")
    others = [m for m in nested if m not in shown]
    others += [m for m in discovered_models() if m not in shown and m not in others and m not in settings_models]
    out.append("## Parts and other models\n\nNested objects of the formats above, then every other public model of ")
    out.append("the domain (`curation`), found in the code.\n\n")
    for model in others:
        out.append(f"### {model.__name__}\n\n`{model.__module__}:{model.__name__}`")
        out.append((" — " + _doc(model)) if _doc(model) else "")
        out.append("\n\n" + model_table(model) + "\n\n")
    return "".join(out).rstrip() + "\n"


# ---- settings -----------------------------------------------------------------------------------------------


def _settings_model() -> type[BaseModel]:
    from curation.config import Settings

    return Settings


def _section_models(model: type[BaseModel]) -> Iterable[type[BaseModel]]:
    yield model
    for info in model.model_fields.values():
        for nested in _nested_models(info.annotation):
            yield from _section_models(nested)


def settings_page(root: type[BaseModel] | None = None) -> str:
    root = root or _settings_model()
    out = [
        HEADER,
        "# Settings (`curate.toml`)\n\n",
        "`curate init` writes every setting with its default into the workspace's `curate.toml`; edit the file to "
        "change one. Unknown keys are refused (`curate.toml: section.key: problem`). A path written here is "
        "relative to the workspace folder.\n\n",
    ]

    def section(model: type[BaseModel], path: list[str]) -> None:
        leaves = [(n, i) for n, i in model.model_fields.items() if not list(_nested_models(i.annotation))]
        if path and (leaves or len(path) == 1):
            out.append(f"## `[{'.'.join(path)}]`\n\n")
            if _doc(model):
                out.append(_doc(model) + "\n\n")
            docs = attribute_docs(model)
            for name, info in model.model_fields.items():
                if typing.get_origin(info.annotation) is dict and list(_nested_models(info.annotation)):
                    meaning = info.description or docs.get(name, "")
                    out.append(f"`{name}`: tables `[{'.'.join([*path, name])}.NAME]`, one per name. {meaning}\n\n")
            if leaves:
                out.append("| key | type | default | meaning |\n|---|---|---|---|\n")
            for name, info in leaves:
                meaning = info.description or docs.get(name, "")
                limits = _constraints(info)
                if limits:
                    meaning = f"{meaning} ({limits})" if meaning else f"({limits})"
                out.append(
                    f"| `{name}` | {type_name(info.annotation)} | {_default(info) or 'required'} | {_cell(meaning)} |\n"
                )
            if leaves:
                out.append("\n")
        for name, info in model.model_fields.items():
            named = typing.get_origin(info.annotation) is dict  # a table per name: [section.field.NAME]
            for nested in _nested_models(info.annotation):
                section(nested, [*path, name, "NAME"] if named else [*path, name])

    section(root, [])
    return "".join(out).rstrip() + "\n"


# ---- driver -------------------------------------------------------------------------------------------------


@dataclass
class Pages:
    """The pages to write, by file name; a test swaps a builder to see the check fail."""

    builders: dict[str, Callable[[], str]] = field(
        default_factory=lambda: {
            "formats.md": formats_page,
            "settings.md": settings_page,
            "cli.md": cli_page,
            "reasons.md": reasons_page,
            "vocabularies.md": lambda: vocabularies_page([(f.title, _load(f.model)) for f in FORMATS]),
            "prompts.md": prompts_page,
        }
    )

    def render(self) -> dict[str, str]:
        return {name: build() for name, build in self.builders.items()}


def stale_pages(pages: Pages | None = None, folder: Path | None = None) -> list[str]:
    """The reference pages (and mkdocs.yml's nav) whose committed text differs from what the code gives now."""
    rendered = (pages or Pages()).render()
    folder = folder or REFERENCE
    stale = [n for n, text in rendered.items() if not (folder / n).is_file() or (folder / n).read_text("utf-8") != text]
    if pages is None and MKDOCS.is_file() and MKDOCS.read_text(encoding="utf-8") != mkdocs_config():
        stale.append("mkdocs.yml (nav)")
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="Exit 1 when a committed page differs from the code.")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_pages()
        if stale:
            print(
                f"docs/reference is out of date with the code: {', '.join(stale)}; "
                "run `python scripts/gen_reference.py` and commit the pages",
                file=sys.stderr,
            )
            return 1
        print("docs/reference matches the code")
        return 0
    REFERENCE.mkdir(parents=True, exist_ok=True)
    for name, text in Pages().render().items():
        (REFERENCE / name).write_text(text, encoding="utf-8")
        print(f"wrote docs/reference/{name}")
    if MKDOCS.is_file():
        MKDOCS.write_text(mkdocs_config(), encoding="utf-8")
        print("wrote the nav of mkdocs.yml")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
