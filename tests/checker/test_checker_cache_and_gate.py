"""The probe cache in a workspace: hits, invalidation on edit, resume after a kill; the probe gate; the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from probe_fixtures import ScriptedBackend
from typer.testing import CliRunner

from checker.cache import ProbeCache
from checker.check import PROBE_GATE, check_workspace, load_probe_items
from checker.estimators import EstimatorConfig
from checker.run import run_check
from checker.views import PROBE_VIEWS


def probe_reasons(ws) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    """Per item, the reasons of its stored probe gate result while it matches the item's content."""
    from sqlalchemy import select

    from curation.tables import GateResult, Item

    with ws.session() as s:
        current = dict(s.execute(select(Item.id, Item.content_hash)).all())
        rows = s.execute(
            select(GateResult.item_id, GateResult.content_hash, GateResult.reasons).where(GateResult.gate == PROBE_GATE)
        ).all()
    return {item: list(reasons) for item, digest, reasons in rows if current.get(item) == digest and reasons}


def test_second_run_is_served_from_the_cache(demo_workspace) -> None:  # type: ignore[no-untyped-def]
    items = load_probe_items(demo_workspace)
    assert len(items) == 12 and all(i.image.is_file() and i.audio.is_file() for i in items)
    first = ScriptedBackend()
    _, stats = run_check(items, first, EstimatorConfig(), ProbeCache(demo_workspace.engine))
    assert stats.views_probed == 96 and len(first.asked) == 96
    again = ScriptedBackend()
    results, stats = run_check(items, again, EstimatorConfig(), ProbeCache(demo_workspace.engine))
    assert again.asked == [] and stats.views_cached == 96 and len(results) == 12
    # another estimator setting is another cache entry
    other = ScriptedBackend()
    run_check(items, other, EstimatorConfig(k_full=12), ProbeCache(demo_workspace.engine))
    assert len(other.asked) == 96


def edit_item(ws, tmp_path: Path, item_id: str, **changes) -> None:  # type: ignore[no-untyped-def]
    from curation.items import export_items, import_items

    out = tmp_path / "export" / "items.jsonl"
    export_items(ws, out)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    for line in lines:
        if line["id"] == item_id:
            line.update(changes)
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    import_items(ws, out)
    shutil.rmtree(out.parent)


