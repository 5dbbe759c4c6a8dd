#!/usr/bin/env bash
# The unit tests N times in a row under load (issue 40: no racy test). Not part of CI.
# Usage: scripts/loop-unit.sh [N] [test files...]   (default 20 runs of test/*.test.js)
#   e.g. scripts/loop-unit.sh 20 test/webview.test.js
# Starts two busy processes (one per core of the 2-core machine), runs `node --test` with
# test.sh's environment (own HOME and XDG_* folders, the caller's ELELEM_/provider variables
# unset) each time, stops the busy processes at the end, and prints passed/failed counts.
# Every run goes on after a failure; the failed runs' output is kept under $LOG_DIR. Like
# test.sh, it fails if the user's real elelem folders changed (scripts/real-state.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
N="${1:-20}"
shift || true
FILES=("$@")
[ ${#FILES[@]} -gt 0 ] || FILES=(test/*.test.js)
case "$N" in '' | *[!0-9]*) echo "loop-unit.sh: N must be a number, got $N" >&2; exit 2 ;; esac

npm ci --no-audit --no-fund --loglevel=error >/dev/null || exit 1
npm run --silent check || exit 1
npm run --silent build || exit 1
PY="$(scripts/python.sh)"
export ELELEM_TEST_COMMAND="${ELELEM_TEST_COMMAND:-\"$PY\" -m elelem_daemon}"

LOG_DIR="$(mktemp -d /tmp/elelem-loop-unit.XXXXXX)"
scripts/real-state.sh > "$LOG_DIR/real-state.before"
BUSY=()
stop_busy() {
  for pid in "${BUSY[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${BUSY[@]}"; do wait "$pid" 2>/dev/null; done
  BUSY=()
}
trap stop_busy EXIT
for _ in 1 2; do
  sh -c 'while :; do :; done' &
  BUSY+=("$!")
done
echo "loop-unit.sh: busy processes ${BUSY[*]}; $N runs of ${FILES[*]}; logs in $LOG_DIR" >&2

passed=0
failed=0
for i in $(seq 1 "$N"); do
  SANDBOX="$(mktemp -d /tmp/elelem-vscode-test.XXXXXX)"
  mkdir -p "$SANDBOX"/{home,state,config,data,cache}
  start=$(date +%s)
  (
    for name in $(env | grep -oE '^(ELELEM|ANTHROPIC|OPENAI|OLLAMA)_[A-Za-z0-9_]*=' | tr -d =); do
      case "$name" in ELELEM_TEST_COMMAND | ELELEM_CHROMIUM) ;; *) unset "$name" ;; esac
    done
    export HOME="$SANDBOX/home" XDG_STATE_HOME="$SANDBOX/state" XDG_CONFIG_HOME="$SANDBOX/config" \
      XDG_DATA_HOME="$SANDBOX/data" XDG_CACHE_HOME="$SANDBOX/cache"
    node --test "${FILES[@]}"
  ) >"$LOG_DIR/run-$i.log" 2>&1
  status=$?
  rm -rf "$SANDBOX"
  if [ "$status" = 0 ]; then
    passed=$((passed + 1))
    rm -f "$LOG_DIR/run-$i.log"
    echo "run $i/$N: passed ($(($(date +%s) - start)) s)" >&2
  else
    failed=$((failed + 1))
    echo "run $i/$N: FAILED ($(($(date +%s) - start)) s): $(grep -E '^not ok' "$LOG_DIR/run-$i.log" | tr '\n' ' ')" >&2
  fi
done
stop_busy
scripts/real-state.sh "$LOG_DIR/real-state.before" || failed=$((failed + 1))
echo "loop-unit.sh: $passed of $N runs passed, $failed failed (${FILES[*]}; logs of failed runs in $LOG_DIR)"
[ "$failed" = 0 ]
