"""Structured (JSON-schema constrained) generation for screening: model annotation and scores.

The same ``kind:target`` specs as the probe backends. ``replay:FILE`` answers from recorded outputs
(``{"subject", "task", "output"}`` lines, written by ``--record`` or by hand); ``openai:URL[,URL…]#MODEL``
fans requests out over several OpenAI-compatible servers (vLLM replicas) with a bounded number in flight,
each request constrained by ``response_format: json_schema``. ``transformers:PATH`` decodes greedily under
lm-format-enforcer's JSON-schema parser (a logits processor: only tokens that keep the answer a valid prefix
of the schema are allowed); ``vllm:PATH`` uses vLLM's own structured outputs (``StructuredOutputsParams(json=
...)``). Both decode under a *decoding schema*: the task's schema with every unbounded string and list given
a bound, so that generation ends within the token budget (the bounded schema is narrower, so what it admits
the task's schema admits); an answer cut off by the budget is ``None``, as an unparseable one is.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from curation.errors import NotFoundError, Problem, ValidationFailed
from curation.jsonl import validate_line
from curation.screening.model import StructuredRequest

from .backends.base import SPEC_HELP, BackendError
from .backends.replay import read_replay_file
from .replay_formats import StructuredReplayLine

MAX_TOKENS = 1024
"""App. E.3: "at most 1024 new output tokens"."""
MAX_STRING = 400
"""Characters per string field while decoding (a rationale is "a brief reason")."""
MAX_ITEMS = 16
"""Entries per list while decoding (characters of a book, for instance)."""
MAX_WHITESPACE = 2
"""Consecutive whitespace characters allowed between JSON tokens while decoding (transformers): answers come out
compact instead of running the token budget out on indentation."""


def decoding_schema(schema: dict[str, Any], max_string: int = MAX_STRING, max_items: int = MAX_ITEMS) -> dict[str, Any]:
    """The schema with a ``maxLength`` on every unbounded free string, a ``maxItems`` on every unbounded list, and
    each small integer range (a 1–10 score) spelled out as an enum."""

    def bound(node: Any) -> Any:
        if isinstance(node, dict):
            out = {k: bound(v) for k, v in node.items()}
            if out.get("type") == "string" and not {"enum", "const", "maxLength"} & set(out):
                out["maxLength"] = max_string
            if out.get("type") == "array" and "maxItems" not in out:
                out["maxItems"] = max_items
            low, high = out.get("minimum"), out.get("maximum")
            small = low is not None and high is not None and 0 <= high - low <= 100
            if out.get("type") == "integer" and "enum" not in out and small:
                out["enum"] = list(range(low, high + 1))  # a score: some grammar engines bound digits, not values
            return out
        if isinstance(node, list):
            return [bound(v) for v in node]
        return node

    return bound(schema)


def parse_answer(text: str) -> dict[str, Any] | None:
    """A JSON object, else None (cut off by the token budget, or not JSON)."""
    try:
        answer = json.loads(text)
    except json.JSONDecodeError:
        return None
    return answer if isinstance(answer, dict) else None


def hf_chat(request: StructuredRequest) -> list[dict[str, Any]]:
    """The request as a processor chat: the system turn, then the images and the text in one user turn."""
    content: list[dict[str, Any]] = [{"type": "image"} for _ in request.images]
    content.append({"type": "text", "text": request.user})
    return [{"role": "system", "content": request.system}, {"role": "user", "content": content}]


class ReplayStructured:
    """Recorded outputs, one line per subject × task; a missing line is an error that names it."""

    batch_size = 512

    def __init__(self, target: str) -> None:
        self.path = Path(target)
        self.outputs: dict[tuple[str, str], Any] = {}
        problems: list[Problem] = []
        self._digest, records = read_replay_file(self.path, problems)
        for where, record in records:
            parsed = validate_line(StructuredReplayLine, record, where["file"], where["line"])
            if isinstance(parsed, list):
                problems.extend(parsed)
            elif not isinstance(parsed, StructuredReplayLine):
                continue
            elif (parsed.subject, parsed.task) in self.outputs:
                problems.append(Problem(f"{parsed.subject} {parsed.task} is given twice", **where))
            else:
                self.outputs[(parsed.subject, parsed.task)] = parsed.output
        if problems:
            raise ValidationFailed(problems, "fix the replay file and try again")

    @property
    def model_id(self) -> str:
        return f"{self.path.name}@{self._digest}"

    def generate(self, requests: Sequence[StructuredRequest]) -> list[dict[str, Any] | None]:
        answers = []
        for request in requests:
            key = (request.subject, request.task)
            if key not in self.outputs:
                raise NotFoundError(f"{self.path} has no {request.task!r} output for {request.subject!r}")
            output = self.outputs[key]
            answers.append(output if isinstance(output, dict) else None)
        return answers


class OpenAIStructured:
    """Several OpenAI-compatible servers behind one model: requests are spread round-robin, at most
    ``concurrency`` in flight in all; answers come back in request order."""

    batch_size = 64

    def __init__(
        self,
        target: str,
        concurrency: int = 8,
        timeout_s: float = 300.0,
        max_string: int = MAX_STRING,
        compact: bool = False,
    ) -> None:
        from .backends.openai_compat import OpenAIBackend

        urls, _, model = target.partition("#")
        servers = [u.strip() for u in urls.split(",") if u.strip()]
        if not servers or not model:
            raise BackendError(f"structured openai spec is openai:<url>[,<url>...]#<model>, not openai:{target}")
        self.servers = [OpenAIBackend(f"{url}#{model}", timeout_s=timeout_s) for url in servers]
        self.model = model
        self.concurrency = concurrency
        self.max_string = max_string
        self.compact = compact
        """vLLM servers: also ask for JSON without free whitespace (``structured_outputs.disable_any_whitespace``);
        a server other than vLLM may refuse the extra field, so it is off by default."""
        self._turn = itertools.count()
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return f"openai#{self.model}"

    def _server(self):  # type: ignore[no-untyped-def]
        with self._lock:
            return self.servers[next(self._turn) % len(self.servers)]

    def _one(self, request: StructuredRequest) -> dict[str, Any] | None:
        from .media import image_data_url

        content: list[dict[str, Any]] = [
            {"type": "image_url", "image_url": {"url": image_data_url(Path(p))}} for p in request.images
        ]
        content.append({"type": "text", "text": request.user})
        body = {
            "model": self.model,
            "messages": [{"role": "system", "content": request.system}, {"role": "user", "content": content}],
            "temperature": 0.0,
            "max_tokens": MAX_TOKENS,
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": request.task,
                    "schema": decoding_schema(request.schema, self.max_string),
                    "strict": True,
                },
            },
        }
        if self.compact:
            body["structured_outputs"] = {
                "json": body["response_format"]["json_schema"]["schema"],
                "disable_any_whitespace": True,
            }
        reply = self._server()._post(body)
        return parse_answer(reply["choices"][0]["message"].get("content") or "")

    def generate(self, requests: Sequence[StructuredRequest]) -> list[dict[str, Any] | None]:
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(self._one, requests))


class _SchemaLogits:
    """A transformers logits processor: in each row, every token its JSON-schema parser does not allow is masked.

    One parser (lm-format-enforcer's token enforcer) per row; a row that has ended (its end token generated)
    is left alone, since generate pads it whatever the logits say.
    """

    def __init__(self, enforcers: Sequence[Any], prompt_length: int, eos: int) -> None:
        self.enforcers, self.prompt_length, self.eos = enforcers, prompt_length, eos

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        mask = torch.zeros_like(scores)
        for row, tokens in enumerate(input_ids.tolist()):
            if self.eos in tokens[self.prompt_length :]:
                continue
            allowed = self.enforcers[row].get_allowed_tokens(tokens).allowed_tokens
            mask[row] = float("-inf")
            mask[row, allowed] = 0.0
        return scores + mask


class TransformersStructured:
    """``transformers:PATH``: greedy decoding constrained to each task's (bounded) JSON schema, ``micro_batch``
    requests per generate call (left-padded; 1 on CPU, 8 on a GPU); images go through the model's processor."""

    batch_size = 8

    def __init__(  # type: ignore[no-untyped-def]
        self,
        target: str,
        device: str | None = None,
        dtype: str | None = None,
        max_tokens: int = MAX_TOKENS,
        max_string: int = MAX_STRING,
        max_whitespace: int = MAX_WHITESPACE,
        model=None,
        micro_batch: int | None = None,
    ) -> None:
        self.path = Path(target)
        if not self.path.is_dir():  # the user's mistake first, then what this machine lacks
            raise BackendError(f"transformers: {self.path} is not a model folder")
        try:
            import lmformatenforcer  # noqa: F401
        except ImportError as exc:
            raise BackendError(
                "the transformers backend's structured mode needs lm-format-enforcer: pip install 'omnicurate[checker]'"
            ) from exc
        from .backends.base import fingerprint_folder
        from .backends.hf import load_model
        from .torch_compat import ensure_torchvision_importable

        ensure_torchvision_importable()
        import torch
        import transformers

        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.dtype = getattr(torch, dtype) if dtype else (torch.bfloat16 if self.device != "cpu" else torch.float32)
        self.processor = transformers.AutoProcessor.from_pretrained(self.path)
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        self.model = model if model is not None else load_model(self.path, self.device, self.dtype)
        self.max_tokens, self.max_string, self.max_whitespace = max_tokens, max_string, max_whitespace
        self.micro_batch = micro_batch or (8 if self.device != "cpu" else 1)
        self.tokenizer.padding_side = "left"
        self._fingerprint = fingerprint_folder(self.path)
        self._tokenizer_data: Any = None
        self.generated_tokens = 0
        """Tokens generated so far (the benchmark reports them)."""

    @property
    def model_id(self) -> str:
        return f"{self.path.resolve()}@{self._fingerprint}"

    def _enforcer(self, schema: dict[str, Any]) -> Any:
        from lmformatenforcer import CharacterLevelParserConfig, JsonSchemaParser, TokenEnforcer

        if self._tokenizer_data is None:
            self._tokenizer_data = tokenizer_data(self.tokenizer, self.model.config.get_text_config().vocab_size)
        parser = JsonSchemaParser(decoding_schema(schema, self.max_string))
        enforcer = TokenEnforcer(self._tokenizer_data, parser)
        # the enforcer replaces the parser's config with one of its own (the tokenizer's alphabet): set ours after
        parser.config = CharacterLevelParserConfig(
            alphabet=self._tokenizer_data.tokenizer_alphabet, max_consecutive_whitespaces=self.max_whitespace
        )
        return enforcer

    def _batch(self, requests: Sequence[StructuredRequest]) -> list[dict[str, Any] | None]:
        import torch
        from transformers import LogitsProcessorList

        from .media import load_image

        texts = [
            self.processor.apply_chat_template(hf_chat(r), tokenize=False, add_generation_prompt=True) for r in requests
        ]
        kwargs: dict[str, Any] = {"text": texts, "return_tensors": "pt", "padding": True}
        images = [load_image(Path(p)) for r in requests for p in r.images]
        if images:
            kwargs["images"] = images
        inputs = self.processor(**kwargs).to(self.device)
        for name, value in inputs.items():
            if torch.is_floating_point(value):
                inputs[name] = value.to(self.dtype)
        eos = self.tokenizer.eos_token_id
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos
        prompt_length = inputs["input_ids"].shape[1]
        constrain = _SchemaLogits([self._enforcer(r.schema) for r in requests], prompt_length, eos)
        with torch.inference_mode():
            out = self.model.generate(
                **inputs,
                do_sample=False,
                max_new_tokens=self.max_tokens,
                logits_processor=LogitsProcessorList([constrain]),
                pad_token_id=pad,
                eos_token_id=eos,
            )
        self.generated_tokens += int((out[:, prompt_length:] != pad).sum())
        return [parse_answer(self.tokenizer.decode(row[prompt_length:], skip_special_tokens=True)) for row in out]

    def generate(self, requests: Sequence[StructuredRequest]) -> list[dict[str, Any] | None]:
        answers: list[dict[str, Any] | None] = []
        for start in range(0, len(requests), self.micro_batch):
            answers += self._batch(requests[start : start + self.micro_batch])
        return answers


def tokenizer_data(tokenizer: Any, vocab_size: int) -> Any:
    """lm-format-enforcer's view of a tokenizer (its transformers integration predates transformers 5): each
    regular token's text, read after a "0" so that a word-start token keeps its leading space."""
    import functools

    from lmformatenforcer import TokenEnforcerTokenizerData

    special = set(tokenizer.all_special_ids)
    zero = tokenizer.encode("0", add_special_tokens=False)[-1]
    regular = []
    for index in range(min(vocab_size, len(tokenizer))):
        if index in special:
            continue
        after_zero = tokenizer.decode([zero, index])[1:]
        regular.append((index, after_zero, len(after_zero) > len(tokenizer.decode([index]))))

    def decode(tok: Any, tokens: list[int]) -> str:
        return tok.decode(tokens).rstrip("\ufffd")

    return TokenEnforcerTokenizerData(
        regular, functools.partial(decode, tokenizer), tokenizer.eos_token_id, False, vocab_size
    )


class VllmStructured:
    """``vllm:PATH``: vLLM's offline engine with structured outputs (``json`` schema), greedy, every request of a
    batch in one ``generate`` call. ``compact``: no free whitespace between JSON tokens (as ``MAX_WHITESPACE`` for
    transformers). ``llm``: an engine already started (e.g. the probe backend's). The grammar engine is vLLM's
    choice unless ``$CURATE_VLLM_ENGINE_ARGS`` sets ``structured_outputs_config``."""

    batch_size = 256

    def __init__(  # type: ignore[no-untyped-def]
        self,
        target: str,
        max_tokens: int = MAX_TOKENS,
        max_string: int = MAX_STRING,
        compact: bool = True,
        llm=None,
        **engine_args: Any,
    ) -> None:
        from .torch_compat import ensure_torchvision_importable

        ensure_torchvision_importable()
        try:
            import vllm
            from vllm.sampling_params import StructuredOutputsParams  # noqa: F401  (vLLM >= 0.12)
        except ImportError as exc:
            raise BackendError(f"the vllm backend needs vLLM >= 0.12 with structured outputs: {exc}") from exc
        import os

        import transformers

        from .backends.base import fingerprint_folder

        self.path = Path(target)
        if not self.path.is_dir():
            raise BackendError(f"vllm: {self.path} is not a model folder")
        self.processor = transformers.AutoProcessor.from_pretrained(self.path)
        self.max_tokens, self.max_string, self.compact = max_tokens, max_string, compact
        if llm is None:
            options: dict[str, Any] = {"limit_mm_per_prompt": {"image": 2, "audio": 0, "video": 0}}
            options.update(json.loads(os.environ.get("CURATE_VLLM_ENGINE_ARGS", "{}")))
            options.update(engine_args)
            llm = vllm.LLM(model=str(self.path), **options)
        self.llm = llm
        self._fingerprint = fingerprint_folder(self.path)

    @property
    def model_id(self) -> str:
        return f"{self.path.resolve()}@{self._fingerprint}"

    def _prompt(self, request: StructuredRequest) -> dict[str, Any]:
        from .media import load_image

        text = self.processor.apply_chat_template(hf_chat(request), tokenize=False, add_generation_prompt=True)
        prompt: dict[str, Any] = {"prompt": text}
        if request.images:
            prompt["multi_modal_data"] = {"image": [load_image(Path(p)) for p in request.images]}
        return prompt

    def generate(self, requests: Sequence[StructuredRequest]) -> list[dict[str, Any] | None]:
        return [parse_answer(text) for text in self.texts(requests)]

    def texts(self, requests: Sequence[StructuredRequest]) -> list[str]:
        """The engine's raw answers, before parsing."""
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        params = [
            SamplingParams(
                temperature=0.0,
                max_tokens=self.max_tokens,
                structured_outputs=StructuredOutputsParams(
                    json=decoding_schema(r.schema, self.max_string), disable_any_whitespace=self.compact
                ),
            )
            for r in requests
        ]
        answers = self.llm.generate([self._prompt(r) for r in requests], params, use_tqdm=False)
        return [a.outputs[0].text for a in answers]


def open_structured_model(spec: str, root: Path | None = None, concurrency: int = 8, batch_size: int = 0):  # type: ignore[no-untyped-def]
    """``kind:target`` → a structured model; a relative replay file is read from ``root``."""
    kind, sep, target = spec.partition(":")
    if not sep or not target:
        raise BackendError(f"unknown model backend {spec!r}; expected {SPEC_HELP}")
    model: ReplayStructured | OpenAIStructured | TransformersStructured | VllmStructured
    if kind == "replay":
        path = Path(target)
        model = ReplayStructured(str(path if path.is_absolute() or root is None else root / path))
    elif kind == "openai":
        model = OpenAIStructured(target, concurrency=concurrency)
    elif kind in ("transformers", "vllm"):
        path = Path(target)
        folder = str(path if path.is_absolute() or root is None else root / path)
        model = TransformersStructured(folder) if kind == "transformers" else VllmStructured(folder)
    else:
        raise BackendError(f"unknown model backend {spec!r}; expected {SPEC_HELP}")
    if batch_size:
        model.batch_size = batch_size
    return model
