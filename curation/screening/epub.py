"""Reading a storybook EPUB as open libraries publish them: the OPF package's metadata (title, language,
licence, attribution) and its pages in spine order, each an XHTML document with one illustration and its
narration.

Nothing is extracted to disk here and no path inside the archive is trusted: every member is looked up by
its normalized name inside the archive (``..`` past the root, absolute names and symbolic-link entries are
refused), sizes are bounded before reading, and XML is parsed with defusedxml (no entity expansion).
"""

from __future__ import annotations

import posixpath
import re
import stat
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException

from .book_model import MAX_IMAGE_BYTES, Book, BookPage, BookProblem, normalize_license

MAX_MEMBER_BYTES = MAX_IMAGE_BYTES
"""Largest single file read from an archive (an illustration); a larger one is a malformed book."""
NS = {
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
}
BLOCKS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "blockquote", "div", "section", "td", "figcaption"}
_SPACE = re.compile(r"\s+")


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


class _Archive:
    """An EPUB's members by normalized name; symbolic-link and escaping entries are refused when read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.zip = zipfile.ZipFile(path)
        self.members = {info.filename: info for info in self.zip.infolist()}

    def read(self, name: str, what: str) -> bytes:
        info = self.members.get(name)
        if info is None:
            raise BookProblem(f"{what} {name!r} is not in the archive")
        if stat.S_ISLNK(info.external_attr >> 16):
            raise BookProblem(f"{what} {name!r} is a symbolic link; a book holds plain files only")
        if info.file_size > MAX_MEMBER_BYTES:
            raise BookProblem(f"{what} {name!r} is {info.file_size} bytes (at most {MAX_MEMBER_BYTES})")
        with self.zip.open(info) as handle:
            data = handle.read(MAX_MEMBER_BYTES + 1)
        if len(data) > MAX_MEMBER_BYTES:
            raise BookProblem(f"{what} {name!r} is larger than it says")
        return data

    def xml(self, name: str, what: str) -> Any:
        try:
            return ElementTree.fromstring(self.read(name, what))
        except (ElementTree.ParseError, DefusedXmlException) as exc:
            raise BookProblem(f"{what} {name!r} is not well-formed XML ({exc})") from exc


def member_path(base: str, href: str) -> str:
    """``href`` (relative to the member ``base``) as a member name; one that leaves the archive is refused."""
    parts = urlsplit(href)
    if parts.scheme or parts.netloc or href.startswith("/"):
        raise BookProblem(f"{href!r} points outside the book")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(base), unquote(parts.path)))
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        raise BookProblem(f"{href!r} points outside the book")
    return joined


def _text(element: Any) -> str:
    return _SPACE.sub(" ", "".join(element.itertext())).strip()


def narration(body: Any) -> str:
    """The page's text, one line per innermost block (paragraphs, headings), scripts and styles left out."""
    for junk in [e for e in body.iter() if _local(e.tag) in ("script", "style")]:
        junk.clear()
    lines = []
    for element in body.iter():
        if _local(element.tag) not in BLOCKS:
            continue
        if any(_local(child.tag) in BLOCKS for child in element.iter() if child is not element):
            continue
        line = _text(element)
        if line:
            lines.append(line)
    return "\n".join(lines) if lines else _text(body)


def _images(body: Any) -> list[str]:
    found = []
    for element in body.iter():
        name = _local(element.tag)
        if name == "img" and element.get("src"):
            found.append(element.get("src"))
        elif name == "image":
            href = element.get("{http://www.w3.org/1999/xlink}href") or element.get("href")
            if href:
                found.append(href)
    return found


