#!/usr/bin/env bash
# Label Studio server for the bridge tests (tests/annotation_ui/labelstudio/).
# The server lives in a virtual environment of its own: its pinned dependencies must not constrain ours.
# A migrated template data folder (three users with known API tokens, legacy tokens enabled) is made once;
# each test session starts a server on a copy of it, which takes seconds instead of ~45 s of migrations.
# Both live outside the clone (default /opt/omnicurate/labelstudio-<version>-<key>, or $CURATE_LS_HOME), so that a
# later CI run on this machine reuses them (no install, no migrations); a change to this script (a new version,
# other users) gets a new folder: the key is the script's own hash.
# Idempotent: reruns keep what is already there. Writes LABEL_STUDIO_BIN and LABEL_STUDIO_TEMPLATE.
# ci: background (.ci/run runs it beside the lint step)
set -euo pipefail
LS_VERSION=1.23.2
KEY=$(sha256sum "$0" | cut -c1-12)
HOME_DIR="${CURATE_LS_HOME:-${CURATE_CI_CACHE:-/opt/omnicurate}/labelstudio-$LS_VERSION-$KEY}"
VENV="$HOME_DIR/venv"
TEMPLATE="$HOME_DIR/template"
mkdir -p "$HOME_DIR"
PY=${PYTHON:-python3}

if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('label-studio') != '$LS_VERSION')" 2>/dev/null; then
  echo "installing label-studio $LS_VERSION into $VENV (about 1.5 min)"
  "$PY" -m venv "$VENV"
  "$VENV/bin/pip" install -q "label-studio==$LS_VERSION" 2>&1 | grep -v "^WARNING: Location" || true
fi
"$VENV/bin/python" -c "import importlib.metadata as m; assert m.version('label-studio') == '$LS_VERSION'"

# Users of the template: the bridge's own account, then two annotators (e-mail, password, token).
USERS=(
  "curator@omnicurate.test curator-pass-1 omnicurate-curator-token"
  "rev1@omnicurate.test rev1-pass-12 omnicurate-rev1-token"
  "rev2@omnicurate.test rev2-pass-12 omnicurate-rev2-token"
)
MANIFEST="$TEMPLATE/omnicurate-users.json"
if [ ! -f "$MANIFEST" ]; then
  rm -rf "$TEMPLATE"
  mkdir -p "$TEMPLATE/data" "$TEMPLATE/home"
  for entry in "${USERS[@]}"; do
    read -r email password token <<<"$entry"
    # A clean environment: the server also reads bare USERNAME, PASSWORD, PORT, HOST, DEBUG and CI.
    env -i PATH="/usr/bin:/bin" HOME="$TEMPLATE/home" LABEL_STUDIO_BASE_DATA_DIR="$TEMPLATE/data" \
      LATEST_VERSION_CHECK=false COLLECT_ANALYTICS=false SENTRY_DSN= FRONTEND_SENTRY_DSN= \
      "$VENV/bin/label-studio" init omnicurate --username "$email" --password "$password" \
      --user-token "$token" --enable-legacy-api-token >"$TEMPLATE/init.log" 2>&1 \
      || { tail -n 30 "$TEMPLATE/init.log"; exit 1; }
  done
  "$PY" - "$MANIFEST" "${USERS[@]}" <<'EOF'
import json, sys
users = [dict(zip(("email", "password", "token"), entry.split())) for entry in sys.argv[2:]]
with open(sys.argv[1], "w") as fh:
    json.dump({"users": users}, fh, indent=2)
EOF
  echo "Label Studio template data folder ready: $TEMPLATE"
fi

if [ -n "${CURATE_CI_ENV:-}" ]; then
  echo "LABEL_STUDIO_BIN=$VENV/bin/label-studio" >>"$CURATE_CI_ENV"
  echo "LABEL_STUDIO_TEMPLATE=$TEMPLATE" >>"$CURATE_CI_ENV"
fi
