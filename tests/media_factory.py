"""The tests' name for :mod:`devsupport.media_factory` (shared with the benchmarks)."""

from devsupport.media_factory import item_row, make_image, make_tone, write_items

__all__ = ["item_row", "make_image", "make_tone", "write_items"]
