"""Front: a raw TCP server on 127.0.0.1 standing before the replay server, for the
faults HTTP cannot script: a refused connection (the listener closed, then reopened
on the same port), TLS or HTTP garbage instead of an answer, and an answer that
never comes. In `forward` mode it pipes bytes both ways to the replay server."""

from __future__ import annotations

import asyncio
import threading

TLS_ALERT = b"\x15\x03\x03\x00\x02\x02\x28"  # a TLS handshake_failure alert record
TLS_HELLO = b"\x16\x03\x03\x00\x31\x02\x00\x00\x2d\x03\x03" + bytes(40)  # a ServerHello start


class Front:
    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.mode = "forward"  # forward | garbage | stall
        self.garbage = b""
        self._open: set[asyncio.StreamWriter] = set()
        self._server: asyncio.AbstractServer | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.port = 0
        self.listen()
        self.url = f"http://127.0.0.1:{self.port}"

    def _call(self, coro: object) -> object:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)  # type: ignore[arg-type]

    def listen(self) -> None:
        async def start() -> None:
            self._server = await asyncio.start_server(
                self._serve, "127.0.0.1", self.port, reuse_address=True
            )
            self.port = self._server.sockets[0].getsockname()[1]

        self._call(start())

    def set(self, mode: str, garbage: bytes = b"") -> None:
        """Serve the next connections so; open ones (kept alive by the client) are closed."""
        self.mode, self.garbage = mode, garbage
        self._call(self._hang_up())

    def refuse(self) -> None:
        """Close the listener: connecting is refused until `listen()`."""

        async def close() -> None:
            assert self._server is not None
            self._server.close()
            await self._hang_up()

        self._call(close())

    async def _hang_up(self) -> None:
        for writer in list(self._open):
            writer.close()
        await asyncio.sleep(0.05)

    def stop(self) -> None:
        async def shutdown() -> None:
            if self._server is not None:
                self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self._call(shutdown())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._open.add(writer)
        try:
            if self.mode == "forward":
                await self._forward(reader, writer)
            elif self.mode == "garbage":
                await reader.readuntil(b"\r\n\r\n")
                writer.write(self.garbage)
                await writer.drain()
            else:  # stall: take the request, never answer, until the client gives up
                await reader.read()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._open.discard(writer)
            writer.close()

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except ConnectionError:
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
