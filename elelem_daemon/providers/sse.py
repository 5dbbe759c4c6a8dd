"""Server-sent events framing, as the Anthropic and OpenAI streams use it.

`event:` and `data:` lines collect until a blank line ends the event; several
`data:` lines join with a newline; lines starting with `:` are comments; other
fields (`id:`, `retry:`) are ignored. An event still open when the stream ends
is handed over too, so its reader can decide whether it is whole.

The lines come in batches (`lines.batches`: the lines of one read) and the events go
out the same way, one list per batch that completes any: a reader walks them with no
await per line or per event.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

Event = tuple[str, str]  # (event, data); event is "message" when the server named none


async def sse_events(batches: AsyncIterable[list[str]]) -> AsyncIterator[list[Event]]:
    """The `(event, data)` pairs each batch of lines completes (batches with none are
    skipped), then the one still open at the end, if any."""
    event, data = "", list[str]()
    async for batch in batches:
        done: list[Event] = []
        for line in batch:
            if not line:
                if data:
                    done.append((event or "message", "\n".join(data)))
                event, data = "", []
                continue
            if line.startswith("data: "):  # the usual line, said once
                data.append(line[6:])
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                event = value
            elif field == "data":
                data.append(value)
        if done:
            yield done
    if data:
        yield [(event or "message", "\n".join(data))]


async def each_event(batches: AsyncIterable[list[str]]) -> AsyncIterator[Event]:
    """`sse_events`, one event at a time."""
    async for events in sse_events(batches):
        for event in events:
            yield event
