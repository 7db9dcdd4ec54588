"""The string-overlap and internal-duplicate audits of Omni-StoryBench App. C, as plain functions.

They read transitions (pages plus the annotation layer) and answer with figures and per-item findings;
the kind turns the findings into gate reasons. Every search is index-based (spans in a hash map, MinHash
LSH for text, multi-index hashing for pHash), so the cost grows with the corpus, not with its square.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from curation.audit.clusters import Cluster, Edge, build_clusters
from curation.audit.hamming import pairs_within
from curation.audit.run import Resolution
from curation.audit.text import near_duplicate_pairs, normalize_text, shingles, words
from curation.audit.tokens import join_tokens
from curation.bulk import collector_paused

from .settings import DuplicatePolicy

SPAN_WORDS = 8
"""App. C's contiguous span length (word eight-grams)."""
IMAGE_RADIUS = 7
"""pHash bits within which two illustrations are one picture republished (curation/audit/image.py)."""
DESCRIPTIVE_FIELDS = ("scene", "text_goal", "topic", "ambient_sound", "character_action", "speech_intent")
STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "said",
        "says",
        "say",
    ]
)
"""The audit's fixed stopword list (English function words and speech verbs); numeric tokens are excluded too."""


@dataclass(frozen=True)
class AuditedTransition:
    """What the audits read of one transition."""

    id: str
    book: str
    page: int
    current_text: str
    next_text: str
    topic: str = ""
    conditions: dict[str, Any] = field(default_factory=dict)
    """A NextPageConditions value as a dict."""
    image_hashes: tuple[int | None, int | None] = (None, None)
    """64-bit pHashes of the current and next illustrations, when computed."""

    @property
    def own_pages(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return (self.book, self.page), (self.book, self.page + 1)


def descriptive_values(t: AuditedTransition) -> list[tuple[str, str]]:
    """``(field, text)`` for every descriptive field value; spans never cross two values."""
    c = t.conditions
    values = [("scene", c.get("scene", "")), ("text_goal", c.get("text_goal", "")), ("topic", t.topic)]
    values.append(("ambient_sound", c.get("ambient_sound", "")))
    for character in c.get("characters", []):
        values.append(("character_action", character.get("action", "")))
        values.append(("speech_intent", character.get("speech_intent", "")))
    return [(name, text) for name, text in values if text]


def condition_values(t: AuditedTransition) -> list[str]:
    """Every condition value (characters' emotion, visibility, action, intent; scene; text goal; sound)."""
    c = t.conditions
    found = [c.get("scene", ""), c.get("text_goal", ""), c.get("ambient_sound", "")]
    for character in c.get("characters", []):
        found += [character.get(k, "") for k in ("name", "emotion", "visibility", "action", "speech_intent")]
    return [v for v in found if v]


def condition_text(t: AuditedTransition) -> str:
    return normalize_text(" | ".join(condition_values(t)))


def duplicate_conditions(items: Sequence[AuditedTransition]) -> list[list[str]]:
    """Groups of items whose normalized condition texts are equal (App. C: all should be distinct)."""
    groups: dict[str, list[str]] = {}
    for t in items:
        groups.setdefault(condition_text(t), []).append(t.id)
    return sorted(sorted(ids) for ids in groups.values() if len(ids) > 1)


@dataclass(frozen=True)
class SpanLeak:
    item: str
    field: str
    span: str
    page: tuple[str, int]


def _span_keys(tokens: Sequence[str], size: int) -> set[str]:
    """The text's ``size``-token spans, each as one string (tokens hold no spaces): strings, unlike tuples,
    are no work for the garbage collector and hash once."""
    return {" ".join(tokens[i : i + size]) for i in range(len(tokens) - size + 1)}


def foreign_span_leaks(
    items: Sequence[AuditedTransition],
    pages: dict[tuple[str, int], str] | None = None,
    size: int = SPAN_WORDS,
) -> list[SpanLeak]:
    """Descriptive field values sharing a ``size``-token span with a page outside the item's transition.

    Tokens come from the text audits' tokenizer (words; characters for text in a script without spaces).

    ``pages`` defaults to the audited items' own pages (App. C: the 1,800 benchmark pages). One hash
    index of every page span, then one lookup per field span: linear in the words audited.
    """
    with collector_paused():
        return _span_leaks(items, pages, size)


def _span_leaks(
    items: Sequence[AuditedTransition], pages: dict[tuple[str, int], str] | None, size: int
) -> list[SpanLeak]:
    if pages is None:
        pages = {}
        for t in items:
            pages[t.own_pages[0]] = t.current_text
            pages[t.own_pages[1]] = t.next_text
    index: dict[str, list[tuple[str, int]]] = {}
    for key, text in pages.items():
        for span in _span_keys(words(text), size):
            holders = index.setdefault(span, [])
            if len(holders) < 4:  # two own pages plus one foreign page prove a leak
                holders.append(key)
    leaks: list[SpanLeak] = []
    for t in items:
        own = set(t.own_pages)
        for name, text in descriptive_values(t):
            tokens = words(text)
            for span in (" ".join(tokens[i : i + size]) for i in range(len(tokens) - size + 1)):
                foreign = [p for p in index.get(span, ()) if p not in own]
                if foreign:
                    leaks.append(SpanLeak(t.id, name, join_tokens(span.split(" ")), min(foreign)))
                    break
    return leaks


def longest_shared_span(a: Sequence[str], b: Sequence[str]) -> int:
    """Length in words of the longest contiguous run common to ``a`` and ``b`` (dynamic programming)."""
    best = 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b, start=1):
            if x == y:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


