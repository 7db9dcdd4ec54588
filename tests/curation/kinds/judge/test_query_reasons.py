"""Every reason a candidate query can be held or dropped for (issue 46; Judge Anything §2.1: the audits, the
screeners' drops, the open-licence hold) is listed, with what it means and what to do, in the manual's reasons
page (docs/reference/reasons.md, generated from ``curation.reasons``): a code the queries give that the page
lacks fails here, and so does a listed query code that nothing gives."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from curation.kinds.judge.queries import AUDIT_REASONS, SCREEN_REASONS
from curation.kinds.judge.query_draw import licence_hold
from curation.licences import DEFAULT_OPEN_LICENCES
from curation.reasons import JUDGE_QUERIES, REASONS, code_pattern, reason_families
from curation.workspace import Workspace
from devsupport.media_factory import make_image
from omnicurate.cli.main import app

runner = CliRunner()
PAGE = Path(__file__).resolve().parents[4] / "docs" / "reference" / "reasons.md"


def page_codes(family: str) -> list[str]:
    """The codes the generated page lists under ``family``."""
    sections = PAGE.read_text(encoding="utf-8").split("\n## ")
    [section] = [s for s in sections if s.startswith(family + "\n")]
    return re.findall(r"^\| `([^`]+)` \|", section, re.MULTILINE)


def listed(code: str, codes: list[str]) -> list[str]:
    return [c for c in codes if code_pattern(c).match(code)]


def candidates(folder: Path) -> Path:
    folder.mkdir(parents=True)
    make_image(folder / "red.png", "red", fmt="PNG")
    pic = {"image": "red.png"}
    ask = (
        "Describe the red picture in a few short words for a small child who is learning the names of colours at "
        "school."
    )
    lines = [
        {"id": "q-a", "instruction": ask, "inputs": pic},
        {"id": "q-b", "instruction": ask, "inputs": pic},
        {"id": "q-c", "instruction": ask[:-1] + " today.", "inputs": pic},
        {"id": "q-d", "instruction": "Which colour is this?", "inputs": pic},
        {"id": "q-e", "instruction": "Sing a song about rain.", "license": "CC BY-NC 4.0"},
        {"id": "q-f", "instruction": "Hum a tune about snow.", "license": "Our own terms"},
        *({"id": f"q-{r}", "instruction": f"Write about {r} things."} for r in SCREEN_REASONS),
    ]
    text = "".join(json.dumps({"output": "text", "source": "S", "license": "CC-BY-4.0", **x}) + "\n" for x in lines)
    (folder / "queries.jsonl").write_text(text, encoding="utf-8")
    return folder / "queries.jsonl"


def curate(ws: Workspace, *args: str):  # type: ignore[no-untyped-def]
    result = runner.invoke(app, ["-w", str(ws.root), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_every_reason_a_query_is_given_is_on_the_reasons_page(workspace: Workspace, tmp_path: Path) -> None:
    curate(workspace, "judge", "import", "queries", str(candidates(tmp_path / "src")))
    workspace.add_person("ann1", ["reviewer"])
    drops = [{"query": f"q-{r}", "stage": "query_screen", "reviewer": "ann1", "decision": "drop", "reason": r}
             for r in SCREEN_REASONS]  # fmt: skip
    (tmp_path / "screen.jsonl").write_text("".join(json.dumps(d) + "\n" for d in drops), encoding="utf-8")
    curate(workspace, "judge", "queries", "records", str(tmp_path / "screen.jsonl"))
    given = {q["id"]: q["reasons"] for q in json.loads(curate(workspace, "judge", "queries", "list", "--json").stdout)}
    assert given["q-c"] == ["duplicate:media", "duplicate:near_query"] and given["q-d"] == ["duplicate:media"]
    assert given["q-e"] == ["licence:closed:CC-BY-NC-4.0"] and given["q-f"] == ["licence:unknown:Our own terms"]

    codes = page_codes(JUDGE_QUERIES)
    assert codes == list(REASONS[JUDGE_QUERIES]), "regenerate the page: python scripts/gen_reference.py"
    emitted = {r for reasons in given.values() for r in reasons}
    unlisted = sorted(r for r in emitted if not listed(r, codes))
    assert unlisted == [], f"add these to curation/reasons.py ({JUDGE_QUERIES}): {unlisted}"
    assert all(JUDGE_QUERIES in reason_families(r) for r in emitted)
    never_given = sorted(set(codes) - {c for r in emitted for c in listed(r, codes)})
    assert never_given == [], f"listed, but no query was given them here: {never_given}"


def test_the_codes_the_query_modules_declare_are_listed() -> None:
    codes = list(REASONS[JUDGE_QUERIES])
    holds = [licence_hold(x, DEFAULT_OPEN_LICENCES) for x in ("CC BY-ND 4.0", "GPL-3.0", "see the website\nfor terms")]
    declared = [*AUDIT_REASONS, *(f"screen:{r}" for r in SCREEN_REASONS), *(h for h in holds if h)]
    assert len(declared) == len(AUDIT_REASONS) + len(SCREEN_REASONS) + 3
    assert [c for c in declared if len(listed(c, codes)) != 1] == []
    assert all(REASONS[JUDGE_QUERIES][c].strip() for c in codes), "each code says what it means"
