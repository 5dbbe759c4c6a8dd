"""Screen: the terminal while a turn runs, drawn with rich.

Two parts: what is finished is printed for good, and one live region at the bottom
(rich `Live`, transient) shows what is still changing: the spinner with its elapsed
time, the open line of thinking, the open block of a streaming reply, a running tool.
The region is redrawn at most every FRAME seconds (the first change at once), from
the event loop: no thread writes to the terminal. When the region is taller than the
terminal, its last lines show, so the newest text is always on screen.

Every text segment rich writes goes through `visible` (visible.py): what the model
wrote cannot move the cursor, hide text or write the clipboard.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO

from .visible import Visible

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType
    from rich.live import Live

FRAME = 1 / 30  # the live region's shortest redraw interval
TICK = 0.1  # how often a spinner's clock moves
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
ROOM = 2  # lines of the terminal the live region leaves free


class Tail:
    """The last lines of a renderable that fit in `room` lines of the terminal."""

    def __init__(self, renderable: RenderableType, room: int = ROOM) -> None:
        self.renderable = renderable
        self.room = room

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Any]:
        from rich.segment import Segment

        lines = console.render_lines(self.renderable, options, pad=False)
        height = max(1, console.size.height - self.room)
        for line in lines[-height:]:
            yield from line
            yield Segment.line()


class Trimmed:
    """A renderable without the blank lines rich puts before it (a list's first line):
    blocks printed one by one keep one blank line between them, not two."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Any]:
        from rich.segment import Segment

        lines = console.render_lines(self.renderable, options, pad=False)
        start = 0
        while start < len(lines) and _blank(lines[start]):
            start += 1
        for line in lines[start:]:
            yield from line
            yield Segment.line()


def _blank(line: list[Any]) -> bool:
    return all(not s.text.strip() and not (s.style and s.style.bgcolor) for s in line)


class Spinner:
    """`⠋ waiting for the model 1.2s`, dimmed; its clock starts when it is made."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.since = time.monotonic()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterable[Any]:
        from rich.text import Text

        elapsed = time.monotonic() - self.since
        frame = SPINNER[int(elapsed / TICK) % len(SPINNER)]
        yield Text(f"{frame} {self.label} {elapsed:.1f}s", style="dim")


class Screen:
    def __init__(self, file: TextIO, width: int | None = None) -> None:
        import rich.live  # noqa: F401  (imported now, not on the first token: ~0.1 s)
        import rich.markdown  # noqa: F401
        from rich.console import Console

        self.console = Console(
            file=file,
            force_terminal=True,
            markup=False,
            emoji=False,
            highlight=False,
            width=width,
        )
        self._live: Live | None = None
        self._shown: RenderableType | None = None
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._ticking: asyncio.TimerHandle | None = None

    # -- what is finished ---------------------------------------------------------
    def print(self, renderable: RenderableType = "", end: str = "\n") -> None:
        """Print for good, above the live region (a str is printed as it is)."""
        from rich.text import Text

        if isinstance(renderable, str):
            renderable = Text(renderable, end=end)
        if self._live is not None and self._shown is not None and self._timer is not None:
            self._timer.cancel()  # the region is redrawn below the print: with what is new
            self._timer = None
            self._last = time.monotonic()
            self._live.update(Visible(Tail(self._shown)), refresh=False)
        self.console.print(Visible(renderable))

    # -- what is still changing ---------------------------------------------------
    def show(self, renderable: RenderableType | None) -> None:
        """Put `renderable` in the live region (None empties it); drawn soon, or at
        once when it replaces a spinner (the first token shows as it arrives)."""
        at_once = isinstance(self._shown, Spinner) and renderable is not self._shown
        self._shown = renderable
        if renderable is None:
            self.stop()
            return
        if self._live is None:
            from rich.live import Live

            self._live = Live(
                console=self.console,
                auto_refresh=False,
                transient=True,
                redirect_stdout=False,
                redirect_stderr=False,
                vertical_overflow="visible",
            )
            self._live.start()
            at_once = True
        if at_once:
            self._draw()
        else:
            self._soon()

    def spin(self, label: str) -> None:
        """A spinner with its elapsed time, until something else is shown."""
        spinner = Spinner(label)
        self.show(spinner)
        self._tick(spinner)

    def stop(self) -> None:
        """Erase the live region and leave the cursor below what was printed."""
        self._shown = None
        for timer in (self._timer, self._ticking):
            if timer is not None:
                timer.cancel()
        self._timer = self._ticking = None
        if self._live is not None:
            live, self._live = self._live, None
            live.update("", refresh=False)
            live.stop()

    @property
    def live(self) -> bool:
        return self._live is not None

    # -- redrawing ------------------------------------------------------------------
    def _soon(self) -> None:
        if self._timer is not None:
            return
        wait = self._last + FRAME - time.monotonic()
        loop = _loop()
        if wait <= 0 or loop is None:
            self._draw()
        else:
            self._timer = loop.call_later(wait, self._draw)

    def _draw(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        if self._live is None or self._shown is None:
            return
        self._last = time.monotonic()
        self._live.update(Visible(Tail(self._shown)), refresh=True)

    def _tick(self, spinner: Spinner) -> None:
        loop = _loop()
        if loop is None:
            return

        def again() -> None:
            self._ticking = None
            if self._shown is spinner:
                self._soon()
                self._tick(spinner)

        self._ticking = loop.call_later(TICK, again)


def _loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
