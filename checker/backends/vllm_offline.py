"""``vllm:<model-path>``: vLLM's offline engine, every view of many items in one ``generate`` call.

Prompts are rendered with the model's own processor chat template (as the transformers backend does) and
the media go in ``multi_modal_data``. A structured-output choice over the option keys constrains the one
decoded token; its first-token log-probabilities are restricted to the keys and computed before
temperature (notes/vllm.md), so ``logprob`` asks for them at T = 1 and the estimator applies T.
Extra engine arguments (``dtype``, ``max_model_len``...) come from ``$CURATE_VLLM_ENGINE_ARGS`` as JSON.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..estimators import EstimatorConfig
from ..media import load_audio, load_image
from ..prompts import ProbeRequest
from ..torch_compat import ensure_torchvision_importable
from .base import BackendError, ProbeBackend, ProbeOutput, chat_messages, fingerprint_folder, require_letter_format


class VllmBackend(ProbeBackend):
    kind = "vllm"
    batch_size = 512

    def __init__(self, target: str, **engine_args: Any) -> None:
        ensure_torchvision_importable()
        try:
            import vllm
            from vllm.sampling_params import StructuredOutputsParams  # noqa: F401  (vLLM >= 0.12)
        except ImportError as exc:
            raise BackendError(
                f"the vllm backend needs vLLM >= 0.12 (older versions silently ignore the choice constraint): {exc}"
            ) from exc
        import transformers

        self.path = Path(target)
        if not self.path.is_dir():
            raise BackendError(f"vllm: {self.path} is not a model folder")
        self.processor = transformers.AutoProcessor.from_pretrained(self.path)
        extractor = getattr(self.processor, "feature_extractor", None)
        self.audio_input = extractor is not None
        self.sampling_rate = getattr(extractor, "sampling_rate", 16000)
        options: dict[str, Any] = {
            "limit_mm_per_prompt": {"image": 1, "audio": 1 if self.audio_input else 0, "video": 0}
        }
        from vllm.platforms import current_platform

        if current_platform.is_cpu():
            # a seeded request split across prefill chunks fails on CPU ("CPU Generator does not use offset")
            options["enable_chunked_prefill"] = False
        options.update(json.loads(os.environ.get("CURATE_VLLM_ENGINE_ARGS", "{}")))
        options.update(engine_args)
        self.llm = vllm.LLM(model=str(self.path), **options)
        self._fingerprint = fingerprint_folder(self.path)

    @property
    def model_id(self) -> str:
        return f"{self.path.resolve()}@{self._fingerprint}"

    def _prompt(self, request: ProbeRequest) -> dict[str, Any]:
        text = self.processor.apply_chat_template(
            chat_messages(request, "hf"), tokenize=False, add_generation_prompt=True
        )
        media: dict[str, Any] = {}
        if request.image is not None:
            media["image"] = load_image(request.image)
        if request.audio is not None:
            media["audio"] = (load_audio(request.audio, self.sampling_rate), self.sampling_rate)
        prompt: dict[str, Any] = {"prompt": text}
        if media:
            prompt["multi_modal_data"] = media
        return prompt

    def probe(self, requests: Sequence[ProbeRequest], config: EstimatorConfig) -> list[ProbeOutput]:
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        require_letter_format(requests, self.kind)
        params = []
        for request in requests:
            choice = StructuredOutputsParams(choice=list(request.option_keys))
            if config.name == "logprob":
                params.append(
                    SamplingParams(
                        max_tokens=1, temperature=1.0, logprobs=len(request.option_keys), structured_outputs=choice
                    )
                )
            else:
                params.append(
                    SamplingParams(
                        max_tokens=1,
                        temperature=config.temperature,
                        seed=request.seed,
                        n=config.k_for(request.view, request.full_view),
                        structured_outputs=choice,
                    )
                )
        answers = self.llm.generate([self._prompt(r) for r in requests], params, use_tqdm=False)
        outputs = []
        for request, answer in zip(requests, answers, strict=True):
            keys = request.option_keys
            if config.name == "logprob":
                first = answer.outputs[0].logprobs[0]
                logprobs = dict.fromkeys(keys, -math.inf)
                for entry in first.values():
                    token = (entry.decoded_token or "").strip()
                    if token not in logprobs:
                        raise BackendError(
                            f"vllm returned log-probability for {token!r}, not an option key: "
                            "the choice constraint was not applied"
                        )
                    logprobs[token] = entry.logprob
                outputs.append(
                    ProbeOutput(
                        request.item_id,
                        request.view,
                        logprobs=logprobs,
                        audio_route=request.audio_route,
                        model_calls=1,
                        generated_tokens=1,
                    )
                )
            else:
                samples = [choice.text for choice in answer.outputs]
                outputs.append(
                    ProbeOutput(
                        request.item_id,
                        request.view,
                        samples=samples,
                        audio_route=request.audio_route,
                        model_calls=1,
                        generated_tokens=sum(len(c.token_ids) for c in answer.outputs),
                    )
                )
        return outputs
