"""GPU check of the probe checker: a real-size omni model on demo items, both estimators, in < 8 minutes.

With no weights at hand (no network on the GPU machine), it builds a randomly initialised model of the
Qwen2.5-Omni-7B thinker configuration in bf16 directly on the GPU (speed and the estimators' behaviour
do not need trained weights), runs the ``transformers`` backend over every view of the demo items
(repeated under new ids up to ``--items``) with ``sample`` and ``logprob``, and prints items/s, forward
passes (one prefill per view, batched ``--micro-batch`` rows at a time), generated tokens and how often the two estimators reach the same verdict. Goals: at least 5×
fewer generated tokens for ``logprob``, and the same verdict on at least 95 % of items.

    python benchmarks/gpu_check.py                          # random 7B thinker on cuda
    python benchmarks/gpu_check.py --model /models/Qwen2.5-Omni-7B
    python benchmarks/gpu_check.py --probe vllm:/models/Qwen2.5-Omni-7B
    python benchmarks/gpu_check.py --size tiny --device cpu --items 4   # the same path on a laptop

``--mode score`` measures screening instead (Omni-StoryBench §4.1): the same random vision-language model of
real size scores synthetic story candidates (two page images and their narration each) on the four criteria,
1–10 with a rationale, under JSON-schema constrained decoding (``checker.structured``), and prints candidates per
second, generated tokens per candidate and the share of answers that validate. Random weights write no brief
rationale, so strings are bounded at ``--max-string`` characters while decoding (a trained judge's sentence).

    python benchmarks/gpu_check.py --mode score                         # random 7B thinker on cuda
    python benchmarks/gpu_check.py --mode score --score-model vllm:/models/Qwen2.5-Omni-7B
    python benchmarks/gpu_check.py --mode score --size tiny --device cpu --items 2

Needs only PyTorch, transformers and lm-format-enforcer (plus numpy and Pillow); no database, no network.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path
from typing import Any

from demo_probe_items import demo_probe_items

from checker.backends.base import ProbeBackend
from checker.estimators import EstimatorConfig
from checker.run import RunStats, run_check
from checker.verdicts import ItemResult
from checker.views import PROBE_VIEWS

DEADLINE_S = 8 * 60
REFERENCE_PAIR_AND_FULL_SAMPLES = 3 * 5 + 10


def log(message: str) -> None:
    print(message, flush=True)


def random_backend(size: str, device: str, scratch: Path, micro_batch: int | None) -> ProbeBackend:
    """A random Qwen2.5-Omni thinker built in place on ``device`` (no checkpoint written)."""
    from checker.backends.hf import TransformersBackend

    model = random_model(size, device, scratch)
    return TransformersBackend(str(scratch), device=device, model=model, micro_batch=micro_batch)


def random_model(size: str, device: str, scratch: Path):  # type: ignore[no-untyped-def]
    """A random Qwen2.5-Omni thinker built in place on ``device``, its processor saved in ``scratch``."""
    import torch
    import transformers

    from checker.random_omni import build_processor, thinker_config

    processor = build_processor(size)  # type: ignore[arg-type]
    processor.save_pretrained(scratch)
    config = thinker_config(size, processor.tokenizer)  # type: ignore[arg-type]
    dtype = torch.bfloat16 if device != "cpu" else torch.float32
    torch.manual_seed(0)
    started = time.perf_counter()
    with torch.device(device):
        try:
            model = transformers.Qwen2_5OmniThinkerForConditionalGeneration._from_config(config, dtype=dtype)
        except TypeError:  # transformers 4.x spells it torch_dtype
            model = transformers.Qwen2_5OmniThinkerForConditionalGeneration._from_config(config, torch_dtype=dtype)
    model.eval()
    params = sum(p.numel() for p in model.parameters())
    log(
        f"model: random Qwen2.5-Omni thinker ({size}), {params / 1e6:,.1f} M parameters, {dtype}, "
        f"built on {device} in {time.perf_counter() - started:.1f} s"
    )
    return model


def score_candidates(count: int, scratch: Path) -> list[Any]:
    """``count`` synthetic story candidates as screening score requests: two drawn pages and their narration."""
    from PIL import Image, ImageDraw

    from curation.screening.model import score_request

    pages = []
    for index in range(max(2, min(count + 1, 16))):
        path = scratch / f"page-{index}.png"
        image = Image.new("RGB", (448, 336), (40 + 13 * index % 200, 90, 160 - 7 * index % 120))
        ImageDraw.Draw(image).ellipse((60 + 9 * index % 200, 50, 260, 250), fill=(230, 210, 120))
        image.save(path)
        pages.append(str(path))
    text = "Kito and the elephant walked to the well. A cool wind blew, and Omari found an old flute."
    return [
        score_request(
            f"cand-{i:05d}",
            (pages[i % len(pages)], f"{text} (page {i})"),
            (pages[(i + 1) % len(pages)], f"{text} (page {i + 1})"),
        )
        for i in range(count)
    ]


def score_mode(args: argparse.Namespace, scratch: Path) -> dict[str, Any]:
    """Candidates per second of the screening scorer: warm-up, then as many candidates as the budget allows."""
    from checker.structured import TransformersStructured, open_structured_model
    from curation.screening.schema import Scores

    if args.score_model:
        scorer = open_structured_model(args.score_model)
    else:
        model = random_model(args.size, args.device, scratch)
        scorer = TransformersStructured(
            str(scratch),
            device=args.device,
            model=model,
            max_string=args.max_string,
            max_tokens=args.max_tokens,
            micro_batch=args.micro_batch,
        )
    batch = max(1, getattr(scorer, "micro_batch", 1))
    started = time.perf_counter()
    scorer.generate(score_candidates(batch, scratch))
    per_candidate = max(time.perf_counter() - started, 1e-3) / batch
    log(f"warm-up: {per_candidate:.2f} s per candidate (batches of {batch})")
    affordable = int(args.budget_s / (per_candidate * 1.25))
    count = max(1, min(args.items, affordable))
    if count < args.items:
        log(f"time budget {args.budget_s:.0f} s: scoring {count} candidates instead of {args.items}")
    candidates = score_candidates(count, scratch)
    tokens_before = getattr(scorer, "generated_tokens", 0)
    started = time.perf_counter()
    answers = scorer.generate(candidates)
    seconds = time.perf_counter() - started
    valid = 0
    for answer in answers:
        try:
            Scores.model_validate(answer)
            valid += 1
        except ValueError:
            pass
    generated = getattr(scorer, "generated_tokens", 0) - tokens_before
    figures: dict[str, Any] = {
        "mode": "score",
        "model": scorer.model_id,
        "candidates": count,
        "device": args.device,
        "candidates_per_second": count / seconds,
        "seconds": seconds,
        "valid_share": valid / count,
        "generated_tokens_per_candidate": generated / count if generated else None,
        "micro_batch": batch,
        "max_string": args.max_string,
    }
    log(
        f"   score: {count} candidates in {seconds:.1f} s = {count / seconds:.3f} candidates/s; "
        f"{valid}/{count} answers fit the schema"
        + (f"; {generated / count:.0f} generated tokens per candidate" if generated else "")
    )
    return figures


def open_any(args: argparse.Namespace, scratch: Path) -> ProbeBackend:
    if args.probe:
        from checker.backends import open_backend

        return open_backend(args.probe)
    if args.model:
        from checker.backends.hf import TransformersBackend

        return TransformersBackend(args.model, device=args.device, micro_batch=args.micro_batch)
    return random_backend(args.size, args.device, scratch, args.micro_batch)


def measure(backend: ProbeBackend, items: list, name: str) -> tuple[list[ItemResult], RunStats, float]:
    started = time.perf_counter()
    results, stats = run_check(items, backend, EstimatorConfig(name=name))  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    log(
        f"{name:>8}: {len(items)} items in {seconds:.1f} s = {len(items) / seconds:.2f} items/s; "
        f"{stats.model_calls} prefills ({stats.model_calls / len(items):.1f}/item), "
        f"{stats.generated_tokens} generated tokens ({stats.generated_tokens / len(items):.1f}/item)"
    )
    return results, stats, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a local model folder (transformers backend)")
    parser.add_argument("--probe", help="any backend spec, e.g. vllm:/models/Qwen2.5-Omni-7B")
    parser.add_argument("--size", choices=["7b", "tiny"], default="7b", help="random model size without --model")
    parser.add_argument("--device", default=None, help="cuda (default when available) or cpu")
    parser.add_argument("--items", type=int, default=96, help="most items to probe (fewer if time is short)")
    parser.add_argument("--budget-s", type=float, default=330.0, help="seconds allowed for the two timed runs")
    parser.add_argument(
        "--micro-batch",
        type=int,
        default=None,
        help="transformers backend: requests per forward pass (default 8 on GPU, 1 on CPU)",
    )
    parser.add_argument("--json", dest="json_out", help="also write the figures to this file")
    parser.add_argument("--mode", choices=["probe", "score"], default="probe", help="probe items, or score stories")
    parser.add_argument("--score-model", help="score mode: a structured backend spec instead of the random model")
    parser.add_argument("--max-string", type=int, default=32, help="score mode: characters per string while decoding")
    parser.add_argument("--max-tokens", type=int, default=1024, help="score mode: new tokens per answer at most")
    args = parser.parse_args()
    wall = time.perf_counter()

    from checker.torch_compat import ensure_torchvision_importable

    ensure_torchvision_importable()
    import torch

    args.device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if args.device == "cuda":
        log(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    if args.mode == "score":
        with tempfile.TemporaryDirectory() as scratch:
            figures = score_mode(args, Path(scratch))
        figures["wall_seconds"] = time.perf_counter() - wall
        if args.device == "cuda":
            figures["peak_gpu_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
        log(f"wall time {figures['wall_seconds']:.0f} s (limit {DEADLINE_S} s)")
        if args.json_out:
            Path(args.json_out).write_text(json.dumps(figures, indent=2))
        return
    with tempfile.TemporaryDirectory() as scratch:
        backend = open_any(args, Path(scratch))
        warm = demo_probe_items(1)
        started = time.perf_counter()
        run_check(warm, backend, EstimatorConfig(name="logprob"))  # compile kernels, load encoders
        run_check(warm, backend, EstimatorConfig(name="logprob", seed=1))
        per_item = max(time.perf_counter() - started, 1e-3) / 2
        log(f"warm-up: {per_item:.2f} s per item ({len(PROBE_VIEWS)} views)")
        affordable = int(args.budget_s / (2 * per_item * 1.25))
        count = max(1, min(args.items, affordable))
        if count < args.items:
            log(f"time budget {args.budget_s:.0f} s: probing {count} items instead of {args.items}")
        items = demo_probe_items(count)
        sample, sample_stats, sample_s = measure(backend, items, "sample")
        logprob, logprob_stats, logprob_s = measure(backend, items, "logprob")
        backend.close()

    agree = sum(a.verdict == b.verdict for a, b in zip(sample, logprob, strict=True)) / len(items)
    ratio = sample_stats.generated_tokens / max(logprob_stats.generated_tokens, 1)
    verdicts: dict[str, Any] = {}
    for name, results in (("sample", sample), ("logprob", logprob)):
        verdicts[name] = {v: sum(r.verdict == v for r in results) for v in sorted({r.verdict for r in results})}
    figures = {
        "items": len(items),
        "device": args.device,
        "items_per_second": {"sample": len(items) / sample_s, "logprob": len(items) / logprob_s},
        "prefills_per_item": {
            "sample": sample_stats.model_calls / len(items),
            "logprob": logprob_stats.model_calls / len(items),
        },
        "generated_tokens_per_item": {
            "sample": sample_stats.generated_tokens / len(items),
            "logprob": logprob_stats.generated_tokens / len(items),
        },
        "reference_sampled_answers_pair_and_full_views": REFERENCE_PAIR_AND_FULL_SAMPLES,
        "generated_token_ratio": ratio,
        "verdict_agreement": agree,
        "verdicts": verdicts,
        "wall_seconds": time.perf_counter() - wall,
    }
    if args.device == "cuda":
        figures["peak_gpu_memory_gib"] = torch.cuda.max_memory_allocated() / 2**30
    log(f"verdicts: {json.dumps(verdicts)}")
    log(
        f"generated tokens sample/logprob: {ratio:.2f}x (goal >= 5x: {'met' if ratio >= 5 else 'NOT met'}); "
        f"the reference samples {REFERENCE_PAIR_AND_FULL_SAMPLES} free-form answers per item for the pair and "
        "full views alone"
    )
    log(
        f"same verdict from both estimators: {agree:.1%} of {len(items)} items "
        f"(goal >= 95%: {'met' if agree >= 0.95 else 'NOT met'})"
    )
    log(
        f"wall time {figures['wall_seconds']:.0f} s (limit {DEADLINE_S} s)"
        + (f", peak GPU memory {figures['peak_gpu_memory_gib']:.1f} GiB" if "peak_gpu_memory_gib" in figures else "")
    )
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(figures, indent=2, default=lambda x: None if math.isnan(x) else x))


if __name__ == "__main__":
    main()
