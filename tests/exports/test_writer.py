"""Copying media while hashing them: the kernel-copy path and the portable path give the same bytes."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from exports import writer
from exports.writer import CHUNK, copy_hashing, copy_plain


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

    monkeypatch.setattr(writer.os, "copy_file_range", refuse, raising=False)
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
    block_buffer = writer._block_buffer

    def counting() -> memoryview:
        made.append(1)
        return block_buffer()

    monkeypatch.setattr(writer, "_block_buffer", counting)
    data = source.read_bytes()
    assert copy_plain(source, tmp_path / "plain.bin") == len(data) and made == []
    assert (tmp_path / "plain.bin").read_bytes() == data
    assert copy_hashing(source, tmp_path / "hashed.bin") == (hashlib.sha256(data).hexdigest(), len(data))
    assert len(made) == 1 and (tmp_path / "hashed.bin").read_bytes() == data

    def refuse(*args: object) -> int:
        raise OSError(errno.EXDEV, "cross-device")

    monkeypatch.setattr(writer.os, "copy_file_range", refuse, raising=False)
    made.clear()
    assert copy_plain(source, tmp_path / "user-space.bin") == len(data) and len(made) == 1  # bytes pass through
    assert (tmp_path / "user-space.bin").read_bytes() == data


def test_store_checks_copy_a_known_file_unhashed_and_hash_an_unknown_one(source: Path, tmp_path: Path) -> None:
    from curation.store_checks import stat_key
    from exports.writer import StoreChecks

    data = source.read_bytes()
    expected = hashlib.sha256(data).hexdigest()
    checks = StoreChecks({expected: stat_key(source.stat())})
    assert checks.copy(source, tmp_path / "known.bin", expected) == (expected, len(data))
    assert checks.hashed == 0 and (tmp_path / "known.bin").read_bytes() == data
    other = StoreChecks({expected: "0:0:0:0:0"})  # another file status: hashed, and a wrong hash is told
    wrong = "0" * 64
    assert other.copy(source, tmp_path / "unknown.bin", wrong) == (expected, len(data))
    assert other.hashed == 1 and other.fresh == {}


def _reflink_copy_works(folder: Path) -> bool:
    """coreutils' own answer, independent of ``copies_clone``: ``cp --reflink=always`` fails where it cannot."""
    import subprocess

    probe = folder / "oracle.bin"
    probe.write_bytes(b"x" * 8192)
    try:
        return (
            subprocess.run(["cp", "--reflink=always", probe, folder / "oracle.copy"], capture_output=True).returncode
            == 0
        )
    finally:
        probe.unlink()
        (folder / "oracle.copy").unlink(missing_ok=True)


def test_copies_clone_agrees_with_coreutils_and_leaves_nothing_behind(tmp_path: Path) -> None:
    before = sorted(tmp_path.iterdir())
    assert writer.copies_clone(tmp_path) is _reflink_copy_works(tmp_path)
    assert sorted(tmp_path.iterdir()) == before, "the probe files are removed"


def test_copies_clone_of_a_folder_it_cannot_write_is_unknown(tmp_path: Path) -> None:
    assert writer.copies_clone(tmp_path / "missing") is None
    (tmp_path / "a-file").write_text("")
    assert writer.copies_clone(tmp_path / "a-file") is None


def test_copies_clone_says_what_the_ioctl_does(tmp_path: Path, monkeypatch) -> None:
    """Both answers, whatever this machine's file system: the clone ioctl succeeding, and refused."""
    calls: list[int] = []

    def cloning(fd: int, request: int, source: int) -> int:
        calls.append(request)
        return 0

    def refusing(fd: int, request: int, source: int) -> int:
        raise OSError(errno.EOPNOTSUPP, "Operation not supported")

    monkeypatch.setattr(writer.fcntl, "ioctl", cloning)
    assert writer.copies_clone(tmp_path) is True and calls == [writer.FICLONE]
    monkeypatch.setattr(writer.fcntl, "ioctl", refusing)
    assert writer.copies_clone(tmp_path) is False
    assert list(tmp_path.iterdir()) == []
