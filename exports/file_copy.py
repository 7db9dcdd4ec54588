"""Copying store files into a release, hashing each one only where its bytes are not vouched for.

The copy functions here use the standard library alone, so that a build's copy processes import this module
without the rest of the project (``copy_in_processes``). Why processes: a build copies its media while its own
thread runs Python (the gates, the data files), and a copying thread needs the interpreter lock back after each
system call. With another thread holding it, each hand-over waits out the switch interval (5 ms): 681 store files
(1 GB) took 14 s to copy beside a busy thread instead of 0.9 s alone. A child process copies with no such wait.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from curation.errors import MediaError
from curation.file_status import stat_key, vouched

CHUNK = 4 << 20
PROCESS_BYTES = 64 << 20
"""Below this many bytes of media, copies stay in this process: starting the processes costs more than the wait."""
Copied = tuple[str, int, bool, str | None]
"""(sha256, size, whether the bytes were hashed, the file status to remember: ``curation.store_checks``)."""


def copy_hashing(source: Path, target: Path) -> tuple[str, int]:
    """Copy one file, hashing it once on the way; returns (sha256, size).

    The kernel copies each block (``copy_file_range``: no trip through user space, which costs more than the
    hashing on ext4) while the same block, read from the page cache, is hashed. Where the kernel cannot copy
    (another OS, an old kernel, across file systems) the bytes are read once, hashed and written.
    """
    with source.open("rb", buffering=0) as src, target.open("wb", buffering=0) as dst:
        return _copy(source, src.fileno(), dst.fileno(), hashlib.sha256())


def copy_plain(source: Path, target: Path) -> int:
    """Copy one file without hashing it (its bytes are known: ``StoreChecks``); returns its size."""
    with source.open("rb", buffering=0) as src, target.open("wb", buffering=0) as dst:
        return _copy(source, src.fileno(), dst.fileno(), None)[1]


def _copy(source: Path, src: int, dst: int, digest: Any) -> tuple[str, int]:
    size = 0
    kernel_copy = hasattr(os, "copy_file_range")
    # A block buffer only where bytes pass through this process: a plain kernel copy needs none, and a fresh
    # 4 MB per file (zeroed with the interpreter lock held) was half of a cloning rebuild's copy time.
    view = _block_buffer() if digest is not None or not kernel_copy else None
    while True:
        if kernel_copy:
            try:
                n = os.copy_file_range(src, dst, CHUNK, size, size)
            except OSError as exc:
                if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM):
                    raise
                kernel_copy = False
                view = _block_buffer()
                continue
            got = 0
            while digest is not None and got < n:
                assert view is not None  # made for every hashing copy
                k = os.preadv(src, [view[got:n]], size + got)
                if k == 0:
                    raise MediaError(f"{source}: the file shrank while it was being copied")
                got += k
        else:
            assert view is not None  # made when the kernel copy was given up
            n = os.preadv(src, [view], size)
            written = 0
            while written < n:
                written += os.pwrite(dst, view[written:n], size + written)
        if n == 0:
            break
        if digest is not None:
            assert view is not None
            digest.update(view[:n])
        size += n
    return (digest.hexdigest() if digest is not None else ""), size


def _block_buffer() -> memoryview:
    return memoryview(bytearray(CHUNK))


def copy_checked(
    source: Path,
    target: Path,
    expected: str,
    known: str | None,
    plain: Callable[[Path, Path], int] | None = None,
    hashing: Callable[[Path, Path], tuple[str, int]] | None = None,
) -> Copied:
    """Copy a store file named by ``expected``: without hashing where its status is ``known`` (its bytes
    matched when it had that status), else hashing it, with the status to remember when the hash matched."""
    before = os.stat(source)
    if known == stat_key(before):
        size = (plain or copy_plain)(source, target)
        if size == before.st_size:
            return expected, size, False, None
    sha, size = (hashing or copy_hashing)(source, target)
    return sha, size, True, (vouched(source, before) if sha == expected else None)


CopyJob = tuple[Path, Path, str, str | None]
"""(store file, target, expected sha256, its known status or None): what :func:`copy_checked` takes."""
_CHILD = "import sys; sys.path.insert(0, sys.argv[1]); from exports.file_copy import serve; serve()"


def copy_in_processes(
    jobs: Sequence[CopyJob], processes: int, children: list[subprocess.Popen[bytes]] | None = None
) -> list[Copied | str] | None:
    """:func:`copy_checked` of each job, in ``processes`` child processes; per job its result or the error
    that stopped it. None when the processes could not run or were killed (the caller copies in this process
    instead, or gives up). Each child is added to ``children`` as it starts, for the caller to kill."""
    root = str(Path(__file__).resolve().parents[1])
    shares = [list(range(k, len(jobs), processes)) for k in range(processes)]
    children = [] if children is None else children
    try:
        for share in shares:
            child = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _CHILD, root],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            children.append(child)
            assert child.stdin is not None
            child.stdin.write(json.dumps([[str(s), str(t), e, k] for s, t, e, k in (jobs[i] for i in share)]).encode())
            child.stdin.close()
        results: list[Copied | str] = [""] * len(jobs)
        for child, share in zip(children, shares, strict=True):
            assert child.stdout is not None
            answers = json.loads(child.stdout.read() or b"null")
            if child.wait() != 0 or not isinstance(answers, list) or len(answers) != len(share):
                return None
            for i, answer in zip(share, answers, strict=True):
                results[i] = answer if isinstance(answer, str) else (answer[0], answer[1], answer[2], answer[3])
        return results
    except (OSError, ValueError, IndexError, TypeError):  # a child that died or answered something else
        return None
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()


def serve() -> None:
    """A copy process: jobs as JSON on standard input, a result or an error message per job on standard output."""
    answers: list[Any] = []
    for source, target, expected, known in json.load(sys.stdin):
        try:
            answers.append(list(copy_checked(Path(source), Path(target), expected, known)))
        except (OSError, MediaError) as exc:
            answers.append(f"{source}: {exc}")
    json.dump(answers, sys.stdout)
