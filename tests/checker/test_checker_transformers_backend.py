"""The transformers backend on a tiny random Qwen2.5-Omni: real image and audio through real encoders."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from probe_fixtures import make_item

from checker.backends.base import BackendError
from checker.backends.hf import FREE_ANSWER_TOKENS
from checker.estimators import EstimatorConfig
from checker.prompts import build_request
from checker.run import estimate as estimate_view
from checker.run import run_check
from checker.views import PROBE_VIEWS


def test_option_logprobs_are_a_distribution_over_the_keys(hf_backend, media_dir: Path) -> None:  # type: ignore[no-untyped-def]
    logprobs = hf_backend.option_logprobs(build_request(make_item(media_dir), "text+image+audio"))
    assert list(logprobs) == ["A", "B", "C", "D"]
    assert sum(math.exp(v) for v in logprobs.values()) == pytest.approx(1.0, abs=1e-5)


def test_image_and_audio_really_reach_the_model(hf_backend, media_dir: Path) -> None:  # type: ignore[no-untyped-def]
    base = make_item(media_dir)
    other_image = make_item(media_dir, image=media_dir / "blue.png")
    other_audio = make_item(media_dir, audio=media_dir / "noise.wav")

    def lp(item, view):  # type: ignore[no-untyped-def]
        return hf_backend.option_logprobs(build_request(item, view))

    full = lp(base, "text+image+audio")
    assert lp(other_image, "text+image+audio") != pytest.approx(full, abs=1e-6)
    assert lp(other_audio, "text+image+audio") != pytest.approx(full, abs=1e-6)
    # a view that hides a modality does not see it change
    assert lp(other_image, "text+audio") == pytest.approx(lp(base, "text+audio"), abs=1e-6)
    assert lp(other_audio, "text+image") == pytest.approx(lp(base, "text+image"), abs=1e-6)


def test_both_estimators_through_the_runner(hf_backend, media_dir: Path) -> None:  # type: ignore[no-untyped-def]
    items = [make_item(media_dir)]
    logprob_results, logprob_stats = run_check(items, hf_backend, EstimatorConfig(name="logprob"))
    sample_results, sample_stats = run_check(items, hf_backend, EstimatorConfig(name="sample"))
    assert logprob_stats.model_calls == sample_stats.model_calls == len(PROBE_VIEWS)
    assert logprob_stats.generated_tokens == len(PROBE_VIEWS)
    assert sample_stats.generated_tokens == 7 * 5 + 10
    full = sample_results[0].views["text+image+audio"]
    assert full.k == 10 and sum(full.counts.values()) == 10
    assert set(logprob_results[0].views["text"].probs) == {"A", "B", "C", "D"}
    # same seeds, same samples
    again, _ = run_check(items, hf_backend, EstimatorConfig(name="sample"))
    assert again[0].views["audio"].counts == sample_results[0].views["audio"].counts


def test_a_model_without_audio_reads_the_transcript_and_the_run_records_it(hf_backend, media_dir: Path) -> None:  # type: ignore[no-untyped-def]
    item = make_item(media_dir, audio_transcript="Sure, that was helpful.")
    hf_backend.audio_input = False
    try:
        results, stats = run_check([item], hf_backend, EstimatorConfig(name="logprob"))
    finally:
        hf_backend.audio_input = True
    assert stats.audio_routes == {"hidden": 4, "transcript": 4}
    assert results[0].views["audio"].to_json()["audio_route"] == "transcript"


def test_json_format_samples_free_answers_the_reference_way(hf_backend, media_dir: Path) -> None:  # type: ignore[no-untyped-def]
    request = build_request(make_item(media_dir), "text+image+audio", fmt="json", seed=11)
    config = EstimatorConfig(k_full=3)
    [output] = hf_backend.probe([request], config)
    assert len(output.samples) == 3 and output.model_calls == 3
    assert 3 <= output.generated_tokens <= 3 * FREE_ANSWER_TOKENS
    assert hf_backend.probe([request], config)[0].samples == output.samples  # seeded
    estimate = estimate_view(output, request.option_keys, config)  # random weights: never a clean answer
    assert estimate.unparseable + sum(estimate.counts.values()) == 3
    with pytest.raises(BackendError, match="--format letter"):
        hf_backend.probe([request], EstimatorConfig(name="logprob"))


def test_cli_runs_the_transformers_backend_on_demo_items(demo_workspace, tiny_omni: Path) -> None:  # type: ignore[no-untyped-def]
    import json

    from typer.testing import CliRunner

    from omnicurate.cli.main import app

    args = [
        "-w",
        str(demo_workspace.root),
        "check",
        "--probe",
        f"transformers:{tiny_omni}",
        "--estimator",
        "logprob",
        "--item",
        "kitchen-01-a",
        "--item",
        "bank-01-b",
        "--json",
    ]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    document = json.loads(first.stdout)
    assert [r["item"] for r in document["items"]] == ["bank-01-b", "kitchen-01-a"]
    assert document["run"]["views_probed"] == 16 and document["run"]["model_calls"] == 16
    for record in document["items"]:
        assert record["verdict"] in ("label_mismatch", "underdetermined", "reducible", "well_posed")
        assert all(len(v["probs"]) == 3 or len(v["probs"]) == 4 for v in record["views"].values())
    second = json.loads(CliRunner().invoke(app, args).stdout)
    assert second["run"]["views_cached"] == 16 and second["run"]["model_calls"] == 0
    assert second["items"] == document["items"]


def test_batched_rows_give_the_single_request_logprobs(hf_backend, media_dir: Path) -> None:  # type: ignore[no-untyped-def]
    items = [
        make_item(media_dir),
        make_item(
            media_dir,
            item_id="it-2",
            image=media_dir / "blue.png",
            audio=media_dir / "noise.wav",
            options={"A": "yes", "B": "no", "C": "maybe"},
        ),
    ]
    requests = [build_request(i, v) for i in items for v in PROBE_VIEWS]  # rows of different lengths and media
    single = [hf_backend.option_logprobs(r) for r in requests]
    hf_backend.micro_batch = 5
    try:
        batched = [o.logprobs for o in hf_backend.probe(requests, EstimatorConfig(name="logprob"))]
    finally:
        hf_backend.micro_batch = 1
    for one, many in zip(single, batched, strict=True):
        assert list(one) == list(many)
        assert all(math.isclose(one[k], many[k], abs_tol=1e-5) for k in one)
