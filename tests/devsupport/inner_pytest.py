"""A pytest run of a test tree of its own, with the tool-use plugin loaded as CI loads it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def inner_pytest(folder: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """Run pytest in FOLDER with ENV and ARGS; fail showing its output unless every test passed."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "devsupport.tool_use", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run
