"""vLLM's CPU build (its own venv, $CURATE_VLLM_PYTHON) serving the tiny random Qwen2.5-Omni:
the offline backend (run once, in a subprocess) and the openai backend (one server for the session)
must give the transformers backend's option log-probabilities, with a real image and audio clip."""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest
from probe_fixtures import make_item

from checker.backends import open_backend
from checker.estimators import EstimatorConfig
from checker.prompts import build_request
from checker.views import PROBE_VIEWS
from curation.screening.model import TASK_MODELS

REPO = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-3  # float32 on both sides; seen agreeing to ~4e-7


@pytest.fixture(scope="session")
def vllm_python() -> str:
    python = os.environ.get("CURATE_VLLM_PYTHON", "")
    if not python:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but CURATE_VLLM_PYTHON is not set: .ci/setup.d/50-vllm.sh must build the vLLM venv")
        pytest.skip("CURATE_VLLM_PYTHON is not set (run .ci/setup.d/50-vllm.sh)")
    return python


@pytest.fixture(scope="session")
def vllm_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``VLLM_CACHE_ROOT`` of the offline engine and the server: the run's own, not the user's."""
    return tmp_path_factory.mktemp("vllm-cache")


def vllm_environment(cache: Path) -> dict[str, str]:
    """Both engines uncompiled, without a worker process of their own (the ``uni`` executor): on CPU each
    process vLLM starts spends its first 10-15 s importing torch and vLLM, and compiling the tiny model took 37 s,
    while what the tests check (the backends' requests and answers against transformers') is the same either
    way. Measured on 2 cores, idle: the server's start 80 -> 34 s. The server's engine core keeps its own
    process: in the server's process it started in 22 s, but answering beside a CPU hog took 61 s instead of 11."""
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)  # vLLM's CPU engine binds its own threads (tests/conftest.py sets one)
    env.update(
        PYTHONPATH=os.pathsep.join([str(REPO / "checker" / "compat_site"), str(REPO)]),
        VLLM_CPU_KVCACHE_SPACE="1",
        HF_HUB_OFFLINE="1",
        VLLM_CACHE_ROOT=str(cache),
        CURATE_VLLM_ENGINE_ARGS=json.dumps(
            {"dtype": "float32", "max_model_len": 2048, "enforce_eager": True, "distributed_executor_backend": "uni"}
        ),
    )
    return env


@pytest.fixture(scope="session")
def probe_items(media_dir: Path):  # type: ignore[no-untyped-def]
    return [
        make_item(media_dir),
        make_item(media_dir, item_id="it-2", image=media_dir / "blue.png", audio=media_dir / "noise.wav"),
    ]


@pytest.fixture(scope="session")
def hf_logprobs(hf_backend, probe_items) -> dict[tuple[str, str], dict[str, float]]:  # type: ignore[no-untyped-def]
    return {(i.id, v): hf_backend.option_logprobs(build_request(i, v)) for i in probe_items for v in PROBE_VIEWS}


def assert_agree(expected: dict[str, float], got: dict[str, float], where: str) -> None:
    assert list(got) == list(expected), where
    for key in expected:
        assert math.isclose(got[key], expected[key], abs_tol=TOLERANCE), (where, key, got, expected)


