"""Rule filters of the first screening phase (§4.1): length bounds, speech lines, language, image quality.

Each rule looks at one candidate and answers keep or drop with a stable reason code and what it measured,
so the funnel can say how many candidates each rule removed and why.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

_QUOTED = re.compile(r"[\"“«„]([^\"”»“]{2,})[\"”»]")


class RuleSettings(BaseModel):
    """Thresholds of the rule filters (``[screen.rules]`` in ``curate.toml``)."""

    model_config = ConfigDict(extra="forbid")
    min_words: int = Field(3, ge=0)
    """Fewer words on either page is no story transition (a title page, a blank page)."""
    max_current_words: int = Field(150, ge=1)
    max_next_words: int = Field(80, ge=1)
    """The next page is the output to generate: excessively long outputs are filtered (§4.1)."""
    max_speech_lines: int = Field(1, ge=0)
    """The speech target is one utterance: a next page with several dialogue lines is dropped."""
    languages: list[str] = ["en"]
    """ISO 639-1 codes accepted by the language identification (py3langid)."""
    min_image_edge: int = Field(256, ge=1)
    max_aspect: float = Field(3.0, ge=1)
    min_sharpness: float = Field(20.0, ge=0)
    """Variance of the Laplacian of the grey image, longest edge scaled to 128 px: below is blurry."""


@dataclass(frozen=True)
class RuleOutcome:
    keep: bool
    reason: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def word_count(text: str) -> int:
    """Whitespace-delimited words, as App. C counts them."""
    return len(text.split())


def speech_line_count(next_text: str, speech_lines: list[str] | None) -> int:
    """Dialogue lines of the next page: the source's own marking when given, else quoted passages."""
    if speech_lines is not None:
        return len([line for line in speech_lines if line.strip()])
    return len(_QUOTED.findall(next_text))


def length_rule(current_text: str, next_text: str, settings: RuleSettings) -> RuleOutcome:
    current, nxt = word_count(current_text), word_count(next_text)
    data = {"current_words": current, "next_words": nxt}
    if min(current, nxt) < settings.min_words:
        return RuleOutcome(False, "length:too_short", data)
    if nxt > settings.max_next_words:
        return RuleOutcome(False, "length:next_too_long", data)
    if current > settings.max_current_words:
        return RuleOutcome(False, "length:current_too_long", data)
    return RuleOutcome(True, "", data)


def speech_rule(next_text: str, speech_lines: list[str] | None, settings: RuleSettings) -> RuleOutcome:
    count = speech_line_count(next_text, speech_lines)
    if count > settings.max_speech_lines:
        return RuleOutcome(False, "speech:multiple_lines", {"speech_lines": count})
    return RuleOutcome(True, "", {"speech_lines": count})


@lru_cache(maxsize=1)
def _identifier():  # type: ignore[no-untyped-def]
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=False)


@lru_cache(maxsize=200_000)
def identify_language(text: str) -> str:
    """py3langid's best language code for the text (its model ships inside the package: no download)."""
    return str(_identifier().classify(text)[0])


def language_rule(current_text: str, next_text: str, settings: RuleSettings) -> RuleOutcome:
    found = {"current": identify_language(current_text), "next": identify_language(next_text)}
    for side in ("next", "current"):
        if found[side] not in settings.languages:
            return RuleOutcome(False, f"language:{found[side]}", {"languages": found})
    return RuleOutcome(True, "", {"languages": found})


@dataclass(frozen=True)
class ImageProbe:
    """What the image rule measures of one file; also its byte hash for the audits' fingerprints."""

    sha256: str
    width: int
    height: int
    sharpness: float
    problem: str = ""


SHARPNESS_EDGE = 128


def laplacian_variance(grey: Any) -> float:
    """Variance of the 4-neighbour Laplacian: low for blurry or flat pictures (numpy array, 2-D)."""
    import numpy as np

    a = np.asarray(grey, dtype=np.float32)
    if a.shape[0] < 3 or a.shape[1] < 3:
        return 0.0
    lap = a[1:-1, :-2] + a[1:-1, 2:] + a[:-2, 1:-1] + a[2:, 1:-1] - 4 * a[1:-1, 1:-1]
    return float(lap.var())


@lru_cache(maxsize=200_000)
def probe_image(path: str) -> ImageProbe:
    """Decode (JPEG in draft mode: only the scale needed), measure size and sharpness, hash the bytes."""
    from PIL import UnidentifiedImageError

    from curation.errors import MediaError
    from curation.media import PIL_HARD_LIMIT, open_image

    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return ImageProbe("", 0, 0, 0.0, f"unreadable ({exc.strerror})")
    digest = hashlib.sha256(data).hexdigest()
    import io

    try:
        with open_image(io.BytesIO(data), path, PIL_HARD_LIMIT) as img:  # the import held it to the workspace's limit
            width, height = img.size
            img.draft("L", (SHARPNESS_EDGE, SHARPNESS_EDGE))
            grey = img.convert("L")
            grey.thumbnail((SHARPNESS_EDGE, SHARPNESS_EDGE))
            sharpness = laplacian_variance(grey)
    except MediaError as exc:
        if "decompression bomb" in str(exc):  # the file changed since its import
            return ImageProbe(digest, 0, 0, 0.0, "too many pixels to decode safely (a possible decompression bomb)")
        return ImageProbe(digest, 0, 0, 0.0, f"undecodable ({exc.__cause__.__class__.__name__})")
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        return ImageProbe(digest, 0, 0, 0.0, f"undecodable ({exc.__class__.__name__})")
    return ImageProbe(digest, width, height, round(sharpness, 2))


def probe_images(paths: Iterable[str], workers: int | None = None) -> None:
    """Probe many files at once on a thread pool (decoding and hashing release the GIL); results land in
    :func:`probe_image`'s cache, so the rule then reads them without waiting."""
    todo = sorted(set(paths))
    workers = workers or min(8, os.cpu_count() or 1)
    if workers > 1 and len(todo) > 16:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(probe_image, todo))


def image_rule(current_image: str, next_image: str, settings: RuleSettings) -> RuleOutcome:
    probes = {"current": probe_image(current_image), "next": probe_image(next_image)}
    data = {
        side: {"sha256": p.sha256, "width": p.width, "height": p.height, "sharpness": p.sharpness}
        for side, p in probes.items()
    }
    for side, p in probes.items():
        if p.problem:
            return RuleOutcome(False, "image:unreadable", {**data, "problem": f"{side}: {p.problem}"})
    for p in probes.values():
        if min(p.width, p.height) < settings.min_image_edge:
            return RuleOutcome(False, "image:too_small", data)
        if max(p.width, p.height) / min(p.width, p.height) > settings.max_aspect:
            return RuleOutcome(False, "image:aspect", data)
        if p.sharpness < settings.min_sharpness:
            return RuleOutcome(False, "image:blurry", data)
    return RuleOutcome(True, "", data)
