"""One audit over a set of items: duplicate clusters with evidence, leaks, and the gate reasons they imply."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby

from curation.sister_content import content, identical_sets
from curation.vocab import MODALITIES

from .audio import AudioSignature
from .clusters import Cluster, Edge, build_clusters
from .image import ImageSignature
from .leaks import Leak, option_in_context_leaks, option_modality_leaks, shared_span_leaks
from .note_leaks import note_leaks
from .search import chromaprint_pairs, image_pairs, spectral_pairs
from .text import near_duplicate_pairs, shingles, text_key, words


@dataclass(frozen=True)
class AuditSubject:
    """What the audit reads of an item; ``image``/``audio`` are keys into the signature maps."""

    id: str
    group: str
    context: str
    options: dict[str, str]
    answer: str
    image: str | None = None
    audio: str | None = None
    language: str | None = None
    """BCP 47 tag of the text: decides whether tokens are words or characters (script check when absent)."""
    modalities: tuple[str, ...] = MODALITIES
    """The modalities the item has."""
    notes: Mapping[str, str] = field(default_factory=dict)
    """Modality -> the item's note on it (TRIAD's A+ / I+ descriptions, ``curation.notes``)."""
    leaves: tuple[str, ...] = ()
    """The item's taxonomy leaves: a note may not name them."""


@dataclass(frozen=True)
class IdenticalSisters:
    """Sisters of one group identical in every modality they have (``curation.sister_content``: same normalized
    text, same media content hash). Informational: the group rule ``group:identical_sisters`` is what refuses
    them, so they are no duplicate cluster and hold nothing here."""

    group: str
    items: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        return {"group": self.group, "items": list(self.items)}


@dataclass(frozen=True)
class Resolution:
    """A maintainer's decision on a cluster or leak: keep one item, or declare the members distinct."""

    target: str
    keep: str | None = None
    distinct: bool = False
    reason: str = ""
    items: tuple[str, ...] = ()
    """The members when decided: the decision also covers a later cluster of a subset of them (after the
    maintainer discards duplicates, the rest form a cluster with a new id that needs no new decision)."""


@dataclass
class AuditReport:
    clusters: list[Cluster] = field(default_factory=list)
    leaks: list[Leak] = field(default_factory=list)
    groups: dict[str, str] = field(default_factory=dict)
    """Item -> scene group, so that keeping an item keeps its sisters in the cluster too."""
    identical_sisters: list[IdenticalSisters] = field(default_factory=list)
    """Sisters identical in every modality (the pairs within a group the duplicate search ignores by design)."""

    def to_dict(self) -> dict[str, object]:
        """The ``audit --json`` shape of design.md (leaks carry an ``id`` too, for ``audit resolve``), with the
        informational ``identical_sisters``."""
        return {
            "clusters": [c.to_dict() for c in self.clusters],
            "leaks": [k.to_dict() for k in self.leaks],
            "identical_sisters": [i.to_dict() for i in self.identical_sisters],
        }

    def find(self, target: str) -> Cluster | Leak | None:
        for cluster in self.clusters:
            if cluster.id == target:
                return cluster
        for leak in self.leaks:
            if leak.id == target:
                return leak
        return None

    def gate_reasons(self, resolutions: Iterable[Resolution] = ()) -> dict[str, list[str]]:
        """Item -> blocking reason codes (``duplicate:<cluster>``, ``leak:<kind>``) left unresolved.

        ``--keep ITEM`` frees that item (and its sisters: they share content by design) and leaves the
        others held as duplicates of it; ``--distinct`` frees every member. Warning-only leaks never hold.
        """
        decided = {r.target: r for r in resolutions}
        reasons: dict[str, list[str]] = {}

        def decision_for(target: str, items: Sequence[str]) -> Resolution | None:
            if target in decided:
                return decided[target]
            covering = [r for r in decided.values() if r.items and set(items) <= set(r.items)]
            return covering[-1] if covering else None

        def hold(items: Sequence[str], code: str, target: str) -> None:
            decision = decision_for(target, items)
            kept_group = self.groups.get(decision.keep, decision.keep) if decision and decision.keep else None
            for item in items:
                if decision and (decision.distinct or kept_group == self.groups.get(item, item)):
                    continue
                codes = reasons.setdefault(item, [])
                if code not in codes:
                    codes.append(code)

        for cluster in self.clusters:
            hold(cluster.items, f"duplicate:{cluster.id}", cluster.id)
        for leak in self.leaks:
            if leak.blocking:
                hold(leak.items, f"leak:{leak.kind}", leak.id)
        return {item: sorted(codes) for item, codes in sorted(reasons.items())}


def _cross_group_edges(
    subjects: Sequence[AuditSubject],
    owners: Sequence[Sequence[int]],
    pairs: Iterable[tuple[int, int, float]],
    modality: str,
    method: str,
) -> list[Edge]:
    """Item edges for signature pairs: each item of one signature to each of the other, across groups."""
    edges = []
    for i, j, distance in pairs:
        for x in owners[i]:
            for y in owners[j]:
                a, b = subjects[x], subjects[y]
                if a.group != b.group and a.id != b.id:
                    low, high = sorted((a.id, b.id))
                    edges.append(Edge(low, high, modality, method, distance))
    return edges


