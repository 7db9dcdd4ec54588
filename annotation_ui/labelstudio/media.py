"""Media on the server: blobs of the workspace's media store published into Label Studio's document root
(content-addressed, so a blob already there is kept), and the HTML that shows them in a task."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterable

from curation.workspace import Workspace

from .connection import Connection
from .errors import MediaMissing


def media_url(connection: Connection, blob: str) -> str:
    """The URL Label Studio serves a published blob under (local-files storage)."""
    return f"/data/local-files/?d={connection.media_folder}/{blob}"


def image_html(connection: Connection, blob: str, max_width: int) -> str:
    """A published image as HTML for a task's HyperText panel."""
    return f'<img src="{media_url(connection, blob)}" style="max-width:{max_width}px" alt="image"/>'


def audio_html(connection: Connection, blob: str) -> str:
    """A published clip as an HTML player that loads nothing until played."""
    return f'<audio controls preload="none" src="{media_url(connection, blob)}"></audio>'


def check_media(ws: Workspace, needed: dict[str, str]) -> None:
    """Every blob a task needs must be in the media store; ``needed`` maps blob -> who needs it."""
    missing = [f"{who}: {blob}" for blob, who in needed.items() if not ws.media.path(blob[:64], blob[64:]).is_file()]
    if missing:
        raise MediaMissing(
            f"{len(missing)} medium/media missing from the workspace media store ({ws.media.root}): "
            + "; ".join(missing[:10])
            + ("; ..." if len(missing) > 10 else "")
            + ". Re-import the items (or outputs) whose media are missing; nothing was pushed"
        )


def publish_media(ws: Workspace, connection: Connection, blobs: Iterable[str]) -> int:
    """Copy blobs into the server's document root (content-addressed: a blob already there is kept)."""
    target_dir = connection.media_dir()
    try:
        target_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MediaMissing(f"cannot create {target_dir} to publish media: {exc}") from exc
    published = 0
    for blob in sorted(set(blobs)):
        target = target_dir / blob
        if target.is_file():
            continue
        source = ws.media.path(blob[:64], blob[64:])
        temporary = target_dir / f".{blob}.{uuid.uuid4().hex}"
        try:
            shutil.copyfile(source, temporary)
            os.replace(temporary, target)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            raise MediaMissing(f"cannot publish {source} to {target}: {exc}") from exc
        published += 1
    return published


def medium_html(connection: Connection, modality: str, blob: str) -> str:
    """A published image, clip or video as HTML for a task's HyperText panel."""
    if modality == "image":
        return image_html(connection, blob, 480)
    if modality == "audio":
        return audio_html(connection, blob)
    return f'<video controls preload="none" style="max-width:480px" src="{media_url(connection, blob)}"></video>'
