#!/usr/bin/env bash
# The oldest mlcroissant the project supports, in a small virtual environment of its own, so that a test reads
# every kind's croissant.json with it as well as with the latest (the project venv's): the minimum is the
# `mlcroissant>=X` of pyproject.toml's release-check extra, read here, so raising the pin tests the new one.
# Only what loading a croissant.json and reading its record sets needs: mlcroissant and pyarrow (Parquet files).
# Idempotent: an environment that imports that version is kept (default
# /opt/omnicurate/mlcroissant-<version>-<key>, the key being this script's hash; or $CURATE_MLCROISSANT_MIN_VENV).
# Writes CURATE_MLCROISSANT_MIN_PYTHON to $CURATE_CI_ENV (tests/exports/test_croissant_min_version.py reads it).
# ci: background (.ci/run runs it beside the lint step)
set -euo pipefail
VERSION=$(grep -o '"mlcroissant>=[0-9.]*' pyproject.toml | cut -d= -f2)
[ -n "$VERSION" ] || { echo "pyproject.toml names no mlcroissant>=X" >&2; exit 1; }
KEY=$(sha256sum "$0" | cut -c1-12)
VENV="${CURATE_MLCROISSANT_MIN_VENV:-${CURATE_CI_CACHE:-/opt/omnicurate}/mlcroissant-$VERSION-$KEY}"
PY="$VENV/bin/python"
CHECK="import importlib.metadata as m, sys, pyarrow, mlcroissant; sys.exit(m.version('mlcroissant') != '$VERSION')"
if ! { [ -x "$PY" ] && "$PY" -c "$CHECK" >/dev/null 2>&1; }; then
  echo "installing mlcroissant $VERSION into $VENV"
  mkdir -p "$(dirname "$VENV")"
  "${PYTHON:-python3}" -m venv "$VENV"
  "$PY" -m pip install -q "mlcroissant==$VERSION" pyarrow 2>&1 | grep -v "^WARNING: Location" || true
fi
"$PY" -c "$CHECK"
if [ -n "${CURATE_CI_ENV:-}" ]; then
  echo "CURATE_MLCROISSANT_MIN_PYTHON=$PY" >>"$CURATE_CI_ENV"
fi
echo "mlcroissant $VERSION environment: $PY"
