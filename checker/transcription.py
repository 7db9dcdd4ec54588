"""Speech-to-text backends for ``curate transcribe`` (TRIAD G.6: models without native audio read a transcript).

Specs: ``whisper:<model-folder>`` (a whisper checkpoint through transformers, on CPU or GPU),
``openai:<base-url>#<model>[#key=ENV_NAME]`` (any server with OpenAI's ``/v1/audio/transcriptions``, vLLM's
included) and ``replay:<file.jsonl>`` (recorded transcripts, one line per clip: ``{"audio": sha256, "text": ...}``
with an optional ``"model"``). The backend's model id is stored with every transcript, so a rerun with the same
model skips the clips it already did.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
import uuid
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from curation.errors import Problem, ValidationFailed
from curation.transcripts import Clip, TranscriptIn

from .backends.base import BackendError, fingerprint_folder
from .backends.replay import read_replay_file
from .media import load_audio
from .torch_compat import ensure_torchvision_importable

SAMPLE_RATE = 16_000
"""Whisper's input rate; clips are resampled to it."""
PROMPT_TOKENS = 4
"""Start of transcript, language, task, no timestamps: the decoder's positions left hold the transcript."""


class Transcriber(ABC):
    kind: str = ""

    @property
    @abstractmethod
    def model_id(self) -> str:
        """The model's name as stored with each transcript."""

    @abstractmethod
    def transcribe(self, clip: Clip) -> TranscriptIn:
        """One clip's transcript."""

    def close(self) -> None:  # noqa: B027  (most backends hold nothing to free)
        """Free what the backend holds (a model, a connection)."""

    def _result(self, clip: Clip, text: str, language: str | None) -> TranscriptIn:
        return TranscriptIn(
            audio_sha256=clip.sha256, model=self.model_id, backend=self.kind, text=text.strip(), language=language
        )


def clip_language(clip: Clip) -> str | None:
    """The language to ask for: the items' one language, or None (the model detects it) when they differ."""
    return clip.languages[0] if len(clip.languages) == 1 else None


class TranscriptReplayLine(BaseModel):
    """One recorded transcript: the clip (its content hash), the text and, optionally, the model that wrote it."""

    model_config = ConfigDict(extra="forbid", strict=True)
    audio: str = Field(
        pattern=r"^[0-9a-f]{64}$", description="the clip's sha256, as `curate transcribe --json` prints it"
    )
    text: str = Field(max_length=100_000)
    model: str | None = Field(default=None, min_length=1, max_length=300, description="the same on every line")


class ReplayTranscriber(Transcriber):
    kind = "replay"

    def __init__(self, target: str) -> None:
        self.path = Path(target)
        problems: list[Problem] = []
        digest, records = read_replay_file(self.path, problems)
        self.lines: dict[str, str] = {}
        models: set[str] = set()
        for where, record in records:
            try:
                line = TranscriptReplayLine.model_validate(record)
            except ValidationError as exc:
                for err in exc.errors():
                    problems.append(Problem(err["msg"], field=".".join(str(p) for p in err["loc"]), **where))
                continue
            if line.audio in self.lines:
                problems.append(Problem(f"clip {line.audio} is given twice", field="audio", **where))
                continue
            self.lines[line.audio] = line.text
            models.add(line.model or f"replay:{digest[:12]}")
        if len(models) > 1:
            problems.append(
                Problem(f"one replay file holds one model's transcripts, not {len(models)}", file=str(target))
            )
        if problems:
            raise ValidationFailed(problems, "fix the replay file; nothing was transcribed")
        self._model = models.pop() if models else f"replay:{digest[:12]}"

    @property
    def model_id(self) -> str:
        return self._model

    def covers(self, clip: Clip) -> bool:
        return clip.sha256 in self.lines

    def transcribe(self, clip: Clip) -> TranscriptIn:
        return self._result(clip, self.lines[clip.sha256], clip_language(clip))