def _metadata(package: Any) -> dict[str, Any]:
    meta = package.find("opf:metadata", NS)
    if meta is None:
        raise BookProblem("the package has no <metadata>")

    def all_of(tag: str) -> list[str]:
        return [_text(e) for e in meta.findall(f"dc:{tag}", NS) if _text(e)]

    license_text = " ".join(all_of("rights"))
    for element in meta.iter():
        if _local(element.tag) == "meta" and element.get("property") in ("dcterms:license", "dcterms:rights"):
            license_text += " " + _text(element)
        if _local(element.tag) == "link" and element.get("rel") in ("dcterms:license", "license"):
            license_text += " " + (element.get("href") or "")
    roles = {"aut": "written by", "ill": "illustrated by", "trl": "translated by", "edt": "edited by"}
    credits = []
    refined = {
        (e.get("refines") or "").lstrip("#"): _text(e)
        for e in meta.iter()
        if _local(e.tag) == "meta" and e.get("property") == "role"
    }
    for tag in ("creator", "contributor"):
        for e in meta.findall(f"dc:{tag}", NS):
            role = e.get(f"{{{NS['opf']}}}role") or refined.get(e.get("id") or "", "")
            if _text(e):
                credits.append(f"{roles.get(role, 'by' if tag == 'creator' else 'with')} {_text(e)}")
    publishers = all_of("publisher")
    attribution = "; ".join(credits + [f"published by {p}" for p in publishers] + all_of("rights"))
    cover = ""
    for element in meta.iter():
        if _local(element.tag) == "meta" and element.get("name") == "cover":
            cover = element.get("content") or ""
    return {
        "title": (all_of("title") or [""])[0],
        "language": (all_of("language") or [""])[0],
        "identifier": (all_of("identifier") or [""])[0],
        "publisher": (publishers or [""])[0],
        "license": normalize_license(license_text),
        "license_text": license_text.strip(),
        "attribution": attribution,
        "cover_id": cover,
    }


def read_epub(path: Path, book_id: str) -> Book:
    """The book in ``path``: its metadata and its illustrated pages in spine order (``BookProblem`` names
    what is wrong, and the page, when it is not a readable storybook)."""
    try:
        archive = _Archive(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise BookProblem(f"not an EPUB (a zip archive) ({exc})") from exc
    with archive.zip:
        container = archive.xml("META-INF/container.xml", "container")
        rootfile = container.find("c:rootfiles/c:rootfile", NS)
        if rootfile is None or not rootfile.get("full-path"):
            raise BookProblem("META-INF/container.xml names no package (rootfile)")
        opf = member_path("", rootfile.get("full-path"))
        package = archive.xml(opf, "package")
        meta = _metadata(package)
        manifest = {}
        for item in package.findall("opf:manifest/opf:item", NS):
            href = item.get("href") or ""
            manifest[item.get("id") or ""] = (member_path(opf, href), item.get("properties") or "")
        covers = {href for href, props in manifest.values() if "cover-image" in props.split()}
        if meta["cover_id"] in manifest:
            covers.add(manifest[meta["cover_id"]][0])
        pages: list[BookPage] = []
        spine = package.findall("opf:spine/opf:itemref", NS)
        if not spine:
            raise BookProblem("the package has an empty <spine> (no reading order)")
        for number, ref in enumerate(spine, start=1):
            if ref.get("linear") == "no":
                continue
            idref = ref.get("idref") or ""
            if idref not in manifest:
                raise BookProblem(f"spine item {number} names {idref!r}, which the manifest lacks")
            doc = manifest[idref][0]
            where = f"spine item {number} ({doc})"
            try:
                root = archive.xml(doc, "page")
                body = next((e for e in root.iter() if _local(e.tag) == "body"), None)
                if body is None:
                    raise BookProblem("has no <body>")
                images = [member_path(doc, src) for src in _images(body)]
                if not pages:  # before the story: a page showing only the cover picture is the cover
                    images = [i for i in images if i not in covers]
                if not images:
                    continue  # front or back matter (cover, title, credits): not a story page
                if len(images) > 1:
                    raise BookProblem(f"holds {len(images)} illustrations; a story page holds one")
                data = archive.read(images[0], "illustration")
                pages.append(BookPage(len(pages), narration(body), images[0], data, doc))
            except BookProblem as exc:
                raise BookProblem(f"{where}: {exc}", page=len(pages) + 1) from exc
    return Book(
        id=book_id,
        file=path.name,
        title=meta["title"],
        language=meta["language"],
        identifier=meta["identifier"],
        license=meta["license"],
        license_text=meta["license_text"],
        attribution=meta["attribution"],
        publisher=meta["publisher"],
        pages=pages,
    )
