"""The release of the ``story_transition`` kind: data files, the fingerprint manifest naming the kind, the
screening funnel, the App. C audit of what is released, a datasheet and Croissant metadata.

Deterministic like every release: the date is fixed at the first build of a version, files are written in a
fixed order with canonical JSON, and a rebuild of the same state gives the same manifest.
"""

from __future__ import annotations

from collections import Counter
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from sqlalchemy import select

from curation.config import ReviewSettings
from curation.errors import CheckFailed, Problem, ValidationFailed
from curation.kinds.story import TRANSITION_COLUMNS
from curation.release_claims import ReleaseClaims, load_claims
from curation.screening.audits import SPAN_WORDS
from curation.screening.items import KIND, _audited
from curation.screening.pipeline import stored_funnel
from curation.screening.revise import unattributed
from curation.screening.schema import ANNOTATION_GROUPS, StoryTransition
from curation.tables import Asset, Item
from curation.workflow import StatusInputs
from curation.workspace import Workspace

from .admission_record import card_lines as admission_card_lines
from .admission_record import croissant_parts as admission_croissant_parts
from .admission_record import write_admission_record
from .build import FORMAT, validate_version
from .card import CROISSANT_CONTEXT, citation
from .claims import MAINTENANCE, card_block, claim_sections, croissant_claims, url, write_claims
from .fingerprints import SKETCH_SPEC, minhash_hex, text_sha256
from .kind_claims import story_collection, story_provenance_lines, story_stage_sentences
from .publish import BuildResult, _check_target, _publish, _published_name, refuse_changed_data, release_date
from .release_parquet import croissant_field, records_parquet
from .story_duplicates import attribution_lines, duplicate_section
from .tables import Release
from .writer import ReleaseWriter, StoreChecks, canonical_json, jsonl_bytes

DATA_FILE = "data/transitions.jsonl"
PARQUET_FILE = "data/transitions.parquet"
"""The same records for `datasets` and Croissant: the page images as ``datasets.Image()``, the nested columns
as JSON text (``exports.release_parquet``)."""
JSON_COLUMNS = ("book_meta", "conditions", "speech", "provenance", "origin")
_TYPES = {"page": "int32", "revision": "int32", "current_image": "image", "next_image": "image"}
PARQUET_COLUMNS = tuple(
    (c, "json" if c in JSON_COLUMNS else "list:string" if c == "duplicate_clusters" else _TYPES.get(c, "string"))
    for c in TRANSITION_COLUMNS
)


def _record(item: Item, t: StoryTransition, assets: dict[str, Asset], clusters: list[str]) -> dict[str, Any]:
    provenance = {}
    for group in ANNOTATION_GROUPS:
        proposal = t.proposals.get(group)  # type: ignore[call-overload]  # none: reviewers wrote the whole group
        revised = sorted(p for p in t.revised_by if p.split(".")[0] == group)
        provenance[group] = {
            "model": proposal.provenance.model if proposal else None,
            "prompt_hash": proposal.provenance.prompt_hash if proposal else None,
            "revised_fields": revised,
            "human_revised": bool(revised),
        }
    record = {
        "id": t.id,
        "book": t.book,
        "page": t.page,
        "title": t.title,
        "collection": t.source.collection,
        "license": t.source.license,
        "current_text": t.current.text,
        "current_image": f"media/{t.current.image}{assets[t.current.image].ext}",
        "next_text": t.next.text,
        "next_image": f"media/{t.next.image}{assets[t.next.image].ext}",
        "book_meta": t.book_meta.model_dump(mode="json"),
        "conditions": t.conditions.model_dump(mode="json"),
        "speech": t.speech.model_dump(mode="json"),
        "provenance": provenance,
        "revision": item.revision,
        "duplicate_clusters": clusters,
        "origin": t.origin.model_dump(mode="json") if t.origin else None,
    }
    return {k: record[k] for k in TRANSITION_COLUMNS}


def refuse_unattributed(transitions: dict[str, StoryTransition]) -> None:
    """A release states who wrote each annotation value: refuse one whose value the model did not propose and
    no reviewer is named for (an item imported before that rule held), naming item and field."""
    problems = [Problem(m, f, file=f"item {i}") for i, t in sorted(transitions.items()) for f, m in unattributed(t)]
    if problems:
        items = len({p.file for p in problems})
        raise ValidationFailed(
            problems,
            f"release refused: {items} admitted story transition(s) would credit the model with values it did not "
            "propose; record who wrote each one with `curate story revise FILE` (an edit names its reviewer), or "
            "discard the item with `curate decide ITEM discard --by MAINTAINER --reason TEXT`; nothing was built",
        )


