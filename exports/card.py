"""The human- and machine-readable descriptions of a release: README.md (a Hugging Face dataset card with a
datasheet under TRIAD App. H's headings) and croissant.json (Croissant 1.1 with Responsible-AI fields).

Both are filled from the released records, the build's figures and the maintainer's ``release-claims.toml``
only (``exports.claims``; docs/releases-claims.md lists every sentence and its source), so they never disagree
with the data and claim nothing no record gives.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .admission_record import card_lines as admission_card_lines
from .admission_record import croissant_parts as admission_croissant_parts
from .ai_images import card_lines as ai_image_lines
from .baseline import card_lines as baseline_card_lines
from .claims import (
    CLAIMS_FILE,
    MAINTENANCE,
    card_block,
    collection_lines,
    composition_lines,
    croissant_claims,
    preprocessing_sentences,
    pseudonym_sentence,
    separation_sentence,
    source_counts,
    stage_sentence,
    unstated,
    url,
)
from .exclusions import card_lines as exclusion_card_lines
from .leaf_agreement import card_lines as leaf_card_lines
from .leaf_agreement import croissant_files as leaf_croissant_files
from .recording_controls import card_lines as recording_card_lines
from .release_parquet import croissant_field
from .writer import FileEntry

if TYPE_CHECKING:
    from curation.config import ReviewSettings
    from curation.release_claims import ReleaseClaims

ITEM_FEATURES: tuple[tuple[str, str, str], ...] = (
    ("id", "string", "Item identifier, unique in the release."),
    ("group", "string", "Scene group: sister items share all but the perturbed modality."),
    ("perturbed", "string", "The modality that differs between sisters: text, image, audio or mixed."),
    ("language", "string", "Language of the text (BCP 47)."),
    ("context", "string", "The text modality."),
    ("question", "string", "The question asked about the triplet."),
    ("options", "list:string", "Answer options; options[0] is A, options[1] is B, and so on."),
    ("answer", "string", "The correct option's letter."),
    ("taxonomy_text", "string", "Text ambiguity leaf (TRIAD App. A)."),
    ("taxonomy_image", "string", "Image ambiguity leaf (TRIAD App. A)."),
    ("taxonomy_audio", "string", "Audio ambiguity leaf (TRIAD App. A)."),
    ("ambiguous", "list:string", "The modalities that are individually ambiguous."),
    ("tier", "int32", "Ambiguity tier: how many modalities are individually ambiguous (1-3)."),
    (
        "image",
        "image",
        "The image: in Parquet a datasets.Image() {bytes: null, path}, its path relative to the release folder.",
    ),
    (
        "audio",
        "audio",
        "The audio clip: in Parquet a datasets.Audio() {bytes: null, path}, its path relative to the release folder.",
    ),
    ("image_sha256", "string", "SHA-256 of the image file's bytes."),
    ("audio_sha256", "string", "SHA-256 of the audio file's bytes."),
    ("image_source", "string", "Image origin: photo, ai_generated or drawing."),
    ("image_license", "string", "The image's licence (SPDX identifier where one exists)."),
    ("audio_source", "string", "Audio origin: natural, voice_acting, tts_edited or tts."),
    ("audio_license", "string", "The audio clip's licence."),
    ("image_note", "string", "The author's literal caption of the image (TRIAD's I+ description); null if none."),
    (
        "audio_note",
        "string",
        "The author's note on the audio: transcript, prosody, voice, non-speech events "
        "(TRIAD's A+ description); null if none.",
    ),
    ("revision", "int32", "The item's revision in the curation workspace; bumps mark errata."),
)


@dataclass
class CardFacts:
    """Everything the card and the Croissant file say, gathered by the build."""

    name: str
    version: str
    release_date: str
    license: str
    items: list[dict[str, Any]]
    admission: list[dict[str, Any]]
    stats: dict[str, Any]
    media: list[dict[str, Any]]
    states: dict[str, int]
    dropped: dict[str, list[str]]
    duplicates_note: str
    notes: str = ""
    data_files: list[FileEntry] = field(default_factory=list)
    """Every file written before the card: data, media and the JSON side files."""
    leaf_agreement: dict[str, Any] | None = None
    """agreement/per_leaf.json and agreement/disagreement_matrix.json by path (audit subset, TRIAD C.3)."""
    admission_record: dict[str, Any] | None = None
    """What admission/ holds (exports.admission_record), for the card's section on it."""
    claims: ReleaseClaims | None = None
    """The maintainer's statements (release-claims.toml); None states none."""
    review: ReviewSettings | None = None
    """The ``[review]`` settings in force: the quorums and separation the card names."""
    shipped: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per shipped media file, its facts recorded at intake (MIME type, sample rate, channels, pixel size)."""
    authors: int | None = None
    """How many people authored the released items."""
    consent: list[str] = field(default_factory=list)
    """What the consent records support about the released clips' speakers (``exports.claims``)."""
    human_baseline: dict[str, Any] | None = None
    """The human baseline campaigns' subsets and figures (``exports.baseline``), reported apart (TRIAD §5.1)."""
    recording_controls: list[dict[str, Any]] = field(default_factory=list)
    """The audio-perturbed groups documented in ``recording_controls.json`` (``exports.recording_controls``)."""

    @property
    def said(self) -> ReleaseClaims:
        from curation.release_claims import ReleaseClaims

        return self.claims or ReleaseClaims()

    @property
    def partial(self) -> bool:
        return bool(self.dropped)


