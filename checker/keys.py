"""What a cached probe output answers: the cache key and the hash of a backend's parameters.

Kept apart from :mod:`checker.cache` (which needs the database libraries) so that a run without a
workspace (the GPU check) can build keys, and so that the cache and the run do not import each other.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CacheKey:
    """(probe inputs, view, backend, model, estimator, parameters): what a cached output answers."""

    input_hash: str
    view: str
    backend: str
    model: str
    estimator: str
    params_hash: str


def params_hash(parameters: dict[str, Any]) -> str:
    blob = json.dumps(parameters, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:16]
