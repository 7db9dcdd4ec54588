"""`curate import books`: storybooks as open libraries publish them (EPUB written by ebooklib, and the
book.json folder layout) become candidate transitions, all or nothing, and a second run adds nothing."""

from __future__ import annotations

import io
import json
import os
import stat
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from curation.errors import ValidationFailed
from curation.screening.book_model import dialogue_lines, normalize_license
from curation.screening.books import import_books, read_books
from curation.screening.tables import Candidate
from omnicurate.cli.main import app
from omnicurate.demo.story_books import write_epub

runner = CliRunner()


def jpeg(seed: int) -> bytes:
    from PIL import Image

    img = Image.new("RGB", (64, 48), ((seed * 40) % 256, (seed * 90) % 256, (seed * 150) % 256))
    out = io.BytesIO()
    img.save(out, "JPEG")
    return out.getvalue()


PAGES = [
    "Kito woke early.\nThe river was loud.",
    "“Where is my kite?” asked Kito.",
    "Lulu laughed. 「風が持っていった」と言った。",
    "They ran to the hill together.",
]


@pytest.fixture
def fox_epub(tmp_path: Path) -> Path:
    return write_epub(
        tmp_path / "in" / "kito-kite.epub",
        "urn:uuid:kito-kite",
        "Kito and the Kite",
        "en",
        [(text, jpeg(n)) for n, text in enumerate(PAGES)],
        rights="© African Storybook Initiative 2015. Creative Commons Attribution-ShareAlike 4.0 International",
        author="Ann Author",
        illustrator="Ivy Illustrator",
        publisher="African Storybook",
        cover=jpeg(99),
    )


