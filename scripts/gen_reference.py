"""Write the manual's reference pages (docs/reference/*.md) from the code itself.

    python scripts/gen_reference.py           # (re)write the pages
    python scripts/gen_reference.py --check   # exit 1, naming the pages, when the committed ones disagree

* formats.md  — every interchange format from its Pydantic model: fields, types, required or not, an example
  line (validated by the model, so an example cannot drift), plus every public model of ``curation``
  (discovered, so a new one appears without editing this script);
* settings.md — every ``curate.toml`` setting with its type, default and meaning, from ``curation.config``;
* cli.md      — every ``curate`` command with its arguments and options, from the CLI itself (Click);
* reasons.md  — every reason code with its meaning, from ``curation.reasons``;
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
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pydantic import BaseModel  # noqa: E402

from scripts.reference_commands import cli_page, reasons_page  # noqa: E402
from scripts.reference_common import HEADER  # noqa: E402
from scripts.reference_common import cell as _cell  # noqa: E402
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
from scripts.reference_vocabularies import vocabularies_page  # noqa: E402

REFERENCE = ROOT / "docs" / "reference"


# ---- formats ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Format:
    """One interchange file: the model that reads a line, the command that takes it, an example line."""

    title: str
    model: str
    """``module:Class`` of the Pydantic model a line is validated with."""
    command: str
    example: dict[str, Any]
    note: str = ""
    dispatch: dict[str, Any] = field(default_factory=dict)
    """Keys the reader of a mixed file uses to pick the model (shown in the example, not validated by it)."""


FORMATS: tuple[Format, ...] = (
    Format(
        "Item (mcq)",
        "curation.schema:ItemContent",
        "curate import items FILE; curate export items FILE",
        {
            "id": "kitchen-01-a",
            "group": "kitchen-01",
            "perturbed": "audio",
            "language": "en",
            "author": "ann1",
            "context": "Sure, that was a really helpful suggestion.",
            "image": "media/kitchen.jpg",
            "audio": "media/kitchen_sincere.wav",
            "question": "How does the speaker feel about the suggestion?",
            "options": {"A": "grateful", "B": "sarcastic", "C": "ambivalent", "D": "surprised"},
            "answer": "A",
            "taxonomy": {"text": "pragmatic", "image": "semiotic", "audio": "prosodic"},
            "ambiguous": ["text", "audio"],
            "provenance": {
                "image": {"source": "photo", "license": "CC0-1.0"},
                "audio": {"source": "voice_acting", "license": "CC-BY-4.0"},
            },
            "notes": {
                "image": "A woman at a kitchen table pushes a plate of burnt toast away with two fingers.",
                "audio": 'A woman, flat and drawn out: "Sure, that was a really helpful suggestion." A sigh.',
            },
        },
        "Media paths are relative to the JSONL file. `ambiguous` (the modalities that are ambiguous on their own) "
        'is required. Over two modalities (`"modalities": ["text", "image"]`) the missing one\'s fields are '
        "absent. `notes` is optional (TRIAD App. E.3's A+ / I+ descriptions, only for the item's own image and "
        "audio); a note naming an option, one of the item's taxonomy leaves or a sister's id is a leak "
        "(`leak:note_option`, `leak:note_leaf`, `leak:note_sister`). Releases carry them as `image_note` and "
        "`audio_note`.",
    ),
    Format(
        "Review: grammar",
        "curation.schema:GrammarReview",
        "curate import reviews FILE",
        {"item": "kitchen-01-a", "stage": "grammar", "reviewer": "rev2", "verdict": "pass", "note": ""},
    ),
    Format(
        "Review: audio sign-off",
        "curation.schema:AudioReview",
        "curate import reviews FILE",
        {
            "item": "kitchen-01-a",
            "stage": "audio_signoff",
            "reviewer": "rev3",
            "scores": {"naturalness": 4, "clarity": 5, "artefacts": 4},
        },
    ),
    Format(
        "Review: subset checklist",
        "curation.schema:ChecklistReview",
        "curate import reviews FILE",
        {
            "item": "kitchen-01-a",
            "stage": "subset_checklist",
            "reviewer": "rev1",
            "consistent": {
                "text": ["A", "B", "C"],
                "image": ["A", "B", "D"],
                "audio": ["A", "B"],
                "text+image": ["A", "B"],
                "text+audio": ["A", "C"],
                "image+audio": ["A", "B"],
                "text+image+audio": ["A"],
            },
            "ambiguous": ["text", "audio"],
            "exclusions": {"ethics": "pass", "identifying": "pass"},
        },
        "`exclusions` attests each exclusion rule of the workspace (`[review] exclusion_rules`; the default rules "
        "are `ethics` and `identifying`) `pass` or `fail`. A `fail` returns the item (`exclusion:<rule>`); until a "
        "counted reviewer attests a rule `pass`, the item is held (`exclusion_unattested:<rule>`). A rule the "
        "workspace does not list is refused.",
    ),
    Format(
        "Review: blind answer check",
        "curation.schema:AnswerReview",
        "curate import reviews FILE",
        {"item": "kitchen-01-a", "stage": "answer_check", "reviewer": "rev5", "answer": "A"},
    ),
    Format(
        "Review: group integration",
        "curation.schema:GroupReview",
        "curate import reviews FILE",
        {"group": "kitchen-01", "stage": "group_integration", "reviewer": "rev6", "verdict": "pass"},
    ),
    Format(
        "Story candidate",
        "curation.screening.schema:CandidateLine",
        "curate import candidates FILE",
        {
            "id": "bk1-p03",
            "book": "bk1",
            "page": 3,
            "title": "Kito and the zebra",
            "source": {"collection": "african_storybook", "license": "CC-BY-4.0"},
            "current": {"image": "media/bk1/p03.jpg", "text": "Kito ran to the river."},
            "next": {"image": "media/bk1/p04.jpg", "text": "The zebra was waiting there."},
        },
        "Image paths are relative to the JSONL file.",
    ),
    Format(
        "Story filter record",
        "curation.screening.revise:FilterRecord",
        "curate import reviews FILE",
        {"item": "bk1-p03", "stage": "filter", "reviewer": "rev1", "verdict": "drop", "reason": "weak link"},
    ),
    Format(
        "Story revise record",
        "curation.screening.revise:ReviseRecord",
        "curate story revise FILE",
        {"item": "bk1-p03", "stage": "revise", "reviewer": "rev2", "edits": {"conditions.scene": "By the river"}},
    ),
    Format(
        "Story study: system output",
        "curation.study.lines:OutputLine",
        "curate story study create NAME --release DIR --outputs FILE",
        {"system": "sys-a", "transition": "bk1-p03", "text": "The zebra drank.", "image": "out/bk1-p03.png"},
    ),
    Format(
        "Story study: judge scores",
        "curation.study.lines:JudgeLine",
        "curate story study judges NAME FILE",
        {
            "judge": "gpt-judge",
            "system": "sys-a",
            "transition": "bk1-p03",
            "track": "text",
            "scores": {
                "metadata_alignment": 7,
                "continuity": 8,
                "condition_compliance": 6,
                "ground_truth_consistency": 7,
            },
        },
    ),
    Format(
        "Judge task",
        "curation.kinds.judge.schema:TaskLine",
        "curate judge import tasks FILE",
        {
            "id": "i2t-01",
            "instruction": "Describe the picture.",
            "inputs": {"image": "media/cat.jpg"},
            "output": "text",
            "source": "MMVet",
            "license": "CC-BY-4.0",
        },
    ),
    Format(
        "Judge response",
        "curation.kinds.judge.schema:ResponseLine",
        "curate judge import responses FILE",
        {"task": "i2t-01", "system": "sys-a", "output": {"text": "A cat sleeps on a chair."}},
    ),
    Format(
        "Judge checklist draft (replay)",
        "curation.kinds.judge.drafting:DraftReplayLine",
        "curate judge draft --backend replay:FILE",
        {
            "task": "v2t-01",
            "model": "gemini-1.5-pro",
            "captions": {"video": "A white bar sweeps across coloured tiles."},
            "checklist": {
                "relevance": ["Does the text describe the picture?"],
                "trustworthiness": ["Is every detail in the picture?"],
                "creativity": ["Is the description vivid?"],
                "clarity": ["Is the text easy to read?"],
                "coherence": ["Does the text hold together?"],
                "completeness": ["Is the main subject named?"],
            },
        },
    ),
    Format(
        "Judge record: checklist curation / cross-check",
        "curation.kinds.judge.schema:ChecklistSelectionRecord",
        "curate judge import records FILE (entry ids: curate judge checklist show TASK)",
        {"task": "i2t-01", "stage": "checklist_curation", "reviewer": "ann1", "selected": ["rele-6b1def4682"]},
    ),
    Format(
        "Judge record: checklist adjudication",
        "curation.kinds.judge.schema:ChecklistAdjudicationRecord",
        "curate judge import records FILE",
        {
            "task": "i2t-01",
            "adjudicator": "maya",
            "selected": ["rele-6b1def4682"],
            "reason": "the curator's entry is specific to the task",
        },
        dispatch={"stage": "checklist_adjudication"},
    ),
    Format(
        "Judge record: response review",
        "curation.kinds.judge.schema:ResponseReviewRecord",
        "curate judge import records FILE",
        {
            "response": "i2t-01:sys-c",
            "stage": "response_review",
            "reviewer": "rev1",
            "usable": False,
            "reason": "off-topic",
        },
    ),
    Format(
        "Judge annotation (score or pair sample)",
        "curation.kinds.judge.annotation_store:AnnotationLine",
        "curate judge import annotations FILE (sample ids: curate judge samples --json)",
        {
            "sample": "s:i2t-01:sys-a",
            "annotator": "ann1",
            "scores": {
                "overall": 4,
                "relevance": 5,
                "trustworthiness": 4,
                "creativity": 3,
                "clarity": 4,
                "coherence": 4,
                "completeness": 3,
            },
        },
    ),
    Format(
        "Judge output",
        "curation.kinds.judge.schema:JudgeOutputLine",
        "curate judge import outputs FILE",
        {
            "sample": "s:i2t-01:sys-a",
            "judge": "judge-gpt",
            "scores": {
                "overall": [4, 5],
                "relevance": [5, 5],
                "trustworthiness": [4, 4],
                "creativity": [3, 4],
                "clarity": [4, 4],
                "coherence": [4, 5],
                "completeness": [3, 3],
            },
        },
    ),
)

HAND_WRITTEN_FORMATS = """\
## Formats read without a model of their own

