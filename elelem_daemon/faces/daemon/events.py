"""The editor as a session's Output and Input: events become notifications, and
questions become `input/ask` requests. No JSON-RPC here: a `Peer` does the sending.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Protocol

from ...base.jsonsafe import dumps
from ...io import NullInput, NullOutput
from ...result import Result

log = logging.getLogger(__name__)


class Peer(Protocol):
    """The client at the other end, as the protocol module provides it."""

    def notify(self, method: str, params: dict[str, Any]) -> None: ...

    async def request(self, method: str, params: dict[str, Any]) -> Any: ...

    def stop(self, code: int) -> None: ...


class Events(NullOutput):
    """A daemon session's Output: each event is an `event/*` notification carrying
    `sessionId` and `turnId`. Whole replies are not sent: the response carries them.

    With an `interval` (seconds, the client's render rate), `saying` and `thinking`
    deltas go out at most once per interval, joined; held text is sent before any
    other event and when the turn ends (`flush`)."""

    def __init__(self, peer: Peer, interval: float = 0.0) -> None:
        self.peer = peer
        self.session_id: str | None = None
        self.turn_id: int | None = None
        self.call_id: str | None = None  # the tool call running (files/propose names it)
        self.parent_id: str | None = None  # a sub-agent's: the task call it runs under
        self.interval = interval
        self._held: list[str] = []
        self._held_method = ""
        self._timer: asyncio.TimerHandle | None = None
        self._last = float("-inf")  # loop time of the last delta notification
        # a delta's fields but its text, for the peer's `notify_text` (one dict per turn)
        self._notify_text = getattr(peer, "notify_text", None)
        self._head: dict[str, Any] | None = None

    def _send(self, method: str, params: dict[str, Any]) -> None:
        if self.session_id is None:  # a setup block printing before the session exists
            log.info("%s before the session started: %s", method, params)
            return
        params = {"sessionId": self.session_id, "turnId": self.turn_id, **params}
        if self.parent_id is not None:  # a sub-agent's event (builtins/task.py)
            params["parentToolCallId"] = self.parent_id
        self.peer.notify(method, params)

    def _text(self, method: str, text: str) -> None:
        """`_send(method, {"text": text})`, the same notification: through the peer's
        `notify_text` (which encodes only the text per delta) when it has one."""
        if self.session_id is None or self.parent_id is not None or self._notify_text is None:
            self._send(method, {"text": text})  # parentToolCallId goes after the text
            return
        head = self._head
        if (
            head is None
            or head["sessionId"] is not self.session_id
            or (head["turnId"] is not self.turn_id)
        ):
            head = self._head = {"sessionId": self.session_id, "turnId": self.turn_id}
        self._notify_text(method, head, text)

    def nested(self, call_id: str) -> Events:
        """The Output of a sub-agent that tool call `call_id` runs (builtins/task.py):
        the same events, each with `parentToolCallId`."""
        self.flush()
        child = Events(self.peer, self.interval)
        child.session_id, child.turn_id, child.parent_id = self.session_id, self.turn_id, call_id
        return child

    def _delta(self, method: str, text: str) -> None:
        if not self.interval:
            self._text(method, text)
            return
        if self._held and method != self._held_method:
            self.flush()
        self._held.append(text)
        self._held_method = method
        if self._timer is None:
            loop = asyncio.get_running_loop()
            wait = self._last + self.interval - loop.time()
            if wait <= 0:
                self.flush()
            else:
                self._timer = loop.call_later(wait, self.flush)

    def flush(self) -> None:
        """Send the held deltas now."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._held:
            text = "".join(self._held)
            self._held.clear()
            self._text(self._held_method, text)
            self._last = asyncio.get_running_loop().time()

    def notice(self, method: str, params: dict[str, Any]) -> None:
        """Any other notification about the session (`event/mcp`), after the held text."""
        self.flush()
        self._send(method, params)

    def say(self, text: str, kind: str = "plain") -> None:
        if text and text.strip():
            self.flush()
            self._send("event/say", {"text": text, "kind": kind})

    def thinking(self, text: str) -> None:
        self._delta("event/thinking", text)

    def saying(self, text: str) -> None:
        self._delta("event/saying", text)

    def doing(self, call: dict[str, Any]) -> None:
        self.flush()
        self.call_id = call["id"]
        self._send(
            "event/doing",
            {"id": call["id"], "name": call["name"], "arguments": call.get("arguments", {})},
        )

    def result(self, call: dict[str, Any], result: Result) -> None:
        payload = json.loads(result.to_json())  # JSON-safe whatever the tool returned
        self.flush()
        self.call_id = None
        self._send(
            "event/result",
            {"id": call["id"], "name": call["name"], "ok": not result.failed, "result": payload},
        )


class Asker(NullInput):
    """A daemon session's Input: `ask` sends `input/ask` when the client said it answers
    them, and otherwise behaves as the null input (no answer)."""

    def __init__(self, peer: Peer, events: Events, enabled: bool) -> None:
        super().__init__()
        self.peer = peer
        self.events = events
        self.enabled = enabled

    async def ask(
        self, prompt: str, options: list[str] | None = None, **details: Any
    ) -> str | None:
        """`details` as protocol.md says: `kind` (default `question`); for a
        permission question, `tool: {name, arguments, diff?}`; for `authorize` (an MCP
        server's OAuth), `server` and `url`; for `trust`, `files` (vetted.py)."""
        if not self.enabled:
            return None
        params: dict[str, Any] = {
            "sessionId": self.events.session_id,
            "turnId": self.events.turn_id,
            "kind": details.get("kind") or "question",
            "prompt": prompt,
        }
        if options:
            params["options"] = list(options)
        if isinstance(details.get("tool"), dict):
            params["tool"] = json.loads(dumps(details["tool"], default=str))
        for key in ("server", "url"):  # kind "authorize": an MCP server's browser step
            if isinstance(details.get(key), str):
                params[key] = details[key]
        if isinstance(details.get("files"), list):  # kind "trust": the user's files held
            params["files"] = json.loads(dumps(details["files"], default=str))
        try:
            answer = await self.peer.request("input/ask", params)
        except Exception as exc:  # an error response, or the client went away
            log.warning("input/ask failed: %s", exc)
            return None
        if isinstance(answer, dict) and isinstance(answer.get("text"), str):
            return answer["text"]
        if answer is not None:
            log.warning("input/ask: expected {text} or null, got %r", answer)
        return None
