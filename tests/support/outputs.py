"""Stand-ins the tests build sessions with: an Output that records every call, and a
provider that replays scripted rounds."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from elelem_daemon.io import NullOutput


class SpyOutput(NullOutput):
    """An Output that remembers every call, in order, and signals the first streamed delta."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self.streaming = asyncio.Event()

    @property
    def events(self) -> list[tuple[str, Any]]:
        return self.calls

    def say(self, text: str, kind: str = "plain") -> None:
        self.calls.append(("say", (text, kind)))

    def thinking(self, text: str) -> None:
        self.calls.append(("thinking", text))

    def saying(self, text: str) -> None:
        self.calls.append(("saying", text))
        self.streaming.set()

    def reply(self, text: str) -> None:
        self.calls.append(("reply", text))

    def doing(self, call: dict[str, Any]) -> None:
        self.calls.append(("doing", call))

    def result(self, call: dict[str, Any], result: Any) -> None:
        self.calls.append(("result", result.to_dict()))

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.calls]

    def of(self, kind: str) -> list[Any]:
        return [value for k, value in self.calls if k == kind]


class Scripted:
    """A provider that replays a list of event lists, one per fetch, recording the messages."""

    name = "scripted"
    model = "scripted-1"

    def __init__(self, *rounds: list[dict[str, Any]] | Exception) -> None:
        self.rounds = list(rounds)
        self.requests: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []

    async def fetch(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[dict[str, Any]]:
        self.requests.append(([dict(m) for m in messages], tools))
        events = self.rounds.pop(0) if self.rounds else [{"type": "saying", "text": "ok"}]
        if isinstance(events, Exception):
            raise events
        for event in events:
            if isinstance(event, Exception):
                raise event
            yield event
