"""A judge backend grades the human baseline's open-ended answers (TRIAD §5.1: judges grade free-form answers).

The judge sees the question, the reference answer (the label's option text) and the rater's answer, never the
other options, and says ``correct`` or ``incorrect``; anything else is an unparseable verdict and is not stored.
Calls go through the generation backends (``replay:``, ``transformers:``, ``openai:``), keyed
``baseline:<campaign>:<item>:<rater>`` in replay files.
"""

from __future__ import annotations

from sqlmodel import Session

from curation.baseline.campaign import record_grade, ungraded
from curation.tables import Item
from curation.workspace import Workspace

from .generation import Generator

SYSTEM = (
    "You grade a short free-form answer to a question against the reference answer. Reply with exactly one word: "
    "correct if the answer means the same as the reference, incorrect otherwise."
)


def verdict(text: str) -> bool | None:
    """``correct`` -> True, ``incorrect`` -> False (case and a final full stop aside); anything else None."""
    word = text.strip().rstrip(".").lower()
    return {"correct": True, "incorrect": False}.get(word)


def grade_with_judge(ws: Workspace, campaign: str, judge: Generator) -> dict[str, int]:
    """Grade every open-ended answer the judge has not graded; counts of correct, incorrect and unparseable."""
    grader = f"judge:{judge.model_id}"
    counts = {"correct": 0, "incorrect": 0, "unparseable": 0}
    for answer in ungraded(ws, campaign, grader):
        with Session(ws.engine) as s:
            item = s.get(Item, answer.item_id)
        assert item is not None  # answers reference items by foreign key
        user = f"Question: {item.question}\nReference answer: {item.options[item.answer]}\nAnswer: {answer.answer}"
        said = verdict(judge.generate(f"baseline:{campaign}:{answer.item_id}:{answer.rater}", SYSTEM, user, [], 0.0, 0))
        if said is None:
            counts["unparseable"] += 1
            continue
        record_grade(ws, answer.id or 0, grader, said, actor="cli")
        counts["correct" if said else "incorrect"] += 1
    return counts
