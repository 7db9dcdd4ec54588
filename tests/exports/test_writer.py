"""The release writer: store checks copy a known file unhashed, and whether copies clone (copy-on-write)."""

from __future__ import annotations

import errno
import hashlib
from pathlib import Path

from exports import writer


def test_store_checks_copy_a_known_file_unhashed_and_hash_an_unknown_one(tmp_path: Path) -> None:
    from curation.store_checks import stat_key
    from exports.writer import StoreChecks

    source = tmp_path / "source.bin"
    source.write_bytes(b"a store file's bytes" * 1000)
    data = source.read_bytes()
    expected = hashlib.sha256(data).hexdigest()
    checks = StoreChecks({expected: stat_key(source.stat())})
    assert checks.copy(source, tmp_path / "known.bin", expected) == (expected, len(data))
    assert (checks.hashed, checks.plain) == (0, 1) and (tmp_path / "known.bin").read_bytes() == data
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
