#!/usr/bin/env bash
# The annotation UI's browser test drives Debian's chromium through Playwright (Playwright cannot
# download its own browser here). Idempotent: installs only what is missing.
# ci: background (.ci/run runs it beside the lint step)
set -euo pipefail
if ! dpkg -s chromium >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
echo "CURATE_CHROMIUM=$(command -v chromium || echo /usr/bin/chromium)" >> "$CURATE_CI_ENV"
