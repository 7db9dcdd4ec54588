"""Run by the tests with vLLM's own interpreter: probe items offline with both estimators, print JSON.

Usage: python vllm_offline_probe.py MODEL ITEMS.json  (items as ProbeItem fields; paths as strings)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from checker.backends.vllm_offline import VllmBackend
from checker.estimators import EstimatorConfig
from checker.prompts import build_request
from checker.views import PROBE_VIEWS, ProbeItem


def main() -> None:
    model, items_file = sys.argv[1], Path(sys.argv[2])
    items = []
    for fields in json.loads(items_file.read_text()):
        fields["image"], fields["audio"] = Path(fields["image"]), Path(fields["audio"])
        items.append(ProbeItem(**fields))
    backend = VllmBackend(model)
    result = {}
    for name in ("logprob", "sample"):
        config = EstimatorConfig(name=name)  # type: ignore[arg-type]
        requests = [build_request(i, v, seed=config.seed_for(i.id, v)) for i in items for v in PROBE_VIEWS]
        outputs = backend.probe(requests, config)  # every view of every item in one generate call
        result[name] = [{"item": o.item_id, "view": o.view, **o.to_json()} for o in outputs]
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