@dataclass(frozen=True)
class ReferenceOverlap:
    longest: dict[str, int]
    """Item -> longest span (words) shared by any one condition value and the next-page narration."""
    flagged: list[str]
    """Items sharing at least ``SPAN_WORDS`` words with their reference."""

    @property
    def median(self) -> float:
        return float(statistics.median(self.longest.values())) if self.longest else 0.0


def reference_overlap(items: Sequence[AuditedTransition], size: int = SPAN_WORDS) -> ReferenceOverlap:
    longest = {}
    for t in items:
        reference = words(t.next_text)
        longest[t.id] = max((longest_shared_span(words(v), reference) for v in condition_values(t)), default=0)
    return ReferenceOverlap(longest, sorted(i for i, n in longest.items() if n >= size))


def content_words(text: str) -> list[str]:
    """Word tokens less the fixed stopwords and numeric tokens."""
    return [w for w in words(text) if w not in STOPWORDS and not w.isnumeric()]


def absent_content_share(t: AuditedTransition) -> float | None:
    """Share of the reference's content-word tokens that the condition does not contain (None: no content)."""
    reference = content_words(t.next_text)
    if not reference:
        return None
    condition = set(words(" ".join(condition_values(t))))
    return sum(w not in condition for w in reference) / len(reference)


def mean_absent_content_share(items: Sequence[AuditedTransition]) -> float | None:
    shares = [s for s in map(absent_content_share, items) if s is not None]
    return sum(shares) / len(shares) if shares else None


@dataclass(frozen=True)
class AnnotationShare:
    mean: float
    """Per-instance share of input words that come from the annotation layer, averaged."""
    pooled: float
    """The same share over all instances' words pooled."""


def annotation_word_share(items: Sequence[AuditedTransition]) -> AnnotationShare | None:
    """Annotation words among the input words (current narration + topic, scene, narration instruction,
    ambient sound and character-condition values), as App. C counts them."""
    shares, annotation_total, input_total = [], 0, 0
    for t in items:
        c = t.conditions
        annotated = [t.topic, c.get("scene", ""), c.get("text_goal", ""), c.get("ambient_sound", "")]
        for character in c.get("characters", []):
            annotated += [character.get(k, "") for k in ("emotion", "visibility", "action", "speech_intent")]
        n_annotation = len(words(" ".join(annotated)))
        n_input = n_annotation + len(words(t.current_text))
        if n_input:
            shares.append(n_annotation / n_input)
            annotation_total += n_annotation
            input_total += n_input
    if not shares:
        return None
    return AnnotationShare(sum(shares) / len(shares), annotation_total / input_total)


def duplicate_clusters(items: Sequence[AuditedTransition]) -> list[Cluster]:
    """Republication or adaptation clusters across books: word 3-gram MinHash on the two narrations,
    and pHash within :data:`IMAGE_RADIUS` bits on the illustrations. Pairs within one book are ignored."""
    edges: list[Edge] = []
    texts = [shingles(words(f"{t.current_text} {t.next_text}")) for t in items]
    book_index: dict[str, int] = {}
    books = [book_index.setdefault(t.book, len(book_index)) for t in items]
    for i, j, similarity in near_duplicate_pairs(texts, groups=books):
        a, b = items[i], items[j]
        if a.book != b.book:
            edges.append(Edge(min(a.id, b.id), max(a.id, b.id), "text", "word3_minhash", 1 - similarity))
    owners, hashes = [], []
    for position, t in enumerate(items):
        for h in t.image_hashes:
            if h is not None:
                owners.append(position)
                hashes.append(h)
    if len(hashes) > 1:
        import numpy as np

        for i, j, distance in pairs_within(np.array(hashes, dtype=np.uint64), IMAGE_RADIUS).tolist():
            a, b = items[owners[i]], items[owners[j]]
            if a.book != b.book:
                edges.append(Edge(min(a.id, b.id), max(a.id, b.id), "image", "phash", float(distance)))
    return build_clusters(edges)


