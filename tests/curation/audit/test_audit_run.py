"""The whole audit: group-aware clusters with evidence, leaks, gate reasons and resolutions."""

from __future__ import annotations

import json

import pytest
import soxr

from curation.audit import AuditSubject, Resolution, audio_signature, image_signature, run_audit
from curation.config import MediaSettings
from tests.synthetic_media import encode_audio, encode_image, phrase, scene

SETTINGS = MediaSettings()
OPTIONS = {"A": "grateful", "B": "annoyed", "C": "ambivalent", "D": "surprised"}
CONTEXTS = [
    "Sure, that was a really helpful suggestion, thank you so much for it.",
    "We missed the last train home and had to walk through the rain.",
    "The committee postponed the vote until the budget numbers were final.",
    "My grandmother still bakes bread every Sunday morning before church.",
    "Nobody noticed that the projector had been unplugged during the talk.",
]


def subject(item: str, group: str, context: str, image: str, audio: str, **kw: object) -> AuditSubject:
    return AuditSubject(item, group, context, kw.pop("options", OPTIONS), "A", image, audio)  # type: ignore[arg-type]


def media() -> tuple[dict, dict]:
    pictures = {f"img{i}": encode_image(scene(i), "JPEG", quality=90) for i in range(5)}
    pictures["img0_small"] = encode_image(scene(0).resize((400, 300)), "JPEG", quality=60)
    clips = {f"aud{i}": encode_audio(phrase(i, 1.5, 22050), 22050) for i in range(6)}
    clips["aud1_loud48k"] = encode_audio(soxr.resample(phrase(1, 1.5, 22050) * 2.5, 22050, 48000), 48000)
    images = {k: image_signature(v, k, SETTINGS) for k, v in pictures.items()}
    audio = {k: audio_signature(v, k, SETTINGS) for k, v in clips.items()}
    return images, audio


IMAGES, AUDIO = media()


def test_sisters_sharing_content_are_not_duplicates() -> None:
    sisters = [
        subject("k-a", "kitchen", CONTEXTS[0], "img0", "aud0"),
        subject("k-b", "kitchen", CONTEXTS[0], "img0", "aud1"),
        subject("k-c", "kitchen", CONTEXTS[0].replace("helpful", "useless"), "img0", "aud2"),
    ]
    report = run_audit(sisters, IMAGES, AUDIO)
    assert report.clusters == []


def test_planted_duplicates_across_groups_form_one_cluster_with_evidence() -> None:
    subjects = [
        subject("a1", "ga", CONTEXTS[0], "img0", "aud0"),
        subject("b1", "gb", "SURE -- that was a really USEFUL suggestion; thank you so much for it!", "img1", "aud2"),
        subject("c1", "gc", CONTEXTS[2], "img0_small", "aud3"),
        subject("d1", "gd", CONTEXTS[3], "img3", "aud1"),
        subject("e1", "ge", CONTEXTS[4], "img4", "aud1_loud48k"),
        subject("f1", "gf", CONTEXTS[1], "img2", "aud4"),
        subject("f2", "gg", CONTEXTS[1], "img2", "aud5"),
    ]
    report = run_audit(subjects, IMAGES, AUDIO)
    members = sorted(c.items for c in report.clusters)
    assert members == [["a1", "b1", "c1"], ["d1", "e1"], ["f1", "f2"]]
    evidence = {(e.a, e.b): (e.modality, e.method) for c in report.clusters for e in c.edges}
    assert evidence[("a1", "b1")] == ("text", "minhash_jaccard")
    assert evidence[("a1", "c1")][0] == "image" and evidence[("a1", "c1")][1] in ("phash", "dhash")
    assert evidence[("d1", "e1")] == ("audio", "spectral_hash")
    methods = {(e.modality, e.method) for e in report.clusters[2].edges}
    assert methods == {("text", "sha256"), ("image", "sha256_pixels")}
    assert all(e.distance >= 0 for c in report.clusters for e in c.edges)
    assert len({c.id for c in report.clusters}) == 3


