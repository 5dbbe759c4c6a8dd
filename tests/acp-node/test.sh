#!/usr/bin/env bash
# Conformance tests with the official TypeScript ACP SDK: installs it (npm ci, from the
# committed package-lock.json), then runs `node --test` against `elelem daemon --acp`.
# ELELEM_PYTHON picks the interpreter that has elelem_daemon installed (default: the
# repo's .venv if present, else python3).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
if [[ -z "${ELELEM_PYTHON:-}" && -x "$root/.venv/bin/python" ]]; then
  export ELELEM_PYTHON="$root/.venv/bin/python"
fi
cd "$here"
npm ci --no-audit --no-fund --loglevel=error
node --test --test-concurrency=1 ./*.test.mjs
