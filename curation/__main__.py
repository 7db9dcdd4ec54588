"""``python -m curation`` is the same as ``curate``."""

from curation.cli.main import run

run()