def test_cluster_ids_are_stable_and_json_has_the_design_shape() -> None:
    subjects = [
        subject("x1", "g1", CONTEXTS[1], "img1", "aud0"),
        subject("x2", "g2", CONTEXTS[1], "img2", "aud2"),
    ]
    first = run_audit(subjects, IMAGES, AUDIO)
    second = run_audit(list(reversed(subjects)), IMAGES, AUDIO)
    assert first.to_dict() == second.to_dict()
    document = json.loads(json.dumps(first.to_dict()))
    assert set(document) == {"clusters", "leaks", "identical_sisters"} and document["identical_sisters"] == []
    cluster = document["clusters"][0]
    assert set(cluster) == {"id", "items", "edges"}
    assert set(cluster["edges"][0]) == {"a", "b", "modality", "method", "distance"}
    assert cluster["id"].startswith("dup-")


def test_gate_reasons_follow_resolutions() -> None:
    subjects = [
        subject("x1", "g1", CONTEXTS[1], "img1", "aud0"),
        subject("x2", "g2", CONTEXTS[1], "img2", "aud2"),
        subject("y1", "g3", CONTEXTS[2], "img3", "aud3"),
    ]
    report = run_audit(subjects, IMAGES, AUDIO)
    cluster = report.clusters[0].id
    code = f"duplicate:{cluster}"
    assert report.gate_reasons() == {"x1": [code], "x2": [code]}
    assert report.gate_reasons([Resolution(cluster, keep="x2", reason="better audio")]) == {"x1": [code]}
    assert report.gate_reasons([Resolution(cluster, distinct=True, reason="different scenes")]) == {}
    assert report.gate_reasons([Resolution("dup-0000000000", distinct=True)]) == {"x1": [code], "x2": [code]}
    assert report.find(cluster) is report.clusters[0]
    # a decision on a bigger, earlier cluster covers the smaller cluster left after discarding members
    earlier = Resolution("dup-earlier000", keep="x2", reason="x3 discarded", items=("x1", "x2", "x3"))
    assert report.gate_reasons([earlier]) == {"x1": [code]}
    unrelated = Resolution("dup-other00000", distinct=True, reason="r", items=("x1", "y1"))
    assert report.gate_reasons([unrelated]) == {"x1": [code], "x2": [code]}


@pytest.mark.parametrize(
    ("option_in_context", "held"),
    [
        # TRIAD: anaphora items name their options in the context; by default that only warns
        ("warn", {"p1": ["leak:shared_span"], "p2": ["leak:shared_span"]}),
        ("block", {"p1": ["leak:shared_span"], "p2": ["leak:shared_span"], "q1": ["leak:option_in_context"]}),
    ],
)
def test_leaks_are_found_and_only_warnings_do_not_block(option_in_context, held) -> None:  # type: ignore[no-untyped-def]
    shared = "the train left the station exactly at midnight without any of us"
    subjects = [
        subject("p1", "g1", f"Honestly, {shared}, he said.", "img1", "aud0"),
        subject("p2", "g2", f"When we arrived {shared} and we stayed.", "img2", "aud2"),
        subject("q1", "g3", "She told me she was grateful for the help.", "img3", "aud3"),
        subject(
            "r1",
            "g4",
            CONTEXTS[4],
            "img4",
            "aud4",
            options={"A": "the red cup on the left", "B": "in a whispering voice", "C": "nothing", "D": "x"},
        ),
    ]
    report = run_audit(subjects, IMAGES, AUDIO, option_in_context)
    kinds = {(leak.kind, tuple(leak.items)) for leak in report.leaks}
    assert ("shared_span", ("p1", "p2")) in kinds
    assert ("option_in_context", ("q1",)) in kinds
    modality = [leak for leak in report.leaks if leak.kind == "option_modality"]
    assert {(leak.evidence["option"], leak.evidence["modality"]) for leak in modality} == {
        ("A", "image"),
        ("B", "audio"),
    }
    assert report.clusters == []  # a shared 8-word span is not a near-duplicate context
    assert report.gate_reasons() == held
    span = next(leak for leak in report.leaks if leak.kind == "shared_span")
    assert len(span.evidence["span"].split()) == 8  # type: ignore[union-attr]
    resolved = report.gate_reasons([Resolution(span.id, distinct=True, reason="common idiom")])
    assert resolved.keys() == held.keys() - {"p1", "p2"}


def test_missing_media_signatures_are_skipped_not_invented() -> None:
    subjects = [subject("m1", "g1", CONTEXTS[0], "nope", "nope"), subject("m2", "g2", CONTEXTS[3], "nope", "nope")]
    assert run_audit(subjects, IMAGES, AUDIO).clusters == []
