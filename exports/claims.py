"""What a release may say, and where each sentence comes from (design.md, "Releases — what a release may
claim"; the table of every sentence and its record is docs/releases-claims.md).

Two sources only: the workspace's records (counts, the settings in force, the stages and what the derivation
enforces, licences, sources, the facts of the shipped media) and the maintainer's ``release-claims.toml``
(``curation.release_claims``), shown as typed and marked as the maintainer's. A point neither gives is left out.
Each release carries ``claims.json``: the maintainer's statements it was built with, so that its bytes depend on
the workspace's state and that file alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlmodel import col

from curation.audio_production.claims import ConsentSummary
from curation.config import ReviewSettings
from curation.kinds import kind_of
from curation.release_claims import CLAIMS_NAME, ReleaseClaims
from curation.tables import Item
from curation.workspace import Workspace

from .writer import ReleaseWriter

CLAIMS_FILE = "claims.json"

LABELS: dict[str, str] = {
    "description": "Description",
    "uses": "Recommended uses",
    "out_of_scope": "Not recommended",
    "limitations": "Limitations",
    "biases": "Biases",
    "personal_information": "Personal and sensitive information",
    "social_impact": "Social impact",
    "maintenance": "Maintenance",
}
"""The card's label of each key whose text the card shows (``homepage`` goes to Croissant ``url`` only)."""


MAINTENANCE = (
    "Versions are immutable: a rebuild of a published version must reproduce its manifest byte for byte, so a "
    "changed item makes a new version; `curate release diff OLD NEW` lists the errata."
)
"""What the platform enforces of maintenance (``exports.publish._publish``); the plan is the maintainer's."""


def write_claims(writer: ReleaseWriter, claims: ReleaseClaims) -> None:
    """``claims.json``: which file the maintainer's statements came from and every value the build used."""
    writer.write_json(CLAIMS_FILE, {"file": CLAIMS_NAME, "claims": claims.model_dump(mode="json")})


def said(claims: ReleaseClaims, key: str) -> list[str]:
    """The maintainer's statements under ``key``, as typed (none: an empty list)."""
    value = getattr(claims, key)
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def card_block(claims: ReleaseClaims, key: str) -> list[str]:
    """The maintainer's text under ``key`` as card paragraphs, introduced as theirs; nothing when none."""
    statements = said(claims, key)
    if not statements:
        return []
    out = [f"{LABELS[key]}, in the maintainer's words (`{CLAIMS_NAME}`, `{key}`):", ""]
    for statement in statements:
        out += [statement, ""]
    return out


def unstated(claims: ReleaseClaims, keys: Iterable[str] = LABELS) -> list[str]:
    """One card line naming the keys the maintainer left empty: the card states nothing on those points."""
    missing = [k for k in keys if not said(claims, k)]
    if not missing:
        return []
    return [
        f"Not stated: this release makes no statement on {', '.join(f'`{k}`' for k in missing)}, because "
        f"`{CLAIMS_NAME}` holds no text for {'it' if len(missing) == 1 else 'them'}.",
        "",
    ]


def card_sections(claims: ReleaseClaims, heading: str = "##", skip: Iterable[str] = ()) -> list[str]:
    """A card section per key with text (judge and story cards), then the line naming the empty ones."""
    out: list[str] = []
    for key, label in LABELS.items():
        block = [] if key in skip else card_block(claims, key)
        if block:
            out += [f"{heading} {label}", "", *block]
    return out + unstated(claims)


def claim_sections(claims: ReleaseClaims) -> list[str]:
    """The judge and story cards' closing sections: maintenance (what the platform enforces, then the
    maintainer's plan), each other key with text, and the keys left empty (the description goes first)."""
    return [
        "## Maintenance",
        "",
        MAINTENANCE,
        "",
        *card_block(claims, "maintenance"),
        *card_sections(claims, "##", skip=("description", "maintenance")),
    ]


def croissant_claims(
    claims: ReleaseClaims,
    description: str,
    biases: Sequence[str] = (),
    personal: Sequence[str] = (),
    maintenance: str = "",
) -> dict[str, Any]:
    """The Croissant fields the maintainer's text fills, after what the records give: a field with neither is
    left out."""
    fields: dict[str, Any] = {
        "description": "\n\n".join([description, *said(claims, "description")]),
        "rai:dataUseCases": said(claims, "uses"),
        "rai:dataLimitations": said(claims, "limitations") + said(claims, "out_of_scope"),
        "rai:dataBiases": [*biases, *said(claims, "biases")],
        "rai:personalSensitiveInformation": [*personal, *said(claims, "personal_information")],
        "rai:dataSocialImpact": claims.social_impact or "",
        "rai:dataReleaseMaintenancePlan": "\n\n".join(x for x in [maintenance, claims.maintenance or ""] if x),
    }
    return {k: v for k, v in fields.items() if v}