### Probe replay (`curate check --probe replay:FILE`)
One line per item and view (model `checker.backends.replay:ReplayLine`): `{"item", "view", "samples": [answers]
| "probs": {option: probability}}`, optionally with the `"audio_route"` `curate check --record` writes (`native`,
`transcript`, `description`, `hidden` or `mixed`); a file may mix `samples` and `probs` lines. Views: `none`,
`text`, `image`, `audio`, `text+image`, `text+audio`, `image+audio`, `text+image+audio`. An answer is one of the
item's option letters, or `"<unparseable>"` for an answer that named none (it counts towards K, never as an
option); at most 1,000 answers a line. `probs` maps the item's option letters to numbers in [0, 1] (`true`,
`"0.5"`, `NaN` and `Infinity` are refused) that sum to 1 (within 0.001); an option left out has probability 0.
Unknown fields, a second line for one item and view, a view the item does not have and an option it does not
have are refused, each as `FILE:LINE`; a refused file probes and stores nothing.

```json
{"item": "kitchen-01-a", "view": "text", "probs": {"A": 0.25, "B": 0.25, "C": 0.25, "D": 0.25}}
{"item": "kitchen-01-a", "view": "text+image+audio", "samples": ["A", "A", "B", "A", "A"]}
```

### Screening replay (`curate screen --backend replay:FILE`, `[screen.model] backend`)
One line per subject and task: `{"subject", "task", "output"}`, the model's recorded JSON answer.

