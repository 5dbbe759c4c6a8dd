#!/usr/bin/env bash
# End-to-end test: the packaged .vsix in real VS Code (code-server) driven by Playwright with
# Debian's Chromium, against the real daemon (stub provider).
# Installs (idempotent, see scripts/install-e2e.sh): Node 24 and code-server from npm into
# ~/.cache/elelem-vscode-e2e, chromium and libkrb5-dev from apt; npm ci; the daemon's .venv.
# Fails loudly when anything cannot be installed: it never skips.
# The screenshot goes to test-results/screenshot.png (or ELELEM_E2E_SCREENSHOT); README uses images/.
# code-server, and so the daemon it starts, runs with its own HOME and XDG_* folders; the run
# fails if the user's real elelem folders changed (scripts/real-state.sh).
set -euo pipefail
cd "$(dirname "$0")"
HERE="$(pwd)"
CACHE="${ELELEM_E2E_CACHE:-$HOME/.cache/elelem-vscode-e2e}"
export ELELEM_E2E_CACHE="$CACHE"

scripts/install-e2e.sh || { echo "e2e.sh: FAILED to install code-server / Node 24 / chromium" >&2; exit 1; }
# shellcheck source=/dev/null
source "$CACHE/env.sh"
NODE24_BIN="$(dirname "$ELELEM_NODE24")"

npm ci --no-audit --no-fund --loglevel=error
npm run package
if [ -z "${ELELEM_TEST_COMMAND:-}" ]; then
  PY="$(scripts/python.sh)"
  ELELEM_TEST_COMMAND="\"$PY\" -m elelem_daemon"
fi
export ELELEM_TEST_COMMAND

WORK="$(mktemp -d /tmp/elelem-e2e.XXXXXX)"
scripts/real-state.sh > "$WORK/real-state.before"
CS_PID=""
cleanup() {
  if [ -n "$CS_PID" ]; then kill -- "-$CS_PID" 2>/dev/null || true; fi
  if [ "${ELELEM_E2E_KEEP:-}" = "" ]; then rm -rf "$WORK"; else echo "e2e.sh: kept $WORK" >&2; fi
}
trap cleanup EXIT

mkdir -p "$WORK"/{ext,ud/User,ws,home,xdg-config,xdg-data,xdg-state,xdg-cache}
mkdir -p "$WORK/ws-review"
for i in $(seq 1 20); do printf 'line_%02d = %d\n' "$i" "$i"; done > "$WORK/ws-review/review.py"
mkdir -p "$WORK/ws-rewind" "$WORK/ws-context/.vscode"
printf 'first version\nalpha\nbeta\ngamma\ndelta\n' > "$WORK/ws-rewind/notes.txt"
printf 'def main():\n    return 42\n' > "$WORK/ws-context/app.py"
printf '{\n  "a": 1,\n}\n' > "$WORK/ws-context/bad.json"
printf '{"elelem.model": "vision"}\n' > "$WORK/ws-context/.vscode/settings.json"
mkdir -p "$WORK/ws-modes" "$WORK/ws-mcp/.vscode" "$WORK/ws-attention" "$WORK/ws-meter/.vscode"
# issue 40: a 4,000-token window, so the meter's warning shows before auto-compaction
printf '{"elelem.env": {"ELELEM_CONTEXT_WINDOW": "4000"}}\n' > "$WORK/ws-meter/.vscode/settings.json"
# issue 40's findings, each in the client where the user met it
mkdir -p "$WORK/ws-failed" "$WORK/ws-compacted" "$WORK/ws-attach/.vscode" "$WORK/ws-served" "$WORK/ws-longline"
# a 6,000-line file in a 4,000-token window (cut to fit), and a file beside the workspace (outside it)
for i in $(seq 1 6000); do echo "line $i of the big file"; done > "$WORK/ws-attach/big.txt"
printf 'not in the project\n' > "$WORK/outside.txt"
printf '{"elelem.env": {"ELELEM_CONTEXT_WINDOW": "4000"}}\n' > "$WORK/ws-attach/.vscode/settings.json"
# a server that cannot start, retried quickly (issue 31: one line in the chat, not one per retry)
printf '{"elelem.mcpServers": {"broken": {"command": "/nonexistent/elelem-mcp-server"}}, "elelem.env": {"ELELEM_MCP_BACKOFF": "0.2"}}\n' > "$WORK/ws-mcp/.vscode/settings.json"
printf 'def greet(name):\n    """Say hello."""\n    return f"hello, {name}"\n\n\nprint(greet("elelem"))\n' > "$WORK/ws/hello.py"
node -e 'console.log(JSON.stringify({
  "elelem.command": process.env.ELELEM_TEST_COMMAND,
  "elelem.provider": "stub",
  "workbench.startupEditor": "none",
  "workbench.colorTheme": "Default Dark Modern",
  "workbench.tips.enabled": false,
  "telemetry.telemetryLevel": "off",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "chat.disableAIFeatures": true,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "window.commandCenter": false,
  "files.autoSave": "off",
}, null, 2))' > "$WORK/ud/User/settings.json"
printf 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n' > "$WORK/cs.yaml"

