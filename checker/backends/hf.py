"""``transformers:<model-path>``: a local model on CPU or GPU, one constrained prefill per view.

The next-token logits after the prompt, restricted to the option keys and renormalised, are exactly what a
choice constraint over single-token keys gives: ``logprob`` reads them, ``sample`` draws K keys from them
at temperature T with the request's seed. With ``--format json`` ``sample`` is the reference recipe
itself: K free-form answers to P0's JSON prompt, each generated with seed + i, parsed strictly.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..estimators import EstimatorConfig
from ..media import load_audio, load_image
from ..prompts import ProbeRequest
from ..torch_compat import ensure_torchvision_importable
from .base import BackendError, ProbeBackend, ProbeOutput, chat_messages, fingerprint_folder

FREE_ANSWER_TOKENS = 96
"""Room for P0's ``{"answer": ..., "reasoning": ...}`` object."""


def option_token_ids(tokenizer, keys: Sequence[str]) -> list[int]:  # type: ignore[no-untyped-def]
    """The token id of each option key; a key that is not one token cannot be read from one logit."""
    ids = []
    for key in keys:
        encoded = tokenizer.encode(key, add_special_tokens=False)
        if len(encoded) != 1:
            raise BackendError(
                f"option key {key!r} is {len(encoded)} tokens for this tokenizer; keys must be one token"
            )
        ids.append(encoded[0])
    return ids


def load_model(path: Path, device: str, dtype: Any):  # type: ignore[no-untyped-def]
    """The thinker of a Qwen2.5-Omni checkpoint, else the model class transformers maps the config to."""
    import transformers

    config = transformers.AutoConfig.from_pretrained(path)
    if config.model_type == "qwen2_5_omni":
        wrapper = transformers.Qwen2_5OmniForConditionalGeneration.from_pretrained(
            path, dtype=dtype, enable_audio_output=False
        )
        model = wrapper.thinker
    elif config.model_type == "qwen2_5_omni_thinker":
        model = transformers.Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(path, dtype=dtype)
    else:
        try:
            model = transformers.AutoModelForImageTextToText.from_pretrained(path, dtype=dtype)
        except ValueError:
            model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    return model.to(device).eval()


