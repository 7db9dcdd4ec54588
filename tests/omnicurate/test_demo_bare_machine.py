"""The README's first command on a machine without the Debian tools: `curate demo` completes on pure Python."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_TOOLS = ("fpcalc", "ffmpeg", "ffprobe", "sox", "espeak", "espeak-ng", "chromium", "chromium-browser")


@pytest.mark.slow
def test_demo_completes_with_no_system_tool_on_the_path(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"  # the PATH: only the interpreter
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    (bin_dir / "python3").symlink_to(sys.executable)
    assert all(shutil.which(tool, path=str(bin_dir)) is None for tool in SYSTEM_TOOLS)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8"}
    if "CI" in os.environ:
        env["CI"] = os.environ["CI"]
    result = subprocess.run(
        [sys.executable, "-m", "omnicurate", "demo", str(tmp_path / "demo")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = " ".join((result.stdout + result.stderr).split())  # undo the console's line wrapping
    assert result.returncode == 0, output
    # without fpcalc on the PATH: the spectral hash only, or chromaprint through the library where Debian's
    # libchromaprint1 is installed (a subprocess cannot hide a shared library)
    found = re.search(r"audio fingerprints: built-in spectral hash (only|\+ chromaprint \(libchromaprint\))", output)
    assert found, output
    assert found.group(1) != "only" or "fpcalc is not on the PATH" in output
    assert re.search(r"\b[1-9]\d* admitted\b", output), output  # the status table's summary line
    assert re.search(r"release: 0\.1\.0 with [1-9]\d* items", output), output
    assert (tmp_path / "demo/releases/0.1.0").is_dir()
