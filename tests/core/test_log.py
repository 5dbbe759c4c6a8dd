"""log.notice: a line the user must see never waits for stderr to be read."""

import sys
import threading

from elelem_daemon.base import log


class Stuck:
    """A stderr nobody reads: every write blocks until released."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.released.wait()
        self.lines.append(text)
        return len(text)

    def flush(self) -> None:
        self.released.wait()


def test_a_notice_in_an_editor_face_is_queued_not_waited_for(monkeypatch):
    stuck = Stuck()
    writer = log.LogWriter(stuck)  # type: ignore[arg-type]
    monkeypatch.setattr(sys, "stderr", log.QueuedStream(writer))
    waited: list[float] = []
    monkeypatch.setattr(writer, "wait", lambda seconds=0: waited.append(seconds))
    for n in range(3):
        log.notice(f"elelem: permissions: rule {n} skipped")
    assert waited == []  # no flush, so no wait on the writer thread
    stuck.released.set()
    writer.queue.join()
    assert "".join(stuck.lines) == "".join(
        f"elelem: permissions: rule {n} skipped\n" for n in range(3)
    )


def test_a_notice_in_the_terminal_is_written_and_flushed(capsys):
    log.notice("elelem: failed to load plugin x.py: boom\n")
    assert capsys.readouterr().err == "elelem: failed to load plugin x.py: boom\n"
