"""Probe backends. Each implementation is imported only when its spec is used (heavy dependencies)."""

from .base import BACKEND_KINDS, ProbeBackend, ProbeOutput, open_backend

__all__ = ["BACKEND_KINDS", "ProbeBackend", "ProbeOutput", "open_backend"]
