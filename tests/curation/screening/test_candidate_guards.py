"""Issue 22, cases 3 and 4, on SQLite and PostgreSQL: `import candidates` reads through the shared JSONL rules
(NUL, text and line limits, bounded reading) and refuses media paths that leave the file's folder through a
symlink, like `import items`; a page number no database stores is a named error, not an OverflowError."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from sqlalchemy import func, select

from curation.errors import ValidationFailed
from curation.jsonl import MAX_LINE_BYTES, MAX_TEXT_CHARS
from curation.screening.importer import import_candidates
from curation.screening.tables import Candidate
from omnicurate.demo.story_corpus import build_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return build_corpus(tmp_path_factory.mktemp("story"), books=2)


def _count(ws) -> int:  # type: ignore[no-untyped-def]
    with ws.session() as s:
        return s.execute(select(func.count()).select_from(Candidate)).scalar_one()


def _with_second_line(corpus, name: str, change) -> Path:  # type: ignore[no-untyped-def]
    """The corpus's first two lines, the second changed by ``change``, in a file beside the corpus."""
    lines = corpus.candidates.read_text(encoding="utf-8").splitlines()
    second = json.loads(lines[1])
    change(second)
    path = corpus.candidates.parent / name
    path.write_text(lines[0] + "\n" + json.dumps(second, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _refused(ws, path: Path) -> list[str]:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationFailed) as exc:
        import_candidates(ws, path)
    assert _count(ws) == 0  # nothing of the file, not even its good first line
    return [str(p) for p in exc.value.problems]


def test_a_symlink_out_of_the_folder_is_refused(workspace, corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    secret = tmp_path / "secret.jpg"
    secret.write_bytes(b"not for the store")
    link = corpus.candidates.parent / "escape.jpg"
    if not link.is_symlink():
        os.symlink(secret, link)
    path = _with_second_line(corpus, "symlink.jsonl", lambda line: line["next"].update(image="escape.jpg"))
    assert _refused(workspace, path) == [
        f"{path}:2: next.image: escape.jpg: path leaves the JSONL file's folder (through '..' or a symlink)"
    ]


def test_nul_is_refused_with_file_and_line(workspace, corpus) -> None:  # type: ignore[no-untyped-def]
    path = _with_second_line(corpus, "nul.jsonl", lambda line: line["next"].update(text="a\x00b"))
    [problem] = _refused(workspace, path)
    assert problem.startswith(f"{path}:2: next.text: contains a NUL character")


def test_an_overlong_text_is_refused(workspace, corpus) -> None:  # type: ignore[no-untyped-def]
    path = _with_second_line(corpus, "long.jsonl", lambda line: line.update(title="字" * 60_000))
    [problem] = _refused(workspace, path)
    assert problem.startswith(f"{path}:2: title: text longer than the limit of {MAX_TEXT_CHARS:,}")


def test_an_overlong_line_is_refused(workspace, corpus) -> None:  # type: ignore[no-untyped-def]
    path = _with_second_line(corpus, "wide.jsonl", lambda line: line.update(speech_lines=["x" * 15_000] * 140))
    assert path.stat().st_size > 2_000_000
    [problem] = _refused(workspace, path)
    assert problem.startswith(f"{path}:2: line of ") and f"exceeds the limit of {MAX_LINE_BYTES:,}" in problem


@pytest.mark.parametrize("page", [2**63, 2**31, -1, "3", True])
def test_a_page_no_database_stores_is_a_named_error(workspace, corpus, page) -> None:  # type: ignore[no-untyped-def]
    path = _with_second_line(corpus, "page.jsonl", lambda line: line.update(page=page))
    [problem] = _refused(workspace, path)
    assert problem.startswith(f"{path}:2: page: ")


def test_a_device_is_refused_without_reading_it(workspace) -> None:  # type: ignore[no-untyped-def]
    [problem] = _refused(workspace, Path("/dev/zero"))
    assert problem == "/dev/zero: is a device, not a regular file; give the file itself"
