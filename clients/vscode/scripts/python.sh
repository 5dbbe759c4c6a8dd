#!/usr/bin/env bash
# Print the path of a Python that runs the daemon (`python -m elelem_daemon`): the
# repository's .venv, created here, and (re)installed whenever pyproject.toml changed.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../../.." && pwd)"
PY="$REPO/.venv/bin/python"
STAMP="$REPO/.venv/.elelem-pyproject.sha256"
WANT="$(sha256sum "$REPO/pyproject.toml" | cut -d' ' -f1)"
if [ ! -x "$PY" ] || [ "$(cat "$STAMP" 2>/dev/null)" != "$WANT" ] || ! "$PY" -c "import elelem_daemon" 2>/dev/null; then
  echo "python.sh: installing the daemon into $REPO/.venv" >&2
  [ -x "$PY" ] || python3 -m venv "$REPO/.venv" >&2
  "$PY" -m pip install -q -e "$REPO" >&2
  echo "$WANT" > "$STAMP"
fi
echo "$PY"