def test_vllm_offline_backend_agrees_with_transformers(
    vllm_python: str,
    tiny_omni: Path,
    probe_items,
    hf_logprobs,
    vllm_cache: Path,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    items_file = tmp_path / "items.json"
    items_file.write_text(
        json.dumps([{**asdict(i), "image": str(i.image), "audio": str(i.audio)} for i in probe_items])
    )
    run = subprocess.run(
        [vllm_python, str(Path(__file__).with_name("vllm_offline_probe.py")), str(tiny_omni), str(items_file)],
        # the engine core in the probe's own process, one process fewer to start: the offline test 143 -> 45 s
        env={**vllm_environment(vllm_cache), "VLLM_ENABLE_V1_MULTIPROCESSING": "0"},
        capture_output=True,
        text=True,
        timeout=900,
    )
    lines = [line for line in run.stdout.splitlines() if line.startswith("RESULT ")]
    assert run.returncode == 0 and lines, run.stderr[-4000:]
    result = json.loads(lines[0].removeprefix("RESULT "))
    assert len(result["logprob"]) == len(hf_logprobs)
    for output in result["logprob"]:
        assert_agree(
            hf_logprobs[(output["item"], output["view"])], output["logprobs"], f"{output['item']} {output['view']}"
        )
    for output in result["sample"]:
        k = 10 if output["view"] == "text+image+audio" else 5
        assert len(output["samples"]) == k and set(output["samples"]) <= {"A", "B", "C", "D"}
    # Structured (JSON-schema) screening answers from the same engine, two images in the score prompt. vLLM-cpu's
    # grammar engine (xgrammar) lets the tiny model's character-level tokenizer (a Fuse decoder) run on in
    # newlines to the token budget, and llguidance and lm-format-enforcer cannot load that tokenizer there (seen
    # with vllm-cpu 0.32), so only the constraint is checked: the answer is a JSON object begun, and one that ends
    # fits its task's schema. The transformers backend's test checks complete answers.
    assert [s["task"] for s in result["structured"]] == ["score", "speech"]
    for answer in result["structured"]:
        assert answer["text"].startswith("{"), answer
        if answer["answer"] is not None:
            TASK_MODELS[answer["task"]].model_validate(answer["answer"])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def vllm_server(
    vllm_python: str, tiny_omni: Path, vllm_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """``python -m vllm.entrypoints.openai.api_server`` on 127.0.0.1, stopped by PID at the end."""
    scratch = tmp_path_factory.mktemp("vllm-server")
    port = free_port()
    log = (scratch / "server.log").open("w")
    server = subprocess.Popen(
        [
            vllm_python,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(tiny_omni),
            "--served-model-name",
            "tiny-omni",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--dtype",
            "float32",
            "--max-model-len",
            "2048",
            "--no-enable-chunked-prefill",
            "--enforce-eager",  # as the offline engine (vllm_environment)
            "--distributed-executor-backend",
            "uni",
            "--limit-mm-per-prompt",
            json.dumps({"image": 2, "audio": 1, "video": 0}),  # as the offline engine's (vllm_offline_probe.py)
        ],
        env=vllm_environment(vllm_cache),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 600
        while True:
            if server.poll() is not None:
                pytest.fail(
                    f"vLLM server exited ({server.returncode}):\n{(scratch / 'server.log').read_text()[-4000:]}"
                )
            try:
                with urllib.request.urlopen(f"{base}/health", timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vLLM server not healthy after 600 s:\n{(scratch / 'server.log').read_text()[-4000:]}")
            time.sleep(2)
        yield f"{base}/v1"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def test_openai_backend_against_vllm_server_agrees_with_transformers(
    vllm_server: str, probe_items, hf_logprobs
) -> None:  # type: ignore[no-untyped-def]
    backend = open_backend(f"openai:{vllm_server}#tiny-omni")
    requests = [build_request(i, v) for i in probe_items for v in PROBE_VIEWS]
    for output in backend.probe(requests, EstimatorConfig(name="logprob")):
        assert_agree(hf_logprobs[(output.item_id, output.view)], output.logprobs, f"{output.item_id} {output.view}")
    config = EstimatorConfig(name="sample")
    seeded = [build_request(i, v, seed=config.seed_for(i.id, v)) for i in probe_items[:1] for v in PROBE_VIEWS]
    for output in backend.probe(seeded, config):
        assert len(output.samples) == config.k_for(output.view) and set(output.samples) <= {"A", "B", "C", "D"}
        assert output.generated_tokens == config.k_for(output.view)


def test_openai_drafter_request_is_accepted_by_vllm_and_a_cut_answer_is_named(vllm_server: str, tmp_path: Path) -> None:
    """vLLM's server accepts the drafter's request as sent (``response_format`` with the draft schema, and
    with ``#vllm`` its own ``structured_outputs`` besides: no 400), and the answer is grammar-constrained JSON.

    Seen with vLLM 0.32 CPU and the tiny model's character-level tokenizer: after ``{`` the grammar lets
    only whitespace through (with and without ``disable_any_whitespace``), so the answer runs to the length
    limit; the drafter names that instead of a JSON error, and stores nothing. (A real model drafts; the
    request and parsing are checked end to end against a scripted chat server in test_drafting_openai.py.)"""
    from checker.backends.base import BackendError
    from checker.drafting import draft_checklists, open_drafter
    from curation.kinds.judge import draft_store, task_store
    from curation.workspace import Workspace

    ws = Workspace.init(tmp_path / "ws")
    tasks = tmp_path / "tasks.jsonl"
    line = {"id": "t2t-01", "instruction": "Write a haiku.", "output": "text", "source": "s", "license": "CC0-1.0"}
    tasks.write_text(json.dumps(line) + "\n")
    task_store.import_tasks(ws, tasks)
    with pytest.raises(BackendError, match=r"cut off at the model's length limit after \d+ characters"):
        draft_checklists(ws, open_drafter(f"openai:{vllm_server}#tiny-omni#vllm"))
    assert draft_store.drafted_candidates(ws, "t2t-01") == []
    ws.close()


def test_a_system_answers_through_the_vllm_server(vllm_server: str, tmp_path: Path) -> None:
    """`curate judge respond --backend openai:<vLLM>#tiny-omni`: the server accepts the request as sent (system
    prompt, image as a data URL, temperature, seed), the same seed gives the same answer, a rerun adds nothing."""
    from typer.testing import CliRunner

    from checker.generation import open_generator
    from curation.kinds.judge import task_store
    from curation.workspace import Workspace
    from omnicurate.cli.main import app
    from omnicurate.demo.judge_sources import write_sources

    sources = write_sources(tmp_path / "src")
    ws = Workspace.init(tmp_path / "ws")
    task_store.import_tasks(ws, sources["tasks"])
    args = ["-w", str(ws.root), "judge", "respond", "--system", "tiny", "--accepts", "text,image"]
    args += ["--backend", f"openai:{vllm_server}#tiny-omni", "--temperature", "0.7", "--seed", "3", "--json"]
    done = CliRunner().invoke(app, args, catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert sorted(json.loads(done.stdout)["answered"]) == ["i2t-01", "i2t-02", "t2t-01", "t2t-02"]
    assert all(isinstance(r.text, str) for r in task_store.responses(ws) if r.system == "tiny")
    assert json.loads(CliRunner().invoke(app, args, catch_exceptions=False).stdout)["answered"] == []
    generator = open_generator(f"openai:{vllm_server}#tiny-omni")
    once = generator.generate("k", "Be brief.", "Say something.", [], 0.7, 9)
    assert generator.generate("k", "Be brief.", "Say something.", [], 0.7, 9) == once, "the seed decides"
    ws.close()
