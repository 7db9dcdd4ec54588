"""What the gates would measure of a new medium, measured where it is taken in (an import's worker pass).

An import decodes every new file anyway; measuring its facts (``curation.mediatools.facts``) and its audit
signature from the same bytes there, and storing them in the import's transaction, spares the first release
build from decoding every file again. Both are keyed by content hash and version exactly as the gates store
them (``media_facts``, the audit's signatures), so a gate finds them and measures nothing; anything missing
(a path that adds assets without measuring, an unreadable clip) is still measured on first need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import delete
from sqlmodel import col

from curation.config import MediaSettings
from curation.errors import MediaError
from curation.mediatools.audio import within_limits
from curation.mediatools.facts import FACTS_VERSIONS, Facts, measure, measure_audio_decoded

from .audio import audio_signature, decoded_signature
from .image import image_signature
from .tables import HASHES_PER_QUERY as CHUNK
from .tables import SIGNATURE_VERSION, MediaFact, MediaSignature


@dataclass(frozen=True)
class Measured:
    """A new medium's facts and audit signature (None where the audit could not sign it: it retries)."""

    kind: str
    facts: Facts
    signature: dict[str, Any] | None


def measure_new(kind: str, data: bytes, name: str, settings: MediaSettings) -> Measured | None:
    """Facts and signature of a medium's bytes as the media gate and the audit measure them; None for a kind
    that has neither."""
    if kind not in FACTS_VERSIONS:
        return None
    if kind == "audio":
        return _measure_audio(data, name, settings)
    facts = measure(kind, data, name)
    try:
        signature: dict[str, Any] | None = image_signature(data, name, settings).to_dict()
    except MediaError:
        signature = None
    return Measured(kind, facts, signature)


def _measure_audio(data: bytes, name: str, settings: MediaSettings) -> Measured:
    """A clip's facts and signature from one decode (where the facts decode it: a clip too short for a
    loudness, or one that does not decode, is signed, or refused, by the audit's own decode)."""
    facts, decoded = measure_audio_decoded(data, name)
    try:
        if decoded is None:
            signature: dict[str, Any] | None = audio_signature(data, name, settings).to_dict()
        else:
            bounded = within_limits(decoded, data, name, settings, facts["frames"])
            signature = decoded_signature(bounded, name).to_dict()
    except MediaError:
        signature = None
    return Measured("audio", facts, signature)


def store_measured(session: Any, measured: dict[str, Measured]) -> None:
    """Store the measurements per content hash in the caller's transaction (replacing rows of these hashes)."""
    if not measured:
        return
    hashes = sorted(measured)
    signed = {sha: sig for sha in hashes if (sig := measured[sha].signature) is not None}
    for start in range(0, len(hashes), CHUNK):
        chunk = hashes[start : start + CHUNK]
        session.execute(delete(MediaFact).where(col(MediaFact.sha256).in_(chunk)))
        session.execute(delete(MediaSignature).where(col(MediaSignature.sha256).in_(chunk)))
    session.add_all(
        MediaFact(sha256=sha, kind=m.kind, version=FACTS_VERSIONS[m.kind], data=m.facts) for sha, m in measured.items()
    )
    session.add_all(
        MediaSignature(sha256=sha, kind=measured[sha].kind, version=SIGNATURE_VERSION, data=signature)
        for sha, signature in signed.items()
    )