def _manifest_item(record: dict[str, Any], t: StoryTransition) -> dict[str, Any]:
    narration = f"{t.current.text}\n{t.next.text}"
    return {
        "id": t.id,
        "current_text_sha256": text_sha256(t.current.text),
        "next_text_sha256": text_sha256(t.next.text),
        "text_sha256": text_sha256(narration),
        "minhash": minhash_hex(narration),
        "current_image": record["current_image"],
        "current_image_sha256": t.current.image,
        "next_image": record["next_image"],
        "next_image_sha256": t.next.image,
    }


def _reason_kind(reason: str) -> str:
    """A reason code without its instance (``duplicate:dup-1a2b`` counts as ``duplicate``)."""
    return "duplicate" if reason.startswith("duplicate:") else reason


def _screening(ws: Workspace, statuses: list[Any], released: list[str]) -> dict[str, Any]:
    """How many candidates each rule, the scores, the selection and the reviewers removed."""
    funnel = stored_funnel(ws, ws.settings.screen).to_json()
    story = [s for s in statuses if s.kind == KIND]
    review: dict[str, Any] = {
        "promoted": len(story),
        "dropped_by_reviewers": sum("filter:drop" in s.reasons for s in story),
        "held_by_gates": dict(
            sorted(Counter(_reason_kind(r) for s in story if s.state == "held" for r in s.reasons).items())
        ),
        "not_yet_reviewed": sum(s.state == "in_review" for s in story),
        "discarded": sum(s.state == "discarded" for s in story),
        "released": len(released),
    }
    return {"screening": funnel, "review": review}


