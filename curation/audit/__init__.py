"""Audits before admission: exact and near-duplicate clusters (text, image, audio) and leak checks.

Conventions (design.md, "Audits — conventions"): text audits read each item's ``context``; pairs within
one scene group are ignored; audio fingerprints work from 1 s clips. Media signatures are computed from
bytes once per asset (:func:`image_signature`, :func:`audio_signature`) and can be cached by the caller.
"""

from .audio import AudioSignature, audio_signature
from .clusters import Cluster, Edge
from .image import ImageSignature, image_signature
from .leaks import WARNING_KINDS, Leak
from .run import AuditReport, AuditSubject, Resolution, run_audit

__all__ = [
    "WARNING_KINDS",
    "AudioSignature",
    "AuditReport",
    "AuditSubject",
    "Cluster",
    "Edge",
    "ImageSignature",
    "Leak",
    "Resolution",
    "audio_signature",
    "image_signature",
    "run_audit",
]
