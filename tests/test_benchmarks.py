"""Every benchmark under benchmarks/ runs at its smallest size, so that a benchmark that breaks fails CI.

The figures are not checked here (they are measured by running the benchmarks at full size); only that each
script still runs to its end on today's code.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SMOKE = {
    "agreement.py": ["--quick"],
    "audit_neardup.py": ["--sizes", "500", "--growth", "--sample-rows", "20", "--photos", "14"],
    "checker_cost.py": ["--smoke"],
    "dashboard_demo.py": ["--smoke"],
    "gpu_check.py": ["--size", "tiny", "--device", "cpu", "--items", "1", "--budget-s", "30"],
    "gpu_check.py score": [
        "--mode",
        "score",
        "--size",
        "tiny",
        "--device",
        "cpu",
        "--items",
        "1",
        "--budget-s",
        "30",
        "--max-string",
        "4",
    ],
    "import_candidates.py": ["--sizes", "200"],
    "import_status.py": ["--sizes", "20", "40"],
    "judge_report.py": ["--smoke"],
    "labelstudio_roundtrip.py": ["--sizes", "2", "4"],
    "media_normalize.py": ["--n", "3", "--accuracy-sample", "2"],
    "release_build.py": ["--smoke"],
    "screen_candidates.py": ["--smoke"],
    "ui_render.py": ["--smoke"],
    "ui_team.py": ["--smoke"],
}
"""Script -> the arguments of its smallest run; "script variant" keys give a script a second smoke run (a mode)."""
HELPERS = {
    "demo_probe_items.py": "the demo items as probe items, imported by checker_cost.py and gpu_check.py",
    "hash_floor.py": "the sha256sum and OpenSSL hashing floors, imported by release_build.py and import_status.py",
    "planted_photos.py": "photo-like JPEGs with planted near-duplicates and imagededup's PHash, for audit_neardup.py",
}
MARKS = {"labelstudio_roundtrip.py": [pytest.mark.service], "ui_team.py": [pytest.mark.browser]}
"""Beyond ``slow``: the Label Studio round trip needs the server that .ci/setup.d/40-labelstudio.sh installs;
the team benchmark drives Debian's chromium."""


def hash_floor() -> ModuleType:
    """benchmarks/hash_floor.py, which the benchmarks import as a sibling module (benchmarks/ is no package)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        return importlib.import_module("hash_floor")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))


def test_every_benchmark_has_a_smoke_run() -> None:
    scripts = {p.name for p in (ROOT / "benchmarks").glob("*.py")}
    assert scripts == {key.split()[0] for key in SMOKE} | set(HELPERS)


@pytest.mark.slow
@pytest.mark.parametrize(
    "script",
    [
        pytest.param(name, marks=MARKS.get(name, []), id=name.replace(".py", "").replace(" ", "-"))
        for name in sorted(SMOKE)
    ],
)
def test_benchmark_runs_at_its_smallest_size(script: str, tmp_path: Path) -> None:
    if script == "labelstudio_roundtrip.py":
        from tests.annotation_ui.labelstudio.server import ServerUnavailable, installed

        try:
            installed()
        except ServerUnavailable as exc:
            from tests.conftest import missing_service

            missing_service(f"{exc}: run `bash .ci/setup.d/40-labelstudio.sh`")
    # a short TMPDIR of its own: Chromium's profile socket path (ui_team) must stay under 108 bytes
    scratch = Path(tempfile.mkdtemp(prefix="bench-"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(scratch)}
    try:
        result = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / script.split()[0]), *SMOKE[script]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert result.returncode == 0, f"{script} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    assert result.stdout.strip(), f"{script} printed nothing"
    if script == "import_status.py":  # each size's status timed again beside the other's, in its JSON line
        results = json.loads(result.stdout.strip().splitlines()[-1])
        assert [r["n"] for r in results] == [20, 40]
        assert all(0 < r["status_cli_7n_side_by_side_s"] < 60 for r in results)
        assert all(0 < r["status_cli_7n_cold_s"] < 60 for r in results), "status with nothing kept is timed too"
    if script in ("import_status.py", "release_build.py"):  # what the host does with memory, beside the figures
        results = json.loads(result.stdout.strip().splitlines()[-1])
        assert all(set(r["memory"]) == {"free_page_reporting", "damon_pageout"} for r in results)
        note = hash_floor().host_memory_note(results[-1]["memory"])
        assert note in result.stdout.splitlines()  # the printed line says what the JSON says
    if script == "release_build.py":  # whether the builds' copies were clones, beside the figures
        from exports.writer import copies_clone

        results = json.loads(result.stdout.strip().splitlines()[-1])
        assert [r["copies_clone"] for r in results] == [copies_clone(scratch.parent)]  # scratch is removed by now
        assert f"copies in {scratch}: " in result.stdout
    if script == "ui_team.py":  # where the CPU went: the server's share of the machine's busy time
        (run,) = json.loads(result.stdout)["runs"]
        assert 0 < run["server_cpu_s"] <= run["machine_busy_cpu_s"] <= run["machine_capacity_cpu_s"] * 1.05
    if script == "screen_candidates.py":  # two sizes, and the growth per candidate of every step between them
        growth = json.loads(result.stdout.strip().splitlines()[-1])["growth"]
        assert growth["size_ratio"] == 3.0
        steps = growth["per_candidate_ratio"]["steps"]
        assert set(steps) == {"length", "speech", "language", "image", "score", "select", "annotate"}
        assert all(r is None or r > 0 for r in steps.values())


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_check_on_the_accelerator(tmp_path: Path) -> None:
    """The GPU check itself (a 7B-sized random model in bf16), shortened to a few items."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        from tests.conftest import missing_service

        missing_service("no CUDA device (gpu tests run on a GPU machine)", marker="gpu")
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks/gpu_check.py"), "--items", "8", "--budget-s", "120"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