@dataclass
class StoryAudit:
    """All App. C figures of one set of transitions, and the per-item findings gates act on."""

    items: int
    duplicate_conditions: list[list[str]]
    span_leaks: list[SpanLeak]
    reference: ReferenceOverlap
    absent_content_share: float | None
    annotation_share: AnnotationShare | None
    clusters: list[Cluster]
    books: dict[str, str] = field(default_factory=dict)
    """Item -> book: keeping one transition of a duplicate cluster keeps its book's other members too."""

    def item_reasons(
        self, resolutions: Iterable[Resolution] = (), duplicates: DuplicatePolicy = "block"
    ) -> dict[str, list[str]]:
        """Item -> blocking reason codes (``leak:<kind>``, and ``duplicate:<cluster>`` when duplicates block).

        A duplicate cluster holds its members only under ``duplicates = "block"`` and only while no maintainer
        has resolved it (``curate audit resolve``): a resolved cluster holds nothing (``--keep`` discards the
        other members when it is recorded, ``--distinct`` frees them all).
        """
        found: dict[str, list[str]] = {}
        for group in self.duplicate_conditions:
            for item in group:
                found.setdefault(item, []).append("leak:duplicate_condition")
        for leak in self.span_leaks:
            found.setdefault(leak.item, []).append(f"leak:shared_span:{leak.field}")
        if duplicates == "block":
            for cluster in self.unresolved_clusters(resolutions):
                for item in cluster.items:
                    found.setdefault(item, []).append(f"duplicate:{cluster.id}")
        return {k: sorted(set(v)) for k, v in sorted(found.items())}

    def unresolved_clusters(self, resolutions: Iterable[Resolution] = ()) -> list[Cluster]:
        """Clusters no decision covers: none on the cluster's id, nor one taken on a superset of its members
        (after discards the rest form a cluster with a new id that needs no new decision)."""
        decided = list(resolutions)
        targets = {r.target for r in decided}
        return [
            c
            for c in self.clusters
            if c.id not in targets and not any(r.items and set(c.items) <= set(r.items) for r in decided)
        ]

    def item_warnings(self, duplicates: DuplicatePolicy = "block") -> dict[str, list[str]]:
        """Item -> warning codes: ``leak:reference_span``, and under ``duplicates = "annotate"`` the
        ``duplicate:<cluster>`` of every cluster it is in (kept in the release with the annotation)."""
        found: dict[str, list[str]] = {item: ["leak:reference_span"] for item in self.reference.flagged}
        if duplicates == "annotate":
            for cluster in self.clusters:
                for item in cluster.items:
                    found.setdefault(item, []).append(f"duplicate:{cluster.id}")
        return {k: sorted(set(v)) for k, v in sorted(found.items())}

    def item_clusters(self) -> dict[str, list[str]]:
        """Item -> the ids of the duplicate clusters it is in (the release's ``duplicate_clusters``)."""
        found: dict[str, list[str]] = {}
        for cluster in self.clusters:
            for item in cluster.items:
                found.setdefault(item, []).append(cluster.id)
        return {k: sorted(v) for k, v in found.items()}

    def to_json(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "duplicate_conditions": self.duplicate_conditions,
            "span_leaks": [
                {"item": s.item, "field": s.field, "span": s.span, "page": {"book": s.page[0], "page": s.page[1]}}
                for s in self.span_leaks
            ],
            "reference_span": {
                "median": self.reference.median,
                "flagged": self.reference.flagged,
                "flagged_share": len(self.reference.flagged) / self.items if self.items else None,
            },
            "absent_content_share": self.absent_content_share,
            "annotation_share": (
                {"mean": self.annotation_share.mean, "pooled": self.annotation_share.pooled}
                if self.annotation_share
                else None
            ),
            "clusters": [c.to_dict() for c in self.clusters],
            "clustered_items": len({i for c in self.clusters for i in c.items}),
        }


def audit_transitions(
    items: Sequence[AuditedTransition], pages: dict[tuple[str, int], str] | None = None
) -> StoryAudit:
    with collector_paused():  # the indexes allocate millions of acyclic spans and shingles (curation.bulk)
        return _audit(items, pages)


def _audit(items: Sequence[AuditedTransition], pages: dict[tuple[str, int], str] | None) -> StoryAudit:
    return StoryAudit(
        items=len(items),
        duplicate_conditions=duplicate_conditions(items),
        span_leaks=foreign_span_leaks(items, pages),
        reference=reference_overlap(items),
        absent_content_share=mean_absent_content_share(items),
        annotation_share=annotation_word_share(items),
        clusters=duplicate_clusters(items),
        books={t.id: t.book for t in items},
    )