def _figure(result: Any) -> str:
    if not isinstance(result, dict):
        return "not reported"
    if result.get("value") is None:
        return f"undefined ({result.get('undefined') or 'no data'})"
    return f"{result['value']:.3f} ({result.get('units', '?')} units, {result.get('coders', '?')} coders)"


def agreement_lines(agreement: dict[str, Any] | None) -> list[str]:
    """One sentence per agreement figure in stats.json, for the datasheet and Croissant."""
    if not agreement:
        return ["Inter-annotator agreement was not computed for this release."]
    lines = []
    if "subset_checklist" in agreement:
        lines.append(
            "Modality-subset checklist, Krippendorff's alpha (nominal, item x view x option): "
            + _figure(agreement["subset_checklist"].get("all"))
        )
    if "answer_check" in agreement:
        lines.append(
            "Blind answer check vs the author's label, Cohen's kappa: "
            + _figure(agreement["answer_check"].get("overall"))
        )
    for axis, result in sorted((agreement.get("audio_signoff") or {}).items()):
        lines.append(f"Audio sign-off ({axis}), Krippendorff's alpha (ordinal): {_figure(result)}")
    return lines


def _size_category(n: int) -> str:
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
    return next((label for bound, label in bounds if n < bound), "1M<n<10M")


def _yaml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _hf_license(spdx: str) -> str:
    """Hugging Face licence ids are lower-case SPDX ids; anything unusual is ``other``."""
    known = {"cc-by-4.0", "cc-by-sa-4.0", "cc-by-nc-4.0", "cc-by-nc-sa-4.0", "cc0-1.0", "mit", "apache-2.0"}
    return spdx.lower() if spdx.lower() in known else "other"


def front_matter(facts: CardFacts) -> str:
    languages = sorted(facts.stats["by_language"])
    lines = ["---", f"pretty_name: {_yaml_str(facts.name)}", f"license: {_hf_license(facts.license)}"]
    if _hf_license(facts.license) == "other":
        lines.append(f"license_name: {_yaml_str(facts.license)}")
    lines += ["language:", *[f"- {lang}" for lang in languages]]
    lines += ["size_categories:", f"- {_size_category(len(facts.items))}"]
    present = modalities(facts.items)
    tasks = ["multiple-choice"] + ["visual-question-answering"] * ("image" in present)
    tasks += ["audio-classification"] * ("audio" in present)
    tags = ["omni-modal"] * (len(present) == 3) + ["benchmark", *present, f"version-{facts.version}"]
    lines += ["task_categories:", *[f"- {t}" for t in tasks], "tags:", *[f"- {t}" for t in tags]]
    lines += ["configs:", "- config_name: default", "  data_files:", "  - split: test", "    path: data/items.parquet"]
    lines += ["dataset_info:", "  features:"]
    for name, dtype, _ in released_features(facts.items):
        lines.append(f"  - name: {name}")
        if dtype.startswith("list:"):
            lines += ["    sequence: " + dtype.split(":", 1)[1]]
        else:
            lines.append(f"    dtype: {dtype}")
    parquet = next((f for f in facts.data_files if f.path == "data/items.parquet"), None)
    if parquet is not None:
        lines.append(f"  download_size: {parquet.size}")
    lines.append("---")
    return "\n".join(lines) + "\n"


def modalities(items: list[dict[str, Any]]) -> list[str]:
    """The modalities the released items carry (text, image, audio), from their records."""
    columns = {"text": "context", "image": "image", "audio": "audio"}
    return [m for m, column in columns.items() if any(i.get(column) is not None for i in items)]


