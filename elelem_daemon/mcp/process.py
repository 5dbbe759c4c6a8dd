"""ServerProcess: a stdio MCP server's process, its pipes, and its end.

The server runs like an `execute` command: in the session's folder (or its config's
`cwd`), in its own process group, with the environment tool processes get plus its
config's `env`, with the parent-death signal and the reaper watching its group (see
environment.py), so it dies with its session and with the daemon.

Its stdout carries newline-delimited JSON-RPC: each line is parsed into a message for
the SDK's ClientSession. A line that is not JSON-RPC (a stray `print`), or longer than
MAX_MESSAGE bytes, is counted, written to the server's log, and dropped: it never
reaches the session. Its stderr goes to the log file (at most LOG_CAP bytes per run)
and the last lines are kept for the status (`tail`), never to our stdout or stderr;
the launch line and that stderr are masked (masking.py: the config's secrets).

The connection is over (`lost` is set) when stdout closes, or soon after the process
exits even if a child of it still holds stdout open. `stop()` ends it as the MCP spec
says: stdin closed, a grace period, then the whole group and its descendants SIGTERM
and SIGKILL (the same `stop` as `execute`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import time
from collections import deque
from pathlib import Path
from typing import Any

import anyio
import mcp_types
from mcp.shared.message import SessionMessage

from ..processes import procs
from ..processes.procs import descendants, signal_all
from ..safety import masking
from .config import ServerConfig
from .environment import guards, server_env

MAX_MESSAGE = 16 << 20
LOG_CAP = 1 << 20
TAIL_LINES = 20
EXIT_GRACE = 1.0  # after stdin closes, before signals
LINGER = 0.5  # output still read once the process itself has exited
POLL = 0.1


class StartError(Exception):
    """The server's process could not be started (no such command, bad cwd, ...)."""


