"""Put on PYTHONPATH (with the repository root) for a CPU-only torch beside PyPI's torchvision."""

from checker.torch_compat import ensure_torchvision_importable

ensure_torchvision_importable()
