"""Bounded reading of a streamed answer: lines of at most MAX_LINE bytes, an answer of
at most MAX_REPLY bytes, an error body of at most ERROR_BODY bytes. A server that
sends more ends the turn with a clear error instead of filling the daemon's memory
(httpx's own `aiter_lines` and `aread` buffer without bound).

Settings (environment, read when the provider is built):

    ELELEM_MAX_LINE    bytes of one line of the stream (SSE or NDJSON)  (default 16 MiB)
    ELELEM_MAX_REPLY   bytes of one streamed answer                      (default 64 MiB)

The answer is read raw when it has no content encoding, decoded otherwise (`body`).
Lines end with `\\n`, `\\r\\n` or `\\r`, as server-sent events define them; they are
decoded as UTF-8 (bad bytes become U+FFFD).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from ..base.errors import ProviderError

MAX_LINE = 16 * 1024 * 1024
MAX_REPLY = 64 * 1024 * 1024
ERROR_BODY = 65536
CR = 13  # b"\r"[0]


class Splitter:
    """The line splitter `batches` runs, fed one read at a time (a provider may call it
    itself, with no async generator between the reads and its loop): `feed` answers the
    lines a read completes, `end` the one left open when the answer ends. Raises
    ProviderError past the bounds."""

    def __init__(self, name: str, max_line: int = MAX_LINE, max_reply: int = MAX_REPLY) -> None:
        self.name, self.max_line, self.max_reply = name, max_line, max_reply
        self.pending, self.total = bytearray(), 0

    def feed(self, chunk: bytes) -> list[str]:
        self.total += len(chunk)
        if self.total > self.max_reply:
            raise ProviderError(
                f"{self.name}: the answer passed {self.max_reply} bytes (ELELEM_MAX_REPLY); "
                "it was cut off"
            )
        pending = self.pending
        if not pending and chunk.endswith(b"\n") and b"\r" not in chunk:
            # the usual read: whole lines ended by \n alone (a \n is never inside a UTF-8
            # sequence, so decoding first and splitting after gives each line's decoding)
            found = chunk.decode("utf-8", "replace").split("\n")
            del found[-1]
            return found
        # what is pending holds no line end but maybe a last \r: look at that and the new
        # bytes only, so a long line sent in small reads costs linear time
        seen = max(len(pending) - 1, 0)
        pending += chunk
        end = max(pending.rfind(b"\n", seen), pending.rfind(b"\r", seen))
        if end == len(pending) - 1 and pending[end] == CR:  # maybe the first half of \r\n:
            end = max(pending.rfind(b"\n", seen, end), pending.rfind(b"\r", seen, end))  # wait
        found = []
        if end >= 0:
            whole = pending[: end + 1].splitlines()  # bytes split at \r\n, \r, \n only
            del pending[: end + 1]
            found = [line.decode("utf-8", "replace") for line in whole]
        if len(pending) > self.max_line:
            raise ProviderError(
                f"{self.name}: a line of the stream passed {self.max_line} bytes (ELELEM_MAX_LINE)"
            )
        return found

    def end(self) -> list[str]:
        pending = self.pending
        if pending.endswith(b"\r"):
            del pending[-1:]
            return [pending.decode("utf-8", "replace")]
        return [pending.decode("utf-8", "replace")] if pending else []


async def batches(
    response: httpx.Response, name: str, max_line: int = MAX_LINE, max_reply: int = MAX_REPLY
) -> AsyncIterator[list[str]]:
    """The lines of a streamed answer, without their line ends, as one list per read that
    completes any: a reader goes through a read's lines with no await per line (a stream
    sends one event per read, each two lines)."""
    split = Splitter(name, max_line, max_reply)
    async for chunk in body(response):
        if found := split.feed(chunk):
            yield found
    if found := split.end():
        yield found


def body(response: httpx.Response) -> AsyncIterator[bytes]:
    """The answer's bytes as they arrive, decoded: an answer in no content encoding is
    read raw (`aiter_bytes` would pass each read through an identity decoder and a
    chunker: per read, in a stream that sends one event per read); gzip and the rest
    through httpx's decoders."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    return response.aiter_raw() if encoding == "identity" else response.aiter_bytes()


async def lines(
    response: httpx.Response, name: str, max_line: int = MAX_LINE, max_reply: int = MAX_REPLY
) -> AsyncIterator[str]:
    """The lines of a streamed answer, without their line ends, one by one."""
    async for batch in batches(response, name, max_line, max_reply):
        for line in batch:
            yield line


async def head(response: httpx.Response, limit: int = ERROR_BODY) -> bytes:
    """The first `limit` bytes of a (failed) answer's body; the rest is not read."""
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk[: limit - len(body)]
        if len(body) >= limit:
            break
    return bytes(body)