def url(claims: ReleaseClaims, name: str, version: str) -> str:
    """The maintainer's homepage, else a placeholder no site can have (``example.invalid`` is reserved)."""
    return claims.homepage or f"https://example.invalid/{name}/{version}"


def inline(counts: Mapping[str, Any]) -> str:
    return ", ".join(f"{k or '(none recorded)'}: {v}" for k, v in counts.items()) or "none"


def intake_facts(asset: Any) -> dict[str, Any]:
    """A shipped file's facts recorded at intake (``curation.tables.Asset``), as the card describes it."""
    return {
        "mime": asset.mime,
        "sample_rate": asset.sample_rate,
        "channels": asset.channels,
        "width": asset.width,
        "height": asset.height,
    }


def released_authors(ws: Workspace, released: Iterable[str]) -> int:
    """How many people authored the released items (``item.author``)."""
    wanted = set(released)
    with ws.session() as s:
        rows = s.execute(select(col(Item.id), col(Item.author))).all()
    return len({author for item_id, author in rows if item_id in wanted})


# ----- sentences from the records ----------------------------------------------------------------------
def stage_quorums(kind: str, review: ReviewSettings) -> dict[str, tuple[int, str]]:
    """Each stage of the kind with the quorum in force and its scope (item or group)."""
    return {s.name: (s.quorum(review), s.scope) for s in kind_of(kind).stages}


def stage_sentence(kind: str, review: ReviewSettings, units: Mapping[str, int], noun: str = "item") -> str:
    """The stages behind the released units (``units``: stage -> units it applied to), with their quorums."""
    quorums = stage_quorums(kind, review)
    parts = []
    for stage, (quorum, scope) in quorums.items():
        if stage not in units:
            continue
        per = "scene group" if scope == "group" else noun
        parts.append(f"{stage} (quorum {quorum} per {per}; {units[stage]} released {noun}(s))")
    if not parts:
        return ""
    return (
        "Review stages behind the released " + noun + "s, with the quorum in force (`[review]` in curate.toml; "
        "admission/settings.json): " + "; ".join(parts) + "."
    )


def separation_sentence(review: ReviewSettings, noun: str = "item", mcq: bool = False) -> str:
    """What the derivation enforces about who reviews what (``curation.kinds._parts.not_author``, and for mcq
    the group stage's ``no_sister_author`` and TRIAD's roles): imports refuse such a review and the derivation
    never counts one."""
    group = " (at the group stage, no author of any item of the group)" if mcq else ""
    triad = (
        ' The TRIAD separation of roles (`[review] separation = "triad"`) applied as well.'
        if mcq and review.separation == "triad"
        else ""
    )
    return f"No review by the {noun}'s author{group} counts toward its admission; imports refuse one.{triad}"


def collection_lines(
    admission: Sequence[Mapping[str, Any]], review: ReviewSettings | None, authors: int | None
) -> list[str]:
    """The mcq card's account of how items got in: authors, the stages and quorums in force, what the
    derivation enforces, and the maintainers' overrides; every figure from the records."""
    review = review or ReviewSettings()
    applied = Counter(stage for a in admission for stage in a["stages"])
    overridden = sorted(a["id"] for a in admission if a.get("overrides"))
    wrote = f"{authors} author(s) wrote the released items. " if authors is not None else ""
    return [
        wrote + stage_sentence("mcq", review, dict(applied)),
        "",
        separation_sentence(review, mcq=True)
        + " Admission requires every stage's quorum and rule; the combined modality-subset checklist must find "
        "the answer unique from all of an item's modalities together and from no smaller subset (TRIAD "
        "Definition 1). "
        + (
            f"Maintainers' overrides decided a stage for {len(overridden)} released item(s) "
            f"({', '.join(overridden)}; admission.jsonl)."
            if overridden
            else "No maintainer's override decided a stage of a released item."
        ),
        "",
    ]


