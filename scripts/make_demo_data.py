"""Regenerate the demo's items and review records (omnicurate/demo/data/*.jsonl).

The reviews are chosen so that after `curate demo` two groups are admitted and others are returned for
different reasons (reducible, underdetermined, failed audio sign-off, group rules, TTS-only audio).
Run: python scripts/make_demo_data.py
"""

from __future__ import annotations

import json
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "omnicurate" / "demo" / "data"
LIC = {
    "image": {"source": "drawing", "license": "CC0-1.0", "attribution": "omnicurate demo (Pillow)"},
    "audio": {
        "source": "tts_edited",
        "license": "CC0-1.0",
        "attribution": "omnicurate demo (espeak-ng with hand-set SSML prosody)",
    },
}


def item(
    id_,
    group,
    perturbed,
    author,
    context,
    image,
    audio,
    question,
    options,
    answer,
    taxonomy,
    ambiguous,
    audio_source="tts_edited",
):
    prov = json.loads(json.dumps(LIC))
    prov["audio"]["source"] = audio_source
    if audio_source == "tts":
        prov["audio"]["attribution"] = "omnicurate demo (espeak-ng, unedited)"
    return {
        "id": id_,
        "group": group,
        "perturbed": perturbed,
        "language": "en",
        "author": author,
        "context": context,
        "image": f"media/{image}",
        "audio": f"media/{audio}",
        "question": question,
        "options": dict(zip("ABCDEFGH", options, strict=False)),
        "answer": answer,
        "taxonomy": dict(zip(("text", "image", "audio"), taxonomy, strict=True)),
        "ambiguous": ambiguous,
        "provenance": prov,
    }


KITCHEN = ["grateful", "sarcastic", "ambivalent", "surprised"]
STRESS = ["someone else stole it", "she only borrowed it", "she stole something else", "nobody took anything"]
DOOR = ["it is closing", "it is opening", "it is locked", "it is stuck"]
TRAFFIC = ["wait", "drive on", "turn back"]
BANK = ["the river bank", "the bank building", "a row of switches"]

ITEMS = [
    item(
        "kitchen-01-a",
        "kitchen-01",
        "audio",
        "ann1",
        "Sure, that was a really helpful suggestion.",
        "kitchen_neutral.jpg",
        "kitchen_sincere.wav",
        "How does the speaker feel about the suggestion?",
        KITCHEN,
        "A",
        ("pragmatic", "semiotic", "prosodic"),
        ["text", "audio"],
    ),
    item(
        "kitchen-01-b",
        "kitchen-01",
        "audio",
        "ann1",
        "Sure, that was a really helpful suggestion.",
        "kitchen_neutral.jpg",
        "kitchen_sarcastic.wav",
        "How does the speaker feel about the suggestion?",
        KITCHEN,
        "B",
        ("pragmatic", "semiotic", "prosodic"),
        ["text", "audio"],
    ),
    *[
        item(
            f"stress-01-{s}",
            "stress-01",
            "audio",
            "ann1",
            "Tom, about the missing cash: I didn't say she stole the money.",
            "kitchen_smile.jpg",
            f"stress_{w}.wav",
            "What is Tom implying?",
            STRESS,
            a,
            ("pragmatic", "grounding", "prosodic"),
            ["audio"],
        )
        for s, w, a in (("a", "she", "A"), ("b", "stole", "B"), ("c", "money", "C"))
    ],
    item(
        "door-01-a",
        "door-01",
        "image",
        "ann2",
        "Can you get that before it slams?",
        "door_closing.jpg",
        "door_wind.wav",
        "What is happening to the door?",
        DOOR,
        "A",
        ("anaphoric", "kinematic", "environmental"),
        ["text", "image"],
    ),
    item(
        "door-01-b",
        "door-01",
        "image",
        "ann2",
        "Can you get that before it slams?",
        "door_opening.jpg",
        "door_wind.wav",
        "What is happening to the door?",
        DOOR,
        "B",
        ("anaphoric", "kinematic", "environmental"),
        ["text", "image"],
    ),
    item(
        "traffic-01-a",
        "traffic-01",
        "image",
        "ann2",
        "Go when it's your turn.",
        "traffic_red.jpg",
        "traffic_wait.wav",
        "What should the driver do now?",
        TRAFFIC,
        "A",
        ("temporal", "semiotic", "symbolic"),
        ["text"],
    ),
    item(
        "traffic-01-b",
        "traffic-01",
        "image",
        "ann2",
        "Go when it's your turn.",
        "traffic_green.jpg",
        "traffic_wait.wav",
        "What should the driver do now?",
        TRAFFIC,
        "B",
        ("temporal", "semiotic", "symbolic"),
        ["text"],
    ),
    item(
        "bank-01-a",
        "bank-01",
        "text",
        "ann1",
        "He couldn't see the bank from where he was fishing.",
        "river_building.jpg",
        "bank_there.wav",
        "Which bank is meant?",
        BANK,
        "A",
        ("lexical", "contextual", "referential"),
        ["text", "image"],
    ),
    item(
        "bank-01-b",
        "bank-01",
        "text",
        "ann1",
        "He couldn't see the bank from the taxi queue.",
        "river_plain.jpg",
        "bank_there.wav",
        "Which bank is meant?",
        BANK,
        "B",
        ("lexical", "contextual", "referential"),
        ["text", "image"],
    ),
    item(
        "bank-01-c",
        "bank-01",
        "text",
        "ann1",
        "He couldn't see the bank behind the control panel.",
        "river_building.jpg",
        "bank_plain_tts.wav",
        "Which bank is meant?",
        BANK,
        "C",
        ("lexical", "contextual", "referential"),
        ["text"],
        audio_source="tts",
    ),
]


