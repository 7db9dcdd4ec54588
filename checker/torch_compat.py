"""Let a CUDA-built torchvision wheel import beside a CPU-only torch.

PyPI's torchvision is built against CUDA torch; with ``torch+cpu`` (the build vLLM's CPU package pins)
its import fails with "operator torchvision::nms does not exist" because it registers fake kernels for
ops its native library failed to define. Defining the two op schemas first lets ``torchvision`` and
``transforms.v2`` import (transformers' Qwen2-VL image and video processors need them);
``torchvision.ops`` stays unusable, which the probe checker never calls.
"""

from __future__ import annotations

import importlib.util

_SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)
_library = None  # kept alive: the definitions vanish when the Library object is collected


def ensure_torchvision_importable() -> None:
    """Define ``torchvision::nms``/``qnms`` when torchvision is installed but its native ops are missing."""
    global _library
    if _library is not None or importlib.util.find_spec("torchvision") is None:
        return
    import torch

    try:
        torch.ops.torchvision.nms  # noqa: B018  (present when torchvision's native library loaded)
        return
    except (AttributeError, RuntimeError):
        pass
    try:
        import torchvision  # noqa: F401

        return
    except RuntimeError as exc:
        if "torchvision::nms" not in str(exc):
            raise
    import sys

    for name in [n for n in sys.modules if n == "torchvision" or n.startswith("torchvision.")]:
        del sys.modules[name]
    _library = torch.library.Library("torchvision", "FRAGMENT")  # noqa: TOR901
    for schema in _SCHEMAS:
        _library.define(schema)
