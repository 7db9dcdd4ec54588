"""The checklist combination counts each view once for all rules (and skips counting where the reviewers agree):
every rule still gives exactly the sets of its definition, and the verdicts of rules that combine alike agree."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from curation.kinds.mcq.subset_checklist import RULES, combine_checklist, rule_verdicts, well_posedness_reasons
from curation.vocab import CHECKLIST_VIEWS

VIEWS = list(CHECKLIST_VIEWS)
options = st.lists(st.sampled_from("ABCD"), max_size=5)  # duplicates and empty lists included
checklist = st.fixed_dictionaries({}, optional={view: options for view in VIEWS})


def by_definition(records: list[dict[str, list[str]]], rule: str) -> dict[str, set[str]]:
    sets_by_view = {view: [set(rec.get(view, ())) for rec in records] for view in VIEWS}
    if rule == "any":
        return {view: set().union(*sets) for view, sets in sets_by_view.items()}
    if rule == "all":
        return {view: set.intersection(*sets) if sets else set() for view, sets in sets_by_view.items()}
    return {
        view: {o for o in "ABCD" if sum(o in s for s in sets) * 2 > len(records)} for view, sets in sets_by_view.items()
    }


@given(st.lists(checklist, max_size=5), st.booleans())
def test_each_rule_combines_as_its_definition_says(records: list[dict[str, list[str]]], agree: bool) -> None:
    if agree and records:
        records = [records[0]] * len(records)  # the reviewers' fast path: every list the same
    for rule in RULES:
        assert combine_checklist(records, rule, VIEWS) == by_definition(records, rule)


@given(st.lists(checklist, min_size=1, max_size=4), st.sampled_from("ABCD"))
def test_verdicts_are_definition_1_on_each_rules_sets(records: list[dict[str, list[str]]], answer: str) -> None:
    modalities = ("text", "image", "audio")
    verdicts = rule_verdicts(records, answer, modalities, VIEWS)
    for rule in RULES:
        assert verdicts[rule] == well_posedness_reasons(by_definition(records, rule), answer, modalities)
    assert verdicts["any"] is not verdicts["majority"]  # each rule's list is its own
