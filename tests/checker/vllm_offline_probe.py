"""Run by the tests with vLLM's own interpreter: probe items offline with both estimators, print JSON.

Usage: python vllm_offline_probe.py MODEL ITEMS.json  (items as ProbeItem fields; paths as strings)

The same engine then answers structured (JSON-schema) screening requests through ``VllmStructured``, so that one
engine start (the costly part on CPU) serves both checks.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from checker.backends.vllm_offline import VllmBackend
from checker.estimators import EstimatorConfig
from checker.prompts import build_request
from checker.structured import VllmStructured, parse_answer
from checker.views import PROBE_VIEWS, ProbeItem


def main() -> None:
    model, items_file = sys.argv[1], Path(sys.argv[2])
    items = []
    for fields in json.loads(items_file.read_text()):
        fields["image"], fields["audio"] = Path(fields["image"]), Path(fields["audio"])
        items.append(ProbeItem(**fields))
    backend = VllmBackend(model, limit_mm_per_prompt={"image": 2, "audio": 1, "video": 0})  # 2: a story score
    result = {}
    for name in ("logprob", "sample"):
        config = EstimatorConfig(name=name)  # type: ignore[arg-type]
        requests = [build_request(i, v, seed=config.seed_for(i.id, v)) for i in items for v in PROBE_VIEWS]
        outputs = backend.probe(requests, config)  # every view of every item in one generate call
        result[name] = [{"item": o.item_id, "view": o.view, **o.to_json()} for o in outputs]
    from curation.screening.model import score_request, speech_request

    structured = VllmStructured(model, llm=backend.llm, max_tokens=600, max_string=6)
    image, other = str(items[0].image), str(items[1].image)
    requests = [
        score_request("c1", (image, "Once upon a time."), (other, "The end.")),
        speech_request("c2", "A short story.", ['"Look!" said Bo.']),
    ]
    result["structured"] = [
        {"task": r.task, "text": t, "answer": parse_answer(t)}
        for r, t in zip(requests, structured.texts(requests), strict=True)
    ]
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
