"""Union-find clustering of duplicate edges; every edge keeps its evidence."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Edge:
    """Evidence that items ``a`` and ``b`` (``a < b``) share content."""

    a: str
    b: str
    modality: str
    method: str
    distance: float

    def to_dict(self) -> dict[str, object]:
        return {
            "a": self.a,
            "b": self.b,
            "modality": self.modality,
            "method": self.method,
            "distance": round(self.distance, 4),
        }


@dataclass(frozen=True)
class Cluster:
    id: str
    items: list[str]
    edges: list[Edge]

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "items": self.items, "edges": [e.to_dict() for e in self.edges]}


class UnionFind:
    def __init__(self) -> None:
        self._parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        parent = self._parent.setdefault(x, x)
        if parent != x:
            parent = self._parent[x] = self.find(parent)
        return parent

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self._parent[max(ra, rb)] = min(ra, rb)

    def components(self) -> dict[str, list[str]]:
        """Root -> members, for every element seen."""
        found: dict[str, list[str]] = {}
        for x in list(self._parent):
            found.setdefault(self.find(x), []).append(x)
        return found


def cluster_id(items: Iterable[str]) -> str:
    """Stable for the same members: a resolution stays valid until the membership changes."""
    digest = hashlib.sha256("\n".join(sorted(items)).encode("utf-8")).hexdigest()
    return f"dup-{digest[:10]}"


def build_clusters(edges: Iterable[Edge]) -> list[Cluster]:
    """Connected components of the edges; for each pair only its strongest evidence per method is kept."""
    best: dict[tuple[str, str, str, str], Edge] = {}
    for edge in edges:
        key = (edge.a, edge.b, edge.modality, edge.method)
        if key not in best or edge.distance < best[key].distance:
            best[key] = edge
    forest = UnionFind()
    for edge in best.values():
        forest.union(edge.a, edge.b)
    members = forest.components()
    by_root: dict[str, list[Edge]] = {}
    for key in sorted(best):
        edge = best[key]
        by_root.setdefault(forest.find(edge.a), []).append(edge)
    clusters = [Cluster(cluster_id(items), sorted(items), by_root[root]) for root, items in members.items()]
    return sorted(clusters, key=lambda c: c.items)


def edge_from_dict(data: dict[str, Any]) -> Edge:
    return Edge(str(data["a"]), str(data["b"]), str(data["modality"]), str(data["method"]), float(data["distance"]))


def cluster_from_dict(data: dict[str, Any]) -> Cluster:
    return Cluster(str(data["id"]), [str(i) for i in data["items"]], [edge_from_dict(e) for e in data["edges"]])
