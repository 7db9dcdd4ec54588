"""An import-linter contract of this project's own: no import circle between the modules of a package.

import-linter's ``acyclic_siblings`` judges a package's children whole (a subpackage with everything in it);
this judges every module on its own, at any depth: ``curation.facts`` -> ``curation.kinds._registry`` ->
``curation.facts`` is a circle, ``curation.workflow`` -> ``curation.kinds`` (the registry) while
``curation.kinds.mcq`` -> ``curation.workflow`` is not. Registered in ``pyproject.toml``
(``[tool.importlinter] contract_types``); only ``lint-imports`` loads it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping

import grimp
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck


class AcyclicModulesContract(Contract):
    """``containers``: the packages whose modules (the packages themselves and everything below them) must not
    import each other in a circle, counting imports inside functions (``exclude_type_checking_imports`` as the
    session sets it)."""

    type_name = "acyclic_modules"

    containers = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        circles: list[list[str]] = []
        for container in self.containers:  # type: ignore[attr-defined]
            inside = {container} | graph.find_descendants(container)
            edges = {m: {i for i in graph.find_modules_directly_imported_by(m) if i in inside} for m in inside}
            circles.extend(_one_circle(edges, part) for part in _strongly_connected(edges) if len(part) > 1)
        details = {
            (a, b): _lines(graph, a, b)
            for circle in circles
            for a, b in zip(circle, circle[1:] + circle[:1], strict=True)
        }
        return ContractCheck(kept=not circles, warnings=[], metadata={"circles": circles, "lines": details})

    def render_broken_contract(self, check: ContractCheck) -> None:
        lines: Mapping[tuple[str, str], str] = check.metadata["lines"]
        for circle in check.metadata["circles"]:
            output.print_error(f"Import circle through {len(circle)} modules:")
            for a, b in zip(circle, circle[1:] + circle[:1], strict=True):
                output.print_error(f"- {a} -> {b} ({lines[a, b]})")
            output.new_line()
        output.print(
            "Break it by moving the piece both sides need down a floor, not by importing it inside a function."
        )


def _lines(graph: grimp.ImportGraph, importer: str, imported: str) -> str:
    found = graph.get_import_details(importer=importer, imported=imported)
    return ", ".join(f"l.{d['line_number']}" for d in found) or "line unknown"


def _strongly_connected(edges: Mapping[str, Iterable[str]]) -> list[set[str]]:
    """Tarjan's strongly connected components, without recursion (a package may be deep)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    parts: list[set[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges[nxt]))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                part = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    part.add(member)
                    if member == node:
                        break
                parts.append(part)
    return parts


def _one_circle(edges: Mapping[str, Iterable[str]], part: set[str]) -> list[str]:
    """The shortest circle through the first module (by name) of a strongly connected part."""
    start = min(part)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(edges[node]):
            if nxt not in part:
                continue
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return path[::-1]
            if nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    return sorted(part)  # not reached: every member of a part lies on a circle through the others
