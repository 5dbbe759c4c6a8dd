"""Steering: user messages sent to a running turn, which takes them with its next request.

An Agent holds one `Steering`, a bounded queue. A face puts a text in through
`Session.steer` (only while a kept turn runs: else NotRunning, and the client sends a
turn instead). The running turn `take`s every waiting text before each provider request
after its first, in the order they came, as user messages after that round's tool
results; so the model reads prompt, tool round, steer. A steer that comes while the
model's last answer streams (no tool calls) makes the turn go one round more, so it is
never left behind. The conversation keeps each steer taken as a user message between
the prompt and the reply (the tool traffic between them lives for the turn only, as
always), and the store records them so. Each listener hears every text taken
(`listeners`: the daemon's `event/steer`, ACP's `user_message_chunk`).

Bounds: a steer holds at most MAX_TEXT characters (and is not blank); at most
MAX_QUEUED wait at once (SteerRefused, the busy kind, past that). A steer still waiting
when the turn ends without another request (cancelled, failed, stopped by its round
cap) is not sent: the turn says so (`Output.say`, kind `info`) and it is dropped.

Withdrawing (`withdraw`): a face whose client cancels the request that carried a steer
takes it back while it still waits; nothing is sent or kept of it, and nobody hears
it. One already taken cannot be: the model has read it. ACP's steering prompt is
answered `withdrawn` or `sent` then; the daemon's `session/steer` is answered the
moment it is queued, so no cancel of it finds the request running (protocol.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..base.errors import InvalidParams, SteerRefused

MAX_TEXT = 64 * 1024  # characters of one steer
MAX_QUEUED = 16  # steers waiting at once
SteerListener = Callable[[str], None]


@dataclass
class Steer:
    """One queued steer; `sent` once a request took it."""

    text: str
    sent: bool = False


class Steering:
    def __init__(self) -> None:
        self._waiting: list[Steer] = []
        self.listeners: list[SteerListener] = []  # each hears every steer taken

    def put(self, text: str) -> Steer:
        """Queue a steer; InvalidParams for a blank or oversized text, SteerRefused when
        MAX_QUEUED wait already. Nothing is queued then."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidParams("a steer needs some text", errors=["text: empty"])
        if len(text) > MAX_TEXT:
            raise InvalidParams(
                f"a steer holds at most {MAX_TEXT} characters, this one {len(text)}",
                errors=[f"text: longer than {MAX_TEXT} characters"],
            )
        if len(self._waiting) >= MAX_QUEUED:
            raise SteerRefused(
                f"{MAX_QUEUED} steers are waiting already: wait for the next request",
                limit=MAX_QUEUED,
            )
        steer = Steer(text)
        self._waiting.append(steer)
        return steer

    @property
    def waiting(self) -> bool:
        return bool(self._waiting)

    def take(self) -> list[str]:
        """Every waiting steer, in order, told to the listeners; the queue is emptied."""
        taken, self._waiting = self._waiting, []
        for steer in taken:
            steer.sent = True
            for listener in list(self.listeners):
                listener(steer.text)
        return [steer.text for steer in taken]

    def withdraw(self, steer: Steer) -> bool:
        """Take `steer` back if no request took it yet (True: it is gone from the queue,
        never sent nor kept); False when it was taken already (`steer.sent`) or dropped."""
        for at, waiting in enumerate(self._waiting):
            if waiting is steer:
                del self._waiting[at]
                return True
        return False

    def drop(self) -> list[str]:
        """The steers no request will take (the turn is over), the queue emptied."""
        dropped, self._waiting = self._waiting, []
        return [steer.text for steer in dropped]
