"""`/undo` and `/rewind` in the terminal, the real `elelem chat` under a real pty."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

DEADLINE = 60.0


class Terminal:
    def __init__(self, cwd: Path, home: Path) -> None:
        self.master, slave = pty.openpty()
        env = {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")}
        env.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / ".config"),
            XDG_STATE_HOME=str(home / ".local" / "state"),
            TERM="xterm-256color",
            COLUMNS="120",
            LINES="40",
        )
        elelem = os.path.join(os.path.dirname(sys.executable), "elelem")
        self.process = subprocess.Popen(
            [elelem, "chat", "--provider", "stub"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.screen = b""

    def expect(self, text: str) -> str:
        """Read until `text` shows (bounded); what came since the last expect."""
        want = text.encode()
        deadline = time.monotonic() + DEADLINE
        while want not in self.screen:
            left = deadline - time.monotonic()
            assert left > 0, f"never saw {text!r} in {self.screen[-2000:]!r}"
            ready, _, _ = select.select([self.master], [], [], min(left, 0.2))
            if ready:
                try:
                    chunk = os.read(self.master, 65536)
                except OSError:
                    chunk = b""
                assert chunk, f"the terminal closed before {text!r}: {self.screen[-2000:]!r}"
                self.screen += chunk
        seen, _, self.screen = self.screen.partition(want)
        return (seen + want).decode(errors="replace")

    def send(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\r")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        os.close(self.master)


def test_undo_and_rewind_in_the_terminal(tmp_path: Path) -> None:
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (project / "a.txt").write_text("one\n")
    term = Terminal(project, home)
    try:
        term.expect("> ")
        term.send('!tool write {"path": "made.txt", "content": "x"}')
        term.expect("done.")
        term.send('!tool edit {"path": "a.txt", "old": "one", "new": "two"}')
        term.expect("done.")
        assert (project / "a.txt").read_text() == "two\n"
        term.send("/rewind")
        listing = term.expect("/rewind N goes back to before turn N")
        assert "1  " in listing and "made.txt" in listing and "(1 file)" in listing
        term.send("/undo")
        asked = term.expect("[yes/no]")
        assert "Rewind to before turn 2?" in asked and "a.txt" in asked
        term.send("no")
        term.expect("not rewound")
        assert (project / "a.txt").read_text() == "two\n"
        (project / "made.txt").write_text("the user's own\n")  # an edit outside the agent
        term.send("/rewind 1")
        asked = term.expect("[yes/no]")
        assert "changed outside the agent" in asked and "made.txt" in asked
        term.send("yes")
        term.expect("rewound to before turn 1")
        assert "2 turns were dropped" in term.expect("dropped from the conversation")
        assert not (project / "made.txt").exists()
        assert (project / "a.txt").read_text() == "one\n"
        term.send("/undo")
        term.expect("nothing to undo")
        term.send("/exit")
        assert term.process.wait(20) == 0
    finally:
        term.close()
