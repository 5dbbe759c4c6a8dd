#!/usr/bin/env bash
# Print the path of a Python that can run the daemon (`python -m elelem_daemon`): the
# repository's .venv, created and installed here if it is missing or cannot import it.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/../../.." && pwd)"
PY="$REPO/.venv/bin/python"
if ! "$PY" -c "import elelem_daemon.server" >/dev/null 2>&1; then
  echo "python.sh: installing the daemon into $REPO/.venv" >&2
  [ -x "$PY" ] || python3 -m venv "$REPO/.venv" >&2
  "$PY" -m pip install -q -e "$REPO" >&2
  "$PY" -c "import elelem_daemon.server" >&2 || { echo "python.sh: the daemon (elelem_daemon.server) cannot be imported" >&2; exit 1; }
fi
echo "$PY"
