"""The screening prompts page (docs/reference/prompts.md): every prompt file ``curate screen`` asks with, as
shipped in ``curation/screening/prompts/``, its placeholders, and how a workspace replaces it."""

from __future__ import annotations

from curation.screening.prompt_templates import FROM_THE_PAPER, PACKAGED, PLACEHOLDERS, REQUIRED
from scripts.reference_common import HEADER

_TASK_OF = {"book_meta": "book metadata", "conditions": "next-page conditions", "speech": "speech target"}


def prompts_page() -> str:
    out = [
        HEADER,
        "# Screening prompts\n\n",
        "The model steps of `curate screen` ask with these prompts: Omni-StoryBench App. D's own text for the book "
        "metadata, the next-page conditions and the speech target (typographic quotes written as ASCII), and this "
        "program's prompt for the four screening scores (the paper does not print the prompt it scored with). "
        "They ship as files in `curation/screening/prompts/`. Each answer is held to its task's JSON schema (the "
        "[formats](formats.md#screening-replay)); a rendered prompt's hash is kept with every proposal "
        "(`provenance.prompt_hash`).\n\n",
        "**Replacing a prompt.** Set `[screen] prompts` in `curate.toml` to a folder (relative to the workspace) and "
        "put in it a file of the same name as the one to replace; the others stay as shipped. A placeholder is "
        "`{name}` (lower-case letters and `_`); every other brace is text. A file of another name, a placeholder "
        "the prompt may not use, or one it must keep and lacks is refused, each named, before anything is "
        "screened. A changed prompt changes the screen's cache key: the step asks again.\n\n",
        "| file | placeholders (required in **bold**) | source |\n|---|---|---|\n",
    ]
    for name, placeholders in PLACEHOLDERS.items():
        task = name.split(".")[0].removesuffix("_no_lines")
        shown = ", ".join(f"**`{{{p}}}`**" if p in REQUIRED.get(name, ()) else f"`{{{p}}}`" for p in placeholders)
        source = f"App. D, {_TASK_OF[task]}" if task in FROM_THE_PAPER else "this program"
        out.append(f"| `{name}` | {shown or 'none'} | {source} |\n")
    out.append(
        "\n`speech.user.txt` is asked when the next page's dialogue lines are known, `speech_no_lines.user.txt` "
        "when they are not (App. D's two cases). `{previous_image}`, `{next_image}` and `{current_image}` read "
        "`(image)` (the page's picture goes with the request, in the order of the placeholders); "
        "`{previous_speech_json}` is `[]` (a candidate marks no speech on its current page) and "
        "`{next_speech_json}` the next page's dialogue lines as a JSON list; `{schema_json}` is the task's JSON "
        "schema.\n\n"
    )
    for name in PLACEHOLDERS:
        out.append(f"## `{name}`\n\n```text\n{PACKAGED.texts[name]}\n```\n\n")
    return "".join(out).rstrip() + "\n"
