"""Sources of the judge demo, written into a folder: a dozen any-to-any tasks with their media, three
systems' responses, recorded checklist drafts (replay) and recorded judge outputs (replay), and the
three annotators' scores and choices. Media are made here (PIL, a sine tone, PyAV), so nothing large is bundled,
and everything is seeded: the same folder every time.
"""

from __future__ import annotations

import hashlib
import json
import math
import wave
from pathlib import Path
from typing import Any

import numpy as np

from curation.kinds.judge.rubrics import CRITERIA

SYSTEMS = ("sys-a", "sys-b", "sys-c")
QUALITY = {"sys-a": 4.2, "sys-b": 3.0, "sys-c": 2.0}
"""Each system's typical score: the annotators and the judges see it through their own noise."""
ANNOTATORS = ("ann1", "ann2", "ann3")
"""Three annotators per sample, as in the paper's Table 2 (``[judge] annotators_per_sample``)."""
JUDGES = ("judge-gemini", "judge-gpt")
JUDGE_NOISE = {"judge-gemini": 1.0, "judge-gpt": 1.4}

TASKS: list[dict[str, Any]] = [
    {"id": "t2t-01", "instruction": "Write a haiku about autumn rain.", "output": "text", "source": "WildBench"},
    {"id": "t2t-02", "instruction": "Explain to a child why the sky is blue.", "output": "text", "source": "IfEval"},
    {"id": "i2t-01", "instruction": "Which colour fills most of the picture?", "inputs": {"image": "red"}, "output": "text", "source": "MMVET"},
    {"id": "i2t-02", "instruction": "Describe the shapes in the image.", "inputs": {"image": "blue"}, "output": "text", "source": "VisITBench"},
    {"id": "a2t-01", "instruction": "Does the pitch of the tone rise or fall?", "inputs": {"audio": 440.0}, "output": "text", "source": "AirBench"},
    {"id": "v2t-01", "instruction": "In which direction does the bright bar move?", "inputs": {"video": 1}, "output": "text", "source": "TemporalBench"},
    {"id": "v2t-02", "instruction": "What changes between the start and the end of the clip?", "inputs": {"video": 2}, "output": "text", "source": "CVRR"},
    {"id": "t2i-01", "instruction": "Draw a green square on a white background.", "output": "image", "source": "T2ICompBench"},
    {"id": "t2a-01", "instruction": "Generate a calm, low hum.", "output": "audio", "source": "AudioCaps"},
    {"id": "t2v-01", "instruction": "A white bar sweeps across coloured tiles.", "output": "video", "source": "VBench"},
    {"id": "i2a-01", "instruction": "Generate the sound this picture suggests.", "inputs": {"image": "orange"}, "output": "audio", "source": "ImageHear"},
    {"id": "v2a-01", "instruction": "Generate a soundtrack that fits the clip.", "inputs": {"video": 3}, "output": "audio", "source": "VGGSound"},
]  # fmt: skip

TEXT_ANSWERS = {
    "sys-a": "A careful, complete answer that addresses every part of the instruction.",
    "sys-b": "A partial answer: it addresses the main point but skips details.",
    "sys-c": "An off-topic reply.",
}


