# story-books.md's refusals: library/ holding one sound book (a copy of the story demo's bk00001.epub, in
# story-demo/library) and ten books each broken in one way.
mkdir -p library
python - <<'PY'
import json
import os
import stat
import struct
import zipfile
import zlib
from pathlib import Path

base = Path("story-demo/library/bk00001.epub")
library = Path("library")
(library / "good.epub").write_bytes(base.read_bytes())
image = zipfile.ZipFile(base).read("EPUB/images/p01.jpg")


def epub(name, member, data, symlink=False):
    """A copy of the demo's book with MEMBER replaced by DATA (as a symbolic link with SYMLINK)."""
    with zipfile.ZipFile(base) as source, zipfile.ZipFile(library / name, "w") as out:
        for info in source.infolist():
            if info.filename != member:
                out.writestr(info, source.read(info.filename))
            else:
                replaced = zipfile.ZipInfo(member)
                if symlink:
                    replaced.external_attr = (stat.S_IFLNK | 0o777) << 16
                out.writestr(replaced, data(source.read(member)))


def folder(name, pages=2, **meta):
    root = library / name
    root.mkdir()
    for n in range(pages):
        (root / "ab"[n % 2]).with_suffix(".jpg").write_bytes(image)
    book = {"title": "Hawa's Well", "language": "sw", "license": "CC-BY-4.0", "attribution": "by Hawa", **meta}
    book["pages"] = [{"image": f"{'ab'[n % 2]}.jpg", "text": f"Page {n + 1}."} for n in range(pages)]
    (root / "book.json").write_text(json.dumps(book), encoding="utf-8")
    return root


def png_header(width, height):
    chunk = b"IHDR" + struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    ihdr = struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    end = struct.pack(">I", 0) + b"IEND" + struct.pack(">I", zlib.crc32(b"IEND"))
    return b"\x89PNG\r\n\x1a\n" + ihdr + end


epub("broken.epub", "EPUB/page03.xhtml", lambda _: b"<html><body><p>unclosed</body></html>")
epub("escaping.epub", "EPUB/page02.xhtml", lambda page: page.replace(b"images/p02.jpg", b"../../../etc/passwd"))
epub("linked.epub", "EPUB/images/p01.jpg", lambda _: b"/etc/passwd", symlink=True)
epub("unlicensed.epub", "EPUB/content.opf", lambda opf: opf.replace(
    opf[opf.index(b"<dc:rights>") : opf.index(b"</dc:rights>")], b"<dc:rights>All rights reserved."))
sneaky = folder("sneaky")
(sneaky / "b.jpg").unlink()
os.symlink(Path("story-demo/library/bk00002.epub").resolve(), sneaky / "b.jpg")
folder("thin", pages=1)
deep = folder("deep")
(deep / "book.json").write_text('{"title": "T", "license": "CC-BY-4.0", "pages": ' + "[" * 1000 + "]" * 1000 + "}")
folder("closed", license="All rights reserved")
huge = folder("huge")
(huge / "b.jpg").unlink()
(huge / "b.png").write_bytes(png_header(60_000, 60_000))
book = json.loads((huge / "book.json").read_text())
book["pages"][1]["image"] = "b.png"
(huge / "book.json").write_text(json.dumps(book))
folder("wordy", attribution="a" * 2500)
PY
