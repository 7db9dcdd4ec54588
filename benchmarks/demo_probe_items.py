"""The bundled demo items as probe items, read straight from the JSONL (no workspace, no database),
so the benchmarks run where only PyTorch and transformers are installed."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from checker.views import ProbeItem  # noqa: E402

DEMO = REPO / "omnicurate" / "demo" / "data"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def demo_probe_items(count: int | None = None) -> list[ProbeItem]:
    """``count`` items: the demo's 12, repeated under new ids when more are asked for (same media)."""
    base = [json.loads(line) for line in (DEMO / "items.jsonl").read_text().splitlines() if line.strip()]
    count = count or len(base)
    items = []
    for n in range(count):
        raw = base[n % len(base)]
        suffix = "" if n < len(base) else f"~{n // len(base)}"
        image, audio = DEMO / raw["image"], DEMO / raw["audio"]
        # a repeated item gets its own context so that no cache could serve it
        context = raw["context"] + ("" if not suffix else f" ({suffix[1:]})")
        items.append(
            ProbeItem(
                id=raw["id"] + suffix,
                content_hash=f"demo-{n}",
                context=context,
                question=raw["question"],
                options=raw["options"],
                answer=raw["answer"],
                image=image,
                audio=audio,
                image_sha=_sha(image),
                audio_sha=_sha(audio),
            )
        )
    return items
