"""The two hashing floors the benchmarks compare against, timed over the same files in the same run.

``sha256sum`` (coreutils) does not use the CPU's SHA instructions; Python's ``hashlib.sha256`` is OpenSSL's,
which does, and is several times faster on such CPUs. The faster one is the honest floor (issue 27), so the
benchmarks print their ratios to both.
"""

from __future__ import annotations

import compileall
import hashlib
import os
import resource
import subprocess
import time
from pathlib import Path

CHUNK = 4 * 2**20
"""Bytes per read for the OpenSSL floor: large enough that system calls are a rounding error."""


def cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def sha256sum_seconds(paths: list[Path]) -> tuple[float, float]:
    """Wall and CPU seconds of coreutils' sha256sum over the files (500 per call)."""
    start, cpu = time.perf_counter(), cpu_seconds(resource.RUSAGE_CHILDREN)
    for i in range(0, len(paths), 500):
        subprocess.run(["sha256sum", *map(str, paths[i : i + 500])], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start, cpu_seconds(resource.RUSAGE_CHILDREN) - cpu


def openssl_seconds(paths: list[Path]) -> tuple[float, float]:
    """Wall and CPU seconds of ``hashlib.sha256`` (OpenSSL) over the files, read in CHUNK-byte pieces."""
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    start, cpu = time.perf_counter(), cpu_seconds(resource.RUSAGE_SELF)
    for path in paths:
        digest = hashlib.sha256()
        with open(path, "rb", buffering=0) as f:
            while n := f.readinto(buffer):
                digest.update(view[:n])
        digest.hexdigest()
    return time.perf_counter() - start, cpu_seconds(resource.RUSAGE_SELF) - cpu


def load_average() -> str:
    """The 1, 5 and 15 minute load averages, printed with the figures (a shared machine is noisy)."""
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


PACKAGES = ("curation", "exports", "omnicurate", "checker", "annotation_ui")


def compile_sources(root: Path) -> None:
    """Write the project's bytecode caches before a new process is timed, as a user's second run finds them.

    Python writes them on a module's first import, unless ``PYTHONDONTWRITEBYTECODE`` is set (some shells and
    containers set it): then every new process compiles every project module it imports, a cost no user's
    installation pays twice. Reading the caches is not affected by that setting."""
    for package in PACKAGES:
        compileall.compile_dir(root / package, quiet=1)
