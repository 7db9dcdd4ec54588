"""Grammar and wording pass (TRIAD C.2 step 2): reviewers sign the text off, any ``fail`` returns the item.

The item's notes (TRIAD's A+ / I+ descriptions, ``curation.notes``) are text too: the stage reads them, so a
changed note invalidates its reviews. An item without notes has the inputs hash it had before notes existed.
"""

from __future__ import annotations

from ...facts import ItemFacts, digest
from ...notes import item_notes
from ...schema import GrammarReview
from .._parts import LabelStudioSpec, Stage, UiPage
from .controls import NOTE, NOTE_TAG, VERDICT, VERDICT_TAG


class Grammar(Stage):
    name = "grammar"
    record_model = GrammarReview
    page = UiPage("pages/grammar.py", "Grammar pass", ":material/spellcheck:")
    help = "is the text fluent and free of errors? (pass/fail)"
    labelstudio = LabelStudioSpec(
        label_config=(
            '<View><Header value="Grammar and wording: is the text fluent, unambiguous where it should be, and free of errors?"/>'
            '<Text name="context" value="$context"/><Text name="question" value="$question"/>'
            '<HyperText name="options_list" value="$options_html"/>'
            '<HyperText name="notes" value="$notes_html"/>'
            + VERDICT_TAG.format(to="context")
            + NOTE_TAG.format(to="context")
            + "</View>"
        ),
        controls={"verdict": VERDICT, "note": NOTE},
        task_fields=("context", "question", "options_html", "notes_html"),
    )

    def inputs(self, item: ItemFacts) -> str:
        notes = item_notes(item.extra) if item.kind == "mcq" else {}
        if not notes:
            return super().inputs(item)
        return digest(self.name, item.context, item.question, item.options, notes)
