"""Leak checks: what lets a model answer without the evidence the item claims to need.

- ``option_modality``: an option names what only a picture or a recording could show (a colour, a place
  in the frame, a manner of speaking) - TRIAD App. C.4. A heuristic, so a warning, never a block.
- ``shared_span``: two items of different groups share a contiguous 8-token span of context (words, or
  characters for Chinese and other scripts without spaces; Omni-StoryBench App. C string-overlap audit).
- ``option_in_context``: an option's text appears verbatim in the item's own context. A warning by default
  (anaphora items name their options in the context by design); ``[gates] option_in_context = "block"``
  makes it hold the item.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .text import contains_phrase, spans, words
from .tokens import is_no_space_character, join_tokens, normalize_text, token_unit, tokens

SPAN_WORDS = 8
if TYPE_CHECKING:
    from .run import AuditSubject

WARNING_KINDS = frozenset({"option_modality"})
"""Leak kinds reported for a maintainer's eye that do not hold items back."""


def _vocabulary(text: str) -> frozenset[str]:
    return frozenset(text.split())


MODALITY_WORDS: dict[str, dict[str, frozenset[str]]] = {
    "en": {
        "image": _vocabulary(
            # spatial
            "left right above below behind beside foreground background corner top bottom centre center "
            "middle upper lower leftmost rightmost nearest farthest front "
            # colour
            "red orange yellow green blue purple violet pink brown black white grey gray beige turquoise "
            "golden silver crimson scarlet navy maroon teal cyan magenta colour color colored coloured"
        ),
        "audio": _vocabulary(
            "voice voiced tone tones whisper whispers whispered whispering shout shouts shouted shouting "
            "yell yelled yelling pitch pitched accent intonation sigh sighs sighed sighing laugh laughs laughing "
            "laughter giggle mumble mumbled mumbling murmur stutter stammer loud loudly quiet quietly softly "
            "sings singing hum humming sob sobbing crying cries echo hoarse raspy monotone rising falling "
            "stressed emphasis emphasised emphasized pause pauses paused"
        ),
    },
    "zh": {
        "image": _vocabulary(
            # spatial (words of two characters or more: 左, 右, 上, 下 alone, and 左上, 右下, cross word boundaries)
            "左边 右边 左侧 右侧 左手边 右手边 上方 下方 上面 下面 上边 下边 后面 背后 "
            "后方 前面 前方 旁边 身旁 背景 前景 角落 顶部 底部 中间 中央 正中 最左 最右 最近 最远 远处 近处 "
            # colour
            "红色 橙色 黄色 绿色 蓝色 紫色 粉色 粉红 棕色 褐色 黑色 白色 灰色 米色 金色 银色 青色 深蓝 浅蓝 "
            "深色 浅色 颜色 彩色 红衣 白衣 黑衣 紅色 綠色 藍色 顏色"
        ),
        "audio": _vocabulary(
            "声音 嗓音 语气 语调 音调 口音 腔调 低语 耳语 悄悄话 大喊 喊叫 叫喊 呼喊 尖叫 叹气 叹息 笑声 "
            "大笑 咯咯笑 哭声 哭泣 抽泣 哽咽 嘟囔 咕哝 结巴 口吃 大声 小声 轻声 低声 高声 回声 回音 沙哑 "
            "嘶哑 停顿 重音 哼唱 哼歌 唱歌 聲音 語氣 語調"
        ),
    },
}
"""Words that name what only a picture or a recording shows, per language. Lists of languages written in
words are matched as whole tokens; lists of languages written without spaces as substrings of the
normalized option. A language without a list uses the list of its writing: ``zh`` for scripts without
spaces, ``en`` for the others."""


@dataclass(frozen=True)
class Leak:
    kind: str
    items: list[str]
    evidence: dict[str, object] = field(default_factory=dict)

    @property
    def id(self) -> str:
        """Stable for the same kind, items and evidence, so a resolution outlives reruns."""
        key = "\n".join([self.kind, *self.items, str(sorted(self.evidence.items()))])
        return f"leak-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:10]}"

    @property
    def blocking(self) -> bool:
        return self.kind not in WARNING_KINDS and self.evidence.get("severity") != "warning"

    def to_dict(self) -> dict[str, object]:
        return {"id": self.id, "kind": self.kind, "items": self.items, "evidence": self.evidence}


def modality_hits(text: str, language: str | None) -> dict[str, list[str]]:
    """Modality -> the option's words found in its language's list (and English words in any option)."""
    found = tokens(text, language)
    primary = (language or "").replace("_", "-").split("-")[0].lower()
    unit = token_unit(language, normalize_text(text))
    lists = MODALITY_WORDS.get(primary) or MODALITY_WORDS["zh" if unit == "characters" else "en"]
    squeezed = join_tokens(found)
    hits: dict[str, list[str]] = {}
    for modality, vocabulary in lists.items():
        matched = set(found) & vocabulary if unit == "words" else {w for w in vocabulary if w in squeezed}
        matched |= set(found) & MODALITY_WORDS["en"][modality]  # Latin words inside text without spaces
        if matched:
            hits[modality] = sorted(matched)
    return hits


def option_modality_leaks(subjects: Sequence[AuditSubject]) -> list[Leak]:
    leaks = []
    for subject in subjects:
        for key, text in sorted(subject.options.items()):
            for modality, hits in modality_hits(text, subject.language).items():
                evidence: dict[str, object] = {"option": key, "text": text, "modality": modality, "words": hits}
                evidence["severity"] = "warning"
                leaks.append(Leak("option_modality", [subject.id], evidence))
    return leaks


def option_in_context_leaks(subjects: Sequence[AuditSubject], severity: str = "warning") -> list[Leak]:
    """Options whose text stands in the item's own context; ``severity`` is ``warning`` or ``block``."""
    leaks = []
    for subject in subjects:
        context = words(subject.context, subject.language)
        for key, text in sorted(subject.options.items()):
            if contains_phrase(context, words(text, subject.language)):
                leaks.append(
                    Leak(
                        "option_in_context",
                        [subject.id],
                        {
                            "option": key,
                            "text": text,
                            "is_answer": key == subject.answer,
                            "severity": severity,
                        },
                    )
                )
    return leaks


def shared_span_leaks(
    subjects: Sequence[AuditSubject], skip_pairs: frozenset[tuple[str, str]] = frozenset()
) -> list[Leak]:
    """One leak per pair of items (different groups) sharing an 8-token span; the first span is quoted.

    Tokens are words, or characters for languages written without spaces (``"tokens": "characters"`` in
    the evidence then).

    ``skip_pairs`` (sorted id pairs) are pairs already clustered as text duplicates: the cluster blocks them.
    """
    owners: dict[tuple[str, ...], list[int]] = {}
    for index, subject in enumerate(subjects):
        for span in spans(words(subject.context, subject.language), SPAN_WORDS):
            owners.setdefault(span, []).append(index)
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for span, indices in owners.items():
        for i in indices:
            for j in indices:
                a, b = subjects[i], subjects[j]
                if a.id < b.id and a.group != b.group and (a.id, b.id) not in skip_pairs:
                    found.setdefault((a.id, b.id), span)
    return [Leak("shared_span", [a, b], _span_evidence(span)) for (a, b), span in sorted(found.items())]


def _span_evidence(span: tuple[str, ...]) -> dict[str, object]:
    evidence: dict[str, object] = {"span": join_tokens(span), "words": SPAN_WORDS, "severity": "block"}
    if any(is_no_space_character(token[0]) for token in span):
        evidence["tokens"] = "characters"
    return evidence
