"""The story demo's books as open libraries publish them: one EPUB 3 per generated book, written with
ebooklib — a cover, a title page without illustration, then one XHTML page per story page (illustration and
narration), with title, language, authors, publisher and a Creative Commons rights line in the package."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from .story_corpus import StoryCorpus

PUBLISHERS = {
    "african_storybook": "African Storybook",
    "global_digital_library": "Global Digital Library",
    "storybooks_canada": "Storybooks Canada",
    "storyweaver": "StoryWeaver",
}


def write_epub(
    path: Path,
    identifier: str,
    title: str,
    language: str,
    pages: Sequence[tuple[str, bytes]],
    rights: str = "This work is licensed under a Creative Commons Attribution 4.0 International License (CC BY 4.0).",
    author: str = "",
    illustrator: str = "",
    publisher: str = "",
    cover: bytes | None = None,
) -> Path:
    """An EPUB 3 of ``pages`` (narration, JPEG bytes) in this order, after a cover and a title page."""
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier(identifier)
    book.set_title(title)
    book.set_language(language)
    if author:
        book.add_author(author, role="aut", uid="author")
    if illustrator:
        book.add_author(illustrator, role="ill", uid="illustrator")
    if publisher:
        book.add_metadata("DC", "publisher", publisher)
    if rights:
        book.add_metadata("DC", "rights", rights)
    if cover is not None:
        book.set_cover("images/cover.jpg", cover, create_page=True)
    front = epub.EpubHtml(title="Title", file_name="title.xhtml", lang=language)
    front.content = f"<html><body><h1>{escape(title)}</h1><p>{escape(author)}</p></body></html>"
    book.add_item(front)
    spine: list[object] = (["cover"] if cover is not None else []) + [front]
    for number, (text, image) in enumerate(pages, start=1):
        name = f"images/p{number:02d}.jpg"
        book.add_item(epub.EpubImage(uid=f"img{number}", file_name=name, media_type="image/jpeg", content=image))
        page = epub.EpubHtml(title=f"Page {number}", file_name=f"page{number:02d}.xhtml", lang=language)
        paragraphs = "".join(f"<p>{escape(line)}</p>" for line in text.split("\n"))
        page.content = f'<html><body><div><img src="{name}" alt=""/></div>{paragraphs}</body></html>'
        book.add_item(page)
        spine.append(page)
    book.toc = [front]
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = [*spine, "nav"]
    path.parent.mkdir(parents=True, exist_ok=True)
    epub.write_epub(str(path), book)
    return path


def write_corpus_epubs(corpus: StoryCorpus, folder: Path) -> list[Path]:
    """One EPUB per book of ``corpus`` (named by the book's id), its pictures read from the corpus folder."""
    root = corpus.candidates.parent
    written = []
    for book in corpus.books:
        pages = [(text, (root / image).read_bytes()) for text, image in zip(book.pages, book.images, strict=True)]
        written.append(
            write_epub(
                folder / f"{book.id}.epub",
                f"urn:omnicurate-demo:{book.id}",
                book.title,
                "sw" if book.id == corpus.books[0].id and "language" in corpus.planted else "en",
                pages,
                author=f"{book.hero} Storyteller",
                illustrator=f"{book.friend} Painter",
                publisher=PUBLISHERS[book.collection],
                cover=pages[0][1],
            )
        )
    return written
