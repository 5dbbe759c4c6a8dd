"""How `elelem ask` ends (signals.finish): the atexit handlers run and stdout and stderr
are flushed, then `os._exit` skips the interpreter's teardown; a thread that is not a
daemon, or a stream that does not flush, gets the usual exit instead."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from elelem_daemon.processes import signals


def ask(home: Path, plugin: str, *words: str) -> subprocess.CompletedProcess[str]:
    folder = home / ".agents" / "plugins"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "probe.py").write_text(plugin)
    return subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), "elelem"), "ask", *words],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=home,
        env={**os.environ, "ELELEM_PROVIDER": "stub"},
    )


def test_a_long_piped_reply_arrives_whole_and_the_atexit_handlers_run(isolated_home):
    marker = isolated_home / "atexit-ran"
    plugin = (
        "import atexit, weakref\n"
        f"atexit.register(lambda: open({str(marker)!r}, 'a').write('atexit\\n'))\n"
        "class Held: pass\n"
        "HELD = Held()\n"
        f"weakref.finalize(HELD, lambda: open({str(marker)!r}, 'a').write('finalize\\n'))\n"
        "def register(plugin): pass\n"
    )
    words = ["!echo", "x" * 100_000]  # more than a pipe holds: the flush must write it all
    done = ask(isolated_home, plugin, *words)
    assert done.returncode == 0, done.stderr
    assert done.stdout == " ".join(words)[len("!echo ") :] + "\n"
    assert sorted(marker.read_text().split()) == ["atexit", "finalize"]


def test_a_plugin_s_thread_that_is_not_a_daemon_is_waited_for(isolated_home):
    marker = isolated_home / "thread-done"
    plugin = (
        "import threading, time\n"
        "def late():\n"
        "    time.sleep(0.5)\n"
        f"    open({str(marker)!r}, 'w').write('done')\n"
        "def register(plugin):\n"
        "    threading.Thread(target=late).start()\n"
    )
    done = ask(isolated_home, plugin, "!echo hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi\n"
    assert marker.read_text() == "done"  # the usual exit joined it


def test_the_interpreter_s_teardown_is_skipped(isolated_home):
    """What the fast exit is for (bench/README.md): a module's objects are not torn
    down, so a `__del__` run only by the teardown does not run (a plugin that must
    write something at exit uses atexit or weakref.finalize, as above)."""
    marker = isolated_home / "torn-down"
    plugin = (
        "class Torn:\n"
        "    def __del__(self):\n"
        f"        open({str(marker)!r}, 'w').write('torn down')\n"
        "import sys, types\n"
        "sys.modules['probe_held'] = types.ModuleType('probe_held')\n"
        "sys.modules['probe_held'].torn = Torn()  # held by a module until the teardown\n"
        "def register(plugin): pass\n"
    )
    done = ask(isolated_home, plugin, "!echo hi")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi\n"
    assert not marker.exists()
    chat = subprocess.run(  # `elelem chat` still ends the usual way
        [os.path.join(os.path.dirname(sys.executable), "elelem"), "chat"],
        input="/exit\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=isolated_home,
        env={**os.environ, "ELELEM_PROVIDER": "stub"},
    )
    assert chat.returncode == 0, chat.stderr
    assert marker.read_text() == "torn down"


class Exited(Exception):
    pass


@pytest.fixture
def exits(monkeypatch):
    codes: list[int] = []

    def _exit(code: int) -> None:
        codes.append(code)
        raise Exited

    monkeypatch.setattr(signals.os, "_exit", _exit)
    monkeypatch.setattr(signals.atexit, "_run_exitfuncs", lambda: codes.append(-1))
    return codes


def test_finish_runs_the_handlers_flushes_then_exits(monkeypatch, exits):
    out, err = io.StringIO(), io.StringIO()
    flushed: list[str] = []
    monkeypatch.setattr(out, "flush", lambda: flushed.append("out"))
    monkeypatch.setattr(err, "flush", lambda: flushed.append("err"))
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    with pytest.raises(Exited):
        signals.finish(3)
    assert exits == [-1, 3] and flushed == ["out", "err"]


def test_finish_leaves_the_exit_to_python_while_a_thread_runs(exits):
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, args=(30,))
    worker.start()
    try:
        assert signals.finish(1) == 1
    finally:
        stop.set()
        worker.join()
    assert exits == []  # neither the handlers nor os._exit


def test_finish_ignores_daemon_threads(exits):
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, args=(30,), daemon=True)
    worker.start()
    try:
        with pytest.raises(Exited):
            signals.finish(0)
    finally:
        stop.set()
        worker.join()
    assert exits == [-1, 0]


def test_finish_leaves_a_failed_flush_to_python(monkeypatch, exits):
    class Broken(io.StringIO):
        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Broken())
    assert signals.finish(0) == 0  # the usual exit reports it (and exits 120)
    assert exits == [-1]


def test_a_reader_that_closes_the_pipe_early_gets_no_traceback_and_exit_141(isolated_home):
    # `elelem ask ... | head -c1`: the reader is gone before the reply is all written
    words = ["!echo", "x" * 100_000]  # more than a pipe holds
    reader, writer = os.pipe()
    os.close(reader)  # no reader at all: the first write fails with EPIPE
    try:
        done = subprocess.run(
            [os.path.join(os.path.dirname(sys.executable), "elelem"), "ask", *words],
            stdin=subprocess.DEVNULL,
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
            cwd=isolated_home,
            env={**os.environ, "ELELEM_PROVIDER": "stub"},
        )
    finally:
        os.close(writer)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 141, done.stderr  # 128 + SIGPIPE, as `yes | head` ends