def preprocessing_sentences(media: Sequence[Mapping[str, Any]], shipped: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What was done to the shipped media, from each derivative's recorded transform (``attributions.json``)
    and each file's facts recorded at intake (format, sample rate, channels, size)."""
    audio: Counter[tuple[Any, ...]] = Counter()
    images: Counter[tuple[Any, ...]] = Counter()
    loudness: list[float] = []
    resized = 0
    as_imported: Counter[str] = Counter()
    other: Counter[str] = Counter()
    for m in media:
        transform = m.get("transform") or {}
        if m.get("derived_from") and transform.get("transform") == "audio_normalize":
            key = (
                transform.get("sample_rate"),
                transform.get("channels"),
                transform.get("subtype"),
                transform.get("target_lufs"),
                transform.get("true_peak_ceiling_dbtp"),
            )
            audio[key] += 1
            if isinstance(transform.get("output_lufs"), int | float):
                loudness.append(float(transform["output_lufs"]))
        elif m.get("derived_from") and transform.get("transform") == "image_normalize":
            images[(transform.get("quality"), transform.get("max_edge"))] += 1
            resized += bool(transform.get("resized"))
        elif m.get("derived_from"):
            other[str(transform.get("transform") or "an unrecorded transform")] += 1
        else:
            as_imported[_shape(m, shipped.get(m["file"], {}))] += 1
    out = []
    for (rate, channels, subtype, lufs, peak), n in sorted(audio.items(), key=str):
        out.append(
            f"{n} audio file(s) normalized to {rate} Hz, {channels} channel(s), {subtype}, loudness target {lufs} "
            f"LUFS with a true-peak ceiling of {peak} dBTP"
        )
    if loudness:
        out[-1] += f"; measured integrated loudness of the normalized clips {min(loudness):g} to {max(loudness):g} LUFS"
    for (quality, edge), n in sorted(images.items(), key=str):
        out.append(
            f"{n} image file(s) re-encoded as baseline JPEG at quality {quality}, longest edge at most {edge} px, "
            "without metadata segments"
        )
    if images:
        out[-1] += f" ({resized} resized)"
    out += [f"{n} file(s) derived by {name}" for name, n in sorted(other.items())]
    if as_imported:
        out.append("shipped as imported: " + "; ".join(f"{shape}: {n}" for shape, n in sorted(as_imported.items())))
    return [s[0].upper() + s[1:] + "." for s in out]


def _shape(m: Mapping[str, Any], facts: Mapping[str, Any]) -> str:
    """A shipped file's recorded format: MIME type, and sample rate and channels or pixel size."""
    parts = [str(m.get("mime", ""))]
    if facts.get("sample_rate"):
        parts.append(f"{facts['sample_rate']} Hz, {facts.get('channels')} channel(s)")
    if facts.get("width") and facts.get("height"):
        parts.append(f"{facts['width']}x{facts['height']} px")
    return " ".join(parts)


def composition_lines(stats: Mapping[str, Any]) -> list[str]:
    """The released items per language and per taxonomy leaf (stats.json): Croissant ``rai:dataBiases``."""
    lines = [f"Items per language (stats.json): {inline(stats['by_language'])}."]
    leaves = [f"{m}: {inline(c)}" for m, c in stats.get("by_taxonomy_leaf", {}).items() if c]
    if leaves:
        lines.append("Items per taxonomy leaf (stats.json): " + "; ".join(leaves) + ".")
    return lines


def source_counts(items: Iterable[Mapping[str, Any]], column: str) -> dict[str, int]:
    return dict(sorted(Counter(i[column] for i in items if i.get(column) is not None).items()))


def pseudonym_sentence(summary: Mapping[str, Any] | None) -> list[str]:
    """How people appear in the admission record (``exports.admission_record``): code-enforced."""
    if not summary:
        return []
    return [
        "Reviewers and maintainers appear in admission/ under per-release pseudonyms; authors are "
        f"{summary['authors']}."
    ]


def consent_sentences(summary: ConsentSummary) -> list[str]:
    """The consent sentence of the card and of ``rai:personalSensitiveInformation``: stated only for clips whose
    every named speaker has a recorded consent (``curation.audio_production.claims``); nothing at all when no
    released clip has one, so a workspace without consent records states no consent, as before."""
    if not summary.consented:
        return []
    scopes = "; ".join(f"{scope} ({n})" for scope, n in summary.scopes.items())
    rest = summary.clips - summary.consented
    return [
        f"The speakers of {summary.consented} of {summary.clips} released audio clip(s) gave recorded consent "
        f"(scopes, with the speakers' consents under each: {scopes}); each record names the signed document, which "
        "is not part of the release."
        + (f" This release states no consent for the other {rest} clip(s)." if rest else "")
    ]
