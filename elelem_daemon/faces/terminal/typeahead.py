"""TypeAhead: on a terminal, a line typed while a turn runs steers it (steering.py).

While a turn runs the terminal is quiet (interrupt.py: no echo, keys one by one, Ctrl-C
still a signal), and the keys typed are read here from the event loop. Enter sends the
line to the running turn (`Session.steer`), as `/steer TEXT` does; a line that is
another slash command waits for the prompt (commands do not run during a turn). The
line is shown once queued (`steer queued: TEXT`). A refused steer (no kept turn runs,
too many wait) says why, and its text waits for the prompt too: nothing typed is lost.
What is left unsent when the turn ends (a line without Enter) is given to the next
prompt as its starting text (`leftover`).

Backspace deletes, Ctrl-U clears the line; escape sequences (arrows) and other control
keys are ignored. A line holds at most steering.MAX_TEXT characters. While the turn
asks a question (`paused`), the question reads the terminal, not this.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import logging
import os
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ...base.errors import ElelemError
from ...turns.steering import MAX_TEXT

if TYPE_CHECKING:
    from ...session import Session

log = logging.getLogger(__name__)
STEER = re.compile(r"^/steer(\s+|$)")
ERASE = ("\x7f", "\x08")
CLEAR = "\x15"  # Ctrl-U


class TypeAhead:
    def __init__(self, session: Session, fd: int = 0) -> None:
        self.session = session
        self.fd = fd
        self.line = ""
        self.waiting: list[str] = []  # lines for the prompt (commands, refused steers)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._escape = ""  # an escape sequence being skipped
        self._reading = False

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Read the keys while the turn runs."""
        self._start()
        try:
            yield
        finally:
            self._stop()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """A question reads the terminal meanwhile."""
        was = self._reading
        self._stop()
        try:
            yield
        finally:
            if was:
                self._start()

    def leftover(self) -> str:
        """What waits for the next prompt: lines not sent, then the unfinished one."""
        text = "\n".join([*self.waiting, self.line] if self.line else self.waiting)
        self.waiting, self.line = [], ""
        return text

    def _start(self) -> None:
        if self._reading:
            return
        try:
            asyncio.get_running_loop().add_reader(self.fd, self._readable)
            self._reading = True
        except (OSError, ValueError, RuntimeError, NotImplementedError) as exc:
            log.info("typeahead: cannot watch the terminal: %s", exc)

    def _stop(self) -> None:
        if self._reading:
            with contextlib.suppress(OSError, ValueError, RuntimeError):
                asyncio.get_running_loop().remove_reader(self.fd)
            self._reading = False

    def _readable(self) -> None:
        try:
            data = os.read(self.fd, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:  # the terminal went away
            self._stop()
            return
        self.feed(self._decoder.decode(data))

    def feed(self, text: str) -> None:
        """Keys as typed (also what the tests drive)."""
        for key in text:
            if self._escape:  # ESC [ params final, ESC O final, or ESC and one key
                self._escape += key
                opening = len(self._escape) == 2 and key in "[O"
                if not opening and (len(self._escape) == 2 or "@" <= key <= "~"):
                    self._escape = ""
                elif len(self._escape) > 16:
                    self._escape = ""
                continue
            if key == "\x1b":
                self._escape = key
            elif key in "\r\n":
                line, self.line = self.line, ""
                self._send(line)
            elif key in ERASE:
                self.line = self.line[:-1]
            elif key == CLEAR:
                self.line = ""
            elif key >= " " and len(self.line) < MAX_TEXT:
                self.line += key

    def _send(self, line: str) -> None:
        text = line.strip()
        if not text:
            return
        output = self.session.output
        if text.startswith("/") and not STEER.match(text):
            self.waiting.append(text)
            output.say(f"commands wait for the prompt: {text}", "info")
            return
        text = STEER.sub("", text, count=1).strip()
        if not text:
            output.say("/steer TEXT: TEXT goes to the running turn", "info")
            return
        try:
            self.session.steer(text)
        except ElelemError as exc:
            self.waiting.append(text)
            output.say(f"{exc} (it waits for the prompt)", "info")
            return
        output.say(f"steer queued: {text}", "info")
