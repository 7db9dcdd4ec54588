"""The ``@group`` nodeid suffix by which ``pytest --dist loadgroup`` keeps a group's tests on one worker.

pytest-xdist 3.8 writes that suffix to ``item._nodeid`` in each worker, which pytest 9.2 no longer reads (a node's
id is now ``item._id``, a ``NodeId``): the workers reported plain nodeids, and the controller spread every group
over both workers (CI ran two vLLM servers at once). ``name_groups_in_nodeids`` does what xdist meant to where it
did not; ``collected_nodeid`` gives back the id a later ``pytest NODEID`` selects by.
"""

from __future__ import annotations

import pytest
from _pytest.nodeid import NodeId


def group_suffix(item: pytest.Item) -> str:
    """``@name`` (names sorted and joined by ``_``, as pytest-xdist does) or ``""`` for a test in no group."""
    names = sorted(
        {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
    )
    return "@" + "_".join(names) if names else ""


def name_groups_in_nodeids(items: list[pytest.Item]) -> None:
    """Suffix each grouped test's nodeid, once (a pytest-xdist that does it itself is left to)."""
    for item in items:
        suffix = group_suffix(item)
        if suffix and not item.nodeid.endswith(suffix):
            item._id = NodeId.parse(item.nodeid + suffix)  # type: ignore[attr-defined]


def collected_nodeid(item: pytest.Item) -> str:
    """The test's nodeid without the scheduling suffix."""
    suffix = group_suffix(item)
    return item.nodeid.removesuffix(suffix) if suffix else item.nodeid
