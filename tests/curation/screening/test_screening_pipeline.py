"""`curate screen` on a workspace: the funnel over planted cases, caching, resumption, model failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import select

from checker.structured import ReplayStructured
from curation.errors import CurateError
from curation.screening.importer import import_candidates
from curation.screening.pipeline import run_screen, selected_candidates, stored_funnel
from curation.screening.settings import ScreenSettings
from curation.screening.tables import ScreenResult
from curation.screening.transitions import audit_selected, transition_records
from omnicurate.demo.story_corpus import build_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return build_corpus(tmp_path_factory.mktemp("story"), books=12)


@pytest.fixture
def screened(workspace, corpus):  # type: ignore[no-untyped-def]
    import_candidates(workspace, corpus.candidates)
    funnel = run_screen(workspace, ScreenSettings(), ReplayStructured(str(corpus.replay)))
    return workspace, funnel


def _reasons(funnel) -> dict[str, dict[str, int]]:  # type: ignore[no-untyped-def]
    return {s.step: s.dropped for s in funnel.steps}


def test_each_planted_case_is_dropped_by_its_rule_and_one_per_book_is_selected(screened, corpus) -> None:  # type: ignore[no-untyped-def]
    ws, funnel = screened
    dropped = _reasons(funnel)
    assert dropped["length"] == {"length:next_too_long": 1}
    assert dropped["speech"] == {"speech:multiple_lines": 1}
    swahili_transitions = len(corpus.books[0].pages) - 1
    assert dropped["language"] == {"language:sw": swahili_transitions}
    assert dropped["image"] == {"image:blurry": 2, "image:too_small": 2}  # each bad picture is on two transitions
    books_left = len(corpus.books) - 1  # the Swahili book is gone entirely
    assert funnel.steps[-2].step == "select" and funnel.steps[-2].kept == books_left
    assert funnel.selected == books_left
    with ws.session() as s:
        outcome = dict(s.execute(select(ScreenResult.candidate_id, ScreenResult.reason)).all())
    assert outcome[corpus.planted["length"]] == "length:next_too_long"
    assert outcome[corpus.planted["speech"]] == "speech:multiple_lines"
    selected = selected_candidates(ws, ScreenSettings())
    assert len({c.rsplit("-", 1)[0] for c in selected}) == len(selected)
    assert stored_funnel(ws, ScreenSettings()).to_json() == {
        **funnel.to_json(),
        "steps": [{**s, "computed": 0} for s in funnel.to_json()["steps"]],
    }


def test_rerun_is_cached_and_a_changed_setting_recomputes_only_its_step(screened, corpus) -> None:  # type: ignore[no-untyped-def]
    ws, first = screened
    model = ReplayStructured(str(corpus.replay))
    again = run_screen(ws, ScreenSettings(), model)
    assert [s.computed for s in again.steps] == [0] * 7
    assert again.to_json()["kept"] == first.to_json()["kept"]
    top3 = ScreenSettings(top=3)
    narrower = run_screen(ws, top3, model)
    computed = {s.step: s.computed for s in narrower.steps}
    assert computed["length"] == computed["score"] == 0 and computed["select"] > 0
    assert narrower.selected == 3 and narrower.steps[-1].inputs == 3
    # results of candidates no longer reaching a step are forgotten, so the stored funnel stays a chain
    assert stored_funnel(ws, top3).steps[-1].inputs == 3
    stricter = run_screen(ws, ScreenSettings(top=3, rules={"max_next_words": 20}), model)
    assert {s.step: s.computed for s in stricter.steps}["length"] == stricter.candidates


def test_annotations_keep_model_provenance_and_the_audit_finds_the_planted_leaks(screened, corpus) -> None:  # type: ignore[no-untyped-def]
    ws, _ = screened
    records = transition_records(ws, selected_candidates(ws, ScreenSettings()))
    model_id = ReplayStructured(str(corpus.replay)).model_id
    for record in records:
        assert set(record["annotations"]) == {"book_meta", "conditions", "speech"}
        for proposal in record["annotations"].values():
            assert proposal["provenance"]["model"] == model_id and len(proposal["provenance"]["prompt_hash"]) == 32
        assert record["scores"]["transition_coherence"]["rationale"]
    report = audit_selected(ws, ScreenSettings())
    reasons = report.item_reasons()
    first, second = corpus.planted["duplicate_condition"].split("|")
    assert "leak:duplicate_condition" in reasons[first] and "leak:duplicate_condition" in reasons[second]
    assert "leak:shared_span:scene" in reasons[corpus.planted["foreign_span"]]
    original, copy = corpus.planted["republished"].split("|")
    clusters = [c for c in report.clusters if original in c.items]
    assert len(clusters) == 1 and clusters[0].items == [original, copy]
    assert {e.modality for e in clusters[0].edges} == {"text", "image"}
    assert report.reference.flagged == [corpus.planted["reference_span"]]


class _Flaky:
    """Answers from a replay, but dies in its second batch (a lost server, a killed run)."""

    batch_size = 8

    def __init__(self, replay: Path, fail_on: int | None = 2, broken: set[str] = frozenset()) -> None:  # type: ignore[assignment]
        self.inner, self.calls, self.fail_on, self.broken = ReplayStructured(str(replay)), 0, fail_on, broken

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    def generate(self, requests):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == self.fail_on:
            raise ConnectionError("server went away")
        answers = self.inner.generate(requests)
        return [None if r.subject in self.broken else a for r, a in zip(requests, answers, strict=True)]


def test_an_interrupted_model_step_resumes_without_asking_again(workspace, corpus) -> None:  # type: ignore[no-untyped-def]
    import_candidates(workspace, corpus.candidates)
    flaky = _Flaky(corpus.replay)
    with pytest.raises(ConnectionError):
        run_screen(workspace, ScreenSettings(), flaky)
    with workspace.session() as s:
        stored = s.execute(select(ScreenResult.candidate_id).where(ScreenResult.step == "score")).scalars().all()
    assert len(stored) == 8  # the first batch was kept
    resumed = run_screen(workspace, ScreenSettings(), _Flaky(corpus.replay, fail_on=None))
    score = next(s for s in resumed.steps if s.step == "score")
    assert score.computed == score.inputs - 8


def test_unparseable_model_output_drops_with_a_reason_and_no_model_is_a_clear_error(workspace, corpus) -> None:  # type: ignore[no-untyped-def]
    import_candidates(workspace, corpus.candidates)
    with pytest.raises(CurateError, match="needs a model"):
        run_screen(workspace, ScreenSettings())
    victim = corpus.planted["foreign_span"]
    funnel = run_screen(workspace, ScreenSettings(), _Flaky(corpus.replay, fail_on=None, broken={victim}))
    assert _reasons(funnel)["score"] == {"score:invalid": 1}


def test_replay_file_problems_are_located(tmp_path: Path) -> None:
    from curation.errors import ValidationFailed

    bad = tmp_path / "replay.jsonl"
    bad.write_text(
        "\n".join(
            [
                json.dumps({"subject": "a", "task": "score", "output": {}}),
                json.dumps({"subject": "a", "task": "score", "output": {}}),
                json.dumps({"subject": "b", "task": "guess", "output": {}}),
                json.dumps({"task": "score", "output": {}}),
                json.dumps({"subject": "c", "task": "speech"}),
            ]
        ),
        encoding="utf-8",
    )
    with pytest.raises(ValidationFailed) as caught:
        ReplayStructured(str(bad))
    assert [str(p) for p in caught.value.problems] == [
        f"{bad}:2: a score is given twice",
        f"{bad}:3: task: Input should be 'book_meta', 'conditions', 'speech' or 'score'",
        f"{bad}:4: subject: required field is missing",
        f"{bad}:5: output: required field is missing",
    ]
    bad.write_text(json.dumps({"subject": "a", "task": "score", "output": {}, "note": "?"}) + "\n", encoding="utf-8")
    with pytest.raises(ValidationFailed, match="note: unknown field"):
        ReplayStructured(str(bad))  # the reader is the reference's model (checker.replay_formats)
