"""Connection settings and one place that turns the SDK's failures into messages a user can act on."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from curation.config import LabelStudioSettings
from curation.errors import CurateError, Problem, ValidationFailed

from .errors import LabelStudioAuthError, LabelStudioRequestFailed, LabelStudioUnavailable

T = TypeVar("T")


@dataclass(frozen=True)
class Connection:
    """What the bridge needs to reach a server: ``[labelstudio]`` of curate.toml, overridden by the environment."""

    url: str
    token: str
    document_root: Path | None
    media_folder: str
    timeout_s: float

    @classmethod
    def resolve(cls, settings: LabelStudioSettings, environ: Mapping[str, str] | None = None) -> Connection:
        env = os.environ if environ is None else environ
        root = env.get("LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT") or settings.document_root
        return cls(
            url=(env.get("LABEL_STUDIO_URL") or settings.url).rstrip("/"),
            token=env.get("LABEL_STUDIO_API_KEY") or settings.token,
            document_root=Path(root) if root else None,
            media_folder=settings.media_folder.strip("/") or "omnicurate",
            timeout_s=settings.timeout_s,
        )

    def require_token(self) -> None:
        if not self.token:
            raise ValidationFailed(
                [Problem("no API token", field="labelstudio.token")],
                "set LABEL_STUDIO_API_KEY (or [labelstudio] token in curate.toml) to a Label Studio access token",
            )

    def media_dir(self) -> Path:
        """The folder published media go to; Label Studio serves it as local files."""
        if self.document_root is None:
            raise ValidationFailed(
                [Problem("no document root for local files", field="labelstudio.document_root")],
                "set [labelstudio] document_root (or LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT) to the folder the "
                "server was started with as LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT",
            )
        return self.document_root / self.media_folder


def server_message(body: Any) -> str:
    """What the server said, whole: its validation errors field by field when it gave them, else its body."""
    if isinstance(body, dict) and isinstance(body.get("validation_errors"), dict):
        return "; ".join(
            f"{field}: {' '.join(map(str, messages)) if isinstance(messages, list) else messages}"
            for field, messages in body["validation_errors"].items()
        )
    if isinstance(body, dict) and body.get("detail"):
        return str(body["detail"])
    return str(body) if isinstance(body, str | dict | list) else "(no message)"


def same_server(a: str, b: str) -> bool:
    """Whether two server URLs name the same server: loopback names, default ports and a trailing slash aside."""
    from urllib.parse import urlsplit

    def key(url: str) -> tuple[str, str, int | None, str]:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower()
        if host in ("localhost", "127.0.0.1", "::1", "0.0.0.0"):
            host = "loopback"
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme.lower())
        return parts.scheme.lower(), host, port, parts.path.rstrip("/")

    return key(a) == key(b)


class Server:
    """The SDK client, with every call's failure turned into a :class:`CurateError`."""

    def __init__(self, connection: Connection) -> None:
        from label_studio_sdk import LabelStudio

        connection.require_token()
        self.connection = connection
        self.client = LabelStudio(base_url=connection.url, api_key=connection.token, timeout=connection.timeout_s)

    def call(
        self,
        what: str,
        fn: Callable[..., T],
        *args: Any,
        not_found: Callable[[], CurateError] | None = None,
        **kwargs: Any,
    ) -> T:
        """Run one SDK call; ``what`` says in words what it was doing, for the message."""
        import httpx
        from label_studio_sdk.core.api_error import ApiError

        url = self.connection.url
        try:
            return fn(*args, **kwargs)
        except httpx.TransportError as exc:
            raise LabelStudioUnavailable(
                f"cannot reach Label Studio at {url} while {what} ({exc.__class__.__name__}: {exc}); "
                "is the server running? Check LABEL_STUDIO_URL or [labelstudio] url in curate.toml"
            ) from exc
        except ApiError as exc:
            status = exc.status_code
            if status in (401, 403):
                raise LabelStudioAuthError(
                    f"Label Studio at {url} refused the API token while {what} (HTTP {status}): "
                    "set a valid access token in LABEL_STUDIO_API_KEY or [labelstudio] token "
                    "(a legacy token works only if the organization was created with --enable-legacy-api-token)"
                ) from exc
            if status == 404 and not_found is not None:
                raise not_found() from exc
            raise LabelStudioRequestFailed(
                f"Label Studio at {url} answered HTTP {status} while {what}: {server_message(exc.body)}"
            ) from exc

    def whoami(self) -> dict[str, Any]:
        me = self.call("checking the API token", self.client.users.whoami)
        return {"id": me.id, "email": me.email}

    def version(self) -> str:
        info = self.call("reading the server version", self.client.versions.get)
        return str(getattr(info, "release", "") or "unknown")


def status(connection: Connection) -> dict[str, Any]:
    """Check the server, the token and the document root; raises with a clear message when one is wrong."""
    server = Server(connection)
    version = server.version()
    me = server.whoami()
    return {
        "url": connection.url,
        "version": version,
        "user": me,
        "document_root": str(connection.document_root) if connection.document_root else None,
        "media": check_document_root(connection),
    }


def check_document_root(connection: Connection) -> str:
    """Where published media go, once checked: set, an existing folder, and writable; else what to do."""
    folder = connection.media_dir()
    root = connection.document_root
    assert root is not None
    if not root.is_dir():
        raise ValidationFailed(
            [Problem(f"the document root {root} is not a folder on this machine", field="labelstudio.document_root")],
            "set [labelstudio] document_root (or LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT) to the folder the server "
            "serves local files from; it must be reachable from this machine",
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".omnicurate-probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise ValidationFailed(
            [Problem(f"cannot write to {folder}: {exc}", field="labelstudio.document_root")],
            "give this user write access to the document root, or choose another [labelstudio] media_folder",
        ) from exc
    return str(folder)
