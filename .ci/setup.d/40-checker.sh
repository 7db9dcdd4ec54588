#!/usr/bin/env bash
# The checker's transformers backend tests need torch, transformers and torchvision in the project venv.
# torch is pinned to the CPU wheel on disk (an unpinned install takes the 5.5 GB CUDA build);
# PyPI's torchvision is installed without dependencies so it cannot replace that torch
# (checker/torch_compat.py lets it import beside a CPU torch). Idempotent.
set -euo pipefail
PIP=".venv/bin/pip"
if ! .venv/bin/python -c "import torch, transformers, torchvision.version" >/dev/null 2>&1; then
  "$PIP" install -q "torch==2.13.0" "transformers>=5.19" "tokenizers>=0.21" 2>&1 | grep -v "^WARNING: Location" || true
  "$PIP" install -q --no-deps "torchvision==0.28.0" 2>&1 | grep -v "^WARNING: Location" || true
fi
# JSON-schema constrained decoding for the transformers backend's structured (screening) mode: pure Python.
if ! .venv/bin/python -c "import lmformatenforcer" >/dev/null 2>&1; then
  "$PIP" install -q "lm-format-enforcer>=0.11" 2>&1 | grep -v "^WARNING: Location" || true
fi
# datasets' Audio feature decodes with torchcodec (tests/exports/test_release_loading.py): 0.13.0 is the build for
# torch 2.13.0 (0.14 and newer fail to load beside it), installed without dependencies so it cannot replace that
# torch; it loads the system FFmpeg (.ci/run installs Debian's ffmpeg).
if ! .venv/bin/python -c "from torchcodec.decoders import AudioDecoder" >/dev/null 2>&1; then
  "$PIP" install -q --no-deps "torchcodec==0.13.0" 2>&1 | grep -v "^WARNING: Location" || true
fi
.venv/bin/python -c "import torch, transformers; print('checker: torch', torch.__version__, 'transformers', transformers.__version__)"
