"""The README's development command leaves out every test that needs a service, a browser or a minute, including
those that need one only through a fixture (tests/conftest.py gives them the marks before ``-m`` selects)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_MARKED = [
    "tests/annotation_ui/labelstudio/test_ls_stages.py",  # ls_server: service
    "tests/checker/test_checker_vllm_backends.py",  # vllm_python: service, slow
]


def test_the_development_selection_leaves_out_tests_marked_through_their_fixtures() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
        + ["-m", "not service and not browser and not slow", *FIXTURE_MARKED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 5, run.stdout + run.stderr  # pytest's "no tests collected"
    deselected = re.search(r"no tests collected \((\d+) deselected\)", run.stdout)
    assert deselected and int(deselected.group(1)) > 3 * len(FIXTURE_MARKED), run.stdout
