"""What an import of items reports: which items it created, revised or left unchanged, and its new media.

Both importers return one: ``curation.items`` (items of every kind stored in the item table) and
``curation.screening.items`` (story transitions), which the first hands a story file to.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ImportReport:
    created: list[str] = field(default_factory=list)
    revised: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    new_media: int = 0
    measuring_deferred: bool = False
    """The new media's facts and signatures are left to ``curation.audit.measuring`` (a pooled import)."""

    def summary(self) -> str:
        return (
            f"{len(self.created)} created, {len(self.revised)} revised, {len(self.unchanged)} unchanged, "
            f"{self.new_media} new media file(s)"
        )