def _table(counts: dict[str, int], header: str) -> str:
    rows = [f"| {header} | count |", "| --- | ---: |"] + [f"| {k} | {v} |" for k, v in counts.items()]
    return "\n".join(rows)


def _inline(counts: dict[str, Any]) -> str:
    return ", ".join(f"{k if k != '' else '(none recorded)'}: {v}" for k, v in counts.items()) or "none"


def dataset_card(facts: CardFacts) -> str:
    """README.md: front matter, a summary, the datasheet (TRIAD App. H.1-H.8) and the files."""
    s = facts.stats
    baseline = s["random_baseline"]
    media_kinds = Counter(m["kind"] for m in facts.media)
    derived = sum(1 for m in facts.media if m["derived_from"])
    image_sources = Counter(i["image_source"] for i in facts.items if i.get("image_source") is not None)
    audio_sources = Counter(i["audio_source"] for i in facts.items if i.get("audio_source") is not None)
    licences = Counter(m["license"] for m in facts.media)
    reviews = Counter()
    for a in facts.admission:
        for stage, summary in a["stages"].items():
            reviews[stage] += summary["reviews"]
    total_bytes = sum(f.size for f in facts.data_files if f.path.startswith(("data/", "media/")))
    not_released = {k: v for k, v in facts.states.items() if k != "admitted" and v}
    claims = facts.said
    present = modalities(facts.items)
    out = [front_matter(facts), f"# {facts.name} {facts.version}", ""]
    out.append(
        f"Released {facts.release_date}. {len(facts.items)} multiple-choice items in {s['groups']} scene group(s), "
        f"each with {', '.join(present) or 'no modality'}. "
        'Load it from this folder with `datasets.load_dataset("parquet", data_files="data/items.parquet")`: the '
        "`image` and `audio` columns decode the files under `media/` (their paths are relative to this folder). "
        "Check it with `curate release verify`."
    )
    out.append("")
    if facts.partial:
        out += [
            "**Partial release.** This version was built with `--allow-partial`: "
            f"{len(facts.dropped)} admitted item(s) failed a gate when the release was built and were left out "
            "(with their scene-group sisters):",
            "",
            *[f"- `{item}`: {', '.join(reasons)}" for item, reasons in facts.dropped.items()],
            "",
        ]
    out += ["## Datasheet", "", "### H.1 Motivation", ""]
    out += card_block(claims, "description") or unstated(claims, ["description"])
    out += ["### H.2 Composition", ""]
    out.append(
        f"{len(facts.items)} items in {s['groups']} scene group(s) (mean group size {s['mean_group_size']}); "
        f"{media_kinds.get('image', 0)} image file(s) and {media_kinds.get('audio', 0)} audio file(s); "
        f"{total_bytes:,} bytes of data and media."
    )
    out += [
        "",
        _table(s["by_language"], "language"),
        "",
        _table(s["by_group_size"], "group size"),
        "",
        _table(s["by_tier"], "ambiguity tier"),
        "",
        _table(s["by_option_count"], "options per item"),
        "",
        _table(s["by_perturbed"], "perturbed modality"),
        "",
    ]
    for modality, counts in s["by_taxonomy_leaf"].items():
        out.append(f"- {modality} leaves: {_inline(counts)}")
    out += [
        "",
        f"Random baseline (TRIAD App. E.7, empirical option counts and group sizes): "
        f"Acc_q = {baseline['acc_q'] * 100:.1f}%, Acc_g = {baseline['acc_g'] * 100:.1f}%.",
        "",
        *card_block(claims, "biases"),
        "### H.3 Collection process",
        "",
        *collection_lines(facts.admission, facts.review, facts.authors),
        f"Reviews behind the released items: {_inline(dict(sorted(reviews.items())))}.",
        f"Image sources: {_inline(dict(sorted(image_sources.items())))}. "
        f"Audio sources: {_inline(dict(sorted(audio_sources.items())))}.",
        "",
        *recording_card_lines(facts.recording_controls),
        f"Items of the workspace not in this release, by state: {_inline(not_released)}.",
        "",
        "Agreement between reviewers on the released items (stats.json):",
        "",
        *[f"- {line}" for line in agreement_lines(facts.stats.get("agreement"))],
        "",
        *leaf_card_lines(facts.leaf_agreement),
        *baseline_card_lines(facts.human_baseline or {}),
        *admission_card_lines(facts.admission_record),
        *exclusion_card_lines(facts.admission_record),
        "### H.4 Pre-processing",
        "",
        f"{derived} of {len(facts.media)} media file(s) are normalized derivatives of the authored originals, "
        "the others are shipped as imported (attributions.json records each file's original and transform):",
        "",
        *[f"- {line}" for line in preprocessing_sentences(facts.media, facts.shipped)],
        "",
        "Text is UTF-8. manifest.json gives per-item fingerprints (normalized-text SHA-256, media "
        "SHA-256, word 8-gram MinHash) for independent overlap checks; exact hashes and lexical sketches miss "
        "paraphrases and transformed media, so a missing match is not evidence of non-exposure.",
        "",
        f"Duplicate audit: {facts.duplicates_note}",
        "",
        "### H.5 Uses",
        "",
        *card_block(claims, "uses"),
        *card_block(claims, "out_of_scope"),
        *card_block(claims, "limitations"),
        *unstated(claims, ["uses", "out_of_scope", "limitations", "biases"]),
        "### H.6 Distribution",
        "",
        f"Text and annotations: {facts.license}. Media keep their own licences (per file in attributions.json, per "
        f"item in the `image_license` and `audio_license` columns): {_inline(dict(sorted(licences.items())))}.",
        "",
        "### H.7 Maintenance",
        "",
        f"Version {facts.version}, released {facts.release_date}. {MAINTENANCE}",
        "",
        *card_block(claims, "maintenance"),
        *unstated(claims, ["maintenance"]),
    ]
    if facts.notes.strip():
        out += ["", "Release notes:", "", facts.notes.strip()]
    out += [
        "",
        "### H.8 Ethical and legal",
        "",
        " ".join(
            [
                f"{image_sources.get('ai_generated', 0)} item(s) use AI-generated images and "
                f"{audio_sources.get('tts', 0) + audio_sources.get('tts_edited', 0)} item(s) use synthesized or "
                "edited speech; both are marked per item (`image_source`, `audio_source`).",
                *pseudonym_sentence(facts.admission_record),
                *facts.consent,
            ]
        ),
        *ai_image_lines(facts.items, facts.admission),
        "",
        *card_block(claims, "personal_information"),
        *card_block(claims, "social_impact"),
        *unstated(claims, ["personal_information", "social_impact"]),
        "## Files",
        "",
        "- `data/items.parquet`, `data/items.jsonl`: the items (same records).",
        "- `media/`: images and audio, named by the SHA-256 of their bytes.",
        "- `manifest.json`: SHA-256 and size of every file, and per-item fingerprints.",
        "- `admission.jsonl`: per item, the reviews behind its admission, overrides, gates and probe results.",
        "- `duplicates.json`: duplicate clusters and their resolutions.",
        "- `stats.json`: the figures quoted here.",
        "- `attributions.json`: source, licence and attribution per media file.",
        "- `croissant.json`: Croissant 1.1 metadata with Responsible-AI fields.",
        f"- `{CLAIMS_FILE}`: the maintainer's statements this release was built with (release-claims.toml).",
        *(
            ["- `agreement/`: per-leaf agreement and the disagreement matrices on the audit subset."]
            * bool(facts.leaf_agreement)
        ),
        "",
    ]
    return "\n".join(out)


