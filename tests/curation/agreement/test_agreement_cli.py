import json

from typer.testing import CliRunner

from curation.agreement.gates import adjudication_queue, check_agreement_gates
from curation.config import CONFIG_NAME, Settings
from omnicurate.cli.main import app

runner = CliRunner()


def test_agreement_report_on_the_demo(demo_workspace):
    result = runner.invoke(app, ["-w", str(demo_workspace.root), "agreement", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["items"] == 12
    assert set(report) == {
        "items",
        "answer_check",
        "audio_signoff",
        "subset_checklist",
        "taxonomy",
        "tier_tag",
        "naturalness",
        "per_leaf",
        "audit_subset",
        "gates",
    }
    # TRIAD C.3's labels: the demo's reviewers tag ambiguity; one sees the traffic pictures as ambiguous too
    assert 0 < report["tier_tag"]["overall"]["value"] < 1
    assert report["naturalness"]["value"] == 1.0  # stress-01-c: both listeners say re-record
    subset = report["audit_subset"]
    assert subset["all_items"] and subset["items"] == 12 and subset["size"] == 50  # fewer than TRIAD's fifty
    assert subset["tier_tag"]["overall"] == report["tier_tag"]["overall"]
    assert set(report["per_leaf"]["audio"]) == {"prosodic", "environmental", "symbolic", "referential"}
    assert report["answer_check"]["overall"]["raw_agreement"] is not None
    assert set(report["subset_checklist"]["views"]) == {
        "text",
        "image",
        "audio",
        "text+image",
        "text+audio",
        "image+audio",
        "text+image+audio",
    }
    assert set(report["audio_signoff"]) == {"naturalness", "clarity", "artefacts"}
    assert report["gates"]["thresholds"] == {"checklist_alpha_min": 0.667, "answer_kappa_min": 0.6}
    assert "nan" not in result.stdout.lower()


def test_agreement_text_report_with_tags_and_plots(demo_workspace, tmp_path):
    tags = tmp_path / "tags.jsonl"
    tags.write_text(
        json.dumps({"item": "kitchen-01-a", "tagger": "rev5", "taxonomy": {"audio": "prosodic"}})
        + "\n"
        + json.dumps({"item": "kitchen-01-b", "tagger": "rev5", "taxonomy": {"audio": "indexical"}})
        + "\n",
        encoding="utf-8",
    )
    plots = tmp_path / "plots"
    result = runner.invoke(
        app, ["-w", str(demo_workspace.root), "agreement", "--tags", str(tags), "--plots", str(plots)]
    )
    assert result.exit_code == 0, result.output
    assert "subset checklist, nominal alpha over item x view x option: " in result.stdout
    assert "taxonomy audio: " in result.stdout and "over 2 items tagged twice" in result.stdout
    written = sorted(p.name for p in plots.iterdir())
    assert "taxonomy_audio_disagreement.png" in written
    assert "taxonomy_leaf_agreement.png" in written
    assert "answer_confusion.png" in written
    assert all((plots / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for name in written)


def test_gates_block_below_threshold(demo_workspace):
    assert check_agreement_gates(demo_workspace) == []
    config = demo_workspace.root / CONFIG_NAME
    settings = Settings.load(config)
    settings.agreement.checklist_alpha_min = 0.999
    settings.save(config)
    result = runner.invoke(app, ["-w", str(demo_workspace.root), "agreement", "gates", "--json"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    [failure] = document["failures"]
    assert failure["gate"] == "checklist_alpha_min"
    assert failure["minimum"] == 0.999
    assert failure["value"] < 0.999


def test_override_settles_an_adjudication(demo_workspace):
    from curation.decisions import decide

    before = adjudication_queue(demo_workspace)
    assert before, "the demo has a reviewer split to adjudicate"
    entry = before[0]
    decide(demo_workspace, entry.item, "maya", "override", "read the audio again", entry.stage, "pass")
    after = {(e.item, e.stage) for e in adjudication_queue(demo_workspace)}
    assert (entry.item, entry.stage) not in after
    assert len(after) == len(before) - 1


def test_adjudication_queue_on_the_demo(demo_workspace):
    queue = adjudication_queue(demo_workspace)
    result = runner.invoke(app, ["-w", str(demo_workspace.root), "agreement", "queue", "--json"])
    assert result.exit_code == 0, result.output
    entries = json.loads(result.stdout)
    assert [e["item"] for e in entries] == [e.item for e in queue]
    assert all({"item", "stage", "reviewers", "reasons", "measure"} == set(e) for e in entries)
    assert all(e["stage"] in ("audio_signoff", "subset_checklist", "answer_check") for e in entries)
    text = runner.invoke(app, ["-w", str(demo_workspace.root), "agreement", "queue"])
    assert text.stdout.strip().splitlines()[-1] == (
        f"{len(entries)} item-stage(s) to adjudicate" if entries else "nothing to adjudicate"
    )
