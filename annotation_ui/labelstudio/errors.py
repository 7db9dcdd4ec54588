"""Errors of the Label Studio bridge, each with a message that says what to do."""

from __future__ import annotations

from curation.errors import CurateError, MediaError, NotFoundError, PermissionDenied


class LabelStudioUnavailable(CurateError):
    """The server does not answer (down, wrong URL, network)."""


class LabelStudioAuthError(PermissionDenied):
    """The server refused the API token."""


class LabelStudioRequestFailed(CurateError):
    """The server answered a request with an unexpected error."""


class ProjectDeleted(NotFoundError):
    """A project this workspace pushed to no longer exists on the server."""


class MediaMissing(MediaError):
    """A medium a task needs is not in the workspace's media store, or cannot be published."""


class LabelingConfigRefused(CurateError):
    """The server refused a new labeling config because annotations made under the old one do not fit it."""
