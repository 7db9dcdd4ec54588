"""Issue 22, case 1: `export items` on SQLite and PostgreSQL. A stale media file of the same size in the export
folder is replaced (content hash, not size, decides), and with --by the reader's exposure is recorded before any
label reaches the disk: a kill while the labels are written leaves the reader exposed."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from curation.exposure import exposed_people
from curation.items import export_items, import_items
from curation.media import sha256_file
from curation.workspace import Workspace
from tests.media_factory import item_row, write_items

ROOT = Path(__file__).resolve().parents[2]


def test_a_stale_media_file_of_the_same_size_is_replaced(workspace: Workspace, tmp_path: Path) -> None:
    workspace.add_person("ann1", ["author"])
    import_items(workspace, write_items(tmp_path / "in", [item_row("a")]))
    out = tmp_path / "out" / "items.jsonl"
    export_items(workspace, out)
    image = workspace.item("a").image
    exported = next((out.parent / "media").glob(f"{image}.*"))
    data = bytearray(exported.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte: same size, other content
    exported.write_bytes(bytes(data))
    assert sha256_file(exported) != image

    export_items(workspace, out)
    assert sha256_file(exported) == image
    again = tmp_path / "again"
    Workspace.init(again).add_person("ann1", ["author"])
    copy = Workspace.open(again)
    try:
        import_items(copy, out)
        assert copy.item("a").image == image  # the re-import has the item's own image
    finally:
        copy.close()


KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    import curation.items as items
    from curation.workspace import Workspace

    original = items.write_jsonl
    def write_then_die(path, rows):
        original(path, rows)  # the labels are on the disk now
        os.kill(os.getpid(), signal.SIGKILL)
    items.write_jsonl = write_then_die
    items.export_items(Workspace.open(Path(sys.argv[1])), Path(sys.argv[2]), reader=sys.argv[3])
    """
)


def test_export_by_records_exposure_before_labels_reach_the_disk(workspace: Workspace, tmp_path: Path) -> None:
    workspace.add_person("ann1", ["author"])
    workspace.add_person("rev5", ["reviewer"])
    import_items(workspace, write_items(tmp_path / "in", [item_row("a"), item_row("b", group="g2")]))
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", KILLER, str(workspace.root), str(out / "items.jsonl"), "rev5"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == -9, proc.stderr
    assert any(b'"answer"' in p.read_bytes() for p in out.glob(".items.jsonl.tmp-*"))  # labels did reach disk
    with workspace.session() as s:
        assert "rev5" in exposed_people(s, "a") and "rev5" in exposed_people(s, "b")
