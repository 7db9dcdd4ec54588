"""Free-form generation through the model backends, for the judge kind's systems (``curate judge respond``)
and judges (``curate judge run``): one call is a system instruction, a user text, media files, a sampling
temperature and a seed, and returns the model's text.

Backends: ``replay:<file.jsonl>`` (recorded answers, one line per call key: ``{"key", "output"}``, optionally
``"model"``), ``transformers:<model-folder>`` (a local model) and ``openai:<base-url>[,<base-url>…]#<model>`` (any OpenAI-compatible chat server, ``vllm serve``
included; several URLs share the calls round-robin). The model id names the backend in provenance and in
the resumption check, so a rerun with the same backend recomputes nothing.
"""

from __future__ import annotations

import base64
import itertools
import json
import mimetypes
import os
import urllib.error
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from curation.errors import NotFoundError, Problem, ValidationFailed
from curation.jsonl import validate_line

from .backends.base import BackendError
from .backends.replay import read_replay_file
from .replay_formats import GenerationReplayLine


class Generator(ABC):
    @property
    @abstractmethod
    def model_id(self) -> str: ...

    @property
    def takes(self) -> frozenset[str] | None:
        """The input modalities the model takes, when the backend can tell (a probe); None when it cannot."""
        return None

    @abstractmethod
    def generate(
        self, key: str, system: str, user: str, media: Sequence[tuple[str, Path]], temperature: float, seed: int
    ) -> str:
        """The model's answer to one call; ``key`` names the call (what a replay file is keyed by)."""


class ReplayGenerator(Generator):
    def __init__(self, target: str) -> None:
        self.path = Path(target)
        problems: list[Problem] = []
        self._digest, records = read_replay_file(self.path, problems)
        self.lines: dict[str, str] = {}
        models = set()
        for where, record in records:
            parsed = validate_line(GenerationReplayLine, record, where["file"], where["line"])
            if isinstance(parsed, list):
                problems.extend(parsed)
            elif not isinstance(parsed, GenerationReplayLine):
                continue
            elif parsed.key in self.lines:
                problems.append(Problem(f"key {parsed.key!r} is given twice", field="key", **where))
            else:
                self.lines[parsed.key] = parsed.output
                models.add(parsed.model or "replay")
        if problems:
            raise ValidationFailed(problems, "fix the replay file and try again")
        self.model = models.pop() if len(models) == 1 else "replay"

    @property
    def model_id(self) -> str:
        return f"{self.model}@replay:{self.path.name}@{self._digest}"

    def generate(
        self, key: str, system: str, user: str, media: Sequence[tuple[str, Path]], temperature: float, seed: int
    ) -> str:
        if key not in self.lines:
            raise NotFoundError(f"{self.path} has no answer for {key!r}")
        return self.lines[key]


def media_part(modality: str, path: Path) -> dict[str, Any]:
    """An OpenAI chat content part: an image or video as a data URL, audio as ``input_audio``."""
    data = base64.b64encode(path.read_bytes()).decode()
    if modality == "audio":
        return {"type": "input_audio", "input_audio": {"data": data, "format": path.suffix.lstrip(".") or "wav"}}
    mime = mimetypes.guess_type(path.name)[0] or ("video/mp4" if modality == "video" else "image/png")
    kind = "video_url" if modality == "video" else "image_url"
    return {"type": kind, kind: {"url": f"data:{mime};base64,{data}"}}