# code-server and its daemon get nothing of the caller's that points elsewhere
# (ELELEM_STATE_DIR moves stored sessions) or at a real provider.
SCRUB=()
for name in $(env | grep -oE '^(ELELEM|ANTHROPIC|OPENAI|OLLAMA)_[A-Za-z0-9_]*=' | tr -d =); do SCRUB+=(-u "$name"); done
CS=(env "${SCRUB[@]}" "PATH=$NODE24_BIN:$PATH" "HOME=$WORK/home" "XDG_CONFIG_HOME=$WORK/xdg-config"
    "XDG_DATA_HOME=$WORK/xdg-data" "XDG_STATE_HOME=$WORK/xdg-state" "XDG_CACHE_HOME=$WORK/xdg-cache"
    "$ELELEM_CODE_SERVER" --config "$WORK/cs.yaml"
    --user-data-dir "$WORK/ud" --extensions-dir "$WORK/ext")
"${CS[@]}" --install-extension "$HERE/elelem.vsix" >"$WORK/install.log" 2>&1 \
  || { cat "$WORK/install.log" >&2; echo "e2e.sh: FAILED to install elelem.vsix into code-server" >&2; exit 1; }

PORT="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
setsid "${CS[@]}" --auth none --bind-addr "127.0.0.1:$PORT" --disable-telemetry \
  --disable-update-check --disable-workspace-trust --disable-getting-started-override \
  "$WORK/ws" >"$WORK/code-server.log" 2>&1 &
CS_PID=$!
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null 2>&1 && break
  kill -0 "$CS_PID" 2>/dev/null || { cat "$WORK/code-server.log" >&2; echo "e2e.sh: FAILED: code-server exited" >&2; exit 1; }
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat "$WORK/code-server.log" >&2; echo "e2e.sh: FAILED: code-server never answered" >&2; exit 1; }

SHOT="${ELELEM_E2E_SCREENSHOT:-$HERE/test-results/screenshot.png}"
mkdir -p "$(dirname "$SHOT")"
# ELELEM_E2E_CASES picks cases (default: all), e.g. ELELEM_E2E_CASES=review ./e2e.sh
CASES="${ELELEM_E2E_CASES:-chat review rewind context modes mcp attention meter failed compacted attach served longline}"
failed=0
for case in $CASES; do
  case "$case" in
    chat) node test/e2e/chat.mjs "http://127.0.0.1:$PORT/?folder=$WORK/ws" "$SHOT" || failed=1 ;;
    *) node "test/e2e/$case.mjs" "http://127.0.0.1:$PORT/?folder=$WORK/ws-$case" "$(dirname "$SHOT")/$case.png" "$WORK/ws-$case" || failed=1 ;;
  esac
done
if [ "$failed" != 0 ]; then
  echo "--- code-server log (tail) ---" >&2; tail -40 "$WORK/code-server.log" >&2
  find "$WORK/ud/logs" -name '*Elelem*' -exec sh -c 'echo "--- $1"; tail -40 "$1"' _ {} \; >&2 2>/dev/null || true
  exit 1
fi
kill -- "-$CS_PID" 2>/dev/null || true
CS_PID=""
sleep 1 # the daemon exits with its extension host
scripts/real-state.sh "$WORK/real-state.before"
ls "$WORK"/xdg-state/elelem/sessions/*.jsonl >/dev/null 2>&1 \
  || { echo "e2e.sh: FAILED: the daemon stored no session in the run's own XDG_STATE_HOME" >&2; exit 1; }
