"""``python -m omnicurate`` is the same as ``curate``."""

from omnicurate.cli.main import run

run()
