"""The one interface every probe backend implements, and the spec parser (``kind:target``)."""

from __future__ import annotations

import hashlib
import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from curation.errors import CurateError

from ..estimators import EstimatorConfig
from ..prompts import ProbeRequest
from ..views import ProbeItem

BACKEND_KINDS: dict[str, str] = {
    "replay": "checker.backends.replay:ReplayBackend",
    "transformers": "checker.backends.hf:TransformersBackend",
    "vllm": "checker.backends.vllm_offline:VllmBackend",
    "openai": "checker.backends.openai_compat:OpenAIBackend",
}
SPEC_HELP = (
    "replay:<file.jsonl>, transformers:<model-path>, vllm:<model-path> or openai:<base-url>#<model>[#key=ENV_NAME], "
    "or the name of a [checker.probes] table in curate.toml"
)


class BackendError(CurateError):
    """A backend cannot be opened or answered something it must not (e.g. ignored the choice constraint)."""


@dataclass
class ProbeOutput:
    """A backend's raw answer to one request; estimators turn it into a consistent set.

    Exactly one of ``samples`` (answers as generated), ``logprobs`` (first-token log-probabilities over
    the option keys, before temperature) or ``probs`` (replayed probabilities, used as they are) is set.
    """

    item_id: str
    view: str
    samples: list[str] | None = None
    logprobs: dict[str, float] | None = None
    probs: dict[str, float] | None = None
    audio_route: str = "hidden"
    model_calls: int = 0
    generated_tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "audio_route": self.audio_route,
            "model_calls": self.model_calls,
            "generated_tokens": self.generated_tokens,
        }
        for name in ("samples", "logprobs", "probs"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out

    @classmethod
    def from_json(cls, item_id: str, view: str, data: dict[str, Any]) -> ProbeOutput:
        return cls(
            item_id,
            view,
            samples=data.get("samples"),
            logprobs=data.get("logprobs"),
            probs=data.get("probs"),
            audio_route=data.get("audio_route", "hidden"),
            model_calls=data.get("model_calls", 0),
            generated_tokens=data.get("generated_tokens", 0),
        )


class ProbeBackend(ABC):
    """Answers probe requests with samples or option log-probabilities."""

    kind: ClassVar[str]
    audio_input: bool = True
    """False for models that cannot hear: requests then carry a transcript or description (TRIAD G.6)."""
    batch_size: int = 8
    """How many requests the runner hands over at once (results are cached after each batch)."""

    @property
    @abstractmethod
    def model_id(self) -> str:
        """What identifies the model in the cache: a name plus a fingerprint of the weights where known."""

    @abstractmethod
    def probe(self, requests: Sequence[ProbeRequest], config: EstimatorConfig) -> list[ProbeOutput]:
        """One output per request, in order."""

    def covers(self, item_id: str) -> bool:
        """Whether this backend can answer for the item at all (a replay file covers only its items)."""
        return True

    def check_items(self, items: Sequence[ProbeItem]) -> None:  # noqa: B027  (a model answers any item)
        """Refuse, before anything is probed, what this backend cannot answer for ``items`` with every problem
        named (a replay file's answers for options an item does not have); the default refuses nothing."""

    def probed_views(self, item_id: str, views: Sequence[str]) -> tuple[str, ...]:
        """Which of the item's ``views`` (full view last) this backend answers; the others stay unprobed.

        A model answers every view; a replay file answers the views it recorded (TRIAD's own layout gives
        the three pairs and the full triplet).
        """
        return tuple(views)

    def close(self) -> None:  # noqa: B027  (most backends hold nothing to release)
        """Release the model (engines, servers' sessions)."""


def chat_messages(request: ProbeRequest, media: str = "hf") -> list[dict[str, Any]]:
    """The request as a chat: system turn, then the user turn's parts in order.

    ``media="hf"`` marks the media as ``{"type": "image"}``/``{"type": "audio"}`` for a processor's chat
    template (the arrays go to the processor separately); ``"openai"`` embeds them as an ``image_url``
    data URL and an ``input_audio`` WAV part.
    """
    from ..media import image_data_url, wav_base64

    content: list[dict[str, Any]] = []
    for part in request.parts:
        if part.kind == "text":
            content.append({"type": "text", "text": part.text})
        elif media == "hf":
            content.append({"type": part.kind})
        elif part.kind == "image":
            assert request.image is not None
            content.append({"type": "image_url", "image_url": {"url": image_data_url(request.image)}})
        else:
            assert request.audio is not None
            content.append({"type": "input_audio", "input_audio": {"data": wav_base64(request.audio), "format": "wav"}})
    system: Any = [{"type": "text", "text": request.system}] if media == "hf" else request.system
    return [{"role": "system", "content": system}, {"role": "user", "content": content}]


def require_letter_format(requests: Sequence[ProbeRequest], kind: str) -> None:
    """Constrained backends decode one option key; P0's free JSON answer goes through ``openai`` only."""
    if any(r.answer_format != "letter" for r in requests):
        raise BackendError(f"the {kind} backend decodes a constrained option key: use --format letter")


def fingerprint_folder(folder: Path) -> str:
    """Names, sizes and modification times of a model folder's files: cheap, and changes with the weights."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"{path.relative_to(folder)}:{stat.st_size}:{int(stat.st_mtime)}\n".encode())
    return digest.hexdigest()[:16]


INSTALL_HINT = (
    "pip install torch==2.13.0 (the CPU wheel, or the build for your GPU), then pip install 'omnicurate[checker]'"
)
"""How the model runtimes of the ``transformers:`` and ``vllm:`` backends are added."""


def probe_spec(name_or_spec: str, probes: Mapping[str, Any]) -> str:
    """A ``[checker.probes.NAME]`` table (``spec``, ``key_env``) as a spec; a spec is returned as it is."""
    entry = probes.get(name_or_spec)
    if entry is None:
        return name_or_spec
    key_env = entry.key_env
    if key_env and not entry.spec.startswith("openai:"):
        raise BackendError(f"[checker.probes.{name_or_spec}] key_env applies to openai: probes only")
    return f"{entry.spec}#key={key_env}" if key_env else entry.spec


def open_backend(spec: str, **options: Any) -> ProbeBackend:
    """``kind:target`` → a backend; the implementation module is imported only now."""
    kind, sep, target = spec.partition(":")
    if not sep or not target or kind not in BACKEND_KINDS:
        raise BackendError(f"unknown probe backend {spec!r}; expected {SPEC_HELP}")
    module_name, _, class_name = BACKEND_KINDS[kind].partition(":")
    try:
        module = importlib.import_module(module_name)
        backend_class: type[ProbeBackend] = getattr(module, class_name)
        return backend_class(target, **options)  # type: ignore[call-arg]
    except ImportError as exc:  # the runtimes are imported when the backend opens, not with its module
        raise BackendError(
            f"the {kind} backend needs a package that is not installed ({exc.name}): {INSTALL_HINT}"
            + (" and vllm" if kind == "vllm" else "")
            + " (`curate doctor` lists what this machine has)"
        ) from exc
