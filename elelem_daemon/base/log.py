"""Logging: one handler; level from ELELEM_LOG_LEVEL (default warning).

In the editor faces (`setup(queued=True)`: `elelem daemon`, `--acp`) stderr is a pipe
the client may never read, so writing to it must never block the event loop: log
records and whatever else is written to `sys.stderr` (a plugin's print, the
permission policy's notices; `sys.stdout` too, which those faces point at stderr) go
into a queue of at most QUEUE_CAP characters that one writer thread empties. When it
is full (stderr not read), lines are dropped and counted, and the next line written
says how many. At exit, what is queued gets up to FLUSH_WAIT seconds to leave.

In the terminal stderr is the user's screen: it stays a plain synchronous stream, and
the log goes to a file under the state folder instead (`to_file`, rotated at
MAX_BYTES), so no log line lands in the middle of a rendered reply; `--log-level` or
ELELEM_LOG_LEVEL brings it back to stderr. A file that cannot be opened falls back to
stderr.

Every logger in the process goes the same way, a library's included (pygls, httpx,
mcp, asyncio): the handler is the root logger's too, `logging.lastResort` (what logs
a record that found no handler) is replaced by it, and `warnings` are captured into
the log. Libraries log at WARNING and up (LIBRARY_LEVEL) unless the level asked for is
higher; elelem's own logger takes the level asked for.
"""

from __future__ import annotations

import atexit
import io
import logging
import os
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any, TextIO

MAX_BYTES = 1 << 20  # the terminal's log file is rotated at this size

QUEUE_CAP = 4 * 1024 * 1024  # characters waiting to be written, at most
PIECE_CAP = 65536  # characters of one write; past it the write is cut
FLUSH_WAIT = 1.0
LIBRARY_LEVEL = logging.WARNING  # the least a library's record needs to be written


class LogWriter:
    """The queue and its thread: `put` never blocks; lines that find it full are counted."""

    def __init__(self, stream: TextIO, cap: int = QUEUE_CAP) -> None:
        self.stream = stream
        self.queue: queue.Queue[str] = queue.Queue()
        self.cap = cap
        self.queued = 0  # characters in the queue
        self.dropped = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._run, name="elelem-log", daemon=True).start()

    def put(self, text: str) -> None:
        if len(text) > PIECE_CAP:
            text = f"{text[:PIECE_CAP]}[... {len(text) - PIECE_CAP} characters cut]\n"
        with self._lock:
            if self.queued + len(text) > self.cap:
                self.dropped += 1
                return
            self.queued += len(text)
        self.queue.put_nowait(text)

    def _run(self) -> None:
        while True:
            text = self.queue.get()
            with self._lock:
                self.queued -= len(text)
                dropped, self.dropped = self.dropped, 0
            if dropped:
                text = f"elelem WARNING log: {dropped} lines dropped (stderr was not read)\n{text}"
            try:
                self.stream.write(text)
                self.stream.flush()
            except (OSError, ValueError):
                pass  # stderr is gone: nothing to tell
            finally:
                self.queue.task_done()

    def wait(self, seconds: float = FLUSH_WAIT) -> None:
        """Give what is queued up to `seconds` to be written (never longer)."""
        deadline = time.monotonic() + seconds
        while self.queue.unfinished_tasks and time.monotonic() < deadline:
            time.sleep(0.005)


class QueuedStream(io.TextIOBase):
    """A `sys.stderr` whose writes go through a LogWriter."""

    def __init__(self, writer: LogWriter) -> None:
        self.writer = writer

    def write(self, text: str) -> int:
        if text:
            self.writer.put(text)
        return len(text)

    def flush(self) -> None:
        """Nothing to wait for: the writer thread writes as soon as it can. A flush
        that waited would stall whoever flushed (`logging.lastResort`, a library's
        StreamHandler, `print(flush=True)`) for as long as stderr goes unread; what is
        queued at exit gets its FLUSH_WAIT then (`atexit`)."""

    def fileno(self) -> int:
        return self.writer.stream.fileno()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.writer.stream, "encoding", "utf-8")

    @property
    def buffer(self) -> Any:
        return getattr(self.writer.stream, "buffer", None)


class QueuedHandler(logging.Handler):
    def __init__(self, writer: LogWriter) -> None:
        super().__init__()
        self.writer = writer

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.writer.put(self.format(record) + "\n")
        except Exception:
            self.handleError(record)


_writer: LogWriter | None = None
_root_handler: logging.Handler | None = None  # the one setup put on the root logger


def notice(line: str) -> None:
    """A line the user must see (a broken plugin, a bad setting, a rule that was
    skipped): on stderr, and never a wait. In the editor faces stderr is the queue,
    which its writer thread empties (a flush there is nothing); the terminal's is
    flushed."""
    stream = sys.stderr
    try:
        stream.write(line.rstrip("\n") + "\n")
        if not isinstance(stream, QueuedStream):
            stream.flush()
    except (OSError, ValueError):
        pass  # stderr is gone: nothing to tell


def setup(level: str | None = None, queued: bool = False, to_file: Path | None = None) -> None:
    global _writer, _root_handler
    name = (level or os.environ.get("ELELEM_LOG_LEVEL") or "warning").upper()
    name = {"WARN": "WARNING"}.get(name, name)
    handler: logging.Handler
    shape = "elelem %(levelname)s %(name)s: %(message)s"
    if queued:
        if _writer is None:
            _writer = LogWriter(sys.__stderr__ or sys.stderr)
            sys.stderr = QueuedStream(_writer)
            atexit.register(_writer.wait)
        handler = QueuedHandler(_writer)
    else:
        handler = logging.StreamHandler(sys.stderr)
    if to_file is not None:
        # only here: ~12 ms of imports (socket, pickle) on every editor face's start
        from logging.handlers import RotatingFileHandler

        try:
            to_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            handler = RotatingFileHandler(
                to_file, maxBytes=MAX_BYTES, backupCount=1, encoding="utf-8", delay=True
            )
            shape = "%(asctime)s " + shape
        except OSError:
            pass
    handler.setFormatter(logging.Formatter(shape))
    level_number = getattr(logging, name, logging.WARNING)
    ours = logging.getLogger("elelem_daemon")
    ours.handlers[:] = [handler]
    ours.setLevel(level_number)
    ours.propagate = False
    root = logging.getLogger()  # every other logger's records end here
    if _root_handler is not None:  # set up again (tests): ours is replaced, no other
        root.removeHandler(_root_handler)
    root.addHandler(handler)
    _root_handler = handler
    root.setLevel(max(level_number, LIBRARY_LEVEL))
    logging.getLogger("pygls").setLevel(max(level_number, LIBRARY_LEVEL))
    logging.lastResort = handler  # a logger that bypasses the root's handlers
    logging.captureWarnings(True)  # `warnings.warn` too: "py.warnings", a record
