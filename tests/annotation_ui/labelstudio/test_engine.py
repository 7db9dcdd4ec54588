"""The engine's shared checks, in their order, on annotations as an export gives them (no server: the
round trips are in the ``test_ls_*`` files), and the registry of declarations."""

from __future__ import annotations

import inspect
from collections.abc import Hashable
from typing import Any

import pytest

from annotation_ui.labelstudio import engine
from annotation_ui.labelstudio.engine import ProjectKind
from annotation_ui.labelstudio.judge_queries import CONTROLS, LABEL_CONFIG
from annotation_ui.labelstudio.projects import TAMPERED
from annotation_ui.labelstudio.pulling import Seen, Verdict
from annotation_ui.labelstudio.registry import PROJECT_KINDS, REVIEW_PROJECTS
from annotation_ui.labelstudio.results import Control, bind_controls, config_controls, prefill_regions
from annotation_ui.labelstudio.tables import LsTask
from curation.tables import Person

CONFIG = (
    '<View><Text name="t" value="$t"/><Choices name="verdict" toName="t"><Choice value="pass"/>'
    '<Choice value="fail"/></Choices></View>'
)


class Toy(ProjectKind):
    """A declaration with one check of each of its own kinds, to see where the engine calls them."""

    roles = frozenset({"reviewer"})
    key, title, quorum, push_hint = "toy:x", "toy", 1, "push it"

    def label_config(self) -> str:
        return CONFIG

    def controls(self) -> dict[str, Control]:
        return {"verdict": Control("choices", required=True, choices=("pass", "fail"))}

    def tasks(self, connection: Any) -> list[Any]:
        return []

    def locate(self, seen: Seen) -> str:
        return "gone" if seen.subject == "item:gone" else ""

    def admit(self, seen: Seen) -> Hashable | Verdict:
        if seen.person == "author":
            return Verdict(seen, "refused", reason="own item")
        return (seen.subject, seen.person)

    def guard(self, seen: Seen) -> str | None:
        return "exposed" if seen.subject == "item:exposed" else None

    def accept(self, seen: Seen, values: dict[str, Any]) -> dict[str, Any] | str:
        return "fails need a note" if values["verdict"] == ["fail"] else values

    def new_report(self, project: Any) -> Any:
        raise NotImplementedError

    def record(self, ws: Any, pulled: Any, report: Any) -> list[Any]:
        return []

    def refusal(self, outcome: Any) -> Any:
        return outcome


def seen(subject: str = "item:a", person: str = "rev", **changes: Any) -> Seen:
    fields: dict[str, Any] = dict(
        annotation=1, task=1, row=LsTask(project_key="toy:x", task_id=1, ref="r", subject=subject, inputs_hash="h"),
        subject=subject, email=f"{person}@x", user=f"{person}@x", person=person, updated_at="t", skipped=False,
        result=[{"from_name": "verdict", "to_name": "t", "type": "choices", "value": {"choices": ["pass"]}}],
        refusal="", tampered=False, previous=None,
    )  # fmt: skip
    return Seen(**{**fields, **changes})


PEOPLE = {
    "rev": Person(name="rev", roles="reviewer"),
    "author": Person(name="author", roles="author,reviewer"),
    "guest": Person(name="guest", roles="author"),
}


def judged(x: Seen) -> tuple[str, str]:
    kind = Toy()
    v = engine._judge(kind, bind_controls(kind.label_config(), kind.controls()), PEOPLE, x)
    return v.outcome, v.reason


@pytest.mark.parametrize(
    ("annotation", "verdict"),
    [
        (seen(), ("vote", "")),
        (seen(refusal="forged", subject="item:gone"), ("refused", "forged")),  # the export's checks come first
        (seen(subject="item:gone", person="guest"), ("refused", "gone")),  # the subject before the person
        (seen(person="guest"), ("refused", "'guest' (guest@x) does not have the reviewer role")),
        (seen(person="author", skipped=True), ("refused", "own item")),  # the kind's admission before a skip
        (seen(skipped=True, subject="item:exposed"), ("skipped", "")),  # a skip is kept before the guard
        (seen(subject="item:exposed", tampered=True), ("refused", "exposed")),
        (seen(tampered=True, result=[]), ("refused", TAMPERED)),  # changed data before the values
        (seen(result=[]), ("refused", "field 'verdict' is required but missing")),
        (
            seen(result=[{"from_name": "verdict", "to_name": "t", "type": "choices", "value": {"choices": ["fail"]}}]),
            ("refused", "fails need a note"),
        ),
    ],
)
def test_the_shared_checks_run_in_order_around_the_kinds_own(annotation: Seen, verdict: tuple[str, str]) -> None:
    assert judged(annotation) == verdict


def test_every_registered_declaration_is_complete() -> None:
    assert all(issubclass(k, ProjectKind) and not inspect.isabstract(k) for k in PROJECT_KINDS)
    assert set(REVIEW_PROJECTS.values()) <= set(PROJECT_KINDS)


def test_the_query_screening_config_declares_its_controls_and_starts_from_the_wording() -> None:
    bound = bind_controls(LABEL_CONFIG, CONTROLS)
    assert config_controls(LABEL_CONFIG) == {
        "decision": ("choices", "query"),
        "reason": ("choices", "query"),
        "instruction": ("textarea", "query"),
        "why": ("textarea", "query"),
    }
    (region,) = prefill_regions({"instruction": "Say <b>it</b>."}, bound)
    assert region == {
        "from_name": "instruction",
        "to_name": "query",
        "type": "textarea",
        "value": {"text": ["Say <b>it</b>."]},
        "origin": "prediction",
    }
