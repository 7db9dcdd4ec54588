"""The human- and machine-readable descriptions of a release: README.md (a Hugging Face dataset card with a
datasheet under TRIAD App. H's headings) and croissant.json (Croissant 1.1 with Responsible-AI fields).

Both are filled from the released records and the build's figures only, so they never disagree with the data.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .ai_images import card_lines as ai_image_lines
from .leaf_agreement import card_lines as leaf_card_lines
from .leaf_agreement import croissant_files as leaf_croissant_files
from .writer import FileEntry

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
    ("image", "string", "Path of the image, relative to the release folder."),
    ("audio", "string", "Path of the audio clip, relative to the release folder."),
    ("image_sha256", "string", "SHA-256 of the image file's bytes."),
    ("audio_sha256", "string", "SHA-256 of the audio file's bytes."),
    ("image_source", "string", "Image origin: photo, ai_generated or drawing."),
    ("image_license", "string", "The image's licence (SPDX identifier where one exists)."),
    ("audio_source", "string", "Audio origin: natural, voice_acting, tts_edited or tts."),
    ("audio_license", "string", "The audio clip's licence."),
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
    lines += ["task_categories:", "- multiple-choice", "- visual-question-answering", "- audio-classification"]
    lines += ["tags:", "- omni-modal", "- benchmark", "- audio", "- image", f"- version-{facts.version}"]
    lines += ["configs:", "- config_name: default", "  data_files:", "  - split: test", "    path: data/items.parquet"]
    lines += ["dataset_info:", "  features:"]
    for name, dtype, _ in ITEM_FEATURES:
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


def _table(counts: dict[str, int], header: str) -> str:
    rows = [f"| {header} | count |", "| --- | ---: |"] + [f"| {k} | {v} |" for k, v in counts.items()]
    return "\n".join(rows)


def _inline(counts: dict[str, Any]) -> str:
    return ", ".join(f"{k}: {v}" for k, v in counts.items()) or "none"


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
    out = [front_matter(facts), f"# {facts.name} {facts.version}", ""]
    out.append(
        f"Released {facts.release_date}. {len(facts.items)} multiple-choice items in {s['groups']} scene group(s); "
        "each item pairs a text context, an image and an audio clip whose answer is unique only from the full "
        'triplet. Load it with `datasets.load_dataset("parquet", data_files="data/items.parquet")`; media paths '
        "in the `image` and `audio` columns are relative to this folder. Check it with `curate release verify`."
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
    out.append(
        "To evaluate whether omni-modal models integrate text, image and audio under ambiguity: in every item the "
        "full triplet picks out a unique answer while no single modality is decorative (TRIAD Definition 1)."
    )
    out += ["", "### H.2 Composition", ""]
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
        "### H.3 Collection process",
        "",
        "Authors wrote each item; reviewers admitted it through five stages (grammar, audio sign-off, "
        "modality-subset checklist, blind answer check, group integration); nobody reviewed their own item. "
        f"Reviews behind the released items: {_inline(dict(sorted(reviews.items())))}. "
        f"Image sources: {_inline(dict(sorted(image_sources.items())))}. "
        f"Audio sources: {_inline(dict(sorted(audio_sources.items())))}.",
        "",
        f"Items of the workspace not in this release, by state: {_inline(not_released)}.",
        "",
        "Agreement between reviewers on the released items (stats.json):",
        "",
        *[f"- {line}" for line in agreement_lines(facts.stats.get("agreement"))],
        "",
        *leaf_card_lines(facts.leaf_agreement),
        "### H.4 Pre-processing",
        "",
        f"{derived} of {len(facts.media)} media file(s) are normalized derivatives of the authored originals "
        "(audio 48 kHz mono 16-bit PCM at -23 LUFS; images JPEG quality 90, longest edge at most 1024 px, metadata "
        "stripped); the others are shipped as authored. Text is UTF-8. attributions.json records each file's "
        "original and transform. manifest.json gives per-item fingerprints (normalized-text SHA-256, media "
        "SHA-256, word 8-gram MinHash) for independent overlap checks; exact hashes and lexical sketches miss "
        "paraphrases and transformed media, so a missing match is not evidence of non-exposure.",
        "",
        f"Duplicate audit: {facts.duplicates_note}",
        "",
        "### H.5 Uses",
        "",
        "Recommended: held-out diagnostic evaluation of omni-modal models; report Acc_q and Acc_g against the "
        "random baseline above. Not recommended: training or fine-tuning (too small, and built to be diagnostic "
        "rather than representative).",
        "",
        "### H.6 Distribution",
        "",
        f"Text and annotations: {facts.license}. Media keep their own licences (per file in attributions.json, per "
        f"item in the `image_license` and `audio_license` columns): {_inline(dict(sorted(licences.items())))}.",
        "",
        "### H.7 Maintenance",
        "",
        f"Version {facts.version}, released {facts.release_date}. Versions are immutable: a changed item makes a "
        "new version, and `curate release diff OLD NEW` lists the errata (items added, removed and changed, with "
        "the changed fields).",
    ]
    if facts.notes.strip():
        out += ["", "Release notes:", "", facts.notes.strip()]
    out += [
        "",
        "### H.8 Ethical and legal",
        "",
        f"{image_sources.get('ai_generated', 0)} item(s) use AI-generated images and "
        f"{audio_sources.get('tts', 0) + audio_sources.get('tts_edited', 0)} item(s) use synthesized or edited "
        "speech; both are marked per item. Every medium carries the licence and attribution recorded at intake. "
        "The benchmark is not designed for, and must not be used for, identifying or impersonating people.",
        *ai_image_lines(facts.items, facts.admission),
        "",
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

_CR_TYPES = {"string": "sc:Text", "int32": "sc:Integer"}


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
    fields = []
    for name, dtype, description in ITEM_FEATURES:
        entry: dict[str, Any] = {
            "@type": "cr:Field",
            "@id": f"items/{name}",
            "name": name,
            "description": description,
            "dataType": _CR_TYPES[dtype.split(":")[-1]],
            "source": {"fileObject": {"@id": "data/items.parquet"}, "extract": {"column": name}},
        }
        if dtype.startswith("list:"):
            entry["isArray"] = True
            entry["arrayShape"] = "-1"
        fields.append(entry)
    annotations = [a["annotations"] for a in facts.admission]
    analysis = [
        "Admission requires every stage's quorum and rule; the combined modality-subset checklist must satisfy "
        "TRIAD Definition 1. Per-item review summaries are in admission.jsonl; agreement figures in stats.json; "
        "per-leaf agreement and the disagreement matrices on the audit subset in agreement/ (TRIAD App. C.3).",
        *agreement_lines(facts.stats.get("agreement")),
    ]
    document: dict[str, Any] = {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.1",
        "name": facts.name,
        "description": (
            f"{facts.name} {facts.version}: {len(facts.items)} omni-modal (text, image, audio) multiple-choice items "
            f"in {facts.stats['groups']} scene groups."
            + (" Partial release: items failing a gate at build time were left out." if facts.partial else "")
        ),
        "version": facts.version,
        "citeAs": citation(facts),
        "datePublished": facts.release_date,
        "license": facts.license,
        "url": homepage or f"https://example.invalid/{facts.name}/{facts.version}",
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
            }
        ],
        "rai:dataCollection": "Items authored by people and admitted through a five-stage author-reviewer flow.",
        "rai:dataCollectionType": ["Manual Human Curation"],
        "rai:dataAnnotationProtocol": [
            "Five review stages per item (TRIAD App. C.2): grammar, audio sign-off (naturalness, clarity, "
            "artefacts), modality-subset checklist, blind answer check, group integration; no self-review."
        ],
        "rai:dataAnnotationAnalysis": analysis,
        "rai:annotationsPerItem": (
            f"mean {sum(annotations) / len(annotations):.2f} review records per item "
            f"(min {min(annotations)}, max {max(annotations)})"
            if annotations
            else "none"
        ),
        "rai:dataPreprocessingProtocol": [
            "Audio normalized to 48 kHz mono 16-bit PCM at -23 LUFS; images re-encoded to JPEG quality 90, longest "
            "edge at most 1024 px, metadata stripped (where a normalized derivative exists; see attributions.json)."
        ],
        "rai:dataUseCases": ["Held-out diagnostic evaluation of omni-modal models. Not for training."],
        "rai:dataLimitations": [
            "Small and diagnostic rather than representative; fingerprints and exact hashes miss paraphrases "
            "and transformed media."
        ],
        "rai:dataBiases": [
            f"Languages: {_inline(facts.stats['by_language'])}; taxonomy leaves are unevenly represented (stats.json)."
        ],
        "rai:personalSensitiveInformation": [
            "Voices of consenting voice actors and recorded speakers; not for identifying or impersonating people."
        ],
        "rai:dataReleaseMaintenancePlan": [
            "Immutable semantic versions; errata as a new version with `curate release diff`."
        ],
    }
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