def _card(
    name: str,
    version: str,
    date: str,
    license: str,
    records: list[dict[str, Any]],
    screening: dict[str, Any],
    audit: dict[str, Any],
    notes: str = "",
    claims: ReleaseClaims | None = None,
    settings: ReviewSettings | None = None,
) -> str:
    """README.md: every sentence from the released records (``exports.kind_claims``) or the maintainer's
    release-claims.toml (``exports.claims``)."""
    claims = claims or ReleaseClaims()
    funnel, review = screening["screening"], screening["review"]
    lines = [
        f"# {name} {version}",
        "",
        f"Released {date}. {len(records)} story transitions (kind `story_transition`): a current page (illustration "
        "and narration) and the next page as the reference, with book metadata, next-page conditions and a speech "
        "target. Text and annotations under " + license + "; each page keeps its book's licence (below).",
        "",
        f'Load it from this folder with `datasets.load_dataset("parquet", data_files="{PARQUET_FILE}")`: '
        "`current_image` and `next_image` decode the files under `media/` (their paths are relative to this "
        f"folder); the nested columns are JSON text. `{DATA_FILE}` holds the same records as JSON Lines.",
        "",
        *card_block(claims, "description"),
        "## Screening funnel",
        "",
        "| step | in | kept | removed | why |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for step in funnel["steps"]:
        why = ", ".join(f"{reason} {n}" for reason, n in step["reasons"].items())
        lines.append(f"| {step['step']} | {step['inputs']} | {step['kept']} | {step['dropped']} | {why} |")
    lines += [
        f"| reviewers (filter) | {review['promoted']} | {review['promoted'] - review['dropped_by_reviewers']} | "
        f"{review['dropped_by_reviewers']} | filter:drop |",
        f"| audits (App. C gates) | | | {sum(review['held_by_gates'].values())} | "
        + ", ".join(f"{k} {v}" for k, v in review["held_by_gates"].items())
        + " |",
        f"| released | | {review['released']} | | |",
        "",
        f"{funnel['candidates']} candidate transitions were screened.",
        "",
        "## Annotation and provenance",
        "",
        *story_stage_sentences(settings or ReviewSettings(), len(records)),
        "",
        "Per field group, the model and prompt hash of a proposal are in `provenance`, and "
        "`provenance.<group>.revised_fields` names every field a person changed:",
        "",
        *story_provenance_lines(records, ANNOTATION_GROUPS),
    ]
    ref = audit["reference_span"]
    share = audit["annotation_share"] or {}
    lines += [
        "",
        "## String-overlap and duplicate audit (Omni-StoryBench App. C)",
        "",
        f"- normalized condition texts distinct: {'yes' if not audit['duplicate_conditions'] else 'no'} "
        f"({len(audit['duplicate_conditions'])} duplicate group(s))",
        f"- descriptive fields sharing a {SPAN_WORDS}-word span with a page outside their transition: {len(audit['span_leaks'])}",
        f"- longest span shared by a condition and its next-page narration: median {ref['median']:g} words; "
        f"{len(ref['flagged'])} transition(s) share {SPAN_WORDS} or more",
        "- reference content words absent from the condition: "
        + (f"{audit['absent_content_share']:.1%}" if audit["absent_content_share"] is not None else "n/a"),
        "- annotation share of input words: "
        + (f"{share['mean']:.1%} per transition, {share['pooled']:.1%} pooled" if share else "n/a"),
        f"- duplicate clusters across books (word 3-gram MinHash, pHash): {len(audit['clusters'])} "
        f"over {audit['clustered_items']} transitions (audit.json)",
        "",
        *duplicate_section(audit),
        "",
        "String-level results characterize lexical overlap; they do not prove an absence of semantic leakage or "
        "prior model exposure. `manifest.json` gives per-transition text and image hashes and word 8-gram sketches "
        "for independent overlap checks.",
        "",
        "## Licences",
        "",
    ]
    for (collection, lic), n in sorted(Counter((r["collection"], r["license"]) for r in records).items()):
        lines.append(f"- {collection}: {n} transition(s), {lic}")
    lines += attribution_lines(records)
    if notes.strip():
        lines += ["", "## Release notes", "", notes.strip()]
    lines += ["", *claim_sections(claims), ""]
    return "\n".join(lines)


def _croissant(
    name: str,
    version: str,
    date: str,
    license: str,
    records: list[dict[str, Any]],
    writer: ReleaseWriter,
    claims: ReleaseClaims | None = None,
    candidates: int = 0,
    settings: ReviewSettings | None = None,
) -> dict[str, Any]:
    files = {e.path: e for e in writer.entries()}
    described = {
        "json": "{}: a JSON object as text, null where absent (nested in data/transitions.jsonl).",
        "image": "{}: in Parquet a datasets.Image() {{bytes: null, path}}, its path relative to the release folder.",
    }
    fields = [
        croissant_field("transitions", PARQUET_FILE, c, t, described.get(t, "{}.").format(c.replace("_", " ")))
        for c, t in PARQUET_COLUMNS
    ]
    facts = type("Facts", (), {"name": name, "version": version, "release_date": date})
    claims = claims or ReleaseClaims()
    document = {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.1",
        "name": name,
        "description": f"{name} {version}: {len(records)} story transitions (current page, next page as reference, "
        "book metadata, next-page conditions, speech target).",
        "version": version,
        "citeAs": citation(facts),  # type: ignore[arg-type]
        "datePublished": date,
        "license": license,
        "url": url(claims, name, version),
        "distribution": [
            {
                "@type": "cr:FileObject",
                "@id": DATA_FILE,
                "name": DATA_FILE,
                "contentUrl": DATA_FILE,
                "contentSize": f"{files[DATA_FILE].size} B",
                "encodingFormat": "application/jsonlines",
                "sha256": files[DATA_FILE].sha256,
            },
            {
                "@type": "cr:FileObject",
                "@id": PARQUET_FILE,
                "name": PARQUET_FILE,
                "contentUrl": PARQUET_FILE,
                "contentSize": f"{files[PARQUET_FILE].size} B",
                "encodingFormat": "application/x-parquet",
                "sha256": files[PARQUET_FILE].sha256,
            },
            {
                "@type": "cr:FileSet",
                "@id": "media-image",
                "name": "media-image",
                "description": "The page illustrations, named by the SHA-256 of their bytes (listed in manifest.json).",
                "encodingFormat": "image/jpeg",
                "includes": ["media/*"],
            },
        ],
        "recordSet": [
            {
                "@type": "cr:RecordSet",
                "@id": "transitions",
                "name": "transitions",
                "description": f"One record per transition ({PARQUET_FILE}; the same records as {DATA_FILE}).",
                "key": {"@id": "transitions/id"},
                "field": fields,
            }
        ],
        "rai:dataCollection": story_collection(records, candidates),
        "rai:dataCollectionType": ["Manual Human Curation"],
        "rai:dataAnnotationProtocol": [
            *story_stage_sentences(settings or ReviewSettings(), len(records)),
            *[line.removeprefix("- ") + "." for line in story_provenance_lines(records, ANNOTATION_GROUPS)],
        ],
    }
    return document | croissant_claims(claims, str(document["description"]), maintenance=MAINTENANCE)


def build_story_release(
    ws: Workspace,
    version: str,
    out: Path | None = None,
    license: str = "CC-BY-4.0",
    name: str | None = None,
    actor: str = "cli",
    notes: str = "",
    rejected: bool = True,
) -> BuildResult:
    """Build VERSION from the admitted story transitions (held, returned or pending ones are not admitted)."""
    validate_version(version)
    claims = load_claims(ws.root)  # a damaged release-claims.toml refuses the build before anything runs
    with ws.session() as s:
        existing = s.get(Release, version)
    name = name or _published_name(ws, existing) or ws.root.name  # a renamed workspace rebuilds its version
    date = release_date(existing)
    target = (out or ws.root / "releases" / version).resolve()
    _check_target(ws, target, existing)
    with ws.session() as s:
        inputs = StatusInputs.load(s)
    statuses = inputs.derive(ws)
    released = sorted(st.id for st in statuses if st.kind == KIND and st.state == "admitted")
    if not released:
        raise CheckFailed("release refused: no story transition is admitted yet; see `curate status`")
    with ws.session() as s:
        items = {i.id: i for i in s.execute(select(Item).where(Item.id.in_(released))).scalars()}
        assets = {a.sha256: a for a in s.execute(select(Asset)).scalars()}
    transitions = {i: StoryTransition.model_validate(items[i].extra) for i in released}
    refuse_unattributed(transitions)
    policy = ws.settings.story.duplicates

    def write(root: Path) -> BuildResult:
        from curation.screening.audits import audit_transitions

        checks = StoreChecks.of(ws)
        writer = ReleaseWriter(root, checks=checks)
        report = audit_transitions([_audited(i, transitions[i], ws, assets) for i in released])
        clusters = report.item_clusters()
        records = [_record(items[i], transitions[i], assets, clusters.get(i, [])) for i in released]
        media = set()
        for record in records:
            t = transitions[record["id"]]
            media |= {(record["current_image"], t.current.image), (record["next_image"], t.next.image)}
        refuse_changed_data(existing, {DATA_FILE: jsonl_bytes(records)})
        writer.copy_media([(path, ws.asset_path(assets[sha]), sha) for path, sha in sorted(media)])
        checks.remember(ws)
        writer.write_bytes(DATA_FILE, jsonl_bytes(records))
        writer.write_bytes(PARQUET_FILE, records_parquet(records, PARQUET_COLUMNS, PARQUET_FILE))
        screening = _screening(ws, statuses, released)
        writer.write_json("screening.json", screening)
        audit = {**report.to_json(), "duplicates": policy}
        writer.write_json("audit.json", audit)
        story = [st for st in statuses if st.kind == KIND]
        record = write_admission_record(writer, ws, version, inputs, story, released, {}, rejected)
        write_claims(writer, claims)
        candidates = int(screening["screening"]["candidates"])
        croissant = _croissant(name, version, date, license, records, writer, claims, candidates, ws.settings.review)
        admission_files, admission_sets = admission_croissant_parts(writer.entries())
        croissant["distribution"] += admission_files
        croissant["recordSet"] += admission_sets
        writer.write_json("croissant.json", croissant)
        card = _card(name, version, date, license, records, screening, audit, notes, claims, ws.settings.review)
        card += "\n".join(admission_card_lines(record))
        writer.write_bytes("README.md", card.encode("utf-8"))
        entries = writer.entries()
        manifest = {
            "format": FORMAT,
            "kind": KIND,
            "name": name,
            "version": version,
            "release_date": date,
            "partial": False,
            "files": [{"path": e.path, "sha256": e.sha256, "size": e.size} for e in entries],
            "items": [_manifest_item(r, transitions[r["id"]]) for r in records],
            "fingerprints": {
                "text": "current_text_sha256 / next_text_sha256: each normalized narration; text_sha256 and "
                "minhash: both narrations joined by a newline",
                "media": "current_image_sha256 / next_image_sha256: SHA-256 of the shipped file's bytes",
                "sketch": SKETCH_SPEC,
            },
        }
        manifest_entry = writer.write_bytes("manifest.json", canonical_json(manifest))
        total = sum(e.size for e in entries) + manifest_entry.size
        return BuildResult(version, root, len(records), len(entries) + 1, total, manifest_entry.sha256, date, name=name)

    done: Future[list[str]] = Future()
    done.set_result([])
    # _publish registers the version (and journals it) in the same step that moves the folder into place.
    return _publish(ws, target, existing, done, write, actor)