class ServerProcess:
    def __init__(self, config: ServerConfig, cwd: Path, log_path: Path | None) -> None:
        self.config = config
        self.cwd = Path(config.cwd).expanduser() if config.cwd else cwd
        if not self.cwd.is_absolute():
            self.cwd = cwd / self.cwd
        self.log_path = log_path
        known = [value for _, value in config.env]
        self._hidden = [v.encode() for v in masking.hidden(config.args, known)]  # for stderr
        self.process: asyncio.subprocess.Process | None = None
        self.lost = asyncio.Event()
        self.garbage = 0
        self.sample: str | None = None  # the first line that was not JSON-RPC
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._logged = 0
        self._log: int | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._forget: Any = None
        self.read_stream: Any = None
        self.write_stream: Any = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    @property
    def returncode(self) -> int | None:
        return self.process.returncode if self.process else None

    def ending(self) -> str:
        """How the process ended, for an error message: `exit status 1`, `SIGKILL`."""
        code = self.returncode
        if code is None:
            return "still running"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exit status {code}"

    # -- start ---------------------------------------------------------------------
    def _argv(self, env: dict[str, str]) -> list[str]:
        command = self.config.command or ""
        if os.sep not in command:
            found = shutil.which(command, path=env.get("PATH", os.defpath))
            if found is None:
                raise StartError(f"command not found: {command}")
            command = found
        return [command, *self.config.args]

    async def start(self) -> tuple[Any, Any]:
        """Spawn the server; the (read, write) streams for a ClientSession."""
        if not self.cwd.is_dir():
            raise StartError(f"cwd is not a folder: {self.cwd}")
        env = server_env(self.config)
        argv = self._argv(env)
        self._open_log(argv)
        pre_exec, watch, forget = guards()
        spawning = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                cwd=self.cwd,
                env=env,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,
                preexec_fn=pre_exec,
            )
        )
        try:
            self.process = await asyncio.shield(spawning)
        except asyncio.CancelledError:  # cancelled while starting: it must still die
            with contextlib.suppress(Exception):
                self.process = await spawning
                watch(self.process.pid)
                self._forget = forget
                await self.stop()
            raise
        except OSError as exc:
            raise StartError(f"cannot start {argv[0]}: {exc.strerror or exc}") from None
        watch(self.process.pid)
        self._forget = forget
        shown = masking.args(argv[1:], [value for _, value in self.config.env])
        self._note(f"started pid {self.process.pid}: {' '.join([argv[0], *shown])}")
        read_send, self.read_stream = anyio.create_memory_object_stream[Any](0)
        self.write_stream, write_recv = anyio.create_memory_object_stream[Any](0)
        self._tasks = [
            asyncio.ensure_future(self._read(read_send)),
            asyncio.ensure_future(self._write(write_recv)),
            asyncio.ensure_future(self._errors()),
        ]
        return self.read_stream, self.write_stream

    # -- the pipes ---------------------------------------------------------------
    async def _chunks(self, stream: asyncio.StreamReader) -> Any:
        """stdout's chunks until EOF, or LINGER after the process has exited."""
        exited_at: float | None = None
        while True:
            try:
                async with asyncio.timeout(POLL):  # not wait_for: it can lose a cancel
                    chunk = await stream.read(65536)
            except TimeoutError:
                if self.returncode is not None:
                    exited_at = exited_at or time.monotonic()
                    if time.monotonic() - exited_at > LINGER:
                        return
                continue
            if not chunk:
                return
            yield chunk

    async def _read(self, send: Any) -> None:
        assert self.process is not None and self.process.stdout is not None
        buffer = bytearray()
        skipping = False  # the rest of a line that was too long
        try:
            async with send:
                async for chunk in self._chunks(self.process.stdout):
                    start = 0
                    while (end := chunk.find(b"\n", start)) >= 0:
                        if skipping:
                            skipping = False
                        else:
                            buffer += chunk[start:end]
                            line = bytes(buffer)
                            buffer.clear()
                            if (message := self._parse(line)) is not None:
                                await send.send(message)
                        start = end + 1
                    if not skipping:
                        buffer += chunk[start:]
                    if len(buffer) > MAX_MESSAGE:
                        self._garbage(f"a line longer than {MAX_MESSAGE} bytes")
                        buffer.clear()
                        skipping = True
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass  # the session is gone
        finally:
            self.lost.set()

    def _parse(self, line: bytes) -> SessionMessage | None:
        line = line.strip()
        if not line:
            return None
        try:
            message = mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        except ValueError:
            self._garbage(line[:200].decode("utf-8", "replace"))
            return None
        return SessionMessage(message)

    def _garbage(self, sample: str) -> None:
        self.garbage += 1
        if self.sample is None:
            self.sample = sample
        self._note(f"stdout, not JSON-RPC, dropped: {sample}")

    async def _write(self, receive: Any) -> None:
        assert self.process is not None and self.process.stdin is not None
        stdin = self.process.stdin
        try:
            async with receive:
                async for message in receive:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    stdin.write(data.encode("utf-8") + b"\n")
                    await stdin.drain()
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        except (BrokenPipeError, ConnectionResetError, OSError) as exc:
            self._note(f"stdin closed: {exc}")
            self.lost.set()
            if self.read_stream is not None:
                await self.read_stream.aclose()

    async def _errors(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        pending = b""
        with contextlib.suppress(OSError, ValueError):
            while chunk := await self.process.stderr.read(65536):
                chunk = masking.redact(chunk, self._hidden)
                self._log_bytes(chunk)
                *lines, pending = (pending + chunk).split(b"\n")
                pending = pending[-2000:]
                for line in lines:
                    if line.strip():
                        self.tail.append(line[-500:].decode("utf-8", "replace"))
        if pending.strip():
            self.tail.append(pending.decode("utf-8", "replace"))

    # -- the log -----------------------------------------------------------------
    def _open_log(self, argv: list[str]) -> None:
        if self.log_path is None:
            return
        try:
            self.log_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._log = os.open(
                self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600
            )
        except OSError:
            self._log = None

    def _log_bytes(self, data: bytes) -> None:
        if self._log is None or self._logged >= LOG_CAP:
            return
        room = LOG_CAP - self._logged
        try:
            os.write(self._log, data[:room])
            if len(data) > room:
                os.write(
                    self._log, b"\n[elelem: log cap reached; the rest of this run is not kept]\n"
                )
        except OSError:
            pass
        self._logged += min(len(data), room)

    def _note(self, text: str) -> None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        self._log_bytes(f"[elelem {stamp}] {text}\n".encode("utf-8", "replace"))

    # -- the end -----------------------------------------------------------------
    async def stop(self) -> None:
        """End the server: stdin closed, EXIT_GRACE, then the group TERM and KILL, and
        the reaper told to forget it. A cancel of the caller meanwhile kills the group
        at once (SIGKILL, `kill`) and goes on; either way the pipes' tasks are
        cancelled and waited for (quick then; a second cancel goes on at once), `lost`
        is set and the log closed."""
        process = self.process
        try:
            if process is not None:
                await self._end(process)
                if self._forget is not None:
                    self._forget(process.pid)
                    self._forget = None
                self._note(f"stopped ({self.ending()})")
        except asyncio.CancelledError:  # the caller's: the group dies now, the cancel goes on
            self.kill()  # (the reaper still watches the group: whatever outlived SIGKILL)
            self._note("killed (its stop was cancelled)")
            raise
        finally:
            tasks, self._tasks = self._tasks, []
            for task in tasks:
                task.cancel()
                task.add_done_callback(_retrieved)
            try:
                if tasks:  # their own ends (not raised here); a cancel of the caller goes on
                    await asyncio.wait(tasks)
            finally:
                self.lost.set()
                if self._log is not None:
                    with contextlib.suppress(OSError):
                        os.close(self._log)
                    self._log = None

    async def _end(self, process: asyncio.subprocess.Process) -> None:
        if process.stdin is not None and not process.stdin.is_closing():
            with contextlib.suppress(OSError, RuntimeError):
                process.stdin.close()
        deadline = time.monotonic() + EXIT_GRACE
        while process.returncode is None and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        await procs.stop(process)

    def kill(self) -> None:
        """SIGKILL the group and its descendants now (no waiting, for a sync close)."""
        process = self.process
        if process is None:
            return
        tree = descendants(process.pid)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        signal_all(tree, signal.SIGKILL)


def _retrieved(task: asyncio.Task[None]) -> None:
    """A pipe's task's failure is its own: the connection's end says it already."""
    if not task.cancelled():
        task.exception()