```json
{"subject": "book:bk1", "task": "book_meta", "output": {"genre": "Slice of Life", "topic": "A day by the river"}}
```

### Ratings (`curate stats alpha|kappa|fleiss FILE`)
CSV with the header `unit,coder,value` (or JSON Lines with those keys), one row per rating; a missing
rating is simply absent; an optional `group` column makes bootstrap intervals resample whole groups.
Any other column or key, a column named twice, a CSV row of another width than its header, a value that is
NaN or infinite (`NaN`, `-Infinity`, `1e400` or the text `nan`, `inf`), and in JSON Lines a `true`, a list or
an object where a number or a text goes are refused, each as `FILE:LINE`; nothing is computed from the file.
"""


def _load(spec: str) -> type[BaseModel]:
    module, _, name = spec.partition(":")
    model = getattr(importlib.import_module(module), name)
    assert isinstance(model, type) and issubclass(model, BaseModel), spec
    return model


def formats_page(formats: Iterable[Format] = FORMATS, settings_root: type[BaseModel] | None = None) -> str:
    settings_models = set(_section_models(settings_root or _settings_model()))
    out = [
        HEADER,
        "# Interchange formats\n\n",
        "JSON Lines, UTF-8, one object per line (a line ends at `\\n` only). Paths inside a file are relative to "
        "that file. Every import is all or nothing: each problem is reported as `FILE:LINE: field: problem` and "
        "nothing is imported until the file is clean. Unknown fields are refused. The closed lists fields take "
        "their values from (the taxonomy's leaves, provenance sources, stages, rubrics, licences) are in "
        "[Vocabularies](vocabularies.md).\n\n",
    ]
    shown: set[type[BaseModel]] = set()
    nested: list[type[BaseModel]] = []
    for fmt in formats:
        model = _load(fmt.model)
        model.model_validate(fmt.example)  # an example that the model refuses fails the generator (and CI)
        shown.add(model)
        out.append(f"## {fmt.title}\n\nModel `{fmt.model}` · read by `{fmt.command}`\n\n")
        if _doc(model):
            out.append(_doc(model) + "\n\n")
        if fmt.note:
            out.append(fmt.note + "\n\n")
        out.append(model_table(model) + "\n\n")
        if fmt.dispatch:
            out.append(
                f"A line also carries {', '.join(f'`{json.dumps({k: v})[1:-1]}`' for k, v in fmt.dispatch.items())}.\n\n"
            )
        line = {**dict(list(fmt.example.items())[:1]), **fmt.dispatch, **fmt.example}
        out.append("```json\n" + json.dumps(line, ensure_ascii=False) + "\n```\n\n")
        for info in model.model_fields.values():
            nested += [m for m in _nested_models(info.annotation) if m not in nested]
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
