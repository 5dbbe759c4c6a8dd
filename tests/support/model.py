"""A model that records what it is sent: a real HTTP server on 127.0.0.1 speaking the
OpenAI chat-completions stream (tests/providers/replay.py), for tests that check the
exact messages a face's turn sends. Start a face with `-p openai` and `env(model)`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

from providers.replay import ReplayServer, Reply


def reply(text: str = "ok") -> Reply:
    """One streamed answer saying `text`."""

    def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        data = {
            "id": "c1",
            "object": "chat.completion.chunk",
            "model": "local",
            "choices": [choice],
        }
        return b"data: " + json.dumps(data).encode() + b"\n\n"

    return Reply(
        [event({"role": "assistant", "content": text}), event({}, "stop"), b"data: [DONE]\n\n"]
    )


class Model(ReplayServer):
    """Records every request; answers what was queued (`serving` queues `ok`s)."""

    def sent(self, n: int = -1) -> list[dict[str, Any]]:
        """The messages of the n-th request (the last by default)."""
        posts = [r for r in self.requests if r.method == "POST"]
        return posts[n].json["messages"]

    def user(self, n: int = -1) -> Any:
        """The content of the last user message of the n-th request."""
        return [m for m in self.sent(n) if m["role"] == "user"][-1]["content"]

    @property
    def posts(self) -> int:
        return sum(1 for r in self.requests if r.method == "POST")


def serving(answers: int = 50) -> Iterator[Model]:
    """For a fixture: `yield from serving()` (a Model answering `answers` turns)."""
    server = Model()
    server.queue(*[reply() for _ in range(answers)])
    yield server
    server.stop()


def env(model: Model, base: dict[str, str] | None = None, **more: str) -> dict[str, str]:
    """An environment for a face using the openai provider against `model`."""
    values = dict(base if base is not None else os.environ)
    values = {k: v for k, v in values.items() if not k.startswith(("OPENAI", "ANTHROPIC"))}
    values.update(
        OPENAI_BASE_URL=f"{model.url}/v1",
        OPENAI_MODEL="local",
        OPENAI_API_KEY="sk-local",
        ELELEM_PROVIDER="openai",
        **more,
    )
    return values
