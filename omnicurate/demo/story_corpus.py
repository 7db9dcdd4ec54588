"""Generated storybooks for the story demo, the tests and the screening benchmark.

Books of illustrated pages (Pillow drawings, narration from a small grammar), their page-to-page
transitions as candidate JSONL, and recorded model outputs (scores, book metadata, next-page conditions,
speech) for the ``replay:`` backend. Planted cases exercise every rule and audit: a Swahili book, an overlong
next page, a page with two speech lines, a blurred and a tiny illustration, a book republished under another
collection, a condition copied from another book's page, two identical conditions, and a narration
instruction quoting its own reference.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NAMES = [
    "Amara",
    "Bongani",
    "Chipo",
    "Dara",
    "Eshe",
    "Femi",
    "Gari",
    "Hawa",
    "Idris",
    "Jabari",
    "Kito",
    "Lulu",
    "Moyo",
    "Nia",
    "Omari",
    "Pendo",
    "Rafi",
    "Sefu",
    "Tumi",
    "Zuri",
]
ANIMALS = ["fox", "owl", "goat", "hare", "tortoise", "lion", "zebra", "crow", "frog", "elephant", "monkey", "heron"]
PLACES = [
    "river",
    "market",
    "forest",
    "hill",
    "garden",
    "school",
    "village",
    "kitchen",
    "meadow",
    "well",
    "bridge",
    "shore",
]
THINGS = ["basket", "drum", "kite", "lantern", "mango", "ball", "blanket", "flute", "bucket", "map", "shell", "seed"]
VERBS = [
    "carried",
    "found",
    "dropped",
    "painted",
    "shared",
    "hid",
    "mended",
    "lost",
    "counted",
    "washed",
    "followed",
    "planted",
]
FEELINGS = ["happy", "worried", "brave", "sleepy", "curious", "proud", "shy", "excited"]
WEATHER = [
    "The sun was hot",
    "Rain tapped on the roof",
    "A cool wind blew",
    "Clouds rolled over the hills",
    "The night was quiet",
]
SWAHILI = [
    "Mama alikwenda sokoni kununua ndizi na maziwa kwa ajili ya watoto wake.",
    "Watoto walicheza mpira karibu na mto hadi jua likazama.",
    "Bibi alisimulia hadithi ya sungura mjanja na fisi mlafi.",
]
STYLES = ["Painterly storybook", "Whimsical", "Flat colour", "Watercolour"]


def page_text(rng: random.Random, hero: str, friend: str, animal: str) -> str:
    place, thing, verb, feeling = rng.choice(PLACES), rng.choice(THINGS), rng.choice(VERBS), rng.choice(FEELINGS)
    sentences = [
        f"{hero} and the {animal} walked to the {place}.",
        f"{rng.choice(WEATHER)}, and {friend} {verb} a {rng.choice(['red', 'blue', 'small', 'old', 'new'])} {thing}.",
        f"{hero} felt {feeling} and looked at the {rng.choice(THINGS)} by the {rng.choice(PLACES)}.",
    ]
    if rng.random() < 0.4:
        sentences.append(f'"Look at the {thing}!" said {friend}.')
    return " ".join(sentences[: rng.randint(2, len(sentences))])


def draw_page(path: Path, seed: int, size: tuple[int, int] = (320, 256), blur: bool = False) -> None:
    """A flat-colour illustration with a few shapes (sharp edges), saved as JPEG."""
    from PIL import Image, ImageDraw, ImageFilter

    rng = random.Random(seed)
    img = Image.new("RGB", size, tuple(rng.randrange(120, 256) for _ in range(3)))
    draw = ImageDraw.Draw(img)
    w, h = size
    for _ in range(6):
        x0, y0 = rng.randrange(0, w - 10), rng.randrange(0, h - 10)
        x1, y1 = rng.randrange(x0 + 5, w), rng.randrange(y0 + 5, h)
        colour = tuple(rng.randrange(0, 200) for _ in range(3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)((x0, y0, x1, y1), fill=colour, outline=(0, 0, 0))
    if blur:
        img = img.filter(ImageFilter.GaussianBlur(12))
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, "JPEG", quality=85)


@dataclass
class Book:
    id: str
    collection: str
    license: str
    title: str
    hero: str
    friend: str
    animal: str
    style: str
    pages: list[str]
    images: list[str]


@dataclass
class StoryCorpus:
    """What was generated: the candidate file, the replay file, and the planted cases by role."""

    candidates: Path
    replay: Path
    books: list[Book]
    planted: dict[str, str] = field(default_factory=dict)

    @property
    def transitions(self) -> int:
        return sum(len(b.pages) - 1 for b in self.books)


def _scores(rng: random.Random, mean: float) -> dict[str, Any]:
    names = ("current_page_quality", "next_page_quality", "image_style_coherence", "transition_coherence")
    out = {}
    for name in names:
        score = max(1, min(10, round(mean + rng.uniform(-1.5, 1.5))))
        out[name] = {"score": score, "rationale": f"{name.replace('_', ' ')} judged {score}/10"}
    return out


def _conditions(rng: random.Random, book: Book, page: int) -> dict[str, Any]:
    nxt = book.pages[page + 1]
    first = nxt.split(".")[0].split()
    return {
        "characters": [
            {
                "name": book.hero,
                "emotion": rng.choice(FEELINGS),
                "visibility": "visible",
                "action": f"{rng.choice(['turns toward', 'points at', 'runs past', 'kneels by'])} the {rng.choice(THINGS)}",
                "speech_intent": rng.choice(["asks for help", "warns a friend", "celebrates", ""]),
            },
            {
                "name": book.friend,
                "emotion": rng.choice(FEELINGS),
                "visibility": "offscreen",
                "action": "",
                "speech_intent": "",
            },
        ],
        "scene": f"{rng.choice(['morning', 'evening', 'midday'])} near the {rng.choice(PLACES)}, page {page + 2} of {book.id}",
        "text_goal": f"continue with {' '.join(first[:3]).lower()} and a new turn",
        "ambient_sound": rng.choice(["birdsong", "flowing water", "market chatter", "wind in grass"]),
    }


def _speech(rng: random.Random, book: Book) -> dict[str, Any]:
    return {
        "speaker": book.friend,
        "utterance": f"Come quickly, {book.hero}, the {rng.choice(THINGS)} is here!",
        "emotion": rng.choice(["happy", "neutral", "sad", "angry"]),
        "speed": rng.choice(["normal", "fast", "slow"]),
        "pitch": rng.choice(["normal", "high", "low"]),
        "gender": rng.choice(["female", "male"]),
    }


def build_corpus(
    root: Path,
    books: int = 8,
    pages: tuple[int, int] = (5, 7),
    seed: int = 7,
    plant: bool = True,
    image_pool: int = 0,
) -> StoryCorpus:
    """Write ``candidates.jsonl``, ``replay.jsonl`` and the page images under ``root``.

    ``image_pool`` > 0 draws that many distinct illustrations and hard-links every page to one of them
    (the benchmark's 100k pages then cost seconds to lay out; each page is still its own file to probe).
    """
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    pool: list[Path] = []
    if image_pool:
        for i in range(image_pool):
            pool.append(root / "pool" / f"{i:05d}.jpg")
            draw_page(pool[-1], seed * 100_003 + i)
    made: list[Book] = []
    for b in range(books):
        hero, friend = rng.sample(NAMES, 2)
        animal = rng.choice(ANIMALS)
        collection = ["african_storybook", "global_digital_library", "storybooks_canada", "storyweaver"][b % 4]
        book = Book(
            f"bk{b:05d}",
            collection,
            "CC-BY-4.0",
            f"{hero} and the {animal}",
            hero,
            friend,
            animal,
            rng.choice(STYLES),
            [],
            [],
        )
        for p in range(rng.randint(*pages)):
            book.pages.append(page_text(rng, hero, friend, animal))
            rel = f"media/{book.id}/p{p:02d}.jpg"
            target = root / rel
            if pool:
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.exists():
                    os.link(pool[rng.randrange(len(pool))], target)
            else:
                draw_page(target, seed * 7919 + b * 101 + p)
            book.images.append(rel)
        made.append(book)
    corpus = StoryCorpus(root / "candidates.jsonl", root / "replay.jsonl", made)
    best: dict[str, int] = {}
    if plant and books >= 8:
        best = _plant(root, made, corpus.planted, rng)
    _write(corpus, rng, best)
    return corpus


def _plant(root: Path, books: list[Book], planted: dict[str, str], rng: random.Random) -> dict[str, int]:
    """Alter a few books so each rule and audit has a case; returns the page each planted book should win on."""
    swahili = books[0]
    swahili.pages = [rng.choice(SWAHILI) + " " + rng.choice(SWAHILI) for _ in swahili.pages]
    planted["language"] = f"{swahili.id}-p00"
    long_book = books[1]
    long_book.pages[1] = " ".join([long_book.pages[1]] * 8)
    planted["length"] = f"{long_book.id}-p00"
    talk = books[2]
    talk.pages[2] = f'"Wait for me!" cried {talk.friend}. "Hurry up!" shouted {talk.hero}. They ran on.'
    planted["speech"] = f"{talk.id}-p01"
    blurry = books[3]
    draw_page(root / blurry.images[1], 99, blur=True)
    planted["blurry"] = f"{blurry.id}-p00"
    tiny = books[3]
    draw_page(root / tiny.images[3], 98, size=(120, 90))
    planted["tiny"] = f"{tiny.id}-p02"
    # a republished copy of book 4 under another collection: same words, same pictures
    original = books[4]
    copy = Book(
        f"{original.id}r",
        "storyweaver",
        "CC-BY-4.0",
        original.title,
        original.hero,
        original.friend,
        original.animal,
        original.style,
        list(original.pages),
        list(original.images),
    )
    books.append(copy)
    planted["republished"] = f"{original.id}-p00|{copy.id}-p00"
    planted["foreign_span"] = f"{books[5].id}-p00"
    planted["duplicate_condition"] = f"{books[6].id}-p00|{books[7].id}-p00"
    planted["reference_span"] = f"{books[5].id}-p00"
    return {original.id: 0, copy.id: 0, books[5].id: 0, books[6].id: 0, books[7].id: 0}


def _write(corpus: StoryCorpus, rng: random.Random, best: dict[str, int]) -> None:
    with corpus.candidates.open("w", encoding="utf-8") as cand, corpus.replay.open("w", encoding="utf-8") as replay:
        for book in corpus.books:
            replay.write(
                json.dumps(
                    {
                        "subject": f"book:{book.id}",
                        "task": "book_meta",
                        "output": {
                            "genre": "Slice of Life",
                            "topic": f"{book.hero} and a {book.animal} share a day by the {PLACES[len(book.id) % len(PLACES)]}",
                            "style": book.style,
                            "narrative_tense": "Past",
                            "narrative_perspective": "Third-person limited",
                            "characters": [
                                {"name": book.hero, "species": "human", "role": "protagonist"},
                                {"name": book.friend, "species": "human", "role": "friend"},
                            ],
                        },
                    }
                )
                + "\n"
            )
            for p in range(len(book.pages) - 1):
                cid = f"{book.id}-p{p:02d}"
                line = {
                    "id": cid,
                    "book": book.id,
                    "page": p,
                    "title": book.title,
                    "source": {"collection": book.collection, "license": book.license},
                    "current": {"image": book.images[p], "text": book.pages[p]},
                    "next": {"image": book.images[p + 1], "text": book.pages[p + 1]},
                }
                cand.write(json.dumps(line, ensure_ascii=False) + "\n")
                mean = 8.5 if best.get(book.id) == p else rng.uniform(4.0, 8.0)
                replay.write(json.dumps({"subject": cid, "task": "score", "output": _scores(rng, mean)}) + "\n")
                conditions = _conditions(rng, book, p)
                if corpus.planted.get("foreign_span") == cid:
                    conditions["scene"] = " ".join(corpus.books[6].pages[1].split()[:10])
                if cid in corpus.planted.get("duplicate_condition", "").split("|"):
                    conditions = {
                        "characters": [],
                        "scene": "a quiet evening by the river",
                        "text_goal": "end the day",
                        "ambient_sound": "crickets",
                    }
                if corpus.planted.get("reference_span") == cid:
                    conditions["text_goal"] = " ".join(book.pages[p + 1].split()[:9])
                replay.write(json.dumps({"subject": cid, "task": "conditions", "output": conditions}) + "\n")
                replay.write(json.dumps({"subject": cid, "task": "speech", "output": _speech(rng, book)}) + "\n")
