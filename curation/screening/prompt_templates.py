"""The screening prompts as text files: Omni-StoryBench App. D's own prompts (book metadata, next-page
conditions, speech), shipped in ``curation/screening/prompts/``, and the score prompt (the paper does not
print GLM-4.6V's, so it is this program's). A workspace replaces any of them with a file of the same name in
the folder ``[screen] prompts`` names.

A template's ``{name}`` placeholders are filled with the candidate's inputs; every other brace (the JSON
shapes the appendix shows) is text. A rendered prompt's hash is stored with each proposal, so a changed
prompt is visible in the provenance of what it produced.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from curation.errors import Problem, ValidationFailed
from curation.jsonl import not_a_file, read_text_document

PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "book_meta.system.txt": (),
    "book_meta.user.txt": ("book_name", "book_text"),
    "conditions.system.txt": (),
    "conditions.user.txt": (
        "metadata_json",
        "previous_image",
        "previous_text",
        "previous_speech_json",
        "next_image",
        "next_text",
        "next_speech_json",
        "schema_json",
    ),
    "speech.system.txt": (),
    "speech.user.txt": ("story_text", "lines_text"),
    "speech_no_lines.user.txt": ("story_text",),
    "score.system.txt": (),
    "score.user.txt": ("current_image", "current_text", "next_image", "next_text"),
}
"""Every prompt file and the placeholders it may use (``speech.user.txt`` when the next page has dialogue
lines, ``speech_no_lines.user.txt`` when it has none, as App. D's two cases)."""

REQUIRED: dict[str, tuple[str, ...]] = {
    "book_meta.user.txt": ("book_text",),
    "conditions.user.txt": ("previous_text", "next_text"),
    "speech.user.txt": ("story_text", "lines_text"),
    "speech_no_lines.user.txt": ("story_text",),
    "score.user.txt": ("current_text", "next_text"),
}
"""Placeholders a replacement must keep: without them the model would not see the candidate."""

FROM_THE_PAPER = ("book_meta", "conditions", "speech")
"""Tasks whose packaged prompts are App. D's text (typographic quotes written as ASCII, line breaks kept)."""

MAX_PROMPT_BYTES = 64 * 1024
_PLACEHOLDER = re.compile(r"\{([a-z][a-z_]*)\}")


def _packaged() -> dict[str, str]:
    folder = resources.files("curation.screening") / "prompts"
    return {name: (folder / name).read_text(encoding="utf-8").removesuffix("\n") for name in PLACEHOLDERS}


def template_problems(name: str, text: str, file: str) -> list[Problem]:
    """What is wrong with a template: a placeholder it may not use, or one it must keep and lacks."""
    allowed, used = PLACEHOLDERS[name], set(_PLACEHOLDER.findall(text))
    problems = [
        Problem(
            f"unknown placeholder {{{u}}}; this prompt may use "
            + (", ".join(f"{{{a}}}" for a in allowed) or "none (write braces of JSON with a space or a quote inside)"),
            file=file,
        )
        for u in sorted(used - set(allowed))
    ]
    problems += [
        Problem(f"the placeholder {{{r}}} is missing: without it the model does not see the candidate", file=file)
        for r in REQUIRED.get(name, ())
        if r not in used
    ]
    return problems


@dataclass(frozen=True)
class ScreenPrompts:
    """The prompt texts a screen asks with, by file name, and which of them the workspace replaced."""

    texts: Mapping[str, str]
    replaced: tuple[str, ...] = ()

    def render(self, name: str, **values: str) -> str:
        """The template ``name`` with its placeholders filled (each must be given)."""
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)] if m.group(1) in values else m.group(0), self.texts[name])

    def digest(self, *tasks: str) -> str:
        """A hash of the templates of ``tasks`` (all when none is named): what a cached answer was asked with."""
        names = [n for n in sorted(self.texts) if not tasks or n.split(".")[0].removesuffix("_no_lines") in tasks]
        digest = hashlib.sha256()
        for name in names:
            digest.update(f"{name}\x00{self.texts[name]}\x00".encode())
        return digest.hexdigest()[:32]


PACKAGED = ScreenPrompts(_packaged())
"""The prompts this program ships (App. D's, and the score prompt)."""


def load_prompts(root: Path, folder: str) -> ScreenPrompts:
    """The packaged prompts, each replaced by the file of the same name in ``folder`` (relative to the workspace
    ``root``; ``""``: none replaced). Every problem in the folder is named, and none of it is used then."""
    if not folder:
        return PACKAGED
    where = root / folder
    setting = "curate.toml: screen.prompts"
    if not where.is_dir():
        why = not_a_file(where) or "is not a folder"
        raise ValidationFailed(
            [Problem(f"{folder}: {why}", setting)], "give a folder of prompt files, or remove the key"
        )
    texts, problems, replaced = dict(PACKAGED.texts), [], []
    for path in sorted(where.iterdir()):
        if path.name not in PLACEHOLDERS:
            known = ", ".join(PLACEHOLDERS)
            problems.append(Problem(f"not a screening prompt; the prompts are {known}", file=str(path)))
            continue
        try:
            text = read_text_document(path, MAX_PROMPT_BYTES).removesuffix("\n")
        except ValidationFailed as exc:
            problems += exc.problems
            continue
        problems += template_problems(path.name, text, str(path))
        texts[path.name] = text
        replaced.append(path.name)
    if problems:
        raise ValidationFailed(problems, "nothing was screened; fix the prompt files and try again")
    return ScreenPrompts(texts, tuple(replaced))
