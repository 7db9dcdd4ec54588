import pytest

from curation.agreement.gates import adjudication_entries, agreement_gate_failures
from curation.agreement.review_agreement import ReviewedItem, agreement_report, gated_statistics
from curation.config import AgreementSettings
from curation.vocab import CHECKLIST_VIEWS

OPTIONS = ("A", "B", "C", "D")


def _item(item_id, answer="A", **records):
    taxonomy = {"text": "pragmatic", "image": "semiotic", "audio": "prosodic"}
    return ReviewedItem(item_id, "g", "ann1", answer, OPTIONS, taxonomy, records)


def _checklist(full, other=("A", "B")):
    return {"consistent": {v: sorted(full if v == "text+image+audio" else other) for v in CHECKLIST_VIEWS}}


def _answers(pairs):
    return [_item(f"i{k}", label, answer_check=[("rev1", {"answer": ans})]) for k, (label, ans) in enumerate(pairs)]


def test_answer_gate_fails_below_its_minimum():
    items = _answers([("A", "A"), ("B", "A"), ("C", "C"), ("A", "B"), ("B", "B"), ("C", "A")])
    settings = AgreementSettings(checklist_alpha_min=-1, answer_kappa_min=0.6)
    [failure] = agreement_gate_failures(items, settings)
    assert failure.gate == "answer_kappa_min"
    assert failure.value < 0.6
    assert "below the minimum 0.600" in failure.message
    assert agreement_gate_failures(items, AgreementSettings(checklist_alpha_min=-1, answer_kappa_min=0.0)) == []


def test_an_unmeasurable_statistic_fails_its_gate():
    items = _answers([("A", "A"), ("B", "B")])
    [failure] = agreement_gate_failures(items, AgreementSettings(answer_kappa_min=-1))
    assert failure.gate == "checklist_alpha_min"
    assert failure.value is None
    assert "could not be measured: no subset checklists" in failure.message


def test_gates_set_to_minus_one_are_off():
    off = AgreementSettings(checklist_alpha_min=-1, answer_kappa_min=-1, audio_alpha_min=-1)
    assert agreement_gate_failures([_item("i1")], off) == []


def test_audio_gate_judges_every_axis():
    items = [
        _item(
            f"i{k}",
            audio_signoff=[
                ("rev1", {"scores": {"naturalness": k % 5 + 1, "clarity": 3, "artefacts": 4}}),
                ("rev2", {"scores": {"naturalness": k % 5 + 1, "clarity": 4, "artefacts": 4 if k else 5}}),
            ],
        )
        for k in range(6)
    ]
    settings = AgreementSettings(checklist_alpha_min=-1, answer_kappa_min=-1, audio_alpha_min=0.5)
    failures = {f.statistic: f for f in agreement_gate_failures(items, settings)}
    assert "audio sign-off alpha (ordinal, naturalness)" not in failures
    assert failures["audio sign-off alpha (ordinal, clarity)"].value is not None
    assert set(failures) == {"audio sign-off alpha (ordinal, clarity)", "audio sign-off alpha (ordinal, artefacts)"}


def test_adjudication_queues_split_checklists_wide_audio_and_wrong_blind_answers():
    items = [
        _item(
            "calm",
            subset_checklist=[("rev1", _checklist({"A"})), ("rev2", _checklist({"A"}))],
            audio_signoff=[
                ("rev1", {"scores": {"naturalness": 4, "clarity": 4, "artefacts": 4}}),
                ("rev2", {"scores": {"naturalness": 5, "clarity": 4, "artefacts": 3}}),
            ],
            answer_check=[("rev3", {"answer": "A"})],
        ),
        _item("full-split", subset_checklist=[("rev1", _checklist({"A"})), ("rev2", _checklist({"A", "B"}))]),
        _item(
            "wide-split",
            subset_checklist=[("rev1", _checklist({"A"}, ("A", "B", "C", "D"))), ("rev2", _checklist({"A"}, ("A",)))],
        ),
        _item(
            "loud",
            audio_signoff=[
                ("rev1", {"scores": {"naturalness": 2, "clarity": 4, "artefacts": 4}}),
                ("rev2", {"scores": {"naturalness": 4, "clarity": 4, "artefacts": 4}}),
            ],
        ),
        _item("label", answer_check=[("rev3", {"answer": "C"})]),
    ]
    queue = {(e.item, e.stage): e for e in adjudication_entries(items, AgreementSettings())}
    assert set(queue) == {
        ("full-split", "subset_checklist"),
        ("wide-split", "subset_checklist"),
        ("loud", "audio_signoff"),
        ("label", "answer_check"),
    }
    assert queue[("full-split", "subset_checklist")].reasons == ("split_view:text+image+audio",)
    wide = queue[("wide-split", "subset_checklist")]
    assert wide.measure == pytest.approx(18 / 28)  # 6 strict views x 3 split options of 7 x 4
    assert wide.reasons == ("checklist_split:0.64",)
    assert queue[("loud", "audio_signoff")].reasons == ("audio_spread:naturalness",)
    assert queue[("label", "answer_check")].reasons == ("label=A", "blind_answer:rev3=C")
    stricter = adjudication_entries(items, AgreementSettings(adjudicate_audio_spread=1))
    assert ("calm", "audio_signoff") in {(e.item, e.stage) for e in stricter}


def test_a_stage_settled_by_a_maintainer_leaves_the_queue():
    split = {"subset_checklist": [("rev1", _checklist({"A"})), ("rev2", _checklist({"A", "B"}))]}
    open_item = ReviewedItem("i1", "g", "ann1", "A", OPTIONS, {}, split)
    settled = ReviewedItem("i1", "g", "ann1", "A", OPTIONS, {}, split, frozenset({"subset_checklist"}))
    assert len(adjudication_entries([open_item], AgreementSettings())) == 1
    assert adjudication_entries([settled], AgreementSettings()) == []


@pytest.mark.parametrize(
    "settings",
    [
        AgreementSettings(),
        AgreementSettings(checklist_alpha_min=-1, answer_kappa_min=0.0, audio_alpha_min=0.5),
        AgreementSettings(checklist_alpha_min=0.1, answer_kappa_min=0.99, audio_alpha_min=-1),
    ],
)
def test_gates_judged_on_a_report_of_the_same_items_fail_as_those_computed_apart(settings):
    items = [
        _item(
            f"i{k}",
            "ABCA"[k % 4],
            answer_check=[("rev1", {"answer": "ABCD"[k % 3]})],
            subset_checklist=[("rev1", _checklist(("A",))), ("rev2", _checklist(("A", "B") if k % 2 else ("A",)))],
            audio_signoff=[
                ("rev1", {"scores": {"naturalness": k % 5 + 1, "clarity": 3, "artefacts": 4}}),
                ("rev2", {"scores": {"naturalness": 5 - k % 5, "clarity": 4, "artefacts": 4}}),
            ],
        )
        for k in range(8)
    ]
    apart = agreement_gate_failures(items, settings)
    assert apart  # each setting fails at least one gate on these items: the comparison means something
    assert agreement_gate_failures(items, settings, agreement_report(items)) == apart
    assert agreement_gate_failures(items, settings, gated_statistics(items)) == apart