class WhisperTranscriber(Transcriber):
    """A whisper checkpoint through transformers; greedy decoding, the language taken from the items."""

    kind = "whisper"

    def __init__(self, target: str, device: str | None = None) -> None:
        self.folder = Path(target)
        if not self.folder.is_dir():
            raise BackendError(f"whisper model folder {self.folder} does not exist (give a local checkpoint folder)")
        try:
            ensure_torchvision_importable()
            import torch
            from transformers import WhisperForConditionalGeneration, WhisperProcessor
        except ImportError as exc:
            raise BackendError(f"the whisper backend needs torch and transformers: {exc}") from exc
        self._torch = torch
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.processor = WhisperProcessor.from_pretrained(self.folder)
        self.model = WhisperForConditionalGeneration.from_pretrained(self.folder).to(self.device).eval()
        self.max_new_tokens = self.model.config.max_target_positions - PROMPT_TOKENS - 1
        self._id = f"whisper:{self.folder.name}@{fingerprint_folder(self.folder)}"

    @property
    def model_id(self) -> str:
        return self._id

    def transcribe(self, clip: Clip) -> TranscriptIn:
        samples = load_audio(clip.path, SAMPLE_RATE)
        features = self.processor(samples, sampling_rate=SAMPLE_RATE, return_tensors="pt").input_features
        language = clip_language(clip)
        with self._torch.no_grad():
            tokens = self.model.generate(
                features.to(self.device), language=language, task="transcribe", max_new_tokens=self.max_new_tokens
            )
        return self._result(clip, self.processor.batch_decode(tokens, skip_special_tokens=True)[0], language)


class OpenAITranscriber(Transcriber):
    """``POST {base}/audio/transcriptions`` (multipart: file, model, language), as OpenAI and vLLM serve it."""

    kind = "openai"

    def __init__(self, target: str, timeout_s: float = 120.0) -> None:
        parts = target.split("#")
        if len(parts) < 2 or not parts[0] or not parts[1]:
            raise BackendError("an openai transcription spec is openai:<base-url>#<model>[#key=ENV_NAME]")
        self.base_url, self.model = parts[0].rstrip("/"), parts[1]
        key_env = next((p.removeprefix("key=") for p in parts[2:] if p.startswith("key=")), "OPENAI_API_KEY")
        self.key = os.environ.get(key_env, "")
        self.timeout_s = timeout_s

    @property
    def model_id(self) -> str:
        return f"openai:{self.model}"

    def transcribe(self, clip: Clip) -> TranscriptIn:
        language = clip_language(clip)
        fields = {"model": self.model, "response_format": "json", **({"language": language} if language else {})}
        boundary = uuid.uuid4().hex
        body = b"".join(
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
            for name, value in fields.items()
        )
        body += (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{clip.path.name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        body += clip.path.read_bytes() + f"\r\n--{boundary}--\r\n".encode()
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        if self.key:
            headers["Authorization"] = f"Bearer {self.key}"
        request = urllib.request.Request(f"{self.base_url}/audio/transcriptions", data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                document = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise BackendError(f"{self.base_url} answered HTTP {exc.code} for clip {clip.sha256[:12]}") from exc
        except (urllib.error.URLError, TimeoutError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise BackendError(f"{self.base_url}: no transcript for clip {clip.sha256[:12]} ({exc})") from exc
        if not isinstance(document, dict) or not isinstance(document.get("text"), str):
            raise BackendError(f'{self.base_url} answered without a "text" field for clip {clip.sha256[:12]}')
        return self._result(clip, document["text"], language)


def open_transcriber(spec: str) -> Transcriber:
    """The backend a spec names (see the module's docstring)."""
    kind, _, target = spec.partition(":")
    if not target:
        raise BackendError(f"unknown transcription backend {spec!r}: give whisper:, openai: or replay:")
    if kind == "replay":
        return ReplayTranscriber(target)
    if kind == "whisper":
        return WhisperTranscriber(target)
    if kind == "openai":
        return OpenAITranscriber(target)
    raise BackendError(f"unknown transcription backend {kind!r}: give whisper:, openai: or replay:")


def transcribe_clips(transcriber: Transcriber, clips: Sequence[Clip]) -> tuple[list[TranscriptIn], list[str]]:
    """Each clip's transcript; a replay file's uncovered clips are skipped and named instead."""
    done: list[TranscriptIn] = []
    skipped: list[str] = []
    for clip in clips:
        if isinstance(transcriber, ReplayTranscriber) and not transcriber.covers(clip):
            skipped.append(clip.sha256)
            continue
        done.append(transcriber.transcribe(clip))
    return done, skipped
