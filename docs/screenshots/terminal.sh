#!/bin/sh
# Makes docs/screenshots/terminal.png from a real run: `elelem chat` in a tmux pane, a
# streamed Markdown reply with a tool call, captured with `tmux capture-pane -e -p` and
# rendered by clients/nvim/scripts/ansi2png.py.
# The model is a scripted provider (a user plugin written below): what it says is fixed,
# everything on screen is the real terminal face drawing it.
# Installs if missing: tmux and fonts-dejavu-core (apt), pillow (pip, .venv).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/.venv"
if ! command -v tmux >/dev/null 2>&1 || [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ]; then
  apt-get update -q && apt-get install -y -q tmux fonts-dejavu-core
fi
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" show -q elelem-daemon >/dev/null 2>&1 || "$venv/bin/pip" install -q -e "$root"
"$venv/bin/pip" show -q pillow >/dev/null 2>&1 || "$venv/bin/pip" install -q pillow

tmp="$(mktemp -d)"
sock="elelem-term-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$tmp/project/bin" "$tmp/home/.agents/plugins" "$tmp/xdg/elelem"
cat > "$tmp/project/bin/test" <<'TEST'
#!/bin/sh
# Runs every suite: the Python tests, then the editor clients.
set -e
.venv/bin/pytest -q tests
clients/nvim/test.sh
clients/vscode/test.sh
TEST
chmod +x "$tmp/project/bin/test"
echo "execute allow" > "$tmp/xdg/elelem/permissions"
cat > "$tmp/home/.agents/plugins/demo.py" <<'PY'
import asyncio

REPLY = """## Running the tests

`bin/test` runs **every suite**, in this order:

1. the Python tests, with `pytest -q tests`;
2. the Neovim client (`clients/nvim/test.sh`);
3. the VS Code client (`clients/vscode/test.sh`).

To run one file while you work:

```sh
.venv/bin/pytest -q tests/faces/terminal/test_pty.py -x
```
"""


class Demo:
    name = "demo"
    model = "scripted"

    async def fetch(self, messages, tools):
        if messages[-1]["role"] == "tool":
            for word in REPLY.split(" "):
                await asyncio.sleep(0.01)
                yield {"type": "saying", "text": word + " "}
            yield {"type": "usage", "input_tokens": 1240, "output_tokens": 96}
            return
        await asyncio.sleep(0.8)
        for word in "They want to know how the suites run: bin/test is the entry point.".split():
            await asyncio.sleep(0.02)
            yield {"type": "thinking", "text": word + " "}
        yield {"type": "saying", "text": "Let me look at `bin/test`."}
        yield {"type": "doing", "id": "d1", "name": "execute", "arguments": {"command": "cat bin/test"}}


def register(plugin):
    plugin.provider("demo", lambda model=None: Demo())
PY

cd "$tmp/project"
HOME="$tmp/home" XDG_STATE_HOME="$tmp/xdg" XDG_CONFIG_HOME="$tmp/xdg" \
  tmux -L "$sock" -f /dev/null new-session -d -s shot -x 100 -y 38 \
  "TERM=tmux-256color $venv/bin/python -m elelem_daemon chat -p demo --no-save"
tmux -L "$sock" set -g default-terminal tmux-256color
keys() { tmux -L "$sock" send-keys -t shot "$@"; }
screen() { tmux -L "$sock" capture-pane -p -t shot; }
wait_for() { # waits (up to 60 s) until the screen shows $1
  i=0
  until screen | grep -qF -- "$1"; do
    i=$((i + 1)); [ $i -lt 300 ] || { echo "screenshot: no \"$1\" on screen" >&2; screen >&2; exit 1; }
    sleep 0.2
  done
}
wait_for "demo · scripted"
keys "how do I run the tests?" Enter
wait_for "test_pty.py"
wait_for "1240 in, 96 out"
keys "/con"
sleep 0.5
tmux -L "$sock" capture-pane -e -p -t shot > "$tmp/capture.ans"
"$venv/bin/python" "$root/clients/nvim/scripts/ansi2png.py" "$tmp/capture.ans" "$here/terminal.png" --columns 100
echo "wrote $here/terminal.png"