def _exact_edges(
    subjects: Sequence[AuditSubject], keys: Sequence[str | None], modality: str, method: str
) -> list[Edge]:
    """Items with equal keys in different groups; each joins the first member of another group (spanning)."""
    buckets: dict[str, list[int]] = {}
    for index, key in enumerate(keys):
        if key is not None:
            buckets.setdefault(key, []).append(index)
    edges = []
    for members in buckets.values():
        for x in members:
            other = next((y for y in members if subjects[y].group != subjects[x].group), None)
            if other is not None:
                low, high = sorted((subjects[x].id, subjects[other].id))
                edges.append(Edge(low, high, modality, method, 0.0))
    return edges


def _distinct(keys: Sequence[str | None], signature_key: Callable[[str], str]) -> tuple[list[str], list[list[int]]]:
    """Distinct signatures (by ``signature_key``) and, for each, the subjects that use it."""
    index: dict[str, int] = {}
    assets: list[str] = []
    owners: list[list[int]] = []
    for subject_index, key in enumerate(keys):
        if key is None:
            continue
        identity = signature_key(key)
        if identity not in index:
            index[identity] = len(assets)
            assets.append(key)
            owners.append([])
        owners[index[identity]].append(subject_index)
    return assets, owners


def run_audit(
    subjects: Sequence[AuditSubject],
    images: Mapping[str, ImageSignature],
    audio: Mapping[str, AudioSignature],
    option_in_context: str = "warn",
    note_option: str = "block",
) -> AuditReport:
    """Exact and near duplicates across scene groups, clustered, plus the leak checks (``curation.audit.leaks``,
    and the notes' in ``curation.audit.note_leaks``).

    ``option_in_context`` (``warn`` or ``block``) is the severity of an option found in its own context,
    ``note_option`` that of an option found in one of the item's notes.
    """
    subjects = sorted(subjects, key=lambda s: s.id)
    edges: list[Edge] = []

    context_tokens = [words(s.context, s.language) for s in subjects]
    # text with no tokens (empty, only punctuation) is never a duplicate of other text with no tokens
    text_keys = [text_key(s.context) if found else None for s, found in zip(subjects, context_tokens, strict=True)]
    edges += _exact_edges(subjects, text_keys, "text", "sha256")
    contexts, owners = _distinct(text_keys, lambda k: k)  # identical contexts are searched once
    first = {key: owners[n][0] for n, key in enumerate(contexts)}
    shingle_sets = [shingles(context_tokens[first[key]]) for key in contexts]
    near = [(i, j, 1.0 - sim) for i, j, sim in near_duplicate_pairs(shingle_sets)]
    edges += _cross_group_edges(subjects, owners, near, "text", "minhash_jaccard")

    image_keys = [s.image if s.image in images else None for s in subjects]
    edges += _exact_edges(subjects, [k and images[k].pixels_sha256 for k in image_keys], "image", "sha256_pixels")
    assets, owners = _distinct(image_keys, lambda k: images[k].pixels_sha256)
    signatures = [images[k] for k in assets]
    for method in ("phash", "dhash"):
        pairs = [(i, j, d) for i, j, m, d in image_pairs(signatures) if m == method]
        edges += _cross_group_edges(subjects, owners, pairs, "image", method)

    audio_keys = [s.audio if s.audio in audio else None for s in subjects]
    edges += _exact_edges(subjects, [k and audio[k].samples_sha256 for k in audio_keys], "audio", "sha256_samples")
    assets, owners = _distinct(audio_keys, lambda k: audio[k].samples_sha256)
    clips = [audio[k] for k in assets]
    edges += _cross_group_edges(subjects, owners, spectral_pairs(clips), "audio", "spectral_hash")
    edges += _cross_group_edges(
        subjects, owners, chromaprint_pairs([c.chromaprint for c in clips]), "audio", "chromaprint"
    )

    text_pairs = frozenset((e.a, e.b) for e in edges if e.modality == "text")
    leaks = (
        shared_span_leaks(subjects, skip_pairs=text_pairs)
        + option_in_context_leaks(subjects, "block" if option_in_context == "block" else "warning")
        + option_modality_leaks(subjects)
        + note_leaks(subjects, note_option)
    )
    groups = {s.id: s.group for s in subjects}
    return AuditReport(build_clusters(edges), leaks, groups, identical_sisters(subjects))


def identical_sisters(subjects: Sequence[AuditSubject]) -> list[IdenticalSisters]:
    """Sisters identical in every modality they have, per group (by group, then first item)."""
    found = []
    by_group = sorted(subjects, key=lambda s: (s.group, s.id))
    for group, members in groupby(by_group, key=lambda s: s.group):
        same = identical_sets(list(members), lambda s: content(s.context, s.image, s.audio, s.modalities))
        found += [IdenticalSisters(group, tuple(s.id for s in sisters)) for sisters in same]
    return found