def well_posed(answer: str, keys: str) -> dict[str, list[str]]:
    """A checklist in which only the full triplet pins the answer down."""
    others = [k for k in keys if k != answer]
    return {
        "text": sorted([answer, *others]),
        "image": sorted([answer, *others[:2]]),
        "audio": sorted([answer, *others[:2]]),
        "text+image": sorted([answer, others[0]]),
        "text+audio": sorted([answer, others[1]]),
        "image+audio": sorted([answer, others[0]]),
        "text+image+audio": [answer],
    }


GRAMMAR = ("rev1", "rev2")  # TRIAD B: two reviewers, both sign off (§4.2)
LISTENERS = ("rev3", "rev4")  # C: two listeners not involved in recording (B.4)
BLIND = "rev5"  # D: the blind answer checker
GROUP = "rev6"  # E: the group reviewer
CHECKLIST = ("rev1", "rev3", "rev5")  # B, C and D walk through the subset checklist jointly (C.2.4)
EXCLUSIONS = {"ethics": "pass", "identifying": "pass"}  # the default [review] exclusion_rules, attested


def reviews() -> list[dict]:
    """Every item reviewed by TRIAD's letters A-E as distinct people (the author is A)."""
    out: list[dict] = []
    for it in ITEMS:
        i, keys = it["id"], "".join(it["options"])
        for rev in GRAMMAR:
            out.append({"item": i, "stage": "grammar", "reviewer": rev, "verdict": "pass", "note": ""})
        low = i == "stress-01-c"
        for rev, nat in zip(LISTENERS, (2, 3) if low else (4, 5), strict=True):
            out.append(
                {
                    "item": i,
                    "stage": "audio_signoff",
                    "reviewer": rev,
                    "scores": {"naturalness": nat, "clarity": 4, "artefacts": 4},
                }
            )
        for rev in CHECKLIST:
            sets = well_posed(it["answer"], keys)
            if i == "door-01-a":  # the image alone shows the door closing: reducible
                sets.update({"image": ["A"], "text+image": ["A"], "image+audio": ["A"]})
            if i == "traffic-01-b" and rev == CHECKLIST[-1]:  # one reviewer still sees two readings
                sets["text+image+audio"] = ["A", "B"]
            ambiguous = list(it["ambiguous"])
            if it["group"] == "traffic-01" and rev == CHECKLIST[-1]:  # one reviewer also finds the picture ambiguous
                ambiguous = ["text", "image"]
            out.append(
                {
                    "item": i,
                    "stage": "subset_checklist",
                    "reviewer": rev,
                    "consistent": sets,
                    "ambiguous": ambiguous,
                    "exclusions": dict(EXCLUSIONS),
                }
            )
        out.append({"item": i, "stage": "answer_check", "reviewer": BLIND, "answer": it["answer"]})
    for group in ("kitchen-01", "stress-01", "door-01", "traffic-01", "bank-01"):
        out.append({"group": group, "stage": "group_integration", "reviewer": GROUP, "verdict": "pass"})
    return out


def probes(records: list[dict]) -> list[dict]:
    """Recorded option probabilities per item and view (replay format of design.md) for `curate check`.

    They follow the reviewers' combined checklist sets, except that for kitchen-01-b the "model" hears the
    sarcasm in the audio alone: a second opinion that disagrees with the humans (reducible:audio).
    """
    out = []
    for it in ITEMS:
        keys = list(it["options"])
        union: dict[str, set[str]] = {}
        for r in records:
            if r.get("item") == it["id"] and r["stage"] == "subset_checklist":
                for view, opts in r["consistent"].items():
                    union.setdefault(view, set()).update(opts)
        if it["id"] == "kitchen-01-b":
            union["audio"] = {"B"}
        union["none"] = set(keys)
        for view in ("none", "text", "image", "audio", "text+image", "text+audio", "image+audio", "text+image+audio"):
            chosen = union[view]
            rest = [k for k in keys if k not in chosen]
            high = (1.0 if not rest else 0.96) / len(chosen)
            probs = {k: round(high if k in chosen else 0.04 / len(rest), 4) for k in keys}
            out.append({"item": it["id"], "view": view, "probs": probs})
    return out


def main() -> None:
    records = reviews()
    for name, rows in (("items.jsonl", ITEMS), ("reviews.jsonl", records), ("probes.jsonl", probes(records))):
        with (OUT / name).open("w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