def _image(path: Path, colour: str, size: tuple[int, int] = (96, 72)) -> str:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, colour)
    ImageDraw.Draw(image).rectangle((size[0] // 4, size[1] // 4, size[0] // 2, size[1] // 2), fill="white")
    image.save(path, "PNG")
    return path.name


def _tone(path: Path, freq: float, seconds: float = 1.0, rate: int = 16000, rising: bool = True) -> str:
    t = np.arange(int(seconds * rate)) / rate
    sweep = freq * (1 + (0.5 if rising else -0.3) * t / seconds)
    signal = 0.3 * np.sin(2 * math.pi * np.cumsum(sweep) / rate)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes((signal * 32767).astype("<i2").tobytes())
    return path.name


def _video(path: Path, seed: int, seconds: float = 1.0, fps: int = 8, size: tuple[int, int] = (96, 64)) -> str:
    import av

    width, height = size
    blocks = np.random.default_rng(seed).integers(0, 256, size=(6, 8, 3))
    y, x = np.mgrid[0:height, 0:width]
    with av.open(str(path), "w") as out:
        stream = out.add_stream("mpeg4", rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        stream.codec_context.gop_size = 4
        for n in range(int(seconds * fps)):
            img = blocks[y * 6 // height, x * 8 // width].astype(np.int64)
            img[np.abs(x - int(n / fps * width)) < width // 12] = 255
            frame = av.VideoFrame.from_ndarray(img.astype(np.uint8), format="rgb24")
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return path.name


def _media(folder: Path, modality: str, key: Any, name: str) -> str:
    if modality == "image":
        return "media/" + _image(folder / f"{name}.png", str(key))
    if modality == "audio":
        return "media/" + _tone(folder / f"{name}.wav", float(key))
    return "media/" + _video(folder / f"{name}.mp4", int(key))


def _draft(task: dict[str, Any]) -> dict[str, Any]:
    """A recorded model draft: three questions per rubric, specific to the task's instruction."""
    what = task["instruction"].rstrip(".?")
    output = task["output"]
    questions = {
        "relevance": [f"Does the {output} respond to: {what}?", f"Does the {output} stay on the task throughout?", f"Is every part of the {output} pertinent?"],
        "trustworthiness": [f"Is the {output} free of factual errors?", f"Does the {output} avoid harmful content?", f"Does the {output} avoid inventing details not in the input?"],
        "creativity": [f"Is the {output} original rather than generic?", f"Does the {output} show a fresh approach?", f"Does the {output} avoid predictable phrasing or imagery?"],
        "clarity": [f"Is the {output} easy to understand?", f"Is the {output} free of ambiguity?", f"Is the {output} well organized?"],
        "coherence": [f"Does the {output} flow logically?", f"Is the {output} consistent from start to end?", f"Are the parts of the {output} connected?"],
        "completeness": [f"Does the {output} address every aspect of: {what}?", f"Does the {output} include the necessary details?", f"Is the {output} deep enough for the task?"],
    }  # fmt: skip
    captions = {}
    for modality in task.get("inputs", {}):
        if modality == "audio":
            captions["audio"] = "A single sine tone that rises steadily in pitch, with no other sound."
        elif modality == "video":
            captions["video"] = "Coloured tiles with a bright white vertical bar sweeping from left to right."
    return {"task": task["id"], "model": "gemini-1.5-pro", "captions": captions, "checklist": questions}


def _clip(value: float) -> int:
    return int(min(5, max(1, round(value))))


def write_sources(folder: Path) -> dict[str, Path]:
    """Write tasks.jsonl, responses.jsonl, drafts.jsonl and media into ``folder``; return their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    media = folder / "media"
    media.mkdir(exist_ok=True)
    tasks, responses, drafts = [], [], []
    for task in TASKS:
        inputs = {m: _media(media, m, key, f"{task['id']}-in") for m, key in task.get("inputs", {}).items()}
        tasks.append({k: v for k, v in task.items() if k != "inputs"} | {"inputs": inputs, "license": "CC-BY-4.0"})
        drafts.append(_draft(task))
        for n, system in enumerate(SYSTEMS):
            output = task["output"]
            if output == "text":
                value: str = TEXT_ANSWERS[system]
            elif output == "image":
                value = _media(media, "image", ["green", "gray", "black"][n], f"{task['id']}-{system}")
            elif output == "audio":
                value = _media(media, "audio", 110.0 * (n + 1), f"{task['id']}-{system}")
            else:
                value = _media(media, "video", 10 + n, f"{task['id']}-{system}")
            responses.append({"task": task["id"], "system": system, "output": {output: value}})
    paths = {
        "tasks": folder / "tasks.jsonl",
        "responses": folder / "responses.jsonl",
        "drafts": folder / "drafts.jsonl",
    }
    for name, rows in (("tasks", tasks), ("responses", responses), ("drafts", drafts)):
        paths[name].write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return paths


def human_scores(sample: dict[str, Any], annotator: str) -> dict[str, int]:
    """An annotator's 1–5 scores of a score sample: the system's quality plus their seeded noise."""
    rng = np.random.default_rng(_seed(sample["id"], annotator))
    base = QUALITY[sample["system"]]
    return {c: _clip(base + rng.normal(0, 0.5)) for c in CRITERIA}


def human_choices(sample: dict[str, Any], annotator: str) -> dict[str, str]:
    rng = np.random.default_rng(_seed(sample["id"], annotator))
    out = {}
    for c in CRITERIA:
        gap = QUALITY[sample["first_system"]] - QUALITY[sample["second_system"]] + rng.normal(0, 1.2)
        out[c] = "first" if gap > 0.5 else "second" if gap < -0.5 else "tie"
    return out


def judge_outputs(samples: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """Recorded judge outputs: three samples per criterion, each judge with its own noise."""
    lines = []
    for sample in samples:
        for judge in JUDGES:
            rng = np.random.default_rng(_seed(sample["id"], judge))
            noise = JUDGE_NOISE[judge]
            if kind == "score":
                scores = {
                    c: [_clip(QUALITY[sample["system"]] + rng.normal(0, noise)) for _ in range(3)] for c in CRITERIA
                }
                lines.append({"sample": sample["id"], "judge": judge, "scores": scores})
            else:
                gap = QUALITY[sample["first_system"]] - QUALITY[sample["second_system"]]
                choices = {
                    c: ["first" if g > 0.5 else "second" if g < -0.5 else "tie" for g in gap + rng.normal(0, noise, 3)]
                    for c in CRITERIA
                }
                lines.append({"sample": sample["id"], "judge": judge, "choices": choices})
    return lines


def _seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\n".join(parts).encode()).digest()[:8], "big")
