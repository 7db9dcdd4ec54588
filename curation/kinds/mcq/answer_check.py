"""The blind answer check (TRIAD C.2 step 5): a reviewer who never saw the label answers from the full item."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ...facts import ItemFacts, RecordFacts, StageOutcome, digest
from ...schema import AnswerReview
from .._parts import Control, LabelStudioSpec, Stage, UiPage
from .controls import NOTE, NOTE_TAG

if TYPE_CHECKING:
    from ...config import ReviewSettings


class AnswerCheck(Stage):
    name = "answer_check"
    record_model = AnswerReview
    page = UiPage("pages/answer_check.py", "Blind answer check", ":material/visibility_off:")
    help = "answer the item blind; a different answer returns it"
    blind = True
    labelstudio = LabelStudioSpec(
        label_config=(
            '<View><Header value="Answer the question from the text, the image and the audio together."/>'
            '<Text name="context" value="$context"/><Image name="image" value="$image" maxWidth="640px"/>'
            '<Audio name="audio" value="$audio"/><Text name="question" value="$question"/>'
            '<Choices name="answer" toName="question" value="$options" choice="single-radio" required="true"/>'
            + NOTE_TAG.format(to="question")
            + "</View>"
        ),
        controls={"answer": Control("choices", required=True, from_options=True), "note": NOTE},
        task_fields=("context", "question", "image", "audio", "options"),
    )

    def inputs(self, item: ItemFacts) -> str:
        return digest(self.name, item.context, item.question, item.options, item.image, item.audio)

    def judge(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> StageOutcome:
        if any(r.payload.get("answer") != item.answer for r in records):
            return StageOutcome(False, ["answer_check_disagrees"])
        return StageOutcome(True if len(records) >= self.quorum(settings) else None)

    def record_problems(self, review: BaseModel, item: ItemFacts) -> list[tuple[str, str]]:
        assert isinstance(review, AnswerReview)
        if review.answer not in item.options:
            return [("answer", f"{review.answer!r} is not an option of {item.id!r}")]
        return []

    def admission(self, item: ItemFacts, records: Sequence[RecordFacts], settings: ReviewSettings) -> dict[str, Any]:
        return {"reviews": len(records), "agreeing": sum(r.payload.get("answer") == item.answer for r in records)}
