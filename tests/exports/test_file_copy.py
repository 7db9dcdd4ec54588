"""Copying store files (exports.file_copy): the kernel-copy path and the portable path give the same bytes, a
file whose status is known is copied unhashed, and copy processes give what copying in this process gives."""

from __future__ import annotations

import errno
import hashlib
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from curation import file_status
from curation.file_status import settled, stat_key
from exports import file_copy
from exports.file_copy import CHUNK, copy_checked, copy_hashing, copy_in_processes, copy_plain


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "source.bin"
    path.write_bytes(np.random.default_rng(3).bytes(2 * CHUNK + 12345))  # several blocks and a short tail
    return path


def test_copy_hashes_and_copies_every_block(source: Path, tmp_path: Path) -> None:
    sha, size = copy_hashing(source, tmp_path / "copy.bin")
    data = source.read_bytes()
    assert (tmp_path / "copy.bin").read_bytes() == data
    assert (sha, size) == (hashlib.sha256(data).hexdigest(), len(data))


def test_without_kernel_copy_the_bytes_go_through_user_space(source: Path, tmp_path: Path, monkeypatch) -> None:
    calls = []

    def refuse(*args: object) -> int:
        calls.append(args)
        raise OSError(errno.EXDEV, "cross-device")

    monkeypatch.setattr(file_copy.os, "copy_file_range", refuse, raising=False)
    sha, size = copy_hashing(source, tmp_path / "copy.bin")
    data = source.read_bytes()
    assert calls and (tmp_path / "copy.bin").read_bytes() == data
    assert sha == hashlib.sha256(data).hexdigest() and size == len(data)


def test_an_empty_file_copies(tmp_path: Path) -> None:
    (tmp_path / "empty").write_bytes(b"")
    assert copy_hashing(tmp_path / "empty", tmp_path / "copy") == (hashlib.sha256(b"").hexdigest(), 0)
    assert os.path.getsize(tmp_path / "copy") == 0


def test_a_plain_kernel_copy_makes_no_block_buffer_and_a_hashing_one_does(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rebuild copies hundreds of known store files unhashed: a 4 MB buffer per file, zeroed while holding the
    interpreter lock, was half the cost of cloning them; only a copy whose bytes pass through here needs one."""
    made: list[int] = []
    block_buffer = file_copy._block_buffer

    def counting() -> memoryview:
        made.append(1)
        return block_buffer()

    monkeypatch.setattr(file_copy, "_block_buffer", counting)
    data = source.read_bytes()
    assert copy_plain(source, tmp_path / "plain.bin") == len(data) and made == []
    assert (tmp_path / "plain.bin").read_bytes() == data
    assert copy_hashing(source, tmp_path / "hashed.bin") == (hashlib.sha256(data).hexdigest(), len(data))
    assert len(made) == 1 and (tmp_path / "hashed.bin").read_bytes() == data

    def refuse(*args: object) -> int:
        raise OSError(errno.EXDEV, "cross-device")

    monkeypatch.setattr(file_copy.os, "copy_file_range", refuse, raising=False)
    made.clear()
    assert copy_plain(source, tmp_path / "user-space.bin") == len(data) and len(made) == 1  # bytes pass through
    assert (tmp_path / "user-space.bin").read_bytes() == data


def test_a_known_file_is_copied_unhashed_and_an_unknown_one_hashed(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(file_status, "RACY_S", 3600.0)  # "just now" however long a loaded machine stalls here
    data = source.read_bytes()
    expected = hashlib.sha256(data).hexdigest()
    known = copy_checked(source, tmp_path / "known.bin", expected, stat_key(source.stat()))
    assert known == (expected, len(data), False, None) and (tmp_path / "known.bin").read_bytes() == data
    unknown = copy_checked(source, tmp_path / "unknown.bin", expected, "0:0:0:0:0")
    assert unknown == (expected, len(data), True, None)  # hashed; changed just now, so no status is kept
    assert copy_checked(source, tmp_path / "wrong.bin", "0" * 64, None)[:3] == (expected, len(data), True)


def test_copy_processes_give_what_copying_here_gives(source: Path, tmp_path: Path) -> None:
    """Known, unknown and misnamed files, and one missing, split over two processes: each job's answer is the
    one this process gives, in the jobs' order, and the bytes are the same."""
    rng = np.random.default_rng(5)
    sources = [source]
    for k in range(4):
        sources.append(tmp_path / f"s{k}.bin")
        sources[-1].write_bytes(rng.bytes(1000 * (k + 1)))
    digests = [hashlib.sha256(p.read_bytes()).hexdigest() for p in sources]
    known = [stat_key(sources[0].stat()), None, stat_key(sources[2].stat()), None, None]
    digests[3] = "0" * 64  # misnamed: hashed, and the hash read is answered
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    jobs = [(s, there / s.name, d, k) for s, d, k in zip(sources, digests, known, strict=True)]
    jobs.append((tmp_path / "missing.bin", there / "missing.bin", "1" * 64, None))
    before = [settled(s.stat()) for s in sources]
    answers = copy_in_processes(jobs, 2)
    assert answers is not None and len(answers) == len(jobs)
    for (s, _, d, k), answer, was_settled in zip(jobs[:-1], answers, before, strict=False):
        mine = copy_checked(s, here / s.name, d, k)
        if settled(s.stat()) == was_settled:
            assert answer == mine
        else:  # the file settled between the two copies (a loaded machine): only whether its status is kept differs
            assert answer[:3] == mine[:3]  # type: ignore[index]
        assert (there / s.name).read_bytes() == s.read_bytes()
    assert isinstance(answers[-1], str) and "missing.bin" in answers[-1]
    assert [a[2] for a in answers[:-1]] == [False, True, False, True, True]  # type: ignore[index]


def test_copy_processes_that_cannot_start_leave_the_copy_to_this_process(
    source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    assert copy_in_processes([(source, tmp_path / "copy.bin", digest, None)], 2) is None
