"""Signals: how every face ends on SIGTERM and SIGHUP, the same way.

An editor closing a chat sends SIGTERM (codecompanion, avante), a closed terminal
SIGHUP. Every face (`elelem daemon`, `--acp`, `elelem chat`, `elelem ask`) installs
`on_signals(stop)` on its event loop: the first signal calls `stop(128 + N)`; the face
then cancels its running turns, which kills their tools' process groups (SIGTERM,
then SIGKILL after the runner's grace period, builtins/shell.py), releases its
sessions (a cancelled turn is stored as `<text so far>[cancelled]`) and exits with
`128 + N`: 143 for SIGTERM, 129 for SIGHUP (130 for SIGINT where the face takes it:
the daemon). A second signal while it stops ends the process at once with the same
code. Whatever is left (SIGKILL, a crash) is the reaper's (procs.py).

Before the loop runs, `until_loop()` (the launcher calls it first thing for `elelem
daemon` and `elelem ask`) makes those signals end the process at once with the same
code: nothing runs yet that would need cancelling, and a start that is stuck (a read
that waits) still ends. Once the loop runs, nothing on it may block: a read of a file
a repository controls never waits (base/regular.py), and `ask` reads its piped prompt
in a thread.

`leave(code)` is how a face exits after that: what is queued for stderr is written
(the atexit handlers), then `os._exit`, so no thread (a terminal read, a plugin's
blocked tool) can hold the exit up.

`finish(code)` is how `elelem ask` ends once its session is closed: the same steps
(the atexit handlers, which flush the log and run `weakref.finalize` callbacks, then
stdout and stderr flushed, then `os._exit`), so the interpreter's teardown (a garbage
collection of every module, ~60 ms of a 330 ms `ask` here: bench/README.md) is not
paid. Only when nothing else would hold the exit: a thread that is not a daemon still
running, or a stream that does not flush, returns the code for the usual exit (which
waits for that thread, and reports the failed flush as Python does).
"""

from __future__ import annotations

import asyncio
import atexit
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable
from typing import NoReturn

SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def code_of(sig: int) -> int:
    """The exit code of a process that ended because of sig: 128 + N."""
    return 128 + int(sig)


def until_loop(signals: Iterable[int] = (*SIGNALS, signal.SIGINT)) -> None:
    """Until a loop's handlers take over (`on_signals`), each of signals ends the
    process at once with 128 + N."""
    for sig in signals:
        signal.signal(sig, lambda number, _frame: os._exit(code_of(number)))


def on_signals(stop: Callable[[int], None], signals: Iterable[int] = SIGNALS) -> Callable[[], None]:
    """Call stop(128 + N) on the first of signals (on the running loop); a second one
    leaves at once. Returns a function that removes the handlers."""
    loop = asyncio.get_running_loop()
    stopping: list[int] = []
    installed = []

    def caught(sig: int) -> None:
        if stopping:  # asked twice: the user means it
            leave(stopping[0])
        stopping.append(code_of(sig))
        stop(code_of(sig))

    for sig in signals:
        try:
            loop.add_signal_handler(sig, caught, sig)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            continue
        installed.append(sig)

    def remove() -> None:
        for sig in installed:
            loop.remove_signal_handler(sig)

    return remove


def leave(code: int) -> NoReturn:
    """Exit now with code, after the atexit handlers (the log queue) and a flush."""
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)


def finish(code: int) -> int:
    """End a one-shot command with code, skipping the interpreter's teardown (see the
    module docstring); returns code when the usual exit must run instead."""
    main = threading.main_thread()
    if threading.current_thread() is not main:
        return code
    if any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate()):
        return code  # the usual exit waits for it
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            return code  # the usual exit says so (and exits 120)
    os._exit(code)
