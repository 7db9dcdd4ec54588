"""Per-release pseudonyms: people in a release's admission record appear as a keyed hash of their name.

The key (32 random bytes) is created once and kept in the workspace (``keys/pseudonyms.key``), never in a
release. A pseudonym is HMAC-SHA256 over the release version and the name, so it is stable within a release
(agreement can be recomputed), differs across releases (nobody can link people across versions), and a rebuild
of the same version gives the same bytes.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

KEY_FILE = Path("keys") / "pseudonyms.key"
RULE = (
    "p- followed by the first 12 hex digits of HMAC-SHA256(key, VERSION + '\\x00' + name); the key is kept in "
    "the workspace and never released, so pseudonyms are stable within this release and differ across releases"
)


def workspace_key(root: Path) -> bytes:
    """The workspace's pseudonym key, created (readable by its owner only) on first use."""
    path = root / KEY_FILE
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_suffix(f".tmp-{secrets.token_hex(4)}")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(secrets.token_hex(32))
        try:
            os.link(temp, path)  # a concurrent first build keeps whichever key was written first
        except FileExistsError:
            pass
        finally:
            temp.unlink(missing_ok=True)
    return bytes.fromhex(path.read_text(encoding="ascii").strip())


class Pseudonyms:
    """Name -> pseudonym for one release version."""

    def __init__(self, key: bytes, version: str) -> None:
        self._key = key
        self._version = version
        self._cache: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        found = self._cache.get(name)
        if found is None:
            mac = hmac.new(self._key, f"{self._version}\x00{name}".encode(), hashlib.sha256).hexdigest()
            found = self._cache[name] = f"p-{mac[:12]}"
        return found