CROISSANT_CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "arrayShape": "cr:arrayShape",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


def released_features(items: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """The features of the columns the release's items carry: a release of items without audio has no audio
    columns, and its card and Croissant file declare none (a declared column the Parquet lacks fails to load)."""
    present = {key for item in items for key in item}
    return [feature for feature in ITEM_FEATURES if feature[0] in present]


def croissant(facts: CardFacts, homepage: str = "") -> dict[str, Any]:
    """Croissant 1.1 JSON-LD: the data files with their sha256, the item RecordSet, and Responsible-AI fields."""
    files = {f.path: f for f in facts.data_files}
    distribution: list[dict[str, Any]] = [
        {
            "@type": "cr:FileObject",
            "@id": path,
            "name": path,
            "contentUrl": path,
            "contentSize": f"{files[path].size} B",
            "encodingFormat": fmt,
            "sha256": files[path].sha256,
        }
        for path, fmt in (
            ("data/items.parquet", "application/x-parquet"),
            ("data/items.jsonl", "application/jsonlines"),
        )
    ]
    distribution += leaf_croissant_files(facts.data_files)
    admission_files, admission_sets = admission_croissant_parts(facts.data_files)
    distribution += admission_files
    for kind, mimes in sorted(_media_types(facts.media).items()):
        distribution.append(
            {
                "@type": "cr:FileSet",
                "@id": f"media-{kind}",
                "name": f"media-{kind}",
                "description": f"The {kind} files, named by the SHA-256 of their bytes (listed in manifest.json).",
                "encodingFormat": mimes[0] if len(mimes) == 1 else "application/octet-stream",
                "includes": [f"media/*{ext}" for ext in _media_exts(facts.media, kind)],
            }
        )
    fields = [croissant_field("items", "data/items.parquet", *feature) for feature in released_features(facts.items)]
    annotations = [a["annotations"] for a in facts.admission]
    from curation.config import ReviewSettings

    review = facts.review or ReviewSettings()
    overridden = sum(1 for a in facts.admission if a.get("overrides"))
    analysis = [
        "Admission requires every stage's quorum and rule; the combined modality-subset checklist must satisfy "
        f"TRIAD Definition 1; maintainers' overrides decided a stage for {overridden} released item(s). Per-item "
        "review summaries are in admission.jsonl; agreement figures in stats.json"
        + (
            "; per-leaf agreement and the disagreement matrices on the audit subset in agreement/ (TRIAD App. C.3)."
            if facts.leaf_agreement
            else "."
        ),
        *agreement_lines(facts.stats.get("agreement")),
    ]
    applied = Counter(stage for a in facts.admission for stage in a["stages"])
    audio = source_counts(facts.items, "audio_source")
    preprocessing = preprocessing_sentences(facts.media, facts.shipped)
    document: dict[str, Any] = {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.1",
        "name": facts.name,
        "description": (
            f"{facts.name} {facts.version}: {len(facts.items)} multiple-choice items "
            f"({', '.join(modalities(facts.items))}) "
            f"in {facts.stats['groups']} scene groups."
            + (" Partial release: items failing a gate at build time were left out." if facts.partial else "")
        ),
        "version": facts.version,
        "citeAs": citation(facts),
        "datePublished": facts.release_date,
        "license": facts.license,
        "url": homepage or url(facts.said, facts.name, facts.version),
        "inLanguage": sorted(facts.stats["by_language"]),
        "distribution": distribution,
        "recordSet": [
            {
                "@type": "cr:RecordSet",
                "@id": "items",
                "name": "items",
                "description": "One record per item (data/items.parquet).",
                "key": {"@id": "items/id"},
                "field": fields,
            },
            *admission_sets,
        ],
        "rai:dataCollection": (
            f"{len(facts.items)} items"
            + (f" written by {facts.authors} recorded author(s)" if facts.authors is not None else "")
            + " and admitted through the review stages of rai:dataAnnotationProtocol."
        ),
        "rai:dataCollectionType": ["Manual Human Curation"],
        "rai:dataAnnotationProtocol": [
            x for x in (stage_sentence("mcq", review, dict(applied)), separation_sentence(review, mcq=True)) if x
        ],
        "rai:dataAnnotationAnalysis": analysis,
        "rai:annotationsPerItem": (
            f"mean {sum(annotations) / len(annotations):.2f} review records per item "
            f"(min {min(annotations)}, max {max(annotations)})"
            if annotations
            else "none"
        ),
    }
    if preprocessing:
        document["rai:dataPreprocessingProtocol"] = preprocessing
    personal = [f"Audio clips by recorded source (audio_source): {_inline(audio)}."] if audio else []
    document |= croissant_claims(
        facts.said,
        document["description"],
        biases=composition_lines(facts.stats),
        personal=personal + facts.consent + pseudonym_sentence(facts.admission_record),
        maintenance=MAINTENANCE,
    )
    return document


def citation(facts: CardFacts) -> str:
    key = "".join(ch for ch in facts.name if ch.isalnum()) or "dataset"
    return (
        f"@misc{{{key}_{facts.version.replace('.', '_')}, title = {{{facts.name} (version {facts.version})}}, "
        f"year = {{{facts.release_date[:4]}}}, note = {{Released {facts.release_date}}}}}"
    )


def _media_types(media: list[dict[str, Any]]) -> dict[str, list[str]]:
    kinds: dict[str, set[str]] = {}
    for m in media:
        kinds.setdefault(m["kind"], set()).add(m["mime"])
    return {k: sorted(v) for k, v in kinds.items()}


def _media_exts(media: list[dict[str, Any]], kind: str) -> list[str]:
    return sorted({m["file"][m["file"].rindex(".") :] for m in media if m["kind"] == kind})
