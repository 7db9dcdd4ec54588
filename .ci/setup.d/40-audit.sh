#!/usr/bin/env bash
# Media normalization and audits: ffmpeg (ebur128, the independent loudness meter in the tests; loudnorm in
# the benchmark) and fpcalc from libchromaprint-tools (audio fingerprints). Idempotent.
set -euo pipefail
missing=""
for p in ffmpeg libchromaprint-tools; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
command -v ffmpeg >/dev/null && command -v fpcalc >/dev/null
