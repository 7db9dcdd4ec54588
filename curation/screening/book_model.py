"""A storybook as ``curate import books`` reads it (from an EPUB or a ``book.json`` folder), and the
candidate transitions it yields: each pair of consecutive pages, with the next page's quoted dialogue as
its speech lines and the book's licence, attribution and each page's place as provenance."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curation.errors import CurateError, ValidationFailed
from curation.jsonl import not_a_file, read_json_document
from curation.licences import normalize_license

_DIALOGUE = re.compile(r"“([^“”]+)”|\"([^\"]+)\"|「([^「」]+)」|『([^『』]+)』|«([^«»]+)»|„([^„“”]+)[“”]")
"""Quoted passages: curly and straight double quotes, CJK corner brackets, guillemets, German low quotes."""
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


MAX_IMAGE_BYTES = 50 * 1024 * 1024
"""Largest illustration read from a book (an archive member or a file beside ``book.json``)."""


class BookProblem(CurateError):
    """What is wrong with a book; ``page`` (from 1) when one page is the cause; ``file`` and ``line`` when a file
    of the book (its ``book.json``) is, at that line."""

    def __init__(self, message: str, page: int | None = None, file: str = "", line: int | None = None) -> None:
        super().__init__(message)
        self.page = page
        self.file = file
        self.line = line


@dataclass
class BookPage:
    index: int
    """Position among the book's story pages, from 0."""
    text: str
    image_name: str
    """The illustration's name inside the book (archive member or file beside book.json)."""
    image: bytes
    href: str
    """The page's own document in the package (or, in a folder, its image)."""


@dataclass
class Book:
    id: str
    file: str
    title: str
    language: str
    license: str
    attribution: str
    pages: list[BookPage] = field(default_factory=list)
    identifier: str = ""
    license_text: str = ""
    publisher: str = ""
    collection: str = ""
    url: str = ""
    source: str = ""
    """The book's file or folder as it was given (what its problems name)."""


def dialogue_lines(text: str) -> list[str]:
    """The quoted passages of a page (“…”, "…", 「…」, 『…』, «…», „…“), in order, stripped."""
    return [next(g for g in m.groups() if g is not None).strip() for m in _DIALOGUE.finditer(text)]


def book_slug(name: str) -> str:
    """A book id from a file or folder name (letters, digits, ``._-``)."""
    slug = _SLUG.sub("-", name).strip("-._")
    return slug[:150] or "book"


# ----- the folder layout -----------------------------------------------------------------------
class FolderPage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    image: str = Field(min_length=1, description="the illustration, relative to book.json")
    text: str = ""


class FolderBook(BaseModel):
    """``book.json``: the book's metadata and its pages in reading order, images beside it."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field("", max_length=150, pattern=r"^([A-Za-z0-9][A-Za-z0-9._-]*)?$")
    title: str = Field(min_length=1)
    language: str = ""
    license: str = Field(min_length=1, description="SPDX identifier or a rights line naming a CC licence")
    attribution: str = ""
    collection: str = ""
    url: str = ""
    pages: list[FolderPage] = Field(min_length=2)


def read_folder(folder: Path) -> Book:
    """A ``book.json`` folder; images must be plain files inside the folder (no symbolic links, no ``..``)."""
    manifest = folder / "book.json"
    if manifest.is_symlink():
        raise BookProblem("book.json is a symbolic link; a book holds plain files only")
    if (why := not_a_file(manifest)) is not None:
        raise BookProblem(f"book.json {why}" if why != "does not exist" else "no book.json in the folder")
    try:
        data = read_json_document(manifest)
    except ValidationFailed as exc:
        [problem] = exc.problems
        message = f"{problem.field}: {problem.message}" if problem.field else problem.message
        raise BookProblem(message, file=str(manifest), line=problem.line) from exc
    try:
        parsed = FolderBook.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        loc = errors[0]["loc"]
        number = int(loc[1]) + 1 if len(loc) > 1 and loc[0] == "pages" and isinstance(loc[1], int) else None
        found = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'book'}: {e['msg']}" for e in errors)
        raise BookProblem(f"book.json: {found}", page=number) from exc
    license = normalize_license(parsed.license) or parsed.license
    root = folder.resolve()
    pages = []
    for index, page in enumerate(parsed.pages):
        pure = PurePosixPath(page.image.replace("\\", "/"))
        path = folder.joinpath(*pure.parts)
        if pure.is_absolute() or ".." in pure.parts:
            raise BookProblem(f"image {page.image!r} points outside the book's folder", index + 1)
        if any(p.is_symlink() for p in [path, *path.parents] if p != folder and folder in p.parents):
            raise BookProblem(f"image {page.image!r} is a symbolic link", index + 1)
        if not path.resolve().is_relative_to(root) or not path.exists():
            raise BookProblem(f"image {page.image!r} is not a file in the folder", index + 1)
        if (why := not_a_file(path)) is not None:
            raise BookProblem(f"image {page.image!r} {why}", index + 1)
        if path.stat().st_size > MAX_IMAGE_BYTES:
            raise BookProblem(f"image {page.image!r} is larger than {MAX_IMAGE_BYTES // 2**20} MiB", index + 1)
        pages.append(BookPage(index, page.text.strip(), pure.as_posix(), path.read_bytes(), pure.as_posix()))
    return Book(
        id=parsed.id or book_slug(folder.name),
        file=folder.name,
        title=parsed.title,
        language=parsed.language,
        license=license,
        attribution=parsed.attribution,
        pages=pages,
        collection=parsed.collection,
        url=parsed.url,
    )


def candidate_lines(book: Book, collection: str, images: list[str]) -> list[dict[str, Any]]:
    """One candidate line per pair of consecutive pages; ``images[i]`` is page i's image path relative to
    the candidates file."""
    lines = []
    for current, nxt in zip(book.pages, book.pages[1:], strict=False):
        origin = {
            "identifier": book.identifier,
            "language": book.language,
            "attribution": book.attribution,
            "current": {"file": book.file, "href": current.href, "index": current.index},
            "next": {"file": book.file, "href": nxt.href, "index": nxt.index},
        }
        lines.append(
            {
                "id": f"{book.id}-p{current.index:02d}",
                "book": book.id,
                "page": current.index,
                "title": book.title,
                "source": {"collection": book.collection or collection, "license": book.license, "url": book.url},
                "current": {"image": images[current.index], "text": current.text},
                "next": {"image": images[nxt.index], "text": nxt.text},
                "speech_lines": dialogue_lines(nxt.text),
                "origin": origin,
            }
        )
    return lines
