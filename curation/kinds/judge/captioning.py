"""The caption route (Judge Anything App. C.3): a judge or system that cannot take one of a prompt's media
(GPT-4o takes no audio and video together) reads that medium as a caption instead, written by a configured
captioning model with the paper's caption prompts (Fig. 14).

Each caption is stored with its model and prompt (``judge_caption``) and reused by every later run, by any
judge or system, and by the checklist drafter (§2.2 captions audio and video before drafting): one caption per
medium and model serves drafting and judging. The route each judgment took — per modality ``native`` or ``caption:<model>`` — is recorded
with its run, as the checker records its audio routes. A medium the model cannot take, with no captioning
model configured, is refused by name before anything is asked.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace

from sqlalchemy import Select, select
from sqlmodel import col

from curation.errors import Problem, ValidationFailed
from curation.workspace import Workspace

from .caption_draw_tables import JudgeCaption
from .drafting import CAPTION_PROMPTS
from .judging import JudgePrompt
from .schema import JUDGE_MODALITIES

NATIVE = "native"


@dataclass(frozen=True)
class Captioner:
    """A captioning model: its id (provenance and the cache key) and the shell's call to it."""

    model: str
    describe: Callable[[str, str], str]
    """``(modality, asset sha256) -> caption``: the backend asked with :data:`CAPTION_PROMPTS` [modality]."""


def prompt_sha256(modality: str) -> str:
    return hashlib.sha256(CAPTION_PROMPTS[modality].encode()).hexdigest()


def check_takes(takes: Collection[str], where: str) -> frozenset[str]:
    """The modalities a model takes, text always among them; an unknown one is refused by name."""
    unknown = sorted(set(takes) - set(JUDGE_MODALITIES))
    if unknown:
        raise ValidationFailed(
            [Problem(f"unknown modality {', '.join(unknown)}; modalities are {', '.join(JUDGE_MODALITIES)}", where)]
        )
    return frozenset({"text", *takes})


def _stored(model: str, modality: str, asset: str) -> Select[str]:
    return select(col(JudgeCaption.caption)).where(
        col(JudgeCaption.asset) == asset,
        col(JudgeCaption.model) == model,
        col(JudgeCaption.prompt_sha256) == prompt_sha256(modality),
    )


def stored_caption(ws: Workspace, model: str, modality: str, asset: str) -> str | None:
    """The caption of ``asset`` that ``model`` wrote with this modality's caption prompt, if one is stored."""
    with ws.session() as s:
        found = s.execute(_stored(model, modality, asset)).scalar_one_or_none()
    return None if found is None else str(found)


def caption(ws: Workspace, captioner: Captioner, modality: str, asset: str) -> str:
    """The stored caption of ``asset`` by this model and prompt, or a new one, asked once and stored (the
    checklist drafter's captions too, so drafting and judging share one caption per medium and model)."""
    found = stored_caption(ws, captioner.model, modality, asset)
    if found is not None:
        return found
    text = captioner.describe(modality, asset).strip()
    if not text:
        raise ValidationFailed(
            [Problem(f"{captioner.model} gave an empty caption of a {modality} ({asset[:12]})", "caption")]
        )
    key = prompt_sha256(modality)
    with ws.writing() as s:
        if s.execute(_stored(captioner.model, modality, asset)).scalar_one_or_none() is None:
            s.add(JudgeCaption(asset=asset, modality=modality, model=captioner.model, prompt_sha256=key, caption=text))
    return text


def uncaptioned(
    media: Collection[tuple[str, str]], takes: frozenset[str], captioner: Captioner | None, who: str
) -> None:
    """Refuse, naming the model and the modality, media the model cannot take when nothing captions them."""
    missing = sorted({m for m, _ in media if m not in takes})
    if missing and captioner is None:
        raise ValidationFailed(
            [
                Problem(
                    f"{who} takes {', '.join(sorted(takes))}, not {', '.join(missing)}; configure a captioning "
                    "backend ([judge] caption_backend or --caption-backend) or declare what it takes",
                    "--takes",
                )
            ]  # fmt: skip
        )


def route_prompt(
    ws: Workspace, prompt: JudgePrompt, takes: frozenset[str], captioner: Captioner | None
) -> tuple[JudgePrompt, dict[str, str]]:
    """The prompt as the model takes it: each medium it cannot take replaced by its caption in the text; and the
    route per modality (``native`` or ``caption:<model>``)."""
    route: dict[str, str] = {}
    kept: list[tuple[str, str]] = []
    kept_roles: list[str] = []
    lines: list[str] = []
    roles = prompt.roles or tuple(f"attached {m}" for m, _ in prompt.media)
    for (modality, asset), role in zip(prompt.media, roles, strict=True):
        if modality in takes or captioner is None:
            kept.append((modality, asset))
            kept_roles.append(role)
            route[modality] = NATIVE
            continue
        text = caption(ws, captioner, modality, asset)
        lines.append(f"Caption of the {role} ({modality}, given as text: this model cannot take {modality}): {text}")
        route[modality] = f"caption:{captioner.model}"
    if not lines:
        return prompt, route
    user = prompt.user + "\n\n" + "\n".join(lines)
    return replace(prompt, user=user, media=tuple(kept), roles=tuple(kept_roles)), route