class TransformersBackend(ProbeBackend):
    kind = "transformers"
    batch_size = 16

    def __init__(  # type: ignore[no-untyped-def]
        self,
        target: str,
        device: str | None = None,
        dtype: str | None = None,
        model=None,
        micro_batch: int | None = None,
    ) -> None:
        ensure_torchvision_importable()
        import torch
        import transformers

        self.path = Path(target)
        if not self.path.is_dir():
            raise BackendError(f"transformers: {self.path} is not a model folder")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.dtype = getattr(torch, dtype) if dtype else (torch.bfloat16 if self.device != "cpu" else torch.float32)
        self.processor = transformers.AutoProcessor.from_pretrained(self.path)
        self.model = model if model is not None else load_model(self.path, self.device, self.dtype)
        extractor = getattr(self.processor, "feature_extractor", None)
        self.audio_input = extractor is not None
        self.sampling_rate = getattr(extractor, "sampling_rate", 16000)
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        self.tokenizer.padding_side = "left"  # the answer's logits are read at the last position of each row
        self.micro_batch = micro_batch or (8 if self.device != "cpu" else 1)
        """Requests per forward pass; left-padded rows give the same log-probabilities as one at a time."""
        self._fingerprint = fingerprint_folder(self.path)

    @property
    def model_id(self) -> str:
        return f"{self.path.resolve()}@{self._fingerprint}"

    def option_logprobs(self, request: ProbeRequest) -> dict[str, float]:
        """Log-probabilities of the option keys as the first answer token, renormalised over the keys."""
        return self.option_logprobs_batch([request])[0]

    def _inputs(self, requests: Sequence[ProbeRequest]):  # type: ignore[no-untyped-def]
        """The processor's tensors for several requests (left-padded); media lists follow the rows' order."""
        import torch

        texts = [
            self.processor.apply_chat_template(chat_messages(r, "hf"), tokenize=False, add_generation_prompt=True)
            for r in requests
        ]
        kwargs: dict[str, Any] = {"text": texts, "return_tensors": "pt", "padding": True}
        images = [load_image(r.image) for r in requests if r.image is not None]
        audio = [load_audio(r.audio, self.sampling_rate) for r in requests if r.audio is not None]
        if images:
            kwargs["images"] = images
        if audio:
            kwargs["audio"] = audio
        inputs = self.processor(**kwargs).to(self.device)
        for name, value in inputs.items():
            if torch.is_floating_point(value):
                inputs[name] = value.to(self.dtype)
        return inputs

    def option_logprobs_batch(self, requests: Sequence[ProbeRequest]) -> list[dict[str, float]]:
        """One forward pass over several requests; the last position of each row gives its answer."""
        import torch

        inputs = self._inputs(requests)
        with torch.inference_mode():
            logits = self.model(**inputs).logits[:, -1].float()
        out = []
        for row, request in enumerate(requests):
            ids = option_token_ids(self.tokenizer, request.option_keys)
            chosen = torch.log_softmax(logits[row, ids], dim=-1)
            out.append(dict(zip(request.option_keys, chosen.tolist(), strict=True)))
        return out

    def free_answers(self, request: ProbeRequest, k: int, temperature: float) -> tuple[list[str], int]:
        """K sampled free-form answers (one generate call each, seeds seed + i) and the tokens generated."""
        import torch

        inputs = self._inputs([request])
        prompt_length = inputs["input_ids"].shape[1]
        eos = self.tokenizer.eos_token_id
        answers, generated = [], 0
        for index in range(k):
            torch.manual_seed(request.seed + index)
            with torch.inference_mode():
                out = self.model.generate(
                    **inputs,
                    do_sample=True,
                    temperature=temperature,
                    top_k=0,
                    top_p=1.0,
                    max_new_tokens=FREE_ANSWER_TOKENS,
                    pad_token_id=self.tokenizer.pad_token_id,
                    eos_token_id=eos,
                )
            tokens = out[0, prompt_length:].tolist()
            if eos in tokens:
                tokens = tokens[: tokens.index(eos) + 1]
            generated += len(tokens)
            answers.append(self.tokenizer.decode(tokens, skip_special_tokens=True))
        return answers, generated

    def _probe_free(self, requests: Sequence[ProbeRequest], config: EstimatorConfig) -> list[ProbeOutput]:
        if config.name == "logprob":
            raise BackendError("the logprob estimator reads a constrained option key: use --format letter")
        outputs = []
        for request in requests:
            k = config.k_for(request.view, request.full_view)
            answers, generated = self.free_answers(request, k, config.temperature)
            outputs.append(
                ProbeOutput(
                    request.item_id,
                    request.view,
                    samples=answers,
                    audio_route=request.audio_route,
                    model_calls=k,
                    generated_tokens=generated,
                )
            )
        return outputs

    def probe(self, requests: Sequence[ProbeRequest], config: EstimatorConfig) -> list[ProbeOutput]:
        import torch

        if any(r.answer_format == "json" for r in requests):
            return self._probe_free(requests, config)
        answered: list[dict[str, float]] = []
        for start in range(0, len(requests), self.micro_batch):
            answered += self.option_logprobs_batch(requests[start : start + self.micro_batch])
        outputs = []
        for request, logprobs in zip(requests, answered, strict=True):
            if config.name == "logprob":
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
                continue
            k = config.k_for(request.view, request.full_view)
            weights = torch.softmax(torch.tensor(list(logprobs.values())) / config.temperature, dim=-1)
            generator = torch.Generator().manual_seed(request.seed)
            draws = torch.multinomial(weights, k, replacement=True, generator=generator).tolist()
            outputs.append(
                ProbeOutput(
                    request.item_id,
                    request.view,
                    samples=[request.option_keys[i] for i in draws],
                    audio_route=request.audio_route,
                    model_calls=1,
                    generated_tokens=k,
                )
            )
        return outputs
