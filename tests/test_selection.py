"""The README's development command leaves out every test that needs a service, a browser or a minute, including
those that need one only through a fixture (tests/conftest.py gives them the marks before ``-m`` selects)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_MARKED = [
    "tests/annotation_ui/labelstudio/test_ls_stages.py",  # ls_server: service
    "tests/checker/test_checker_vllm_backends.py",  # vllm_python: service, slow
    "tests/annotation_ui/test_ui_team_load.py",  # serve_app: browser
]


def collected(mark: str) -> list[str]:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-m", mark]
        + FIXTURE_MARKED,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode in (0, 5), run.stdout + run.stderr
    return [line for line in run.stdout.splitlines() if "::" in line]


def test_the_development_selection_leaves_out_tests_marked_through_their_fixtures() -> None:
    assert collected("not service and not browser and not slow") == []
    chosen = collected("service or browser")
    assert {line.split("::")[0] for line in chosen} == set(FIXTURE_MARKED)
