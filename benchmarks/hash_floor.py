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
from collections.abc import Mapping
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


VIRTIO_BALLOON = "0x0005"
"""The virtio device id of a memory balloon."""
BALLOON_REPORTING_BIT = 5
"""VIRTIO_BALLOON_F_REPORTING: the guest reports free memory to the host, which takes it back."""


def host_memory(sys_root: Path = Path("/sys")) -> dict[str, bool]:
    """What this machine does with memory that makes copying into the page cache cost 1x or 5x (issue 27).

    ``free_page_reporting``: a virtual machine whose balloon reports freed memory to the host. The host takes
    those pages back, and the next file written (a build's media copy) faults each of them in again: a copy
    of 1 GB took 0.3 s right after another and 1.5-2.8 s after an 8 s pause on such a machine.
    ``damon_pageout``: the kernel's DAMON pages out memory left untouched for a while (the store's files in the
    page cache after a minute or so), so the next build reads them from the disk. Printed with the figures,
    as the load average is: neither is something a build can change."""
    reporting = False
    for device in (sys_root / "bus/virtio/drivers/virtio_balloon").glob("virtio*"):
        try:
            features = (device / "features").read_text().strip()
            reporting |= (device / "device").read_text().strip() == VIRTIO_BALLOON and features[
                BALLOON_REPORTING_BIT
            ] == "1"
        except (OSError, IndexError):
            continue
    pageout = False
    for kdamond in (sys_root / "kernel/mm/damon/admin/kdamonds").glob("[0-9]*"):
        try:
            if (kdamond / "state").read_text().strip() != "on":
                continue
            actions = kdamond.glob("contexts/*/schemes/*/action")
            pageout |= any(action.read_text().strip() == "pageout" for action in actions)
        except OSError:
            continue
    return {"free_page_reporting": reporting, "damon_pageout": pageout}


def host_memory_note(found: Mapping[str, bool]) -> str:
    """One line for the figures: what ``host_memory`` found (as a result's ``memory``), and what it does to a
    copy's cost."""
    said = [
        "the host takes freed memory back (free page reporting: a copy into the page cache may fault it in again)"
        if found["free_page_reporting"]
        else "no free page reporting",
        "DAMON pages out idle memory (files untouched for a while are read from the disk again)"
        if found["damon_pageout"]
        else "no DAMON pageout",
    ]
    return "memory: " + "; ".join(said)


PACKAGES = ("curation", "exports", "omnicurate", "checker", "annotation_ui")


def compile_sources(root: Path) -> None:
    """Write the project's bytecode caches before a new process is timed, as a user's second run finds them.

    Python writes them on a module's first import, unless ``PYTHONDONTWRITEBYTECODE`` is set (some shells and
    containers set it): then every new process compiles every project module it imports, a cost no user's
    installation pays twice. Reading the caches is not affected by that setting."""
    for package in PACKAGES:
        compileall.compile_dir(root / package, quiet=1)
