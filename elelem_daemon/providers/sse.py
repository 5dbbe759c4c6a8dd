"""Server-sent events framing, as the Anthropic and OpenAI streams use it.

`event:` and `data:` lines collect until a blank line ends the event; several
`data:` lines join with a newline; lines starting with `:` are comments; other
fields (`id:`, `retry:`) are ignored. An event still open when the stream ends
is handed over too, so its reader can decide whether it is whole.

The lines come in batches (`lines.batches`: the lines of one read) and the events go
out the same way, one list per batch that completes any: a reader walks them with no
await per line or per event. `Parser` is that framing fed by hand; `read_events` runs
`lines.Splitter` and it over an answer's reads in one generator (`HTTPProvider.events`).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

from .lines import Splitter

Event = tuple[str, str]  # (event, data); event is "message" when the server named none


class Parser:
    """The SSE framing `sse_events` runs, fed one batch of lines at a time: `feed`
    answers the events the lines complete, `end` the one still open at the end."""

    def __init__(self) -> None:
        self.event, self.data = "", list[str]()

    def feed(self, batch: list[str]) -> list[Event]:
        done: list[Event] = []
        for line in batch:
            if not line:
                if self.data:
                    done.append((self.event or "message", "\n".join(self.data)))
                self.event, self.data = "", []
                continue
            if line.startswith("data: "):  # the usual line, said once
                self.data.append(line[6:])
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                self.event = value
            elif field == "data":
                self.data.append(value)
        return done

    def end(self) -> list[Event]:
        return [(self.event or "message", "\n".join(self.data))] if self.data else []


async def sse_events(batches: AsyncIterable[list[str]]) -> AsyncIterator[list[Event]]:
    """The `(event, data)` pairs each batch of lines completes (batches with none are
    skipped), then the one still open at the end, if any."""
    parser = Parser()
    async for batch in batches:
        if done := parser.feed(batch):
            yield done
    if done := parser.end():
        yield done


async def read_events(chunks: AsyncIterable[bytes], split: Splitter) -> AsyncIterator[list[Event]]:
    """`sse_events` of `split`'s lines of `chunks` (an answer's reads), in one generator
    (what `HTTPProvider.events` gives a provider): per read, no await but its own."""
    parser = Parser()
    async for chunk in chunks:
        if done := parser.feed(split.feed(chunk)):
            yield done
    if done := parser.feed(split.end()) + parser.end():
        yield done
