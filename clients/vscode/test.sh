#!/usr/bin/env bash
# Unit tests of the VS Code extension: the bundle under `node --test` with a fake `vscode`
# module, against the real daemon (stub provider); the webview in headless Chromium.
# Installs: npm packages from package-lock.json (npm ci), the daemon into the repo's .venv,
# and Debian's chromium if /usr/bin/chromium is missing.
# The tests run with their own HOME and XDG_* folders, and the run fails if the user's real
# elelem folders changed (scripts/real-state.sh).
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x /usr/bin/chromium ]; then
  echo "test.sh: installing chromium (apt-get)" >&2
  DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
npm ci --no-audit --no-fund --loglevel=error
npm run check
npm run build
PY="$(scripts/python.sh)"
export ELELEM_TEST_COMMAND="${ELELEM_TEST_COMMAND:-\"$PY\" -m elelem_daemon}"

SANDBOX="$(mktemp -d /tmp/elelem-vscode-test.XXXXXX)"
trap 'rm -rf "$SANDBOX"' EXIT
scripts/real-state.sh > "$SANDBOX/before"
mkdir -p "$SANDBOX"/{home,state,config,data,cache}
status=0
(
  # Nothing of the caller's that points the daemon elsewhere (ELELEM_STATE_DIR moves stored
  # sessions) or at a real provider.
  for name in $(env | grep -oE '^(ELELEM|ANTHROPIC|OPENAI|OLLAMA)_[A-Za-z0-9_]*=' | tr -d =); do
    case "$name" in ELELEM_TEST_COMMAND | ELELEM_CHROMIUM) ;; *) unset "$name" ;; esac
  done
  export HOME="$SANDBOX/home" XDG_STATE_HOME="$SANDBOX/state" XDG_CONFIG_HOME="$SANDBOX/config" \
    XDG_DATA_HOME="$SANDBOX/data" XDG_CACHE_HOME="$SANDBOX/cache"
  node --test test/*.test.js
) || status=$?
scripts/real-state.sh "$SANDBOX/before" || status=1
exit $status