def _sys_tree(root: Path, features: str | None, device: str = "0x0005", damon: str | None = None) -> Path:
    """A /sys with one virtio device bound to the balloon driver and one kdamond, as ``host_memory`` reads it."""
    if features is not None:
        balloon = root / "bus/virtio/drivers/virtio_balloon/virtio0"
        balloon.mkdir(parents=True)
        (balloon / "features").write_text(features + "\n")
        (balloon / "device").write_text(device + "\n")
    if damon is not None:
        kdamond = root / "kernel/mm/damon/admin/kdamonds/0"
        (kdamond / "contexts/0/schemes/0").mkdir(parents=True)
        (kdamond / "state").write_text(damon + "\n")
        (kdamond / "contexts/0/schemes/0/action").write_text("pageout\n")
    return root


@pytest.mark.parametrize(
    ("features", "device", "damon", "expected"),
    [
        ("0110010" + "0" * 57, "0x0005", "on", {"free_page_reporting": True, "damon_pageout": True}),
        ("0110000" + "0" * 57, "0x0005", "off", {"free_page_reporting": False, "damon_pageout": False}),
        ("0110010" + "0" * 57, "0x0001", None, {"free_page_reporting": False, "damon_pageout": False}),
        ("011", "0x0005", None, {"free_page_reporting": False, "damon_pageout": False}),
        (None, "0x0005", None, {"free_page_reporting": False, "damon_pageout": False}),
    ],
    ids=["reporting-and-pageout", "neither", "not-a-balloon", "short-features", "bare-machine"],
)
def test_host_memory_reads_the_balloon_and_damon(
    tmp_path: Path, features: str | None, device: str, damon: str | None, expected: dict[str, bool]
) -> None:
    found = hash_floor().host_memory(_sys_tree(tmp_path, features, device, damon))
    assert found == expected
    note = hash_floor().host_memory_note(found)
    assert ("takes freed memory back" in note) is expected["free_page_reporting"]
    assert ("no free page reporting" in note) is not expected["free_page_reporting"]
    assert ("DAMON pages out idle memory" in note) is expected["damon_pageout"]
    assert ("no DAMON pageout" in note) is not expected["damon_pageout"]
