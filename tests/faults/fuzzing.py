"""A synchronous harness for fuzzing one long-lived daemon (hypothesis tests are
synchronous): a reader thread parses its stdout into a queue and answers its
requests (`input/ask`) with null; `exchange` sends bytes and waits for answers."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from support.real_folders import own

MAX_FRAME = 4096  # the fuzzed daemon's frame limit: lengths stay small, cases stay fast
FILLER = b"\r\n\r\n" + b" " * (2 * MAX_FRAME + 64) + b"\r\n"  # ends any frame left open
MAX_MESSAGE = 1000 + len("...")
RETRIES = 3


class Crash(AssertionError):
    pass


class Hang(AssertionError):
    pass


class Fuzzed:
    def __init__(self, home: Path, cwd: Path) -> None:
        # module-scoped: the caller's XDG_* are still in os.environ; each goes under home
        env = own(home, {k: v for k, v in os.environ.items() if not k.startswith("ELELEM_")})
        closed = "http://127.0.0.1:9"  # nothing listens: no fuzzed switch leaves the box
        env.update(
            ELELEM_STATE_DIR=str(home / "state"),
            ELELEM_LOG_LEVEL="critical",
            OPENAI_BASE_URL=closed,
            ANTHROPIC_BASE_URL=closed,
            OLLAMA_HOST=closed,
        )
        for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
            env.pop(key, None)
        argv = [sys.executable, "-m", "elelem_daemon", "--provider", "stub"]
        self.process = subprocess.Popen(
            [*argv, "--max-frame", str(MAX_FRAME)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=str(cwd),
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.lock = threading.Lock()
        self.cases = 0
        self.anomalies: list[str] = []  # daemon output that is not a valid message
        threading.Thread(target=self._read, daemon=True).start()

    # -- io ----------------------------------------------------------------------
    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        with self.lock:
            try:
                self.process.stdin.write(data)
                self.process.stdin.flush()
            except BrokenPipeError as exc:
                raise Crash(f"the daemon is gone (exit {self.process.poll()})") from exc

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            length = None
            while (line := stdout.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if not line or length is None:
                self.messages.put(None)
                return
            body = stdout.read(length)
            try:
                message = json.loads(body)
            except ValueError:
                self.anomalies.append(f"not JSON: {body[:200]!r}")
                continue
            if isinstance(message, dict) and "method" in message and "id" in message:
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": None}
                data = json.dumps(reply).encode()
                self.send(b"Content-Length: %d\r\n\r\n%s" % (len(data), data))
            self.messages.put(message)

    def request(self, msg_id: Any, method: str, params: Any = None) -> dict[str, Any]:
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        return message

    def exchange(
        self, data: bytes, due: set[Any], seconds: float = 10.0, filler: bytes = FILLER
    ) -> list[dict]:
        """Send data, then filler and a sentinel request (again after a second if the
        data left a frame open); wait until a sentinel and every id in `due` are
        answered. Return every message received meanwhile."""
        self.cases += 1
        got: list[dict[str, Any]] = []
        answered: set[Any] = set()
        deadline = time.monotonic() + seconds
        sentinels = {f"sentinel-{self.cases}-{n}" for n in range(RETRIES)}
        self.send(data)
        for n in range(RETRIES):
            self.send(filler + frame(self.request(f"sentinel-{self.cases}-{n}", "session/list")))
            patience = time.monotonic() + 1.0 if n < RETRIES - 1 else deadline
            while not answered & sentinels and self._next(got, answered, patience):
                pass
            if answered & sentinels:
                while not due <= answered and self._next(got, answered, deadline):
                    pass
                if due <= answered:
                    return got
                break
        missing = (due | sentinels) - answered
        raise Hang(f"no answer within {seconds:g} s to {sorted(map(str, missing))[:5]}")

    def _next(self, got: list[dict[str, Any]], answered: set[Any], until: float) -> bool:
        """Take one message (False once `until` has passed)."""
        while time.monotonic() < until:
            try:
                message = self.messages.get(timeout=0.05)
            except queue.Empty:
                continue
            if message is None:
                raise Crash(f"the daemon's output ended (exit {self.process.wait(5)})")
            got.append(message)
            if "method" not in message:
                answered.add(message.get("id"))
            return True
        return False

    def close(self) -> int:
        if self.process.poll() is None:
            bye = frame(self.request("bye", "shutdown"))
            self.send(bye + frame({"jsonrpc": "2.0", "method": "exit"}))
            try:
                return self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait()


def frame(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def check(message: dict[str, Any]) -> str | None:
    """What is wrong with one message from the daemon, or None."""
    if message.get("jsonrpc") != "2.0":
        return f"no jsonrpc 2.0: {message!r:.200}"
    if "method" in message:
        return None if isinstance(message.get("params", {}), dict) else "params not an object"
    if "error" in message:
        error = message["error"]
        if not isinstance(error.get("code"), int) or not isinstance(error.get("message"), str):
            return f"bad error: {error!r:.200}"
        if len(error["message"]) > MAX_MESSAGE:
            return f"error message of {len(error['message'])} characters"
        if not isinstance((error.get("data") or {}).get("kind"), str):
            return f"error without data.kind: {error!r:.200}"
        if error["code"] == -32603:
            return f"internal error: {error['message']:.300}"
        return None
    return None if "result" in message else f"neither result nor error: {message!r:.200}"
