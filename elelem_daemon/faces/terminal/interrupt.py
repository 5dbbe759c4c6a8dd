"""Ctrl-C in the terminal face: the one place that handles SIGINT here.

- During a turn (or a command such as /compact): the terminal is in its normal mode,
  so Ctrl-C is SIGINT; `Interrupts` holds the handler while the REPL runs, and it
  cancels the running turn as `session/cancel` does (the provider's stream closed, the
  tool's process group killed, `<text so far>[cancelled]` kept). Typing is not echoed
  meanwhile (what is typed waits for the next prompt), so it cannot tear the screen.
- At the prompt the line editor owns the terminal (raw mode: Ctrl-C is a key, not a
  signal): it clears the line, and a second press within WINDOW seconds leaves
  (`pressed_at_prompt`). Ctrl-D on an empty line leaves too.
- At a question (permission, interview) Ctrl-C answers "no answer" and the Input
  cancels the turn (`cancel_turn`).
- Outside all of these (lines read from a pipe, no turn running) Ctrl-C ends the REPL
  (`idle`), with exit code 130 as any interrupted program.

Other signals (SIGTERM, SIGHUP) are not handled here.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator

WINDOW = 1.0  # seconds within which a second Ctrl-C at the prompt leaves


class Interrupts:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.turn: Callable[[], bool] | None = None  # cancels the running turn, if any
        self.idle: Callable[[], None] | None = None  # no turn runs: what Ctrl-C does
        self._pressed = float("-inf")
        self._installed = False

    # -- SIGINT -------------------------------------------------------------------
    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Hold SIGINT while the REPL (or `elelem ask`) runs."""
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, self.fire)
            self._installed = True
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            self._installed = False
        try:
            yield
        finally:
            if self._installed:
                loop.remove_signal_handler(signal.SIGINT)
                self._installed = False

    def fire(self) -> None:
        """SIGINT: cancel the running turn, else do what `idle` says."""
        if self.turn is not None and self.turn():
            return
        if self.idle is not None:
            self.idle()

    def cancel_turn(self) -> None:
        """A question was answered with Ctrl-C: cancel the turn asking it."""
        if self.turn is not None:
            self.turn()

    # -- the prompt -----------------------------------------------------------------
    def pressed_at_prompt(self) -> bool:
        """Ctrl-C at the prompt: True when it is the second within WINDOW (leave)."""
        now = self.clock()
        second = now - self._pressed <= WINDOW
        self._pressed = float("-inf") if second else now
        return second

    def hinting(self) -> bool:
        """Whether the prompt should say that a second Ctrl-C leaves."""
        return self.clock() - self._pressed <= WINDOW

    # -- the terminal while a turn runs --------------------------------------------
    @contextlib.contextmanager
    def quiet_terminal(self, enabled: bool = True) -> Iterator[None]:
        """No echo of typed keys during a turn (they wait for the next prompt); Ctrl-C
        still signals."""
        fd = _tty() if enabled else None
        if fd is None:
            yield
            return
        import termios

        try:
            saved = termios.tcgetattr(fd)
        except termios.error:
            yield
            return
        quiet = list(saved)
        quiet[3] = (quiet[3] & ~(termios.ECHO | termios.ICANON)) | termios.ISIG
        try:
            termios.tcsetattr(fd, termios.TCSANOW, quiet)
            yield
        finally:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(fd, termios.TCSANOW, saved)


def _tty() -> int | None:
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        return None
    return fd if os.isatty(fd) else None
