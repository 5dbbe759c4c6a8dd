#!/usr/bin/env bash
# Unit tests of the VS Code extension: the bundle under `node --test` with a fake `vscode`
# module, against the real daemon (stub provider); the webview in headless Chromium.
# Installs: npm packages from package-lock.json (npm ci), the daemon into the repo's .venv,
# and Debian's chromium if /usr/bin/chromium is missing.
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
node --test test/*.test.js
