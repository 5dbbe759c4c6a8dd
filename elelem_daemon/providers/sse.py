"""Server-sent events framing, as the Anthropic and OpenAI streams use it.

`event:` and `data:` lines collect until a blank line ends the event; several
`data:` lines join with a newline; lines starting with `:` are comments; other
fields (`id:`, `retry:`) are ignored. An event still open when the stream ends
is handed over too, so its reader can decide whether it is whole.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator


async def sse_events(lines: AsyncIterable[str]) -> AsyncIterator[tuple[str, str]]:
    """Yield `(event, data)` pairs; `event` is "message" when the server named none."""
    event, data = "", list[str]()
    async for line in lines:
        if not line:
            if data:
                yield event or "message", "\n".join(data)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "event":
            event = value
        elif field == "data":
            data.append(value)
    if data:
        yield event or "message", "\n".join(data)
