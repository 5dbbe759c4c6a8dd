"""Wire: a small, fast JSON-RPC client for a spawned process, used for every figure.

Every server in the benchmark (the daemon, the bare echo server, the raw writer, the ACP
peer) is read by this same client, so the client's own cost is the same on both sides
of a ratio. It speaks two framings: `content-length` (LSP base framing, the daemon's)
and `ndjson` (one JSON object per line, ACP's).

`conn.stamp` is the `time.perf_counter()` at which the bytes being dispatched were read
from the pipe: latency figures use it, so parsing earlier messages of the same chunk
does not count against the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

from elelem_daemon.jsonrpc.errors import RpcError

Handler = Callable[[dict[str, Any]], Any]
READ_SIZE = 1 << 17


def parse(data: bytearray, start: int, end: int) -> Any:
    """The JSON message in `data[start:end]`, decoded from UTF-8 (as JSON-RPC frames
    are) straight out of the buffer, not sliced out of it first: for a 121 MB answer
    (`session/load`'s), one copy fewer; the whole text is still decoded and parsed."""
    with memoryview(data) as view, view[start:end] as body:
        text = str(body, "utf-8")
    return json.loads(text)


class ServerDied(Exception):
    pass


class Conn:
    def __init__(self, proc: asyncio.subprocess.Process, framing: str, log: str) -> None:
        self.proc = proc
        self.framing = framing
        self.log = log  # the server's stderr, for a crash report
        self.stamp = 0.0
        self.on_notify: dict[str, Handler] = {}
        self.on_request: Callable[[str, Any], Any] = lambda method, params: None
        self._next = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._need = 0  # bytes the frame being read needs, from the buffer's start
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        framing: str = "content-length",
        env: dict[str, str] | None = None,
        cwd: str | None = None,
        inherit: bool = True,
    ) -> Conn:
        """Start `argv`; its environment is this process's with `env` laid over it, or
        `env` alone when `inherit` is false."""
        log = tempfile.NamedTemporaryFile(  # noqa: SIM115 - kept for the crash report
            prefix="bench-stderr-", suffix=".log", delete=False
        )
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=log,
            env={**os.environ, **(env or {})} if inherit else dict(env or {}),
            cwd=cwd,
            start_new_session=True,
            limit=READ_SIZE,
        )
        log.close()
        return cls(proc, framing, log.name)

    # -- sending ------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, separators=(",", ":")).encode()
        assert self.proc.stdin is not None
        if self.framing == "ndjson":
            self.proc.stdin.write(body + b"\n")
        else:
            self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def notify(self, method: str, params: Any = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def start(self, method: str, params: Any = None) -> tuple[int, asyncio.Future[Any]]:
        """Send a request; return its id and the future of its result."""
        self._next += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next] = future
        self._send({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        return self._next, future

    async def request(self, method: str, params: Any = None, timeout: float = 120) -> Any:
        _, future = self.start(method, params)
        return await asyncio.wait_for(future, timeout)

    # -- receiving ----------------------------------------------------------
    async def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        buffer = bytearray()  # appended to in place: a 60 MB answer is not copied per read
        lines = self.framing == "ndjson"
        parse = self._lines if lines else self._frames
        try:
            while True:
                chunk = await stdout.read(READ_SIZE)
                if not chunk:
                    break
                self.stamp = time.perf_counter()
                buffer += chunk
                if (b"\n" not in chunk) if lines else len(buffer) < self._need:
                    continue  # the message in progress is not whole yet
                del buffer[: parse(buffer)]
        finally:
            died = ServerDied(f"server exited ({self.tail()})")
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(died)

    def _frames(self, data: bytearray) -> int:
        """Dispatch the whole frames in data; the bytes used (`_need`: for the next one)."""
        at, size = 0, len(data)
        self._need = 0
        while True:
            end = data.find(b"\r\n\r\n", at)
            if end < 0:
                return at
            length = -1
            for line in data[at:end].split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if length < 0:
                raise ValueError(f"frame without Content-Length: {data[at:end]!r}")
            if end + 4 + length > size:
                self._need = end + 4 + length - at
                return at
            self._dispatch(parse(data, end + 4, end + 4 + length))
            at = end + 4 + length

    def _lines(self, data: bytearray) -> int:
        """Dispatch the whole lines in data; the bytes used."""
        last = data.rfind(b"\n") + 1
        for line in data[:last].split(b"\n"):
            if line.strip():
                self._dispatch(json.loads(line))
        return last

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if future is None or future.done():
                return
            if "error" in message:
                future.set_exception(RpcError.received(message["error"]))
            else:
                future.set_result(message.get("result"))
        elif "id" in message:
            answer = self.on_request(message["method"], message.get("params"))
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": answer})
        else:
            handler = self.on_notify.get(message["method"])
            if handler is not None:
                handler(message.get("params") or {})

    # -- ending -------------------------------------------------------------
    def tail(self, lines: int = 15) -> str:
        try:
            with open(self.log, encoding="utf-8", errors="replace") as file:
                text = file.read().strip().splitlines()[-lines:]
        except OSError:
            return "no stderr"
        return "stderr: " + " | ".join(text) if text else "no stderr"

    def rss_kb(self) -> int:
        """Resident set size of the server process, from /proc."""
        with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as file:
            for line in file:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    async def close(self, timeout: float = 5) -> None:
        """Close stdin (the protocol's way to end a server); kill the group if it lingers."""
        if self.proc.stdin is not None and not self.proc.stdin.is_closing():
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), timeout)
        except TimeoutError:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await self.proc.wait()
        self._reader.cancel()
        try:
            os.unlink(self.log)
        except OSError:
            pass