def book_folder(root: Path, pages: list[tuple[str, str]], **meta: object) -> Path:
    root.mkdir(parents=True)
    for n, (image, _) in enumerate(pages):
        if not (root / image).exists() and ".." not in image:
            (root / image).parent.mkdir(parents=True, exist_ok=True)
            (root / image).write_bytes(jpeg(10 + n))
    data = {"title": "Hawa's Well", "language": "sw", "license": "CC-BY-4.0", "attribution": "by Hawa", **meta}
    data["pages"] = [{"image": image, "text": text} for image, text in pages]
    (root / "book.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return root


def rewrite_member(epub: Path, name: str, data: bytes | None, symlink: bool = False) -> None:
    """Replace (or, with ``data`` None, drop) one archive member, keeping the others as they are."""
    members = [(i, zipfile.ZipFile(epub).read(i.filename)) for i in zipfile.ZipFile(epub).infolist()]
    with zipfile.ZipFile(epub, "w") as out:
        for info, content in members:
            if info.filename != name:
                out.writestr(info, content)
            elif data is not None:
                replaced = zipfile.ZipInfo(name)
                if symlink:
                    replaced.external_attr = (stat.S_IFLNK | 0o777) << 16
                out.writestr(replaced, data)


def test_an_epub_reads_in_spine_order_with_images_narration_and_package_metadata(fox_epub: Path) -> None:
    [book] = read_books([fox_epub])
    assert (book.id, book.title, book.language, book.license) == (
        "kito-kite",
        "Kito and the Kite",
        "en",
        "CC-BY-SA-4.0",
    )
    assert book.attribution.startswith("written by Ann Author; illustrated by Ivy Illustrator; published by African")
    assert book.collection == "african_storybook"
    # the cover and the title page (no illustration) are not story pages
    assert [p.text for p in book.pages] == [
        "Kito woke early.\nThe river was loud.",
        "“Where is my kite?” asked Kito.",
        "Lulu laughed. 「風が持っていった」と言った。",
        "They ran to the hill together.",
    ]
    assert [p.image for p in book.pages] == [jpeg(n) for n in range(4)]
    assert [p.href for p in book.pages] == [f"EPUB/page{n:02d}.xhtml" for n in range(1, 5)]
    # a story page may show the cover picture again: only before the story is such a page the cover
    page = zipfile.ZipFile(fox_epub).read("EPUB/page04.xhtml").replace(b"images/p04.jpg", b"images/cover.jpg")
    rewrite_member(fox_epub, "EPUB/page04.xhtml", page)
    [again] = read_books([fox_epub])
    assert (
        len(again.pages) == 4
        and again.pages[3].image == jpeg(99)
        and again.pages[3].image_name == "EPUB/images/cover.jpg"
    )


def test_books_import_as_candidates_once(workspace, fox_epub: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = book_folder(
        tmp_path / "in" / "hawa", [("p1.jpg", "Hawa alikwenda kisimani."), ("img/p2.jpg", "«Maji!» alisema Hawa.")]
    )
    report = import_books(workspace, [fox_epub, folder])
    assert report.books == ["kito-kite", "hawa"] and report.pages == 6 and report.images_written == 6
    assert (report.candidates.created, report.candidates.unchanged) == (4, 0)
    with workspace.session() as s:
        rows = {c.id: c for c in s.execute(select(Candidate)).scalars()}
    assert sorted(rows) == ["hawa-p00", "kito-kite-p00", "kito-kite-p01", "kito-kite-p02"]
    first, cjk = rows["kito-kite-p00"], rows["kito-kite-p01"]
    assert (first.current_text, first.next_text) == (PAGES[0], PAGES[1])
    assert Path(first.next_image).read_bytes() == jpeg(1) and Path(first.next_image).is_relative_to(workspace.root)
    assert first.speech_lines == ["Where is my kite?"] and cjk.speech_lines == ["風が持っていった"]
    assert (first.collection, first.license, first.title) == ("african_storybook", "CC-BY-SA-4.0", "Kito and the Kite")
    assert first.origin is not None and first.origin["current"] == {
        "file": "kito-kite.epub",
        "href": "EPUB/page01.xhtml",
        "index": 0,
    }
    assert first.origin["language"] == "en" and "Ivy Illustrator" in first.origin["attribution"]
    hawa = rows["hawa-p00"]
    assert (hawa.collection, hawa.license, hawa.speech_lines) == ("books", "CC-BY-4.0", ["Maji!"])
    assert hawa.origin is not None and hawa.origin["next"]["href"] == "img/p2.jpg"

    again = import_books(workspace, [fox_epub, folder])
    assert again.images_written == 0 and (again.candidates.created, again.candidates.unchanged) == (0, 4)


def test_malformed_books_are_named_with_file_and_page_and_nothing_is_imported(workspace, fox_epub, tmp_path) -> None:  # type: ignore[no-untyped-def]
    good = book_folder(tmp_path / "in" / "good", [("a.jpg", "One page."), ("b.jpg", "Two pages.")])
    broken = tmp_path / "in" / "broken.epub"
    broken.write_bytes(fox_epub.read_bytes())
    rewrite_member(broken, "EPUB/page03.xhtml", b"<html><body><p>unclosed</body></html>")
    escaping = tmp_path / "in" / "escaping.epub"
    escaping.write_bytes(fox_epub.read_bytes())
    page = zipfile.ZipFile(fox_epub).read("EPUB/page02.xhtml").replace(b"images/p02.jpg", b"../../../etc/passwd")
    rewrite_member(escaping, "EPUB/page02.xhtml", page)
    linked = tmp_path / "in" / "linked.epub"
    linked.write_bytes(fox_epub.read_bytes())
    rewrite_member(linked, "EPUB/images/p01.jpg", b"/etc/passwd", symlink=True)
    unlicensed = tmp_path / "in" / "unlicensed.epub"
    write_epub(unlicensed, "u", "No Rights", "en", [("a", jpeg(1)), ("b", jpeg(2))], rights="All rights reserved.")
    outside = tmp_path / "secret.jpg"
    outside.write_bytes(jpeg(7))
    sneaky = book_folder(tmp_path / "in" / "sneaky", [("a.jpg", "One."), ("b.jpg", "Two.")])
    (sneaky / "b.jpg").unlink()
    os.symlink(outside, sneaky / "b.jpg")
    climbing = book_folder(tmp_path / "in" / "climbing", [("a.jpg", "One."), ("../secret.jpg", "Two.")])

    with pytest.raises(ValidationFailed) as caught:
        import_books(workspace, [good, broken, escaping, linked, unlicensed, sneaky, climbing])
    found = [str(p) for p in caught.value.problems]
    assert found[0].startswith(f"{broken}: page 3: spine item 5 (EPUB/page03.xhtml): page 'EPUB/page03.xhtml' is not")
    assert found[1] == (
        f"{escaping}: page 2: spine item 4 (EPUB/page02.xhtml): '../../../etc/passwd' points outside the book"
    )
    assert found[2] == (
        f"{linked}: page 1: spine item 3 (EPUB/page01.xhtml): illustration 'EPUB/images/p01.jpg' is a symbolic "
        "link; a book holds plain files only"
    )
    assert (
        found[3].startswith(f"{unlicensed}: license: no licence in the package metadata") and "All rights" in found[3]
    )
    assert found[4] == f"{sneaky}: page 2: image 'b.jpg' is a symbolic link"
    assert found[5] == f"{climbing}: page 2: image '../secret.jpg' points outside the book's folder"
    assert len(found) == 6
    with workspace.session() as s:
        assert s.execute(select(Candidate)).first() is None
    assert not (workspace.root / "books").exists() or not any((workspace.root / "books").rglob("*.jpg"))

    result = runner.invoke(app, ["-w", str(workspace.root), "import", "books", str(good), str(broken)])
    assert result.exit_code == 2 and f"{broken}: page 3:" in result.output
    result = runner.invoke(app, ["-w", str(workspace.root), "import", "books", str(good), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) | {"books": ["good"], "created": 1} == json.loads(result.stdout)


def test_a_folder_of_books_and_a_book_json_without_pages(workspace, fox_epub, tmp_path) -> None:  # type: ignore[no-untyped-def]
    thin = book_folder(tmp_path / "in" / "thin", [("a.jpg", "Only one page.")])
    with pytest.raises(ValidationFailed) as caught:
        import_books(workspace, [tmp_path / "in"])  # the folder holding kito-kite.epub and thin/
    assert [str(p) for p in caught.value.problems] == [
        f"{thin}: book.json: pages: List should have at least 2 items after validation, not 1"
    ]
    (thin / "book.json").write_text(json.dumps({"license": "CC-BY-4.0", "pages": [{"text": "a"}, {"image": "a.jpg"}]}))
    with pytest.raises(ValidationFailed) as caught:
        import_books(workspace, [thin])
    assert [str(p) for p in caught.value.problems] == [
        f"{thin}: book.json: title: Field required; pages.0.image: Field required"
    ]
    (thin / "book.json").unlink()
    (thin / "a.jpg").unlink()
    thin.rmdir()
    assert import_books(workspace, [tmp_path / "in"]).books == ["kito-kite"]


def test_licences_and_dialogue_as_libraries_write_them() -> None:
    assert normalize_license("CC BY 4.0") == "CC-BY-4.0"
    assert normalize_license("https://creativecommons.org/licenses/by-nc-sa/4.0/") == "CC-BY-NC-SA-4.0"
    assert normalize_license("Creative Commons Attribution-NonCommercial 3.0 Unported") == "CC-BY-NC-3.0"
    assert normalize_license("All rights reserved") == ""
    assert dialogue_lines('“Run!” she said. "Wait," he said. 「はい」『いいえ』 «Oui» „Ja“') == [
        "Run!",
        "Wait,",
        "はい",
        "いいえ",
        "Oui",
        "Ja",
    ]
