"""The caption route's shell side (Judge Anything App. C.3): which modalities a judge's or system's backend takes
(declared by ``--takes``, by ``[judge.takes]`` per backend spec, or probed from the backend), and the captioning
backend that describes the others with the paper's caption prompts (Fig. 14).

A replay captioning file answers calls keyed ``caption|MODALITY|SHA256`` (the sha256 of the stored file)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from curation.kinds.judge.captioning import Captioner, check_takes
from curation.kinds.judge.drafting import CAPTION_PROMPTS
from curation.kinds.judge.schema import JUDGE_MODALITIES
from curation.workspace import Workspace

from .generation import Generator, open_generator

CAPTION_SYSTEM = ""
"""The paper's caption prompts are the whole request (Fig. 14): no system instruction."""


def caption_key(modality: str, asset: str) -> str:
    return f"caption|{modality}|{asset}"


def takes_of(ws: Workspace, spec: str, generator: Generator, declared: str | None) -> frozenset[str]:
    """What the model takes: ``--takes`` as given, else ``[judge.takes]`` for this backend spec, else the
    backend's probe, else every modality."""
    if declared is not None:
        return check_takes([m.strip() for m in declared.split(",") if m.strip()], "--takes")
    if spec in ws.settings.judge.takes:
        return check_takes(ws.settings.judge.takes[spec], "[judge.takes]")
    return generator.takes or frozenset(JUDGE_MODALITIES)


def open_captioner(ws: Workspace, spec: str | None, path_of: Callable[[str], Path]) -> Captioner | None:
    """The captioning backend of ``spec`` (else ``[judge] caption_backend``); None when neither names one."""
    chosen = spec or ws.settings.judge.caption_backend
    if not chosen:
        return None
    generator = open_generator(chosen)

    def describe(modality: str, asset: str) -> str:
        media = [(modality, path_of(asset))]
        return generator.generate(
            caption_key(modality, asset), CAPTION_SYSTEM, CAPTION_PROMPTS[modality], media, 0.0, 0
        )

    return Captioner(generator.model_id, describe)