def test_editing_an_item_invalidates_only_that_item(demo_workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cache = ProbeCache(demo_workspace.engine)
    run_check(load_probe_items(demo_workspace), ScriptedBackend(), EstimatorConfig(), cache)
    edit_item(demo_workspace, tmp_path, "door-01-a", context="The door was left open overnight.")
    backend = ScriptedBackend()
    run_check(load_probe_items(demo_workspace), backend, EstimatorConfig(), cache)
    assert sorted(set(backend.asked)) == sorted(("door-01-a", v) for v in PROBE_VIEWS)


def test_relabelling_rejudges_from_the_cache(demo_workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    cache = ProbeCache(demo_workspace.engine)
    answers = {("kitchen-01-a", v): ["A"] * 10 for v in PROBE_VIEWS}
    before, _ = run_check(load_probe_items(demo_workspace), ScriptedBackend(answers), EstimatorConfig(), cache)
    edit_item(demo_workspace, tmp_path, "kitchen-01-a", answer="C")
    backend = ScriptedBackend(answers)
    after, _ = run_check(load_probe_items(demo_workspace), backend, EstimatorConfig(), cache)
    assert backend.asked == []
    verdict = {r.item: r.verdict for r in after}
    assert {r.item: r.verdict for r in before}["kitchen-01-a"] == "reducible"
    assert verdict["kitchen-01-a"] == "label_mismatch"


def test_a_killed_run_resumes_without_redoing_finished_views(demo_workspace) -> None:  # type: ignore[no-untyped-def]
    items = load_probe_items(demo_workspace)
    cache = ProbeCache(demo_workspace.engine)
    killed = ScriptedBackend(batch_size=16, fail_after_batches=3)  # 16 requests = 2 items per batch
    with pytest.raises(KeyboardInterrupt):
        run_check(items, killed, EstimatorConfig(), cache)
    done = set(killed.asked)
    assert len(done) == 48
    resumed = ScriptedBackend(batch_size=16)
    _, stats = run_check(items, resumed, EstimatorConfig(), cache)
    assert set(resumed.asked).isdisjoint(done) and len(resumed.asked) == 48
    assert stats.views_cached == 48 and stats.views_probed == 48


def assert_probe_holds_nothing(ws, admitted: list[str]) -> None:  # type: ignore[no-untyped-def]
    """The items the block held are admitted again and nothing is held by a probe reason alone (the demo holds
    one item for checklist adjudication, whatever the probe says)."""
    from curation.workflow import derive_status

    after = {s.id: s for s in derive_status(ws)}
    assert all(after[item].state == "admitted" for item in admitted)
    held = [s for s in after.values() if s.state == "held"]
    assert all(any(not r.startswith("probe:") for r in s.reasons) for s in held), held  # held for another reason


def test_gate_block_holds_fully_reviewed_items(demo_workspace) -> None:  # type: ignore[no-untyped-def]
    from curation.workflow import derive_status

    admitted = [s.id for s in derive_status(demo_workspace) if s.state == "admitted"]
    assert admitted
    demo_workspace.settings.gates.probe = "block"
    answers = {(item, v): ["A"] * 10 for item in admitted for v in PROBE_VIEWS}  # reducible everywhere
    document, _, _, _ = check_workspace(demo_workspace, ScriptedBackend(answers), EstimatorConfig())
    reasons = probe_reasons(demo_workspace)
    status = {s.id: s for s in derive_status(demo_workspace)}
    for item in admitted:
        verdict = next(r["verdict"] for r in document["items"] if r["item"] == item)
        assert verdict != "well_posed"
        assert reasons[item] == [f"probe:{verdict}"]
        assert status[item].state == "held" and status[item].reasons == [f"probe:{verdict}"]
    demo_workspace.settings.gates.probe = "warn"
    check_workspace(demo_workspace, ScriptedBackend(answers), EstimatorConfig())
    assert_probe_holds_nothing(demo_workspace, admitted)
    assert set(probe_reasons(demo_workspace)) >= set(admitted)  # warnings still readable
    demo_workspace.settings.gates.probe = "off"  # results are still stored, for status views; nothing blocks
    check_workspace(demo_workspace, ScriptedBackend(answers), EstimatorConfig())
    assert_probe_holds_nothing(demo_workspace, admitted)
    assert set(probe_reasons(demo_workspace)) >= set(admitted)


def test_stale_probe_results_give_no_reason(demo_workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    demo_workspace.settings.gates.probe = "block"
    check_workspace(demo_workspace, ScriptedBackend(), EstimatorConfig())
    assert "door-01-a" in probe_reasons(demo_workspace)
    edit_item(demo_workspace, tmp_path, "door-01-a", question="Is the door opening or closing?")
    assert "door-01-a" not in probe_reasons(demo_workspace)


def test_cli_check_replay_json(demo_workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from omnicurate.cli.main import app

    lines = []
    for item in load_probe_items(demo_workspace)[:3]:
        for view in PROBE_VIEWS:
            full = view == "text+image+audio"
            lines.append(
                {
                    "item": item.id,
                    "view": view,
                    **({"probs": {item.answer: 1.0}} if full else {"samples": list(item.options)[:2] * 2}),
                }
            )
    replay = tmp_path / "run.jsonl"
    replay.write_text("".join(json.dumps(line) + "\n" for line in lines))
    runner = CliRunner()
    result = runner.invoke(app, ["-w", str(demo_workspace.root), "check", "--probe", f"replay:{replay}", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [r["verdict"] for r in document["items"]] == ["well_posed"] * 3
    assert document["summary"]["items"] == 3 and len(document["run"]["skipped"]) == 9
    assert "human_agreement" in document["summary"]
    bad = runner.invoke(app, ["-w", str(demo_workspace.root), "check", "--probe", "nowhere:x"])
    assert bad.exit_code == 2
    bad = runner.invoke(app, ["-w", str(demo_workspace.root), "check", "--probe", f"replay:{replay}", "--tau", "0"])
    assert bad.exit_code == 2


def test_a_recorded_run_replays_to_the_same_verdicts(demo_workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from omnicurate.cli.main import app

    answers = {("door-01-a", "text"): ["A", "??", "A", "A", "A"], ("bank-01-a", "text+image+audio"): ["A"] * 10}
    original, _ = run_check(load_probe_items(demo_workspace), ScriptedBackend(answers), EstimatorConfig())
    from checker.backends.replay import replay_lines

    recorded = tmp_path / "recorded.jsonl"
    recorded.write_text("".join(json.dumps(line) + "\n" for line in replay_lines(original)))
    result = CliRunner().invoke(
        app,
        [
            "-w",
            str(demo_workspace.root),
            "check",
            "--probe",
            f"replay:{recorded}",
            "--json",
            "--record",
            str(tmp_path / "again.jsonl"),
        ],
    )
    assert result.exit_code == 0, result.output
    replayed = {r["item"]: r for r in json.loads(result.stdout)["items"]}
    for item in original:
        assert replayed[item.item]["verdict"] == item.verdict
        assert replayed[item.item]["views"] == item.to_json()["views"]
    assert (tmp_path / "again.jsonl").read_text() == recorded.read_text()


def _replay_file(path: Path, items, text_samples) -> Path:  # type: ignore[no-untyped-def]
    """Every view answers with the first two options, except ``text`` (given) and the full view (the label)."""
    lines = []
    for item in items:
        for view in PROBE_VIEWS:
            if view == "text+image+audio":
                line = {"probs": {item.answer: 1.0}}
            elif view == "text":
                line = {"samples": text_samples(item)}
            else:
                line = {"samples": list(item.options)[:2] * 2}
            lines.append({"item": item.id, "view": view, **line})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(
    ("first_text", "second_text", "union", "verdict"),
    [
        # Each probe alone narrows the text view to one option, but not the same one: the union has two.
        (lambda keys: [keys[0]] * 5, lambda keys: [keys[1]] * 5, lambda keys: keys[:2], "well_posed"),
        # Both narrow it to the same option: the union has one, the item is reducible by text.
        (lambda keys: [keys[0]] * 5, lambda keys: [keys[0]] * 5, lambda keys: keys[:1], "reducible"),
        # One probe sees two options: the union keeps both whatever the other says.
        (
            lambda keys: [keys[0], keys[1]] * 2 + [keys[0]],
            lambda keys: [keys[2]] * 5,
            lambda keys: keys[:3],
            "well_posed",
        ),
    ],
)
def test_two_probes_form_each_views_set_as_the_union(  # type: ignore[no-untyped-def]
    demo_workspace, tmp_path: Path, first_text, second_text, union, verdict
) -> None:
    from omnicurate.cli.main import app

    items = load_probe_items(demo_workspace)[:2]
    first = _replay_file(tmp_path / "a.jsonl", items, lambda item: first_text(list(item.options)))
    second = _replay_file(tmp_path / "b.jsonl", items, lambda item: second_text(list(item.options)))
    command = ["-w", str(demo_workspace.root), "check", "--probe", f"replay:{first}", "--probe", f"replay:{second}"]
    result = CliRunner().invoke(app, [*command, "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [r["item"] for r in document["items"]] == [item.id for item in items]
    for record, item in zip(document["items"], items, strict=True):
        keys = list(item.options)
        text = record["views"]["text"]
        assert text["consistent"] == union(keys)
        assert set(text["by_probe"]) == {f"replay:{first}", f"replay:{second}"}
        assert text["by_probe"][f"replay:{first}"]["consistent"] == sorted(set(first_text(keys)), key=keys.index)
        assert text["counts"][keys[0]] == first_text(keys).count(keys[0]) + second_text(keys).count(keys[0])
        assert record["verdict"] == verdict
    run = document["run"]
    assert run["combine"] == "union" and set(run["probes"]) == {f"replay:{first}", f"replay:{second}"}
    assert run["views_probed"] == 2 * 2 * len(PROBE_VIEWS) and run["views_cached"] == 0
    assert set(document["summary"]["by_probe"]) == set(run["probes"])
    again = json.loads(CliRunner().invoke(app, [*command, "--json"]).stdout)
    assert again["run"]["views_cached"] == 2 * 2 * len(PROBE_VIEWS) and again["run"]["views_probed"] == 0
    assert again["items"] == document["items"]
    stored = {item: reasons for item, reasons in probe_reasons(demo_workspace).items() if item in {i.id for i in items}}
    assert stored == ({} if verdict == "well_posed" else {item.id: ["probe:reducible"] for item in items})


def test_two_probes_refuse_record_and_repeats(demo_workspace, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from omnicurate.cli.main import app

    items = load_probe_items(demo_workspace)[:1]
    replay = _replay_file(tmp_path / "a.jsonl", items, lambda item: list(item.options)[:2] * 2)
    other = _replay_file(tmp_path / "b.jsonl", items, lambda item: list(item.options)[:2] * 2)
    base = ["-w", str(demo_workspace.root), "check", "--probe", f"replay:{replay}"]
    twice = CliRunner().invoke(app, [*base, "--probe", f"replay:{replay}"])
    assert twice.exit_code == 2 and "each --probe may be given once" in twice.output
    record = CliRunner().invoke(app, [*base, "--probe", f"replay:{other}", "--record", str(tmp_path / "r.jsonl")])
    assert record.exit_code == 2 and "--record" in record.output
    assert not (tmp_path / "r.jsonl").exists()
