"""What the manual says about the demos (issue 43) is what they do: every count and name a page states about
``curate demo``, ``--kind story`` or ``--kind judge`` is matched in the page's text and compared with the demo's
log, workspace or release. A page that stops saying it fails the test too, naming the claim to update."""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.docs.conftest import MANUAL_GROUP, Demos
from tests.docs.manual_examples import ROOT

pytestmark = pytest.mark.xdist_group(MANUAL_GROUP)


class Facts:
    """What the demos built (their logs, workspaces and releases), as the claims below read it."""

    def __init__(self, demos: Demos) -> None:
        self.demos = demos

    def log(self, demo: str, pattern: str) -> re.Match[str]:
        found = re.search(pattern, self.demos.logs[demo], re.MULTILINE)
        assert found, f"the {demo} log has no line matching {pattern!r}:\n{self.demos.logs[demo]}"
        return found

    def query(self, demo: str, sql: str) -> list[tuple[Any, ...]]:
        with closing(sqlite3.connect(self.demos[demo] / "curate.db")) as db:
            return db.execute(sql).fetchall()

    def json(self, demo: str, *args: str) -> Any:
        from omnicurate.cli.main import app

        result = CliRunner().invoke(app, ["-w", str(self.demos[demo]), *args, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    def lines(self, path: str) -> list[dict[str, Any]]:
        demo, _, rel = path.partition("/")
        text = (self.demos[demo] / rel).read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines() if line.strip()]


def _words(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c`` — the manual's way of listing names."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _number(n: int) -> str:
    return {1: "one", 2: "two", 3: "three"}.get(n, str(n))


def _mcq_states(f: Facts) -> tuple[str, ...]:
    rows = f.json("demo-workspace", "status")
    count = Counter(row["state"] for row in rows)
    reasons = {state: {r for row in rows if row["state"] == state for r in row["reasons"]} for state in count}
    returned = [
        ("reducible", any(r.startswith("reducible:") for r in reasons["returned"])),
        ("unnatural audio", any(r.startswith("audio_unnatural:") for r in reasons["returned"])),
        ("TTS-only audio", "tts_only_audio" in reasons["returned"]),
        ("a group rule", any(r.startswith("group:") for r in reasons["returned"])),
    ]
    waiting = all(
        row["stage"] == "group_integration" and "group:sister_pending" in row["reasons"]
        for row in rows
        if row["state"] == "in_review"
    )
    return (
        str(count["admitted"]),
        str(count["returned"]),
        ", ".join(name for name, found in returned if found),
        str(count["held"]),
        "the checklist reviewers disagree" if reasons["held"] >= {"checklist:disagreement"} else str(reasons["held"]),
        str(count["in_review"]),
        "waiting at group integration for a sister" if waiting else "not all waiting for a sister",
    )


def _mcq_items(f: Facts) -> tuple[str, ...]:
    rows = f.json("demo-workspace", "status")
    languages = {row[0] for row in f.query("demo-workspace", "SELECT DISTINCT language FROM item")}
    return str(len(rows)), "English" if languages == {"en"} else str(languages), str(len({r["group"] for r in rows}))


def _people(f: Facts, demo: str) -> dict[str, set[str]]:
    return {name: set(roles.split(",")) for name, roles in f.query(demo, "SELECT name, roles FROM person")}


def _mcq_people(f: Facts) -> tuple[str, ...]:
    people = _people(f, "demo-workspace")
    writers = [f"`{n}`" for n, roles in people.items() if roles == {"author"}]
    reviewers = sorted(n for n, roles in people.items() if roles == {"reviewer"})
    maintainers = [f"`{n}`" for n, roles in people.items() if "maintainer" in roles]
    run = f"`{reviewers[0]}`…`{reviewers[-1]}`" if reviewers == [f"rev{k}" for k in range(1, 7)] else str(reviewers)
    return _words(writers), run, _words(maintainers)


def _mcq_reviewers(f: Facts) -> tuple[str, ...]:
    by_stage = dict(
        f.query("demo-workspace", "SELECT stage, group_concat(DISTINCT reviewer) FROM review_record GROUP BY stage")
    )
    order = ("grammar", "audio_signoff", "subset_checklist", "answer_check", "group_integration")
    said = "; ".join(f"{stage} " + ", ".join(f"`{n}`" for n in sorted(by_stage[stage].split(","))) for stage in order)
    idle = sorted(
        set(_people(f, "demo-workspace"))
        - {n for v in by_stage.values() for n in v.split(",")}
        - {"ann1", "ann2", "maya"}
    )
    return said, _words([f"`{n}`" for n in idle])


def _judge_checklists(f: Facts) -> tuple[str, ...]:
    tasks = f.json("judge-demo", "judge", "checklists")["tasks"]
    rubrics = {entry["rubric"] for task in tasks for entry in task["entries"]}
    sizes = sorted(len(task["entries"]) for task in tasks)
    return {6: "six"}.get(len(rubrics), str(len(rubrics))), f"{sizes[0]}–{sizes[-1]}"


def _release_counts(f: Facts) -> tuple[str, ...]:
    mcq = f.lines("demo-workspace/releases/0.1.0/admission/units.jsonl")
    mcq_records = f.lines("demo-workspace/releases/0.1.0/admission/records.jsonl")
    story = f.lines("story-demo/releases/0.1.0/admission/units.jsonl")
    story_records = f.lines("story-demo/releases/0.1.0/admission/records.jsonl")
    tasks = f.lines("judge-demo/releases/1.0.0/admission/tasks.jsonl")
    judge_records = sum(len(task["records"]) for task in tasks)
    counts = (len(story), len(story_records), len(mcq), len(mcq_records), len(tasks), judge_records)
    return tuple(str(n) for n in counts)


@dataclass(frozen=True)
class Claim:
    doc: str
    says: str
    """A regular expression the page's text (its whitespace collapsed) must match; its groups are the facts."""
    facts: Callable[[Facts], tuple[str, ...]]


CLAIMS = [
    Claim(
        "getting-started.md",
        r"This builds a demo workspace \((\d+) (English) items in (\d+) scene groups",
        lambda f: (lambda n, lang, g: (n, lang, g))(*_mcq_items(f)),
    ),
    Claim(
        "getting-started.md",
        r"imports (\d+) review records",
        lambda f: (f.log("demo-workspace", r"^reviews: (\d+) recorded")[1],),
    ),
    Claim(
        "getting-started.md",
        r"records a maintainer's decision on (the one) cluster they find",
        lambda f: (
            "the one" if len(re.findall(r"^audit: cluster ", f.demos.logs["demo-workspace"], re.M)) == 1 else "not one",
        ),
    ),
    Claim(
        "getting-started.md",
        r"— (\d+) admitted, (\d+) returned \(([^)]*)\), (\d+) held \(([^)]*)\) and (\d+) in review \(([^)]*)\)",
        _mcq_states,
    ),
    Claim(
        "getting-started.md",
        r"building release `([\d.]+)` of the admitted items under `(demo-workspace/releases/[\d.]+)`",
        lambda f: f.log(
            "demo-workspace", r"^release: ([\d.]+) with \d+ items at .*/(demo-workspace/releases/[\d.]+)$"
        ).groups(),
    ),
    Claim(
        "getting-started.md",
        r"audits, release ([\d.]+) \(Omni-StoryBench\)",
        lambda f: (f.log("story-demo", r"^release: ([\d.]+) with")[1],),
    ),
    Claim(
        "getting-started.md",
        r"judges vs people, release ([\d.]+)",
        lambda f: (f.log("judge-demo", r"^release ([\d.]+):")[1],),
    ),
    Claim(
        "getting-started.md",
        r"The demo and `curate audit` say which ran \(`(audio fingerprints: built-in spectral hash) \+ chromaprint",
        lambda f: (f.log("demo-workspace", r"^(audio fingerprints: built-in spectral hash)")[1],),
    ),
    Claim(
        "ui.md",
        r"as any demo person with the password `([^`]+)`",
        lambda f: (f.log("demo-workspace", r"\(UI password: ([^)]+)\)")[1],),
    ),
    Claim("ui.md", r"(`ann1` and `ann2`) write items, (`rev1`…`rev6`) review, (`maya`) maintains", _mcq_people),
    Claim(
        "ui.md",
        r"The demo's recorded reviews were made by: (.*?)\. (`rev5` and `rev6`) have reviewed nothing",
        _mcq_reviewers,
    ),
    Claim(
        "ui/every-kind.md",
        r"`curate demo --kind story` sets the password `([^`]+)` for (rev1, rev2, rev3 and maya)",
        lambda f: (lambda m: (m[2], _words(m[1].split(", "))))(
            f.log("story-demo", r"^people: (.*) \(UI password: ([^)]+)\)")
        ),
    ),
    Claim(
        "kinds/mcq-pool-of-five.md",
        r"`curate demo` uses this shape: (ann1 and ann2) write, rev1 is (B), rev2 (C), rev3 (D), rev4 (E) on every item",
        lambda f: (
            _words([p.strip() for p in f.log("demo-workspace", r"^  (ann1, ann2): A:")[1].split(",")]),
            *(f.log("demo-workspace", rf"^  {who}: ([A-E]):")[1] for who in ("rev1", "rev2", "rev3", "rev4")),
        ),
    ),
    Claim(
        "kinds/judge_task.md",
        r"builds a second kind of benchmark: (\d+) candidate queries curated into (\d+) any-to-any tasks",
        lambda f: (
            str(f.query("judge-demo", "SELECT count(*) FROM judge_query")[0][0]),
            str(f.query("judge-demo", "SELECT count(*) FROM judge_task")[0][0]),
        ),
    ),
    Claim(
        "kinds/judge_task.md",
        r"(three) systems' responses",
        lambda f: (_number(f.query("judge-demo", "SELECT count(DISTINCT system) FROM judge_response")[0][0]),),
    ),
    Claim("kinds/judge_task.md", r"\((six) rubrics; (\d+–\d+) per task in the demo", _judge_checklists),
    Claim(
        "kinds/judge_task.md",
        r"a blind cross-check \((two) disagreements, adjudicated by `(maya)`\)",
        lambda f: (lambda rows: (_number(sum(n for _, n in rows)), _words([who for who, _ in rows])))(
            f.query(
                "judge-demo",
                "SELECT reviewer, count(*) FROM judge_record WHERE stage = 'checklist_adjudication' GROUP BY reviewer",
            )
        ),
    ),
    Claim(
        "kinds/judge_task.md",
        r"a response review \((one) off-topic, (one) NSFW\)",
        lambda f: (
            ("one", "one")
            if f.log("judge-demo", r"^response review: \d+ usable, 2 refused \(off-topic: [^,]*, NSFW [^,]*\)$")
            else ()
        ),
    ),
    Claim(
        "kinds/judge_task.md",
        r"(\d+) score and (\d+) pair samples, (three) annotators' scores and choices, (two) judges' outputs \(replayed\)",
        lambda f: (
            *(
                str(n)
                for _, n in f.query(
                    "judge-demo", "SELECT kind, count(*) FROM judge_sample GROUP BY kind ORDER BY kind DESC"
                )
            ),
            _number(f.query("judge-demo", "SELECT count(DISTINCT annotator) FROM judge_annotation")[0][0]),
            _number(len({line["judge"] for line in f.lines("judge-demo/demo-sources/judge_outputs.jsonl")})),
        ),
    ),
    Claim(
        "kinds/judge_task.md",
        r"release `([\d.]+)` under `(judge-demo/releases/[\d.]+)`",
        lambda f: f.log("judge-demo", r"^release ([\d.]+): .*/(judge-demo/releases/[\d.]+) ").groups(),
    ),
    Claim(
        "kinds/judge-systems-and-judges.md",
        r"`curate demo --kind judge` runs a replayed judge \(`([\w-]+)`, (\w+) setting\) (twice)",
        lambda f: (
            f.log("judge-demo", r"^judge run 1 \(([\w-]+), ")[1],
            f.log("judge-demo", r"^judge run 1 \([\w-]+, (\w+) setting, replayed\)")[1].capitalize(),
            "twice"
            if f.log("judge-demo", r"^judge run 2 \(")
            and not re.search("^judge run 3", f.demos.logs["judge-demo"], re.M)
            else "",
        ),
    ),
    Claim("releases.md", r"the judge demo's `([\d.]+)`", lambda f: (f.log("judge-demo", r"^release ([\d.]+):")[1],)),
    Claim(
        "kinds/story_transition.md",
        r"builds a (few dozen) candidates from generated books",
        lambda f: (
            "few dozen" if 24 <= int(f.log("story-demo", r"candidates: (\d+) candidates created")[1]) < 100 else "",
        ),
    ),
    Claim(
        "kinds/story_transition.md",
        r"audits and releases into `(story-demo/releases/[\d.]+)/`",
        lambda f: (
            f.log("story-demo", r"^release: [\d.]+ with \d+ transitions at .*/(story-demo/releases/[\d.]+)$")[1],
        ),
    ),
    Claim(
        "kinds/story_transition.md",
        r"the story demo's `([\d.]+)` has (\d+)\)",
        lambda f: f.log("story-demo", r"^release: ([\d.]+) with (\d+) transitions").groups(),
    ),
    Claim(
        "kinds/story-books.md",
        r"The demo \(`curate demo --kind story`\) writes (\d+) small EPUBs",
        lambda f: (str(len(list((f.demos["story-demo"] / "library").glob("*.epub")))),),
    ),
    Claim(
        "releases-admission-record.md",
        r"it now releases (\d+) with (\d+)\).*?mcq demo \(`curate demo`: (\d+) items, (\d+) records\).*?"
        r"judge demo \(`curate demo --kind judge`: (\d+) tasks, (\d+) records\)",
        _release_counts,
    ),
]


@pytest.mark.parametrize("claim", CLAIMS, ids=[f"{c.doc}: {c.says[:40]}" for c in CLAIMS])
def test_what_the_manual_says_about_a_demo_is_what_the_demo_does(claim: Claim, manual_demos: Demos) -> None:
    text = " ".join((ROOT / "docs" / claim.doc).read_text(encoding="utf-8").split())
    said = re.search(claim.says, text)
    assert said, f"docs/{claim.doc} no longer says /{claim.says}/: update CLAIMS with what it says now"
    assert said.groups() == tuple(claim.facts(Facts(manual_demos))), f"docs/{claim.doc}: the demo does otherwise"
