"""The judges' prompts and strict answer parsing (App. D, Analyze-then-Judge), and the consistency figures
on a case small enough to check by hand."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from curation.errors import ValidationFailed
from curation.kinds.judge.judging import (
    criteria_of,
    judge_prompt,
    parse_answer,
    position_consistency,
    run_consistency,
)
from curation.kinds.judge.rubrics import RUBRICS
from curation.kinds.judge.schema import ChecklistEntry, PersonProvenance

TASK = SimpleNamespace(instruction="Describe the bell.", inputs={"video": "ab" * 32})
TEXT = SimpleNamespace(asset=None, modality="text", text="A bronze bell.")
IMAGE = SimpleNamespace(asset="cd" * 32, modality="image", text=None)
ENTRY = ChecklistEntry(
    id="crea-1", rubric="creativity", text="Does it go beyond naming the bell?",
    provenance=PersonProvenance(person="ann1", action="added"),
)  # fmt: skip


def test_the_settings_ask_for_their_criteria_and_the_checklist_only_where_it_belongs() -> None:
    assert criteria_of("overall") == ("overall",) and criteria_of("rubric") == (*RUBRICS, "overall")
    with pytest.raises(ValidationFailed, match="settings are overall, rubric, checklist"):
        criteria_of("vibes")
    overall = judge_prompt("score", "overall", TASK, [TEXT], [ENTRY])
    checklist = judge_prompt("score", "checklist", TASK, [TEXT], [ENTRY])
    assert "Scoring Rule" not in overall.user and "Checklist:" not in overall.user
    assert (
        "Scoring Rule: 1: Minimal creativity" in checklist.user and "- [creativity] Does it go beyond" in checklist.user
    )
    assert "step by step" in checklist.system and '"comment"' in checklist.user
    pair = judge_prompt("pair", "rubric", TASK, [TEXT, IMAGE], [], variant=1)
    assert pair.media == (("video", "ab" * 32), ("image", "cd" * 32)) and "0 means the first" in pair.system
    assert "First response: A bronze bell." in pair.user and "Second response: the attached image" in pair.user
    assert len({judge_prompt("score", "overall", TASK, [TEXT], [], i).sha256 for i in range(3)}) == 3, "varied"


def test_answers_are_parsed_strictly_never_repaired() -> None:
    answer = {"overall": {"comment": "ok", "score": 4}, "clarity": {"comment": "ok", "score": 5}}
    assert parse_answer("score", ["overall", "clarity"], json.dumps(answer)) == {"overall": 4, "clarity": 5}
    for broken in ({"comment": "ok", "score": "4"}, {"comment": "ok", "score": 4.0}, {"comment": "ok", "score": 6},
                   {"score": 4}, {"comment": "ok", "score": True}, 4):  # fmt: skip
        assert parse_answer("score", ["overall"], json.dumps({"overall": broken})) == {"overall": None}
    assert parse_answer("score", ["overall"], "Score: 4") == {"overall": None}
    assert parse_answer("score", ["overall"], "[4]") == {"overall": None}
    pair = {"overall": {"comment": "ok", "choice": 2}}
    assert parse_answer("pair", ["overall"], json.dumps(pair)) == {"overall": "second"}
    assert parse_answer("pair", ["overall"], json.dumps({"overall": {"comment": "", "choice": 3}})) == {"overall": None}


def test_consistency_by_hand() -> None:
    def run(shown, swapped=None):  # type: ignore[no-untyped-def]
        answers = {"shown": {"overall": shown}}
        if swapped is not None:
            answers["swapped"] = {"overall": swapped}
        return {"answers": answers}

    a = {
        "runs": {
            "1": run(["first", "tie", "first"], ["first", "second", None]),
            "2": run(["second"] * 3, ["second"] * 3),
        }
    }
    b = {"runs": {"1": run([4, 5, 4]), "2": run([4, 4, 4]), "3": run([2, 2, None])}}
    # a: run 1 agrees on sample 0 only (1 of 2 valid), run 2 on all 3: 4 of 5
    assert position_consistency([a, b]) == {"pairs": 5, "value": pytest.approx(4 / 5)}
    # a: run 1 majority first, run 2 second -> 1/2; b: rounded means 4, 4, 2 -> 2/3
    assert run_consistency([a, b]) == {"units": 2, "value": pytest.approx((1 / 2 + 2 / 3) / 2)}
    assert run_consistency([{"runs": {"1": run([4])}}]) == {"units": 0, "value": None}