class OpenAIGenerator(Generator):
    def __init__(self, target: str, timeout_s: float = 300.0, max_tokens: int = 1024) -> None:
        urls, _, model = target.partition("#")
        bases = [u.rstrip("/") for u in urls.split(",") if u]
        if not bases or not all(u.startswith(("http://", "https://")) for u in bases) or not model:
            raise BackendError(f"openai backend spec is openai:<base-url>[,<base-url>…]#<model>, not openai:{target}")
        self.bases, self.model, self.timeout_s, self.max_tokens = bases, model, timeout_s, max_tokens
        self._next = itertools.cycle(bases)

    @property
    def model_id(self) -> str:
        return f"openai#{self.model}"

    def generate(
        self, key: str, system: str, user: str, media: Sequence[tuple[str, Path]], temperature: float, seed: int
    ) -> str:
        content: list[dict[str, Any]] = [media_part(m, p) for m, p in media]
        content.append({"type": "text", "text": user})
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": content}],
            "temperature": temperature,
            "seed": seed,
            "max_tokens": self.max_tokens,
        }
        headers = {"Content-Type": "application/json"}
        if api_key := os.environ.get("OPENAI_API_KEY", ""):
            headers["Authorization"] = f"Bearer {api_key}"
        base = next(self._next)
        request = urllib.request.Request(f"{base}/chat/completions", json.dumps(body).encode(), headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return str(json.loads(response.read())["choices"][0]["message"]["content"])
        except (urllib.error.URLError, KeyError, IndexError, TypeError, json.JSONDecodeError) as exc:
            raise BackendError(f"{base}: the chat request failed ({exc})") from exc


class TransformersGenerator(Generator):
    """``transformers:<model-folder>``: a local model (CPU or GPU) through its processor's chat template, with
    image and audio inputs; a video input is refused (the systems and judges that take video are served)."""

    def __init__(self, target: str, max_new_tokens: int = 256) -> None:
        from .backends.hf import TransformersBackend

        self.backend = TransformersBackend(target)
        self.max_new_tokens = max_new_tokens

    @property
    def model_id(self) -> str:
        return self.backend.model_id

    @property
    def takes(self) -> frozenset[str]:
        """Text, images when the processor has an image processor, audio when it has a feature extractor."""
        image = getattr(self.backend.processor, "image_processor", None) is not None
        return frozenset({"text", *(["image"] if image else []), *(["audio"] if self.backend.audio_input else [])})

    def generate(
        self, key: str, system: str, user: str, media: Sequence[tuple[str, Path]], temperature: float, seed: int
    ) -> str:
        import torch

        from .media import load_audio, load_image

        backend = self.backend
        if any(m == "video" for m, _ in media):
            raise BackendError(f"{key}: transformers: takes image and audio inputs, not video; serve the model")
        parts: list[dict[str, Any]] = [{"type": m} for m, _ in media] + [{"type": "text", "text": user}]
        messages = [{"role": "system", "content": system}, {"role": "user", "content": parts}]
        text = backend.processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        kwargs: dict[str, Any] = {"text": [text], "return_tensors": "pt", "padding": True}
        images = [load_image(p) for m, p in media if m == "image"]
        audio = [load_audio(p, backend.sampling_rate) for m, p in media if m == "audio"]
        if images:
            kwargs["images"] = images
        if audio:
            kwargs["audio"] = audio
        inputs = backend.processor(**kwargs).to(backend.device)
        for name, value in inputs.items():
            if torch.is_floating_point(value):
                inputs[name] = value.to(backend.dtype)
        torch.manual_seed(seed)
        sampling = {"do_sample": True, "temperature": temperature, "top_k": 0, "top_p": 1.0} if temperature > 0 else {}
        with torch.inference_mode():
            out = backend.model.generate(
                **inputs,
                **sampling,
                max_new_tokens=self.max_new_tokens,
                pad_token_id=backend.tokenizer.pad_token_id,
                eos_token_id=backend.tokenizer.eos_token_id,
            )
        tokens = out[0, inputs["input_ids"].shape[1] :]
        return str(backend.tokenizer.decode(tokens, skip_special_tokens=True))


def open_generator(spec: str) -> Generator:
    kind, _, target = spec.partition(":")
    if kind == "replay" and target:
        return ReplayGenerator(target)
    if kind == "openai" and target:
        return OpenAIGenerator(target)
    if kind == "transformers" and target:
        return TransformersGenerator(target)
    raise BackendError(
        f"unknown generation backend {spec!r}; expected replay:<file.jsonl>, transformers:<model-folder> or "
        "openai:<base-url>[,<base-url>…]#<model> (a vLLM model: `vllm serve` it and use openai:)"
    )
