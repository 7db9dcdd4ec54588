"""``openai:<base-url>#<model>[#no-audio][#key=ENV]``: any OpenAI-compatible chat server, ``vllm serve`` included.

The API key is read from the environment variable ``ENV`` (default ``OPENAI_API_KEY``), so two probes of
two providers, each with its own key, run together; a spec names the variable, never the key.

Media go as an ``image_url`` data URL and an ``input_audio`` WAV part (``#no-audio`` for a model that
cannot hear: it reads a transcript or description instead, TRIAD G.6). With ``--format letter`` the
request carries ``structured_outputs: {"choice": [keys]}`` (vLLM ≥ 0.12; older servers ignore it with only
a warning), and every answer is checked: a reply or a log-probability outside the option keys means the
server did not honour the constraint, and the run stops rather than count it. ``--format json`` sends
TRIAD's P0 prompt unconstrained (the reference recipe for API models) and parses answers strictly.
"""

from __future__ import annotations

import json
import math
import os
import re
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ..estimators import EstimatorConfig
from ..prompts import ProbeRequest
from .base import BackendError, ProbeBackend, ProbeOutput, chat_messages

JSON_ANSWER_TOKENS = 128
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class OpenAIBackend(ProbeBackend):
    kind = "openai"
    batch_size = 64

    def __init__(self, target: str, concurrency: int = 8, timeout_s: float = 300.0) -> None:
        base, _, rest = target.partition("#")
        model, *flags = rest.split("#")
        if not base.startswith(("http://", "https://")) or not model:
            raise BackendError(f"openai backend spec is openai:<base-url>#<model>, not openai:{base}#{model}")
        key_env = ""
        for flag in flags:
            if flag.startswith("key="):
                key_env = flag.removeprefix("key=")
                if not _ENV_NAME.fullmatch(key_env):  # the value is not echoed: it may be a pasted key
                    raise BackendError(
                        "#key= names an environment variable (letters, digits, _), never the key itself: "
                        "export the key and give its variable's name"
                    )
            elif flag != "no-audio":
                raise BackendError(f"unknown openai backend flag {flag!r}; flags are #no-audio and #key=ENV_NAME")
        self.base_url = base.rstrip("/")
        self.model = model
        self.audio_input = "no-audio" not in flags
        self.concurrency = concurrency
        self.timeout_s = timeout_s
        self.key_env = key_env or DEFAULT_KEY_ENV
        self.api_key = os.environ.get(self.key_env, "")
        if key_env and not self.api_key:
            raise BackendError(f"the probe {self.model_id} reads its key from {key_env}, which is not set: export it")

    @property
    def model_id(self) -> str:
        return f"{self.base_url}#{self.model}"

    def _post(self, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(
            f"{self.base_url}/chat/completions", data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")[:500]
            raise BackendError(f"{self.base_url} answered HTTP {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError) as exc:
            raise BackendError(f"cannot reach {self.base_url}: {exc}") from exc

    def _not_honoured(self, request: ProbeRequest, what: str) -> BackendError:
        return BackendError(
            f"{self.model_id} did not honour the choice constraint ({what} for item {request.item_id}, view "
            f"{request.view}): it needs structured_outputs (vLLM >= 0.12); use --format json for servers "
            "without it"
        )

    def _one(self, request: ProbeRequest, config: EstimatorConfig) -> ProbeOutput:
        keys = list(request.option_keys)
        body: dict[str, Any] = {"model": self.model, "messages": chat_messages(request, "openai"), "seed": request.seed}
        letter = request.answer_format == "letter"
        if letter:
            body.update(max_tokens=1, structured_outputs={"choice": keys})
        else:
            body["max_tokens"] = JSON_ANSWER_TOKENS
        if config.name == "logprob":
            if not letter:
                raise BackendError("the logprob estimator reads a constrained option key: use --format letter")
            body.update(temperature=1.0, n=1, logprobs=True, top_logprobs=min(20, len(keys)))
            reply = self._post(body)
            first = reply["choices"][0]["logprobs"]["content"][0]
            logprobs = dict.fromkeys(keys, -math.inf)
            for entry in [first, *first.get("top_logprobs", [])]:
                token = entry["token"].strip()
                if token not in logprobs:
                    raise self._not_honoured(request, f"log-probability for {token!r}")
                logprobs[token] = entry["logprob"]
            return ProbeOutput(
                request.item_id,
                request.view,
                logprobs=logprobs,
                audio_route=request.audio_route,
                model_calls=1,
                generated_tokens=reply.get("usage", {}).get("completion_tokens", 1),
            )
        body.update(temperature=config.temperature, n=config.k_for(request.view, request.full_view))
        reply = self._post(body)
        samples = [choice["message"]["content"] or "" for choice in reply["choices"]]
        if letter:
            for sample in samples:
                if sample.strip() not in keys:
                    raise self._not_honoured(request, f"answer {sample!r}")
        return ProbeOutput(
            request.item_id,
            request.view,
            samples=samples,
            audio_route=request.audio_route,
            model_calls=1,
            generated_tokens=reply.get("usage", {}).get("completion_tokens", len(samples)),
        )

    def probe(self, requests: Sequence[ProbeRequest], config: EstimatorConfig) -> list[ProbeOutput]:
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(lambda r: self._one(r, config), requests))
