"""Helpers the tests and the benchmarks share (small valid items, media and passing reviews).

Not part of the installed package: the product never imports it (an import-linter contract holds that),
and the benchmarks import it instead of importing from ``tests/``.
"""
