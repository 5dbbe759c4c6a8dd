"""The ACP face's Output and Input: the core calls them, the client sees ACP.

`AcpOutput` turns the core's events into `session/update`s and gives each tool call a
`toolCallId` unique in the session (providers may reuse theirs). `AcpInput` turns the
core's questions into `session/request_permission` or an `elicitation/create` form; a
question only the user may answer (`user_only`: a write to a protected path) is never a
permission request, which an approve-all client answers for the user: a form when the
client takes them, else not asked at all (CannotAsk).
Both are built before the session (which takes them) and `attach`ed to it after.
"""

from __future__ import annotations

import logging
import secrets
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...io import CannotAsk, NullInput, NullOutput
from ...jsonrpc.errors import RpcError
from ...result import Result
from . import updates

if TYPE_CHECKING:
    from ...session import Session
    from .connection import Connection

log = logging.getLogger(__name__)

PERMISSION_KINDS = {
    "allow": ("allow_once", "Allow"),
    "always": ("allow_always", "Always allow"),
    "deny": ("reject_once", "Reject"),
    "never": ("reject_always", "Always reject"),
}
CONFIRM_KINDS = {  # a confirmation (`/undo`, `/rewind N`): go ahead, or not
    "yes": ("allow_once", "Yes"),
    "no": ("reject_once", "No"),
}
NAMED = {"permission": PERMISSION_KINDS, "confirm": CONFIRM_KINDS}
# A question's choices get these kinds in turn: clients that draw an option by its
# kind (codecompanion: Accept, Always accept, Reject) then draw up to four apart.
CHOICE_KINDS = ("allow_once", "allow_always", "reject_once", "reject_always")
CHOICE_ID = "choice-"
REFUSING = ("deny", "never", "no")  # the answers that let nothing happen
NO_FORMS = "this ACP client declares no forms (`elicitation.form` in its capabilities)"


CHUNKS = ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk")


class AcpOutput(NullOutput):
    """Clients join a prompt's message chunks into one text, so a chunk that is not the
    model's own (an error, a command's output) starts its own paragraph, and the text
    after it starts another: `paragraph`.

    Every chunk carries a `messageId` (ACP's `ContentChunk`): the chunks of one kind
    share it until a new message starts: a new prompt, a tool call (the text after it
    is the model's next message), or, replayed, each kept message."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.session: Session | None = None
        self.current: tuple[str, dict[str, Any]] | None = None  # the call running now
        self._ids: dict[str, str] = {}
        self._count = 0
        # unique across processes: a client that resumed the session (no replay) keeps
        # the calls it drew under the ids an earlier process gave them
        self._prefix = f"call_{secrets.token_hex(4)}_"
        self._tail = ""  # the end of the prompt's message text so far
        self._apart = False  # the next delta starts a new paragraph
        self._messages: dict[str, str] = {}  # chunk kind -> the messageId it goes on with

    def begin(self) -> None:
        """A prompt starts: its text starts fresh."""
        self._tail, self._apart = "", False
        self.new_message()

    def new_message(self) -> None:
        """The next chunk of each kind starts a new message (a new `messageId`)."""
        self._messages.clear()

    def message(self, value: str) -> None:
        """An `agent_message_chunk`, the prompt's text so far remembered."""
        if value:
            self._tail = (self._tail + value)[-2:]
            self.update(updates.chunk("agent_message_chunk", value))

    def paragraph(self, value: str) -> None:
        """A chunk of its own: after a blank line if text came before, and followed by
        one before any later text."""
        if not value.strip():
            return
        self.message(self._gap() + value)
        self._apart = True

    def _gap(self) -> str:
        if not self._tail or self._tail.endswith("\n\n"):
            return ""
        return "\n" if self._tail.endswith("\n") else "\n\n"

    def attach(self, session: Session) -> None:
        self.session = session

    def update(self, payload: dict[str, Any]) -> None:
        if self.session is None:  # a setup block printing before the session exists
            log.info("acp: update before the session started: %s", payload)
            return
        kind = payload.get("sessionUpdate")
        if kind in CHUNKS and "messageId" not in payload:
            ident = self._messages.setdefault(kind, str(uuid.uuid4()))
            payload = {**payload, "messageId": ident}
        self.connection.notify("session/update", {"sessionId": self.session.id, "update": payload})

    def say(self, text: str, kind: str = "plain") -> None:
        if text and text.strip():
            self.paragraph(f"error: {text}" if kind == "error" else text)

    def thinking(self, text: str) -> None:
        self.update(updates.chunk("agent_thought_chunk", text))

    def saying(self, text: str) -> None:
        if self._apart and text:
            self._apart = False
            text = self._gap() + text
        self.message(text)

    def doing(self, call: dict[str, Any]) -> None:
        self.new_message()
        ident = self.next_id()
        self._ids[call["id"]] = ident
        self.current = (ident, call)
        self.update(self.announce(ident, call))

    def result(self, call: dict[str, Any], result: Result) -> None:
        ident = self._ids.pop(call["id"], None) or self.next_id()
        payload = dict(result.payload)
        self.update(updates.tool_result(ident, call, not result.failed, payload, self.cwd))
        self.current = None
        self._apart = True  # the text after a tool call is a paragraph of its own

    def nested(self, call_id: str) -> NullOutput:
        """The Output of a sub-agent that tool call `call_id` runs (builtins/task.py):
        its progress as that call's `tool_call_update` content (nested.py)."""
        from .nested import AcpNested

        return AcpNested(self, self._ids.get(call_id) or call_id)

    def replay_call(self, call: dict[str, Any], ok: bool, payload: dict[str, Any]) -> None:
        """A stored tool call, redrawn: its `tool_call`, then its `tool_call_update`."""
        self.new_message()
        ident = self.next_id()
        self.update(self.announce(ident, call))
        self.update(updates.tool_result(ident, call, ok, payload, self.cwd))

    def announce(self, ident: str, call: dict[str, Any]) -> dict[str, Any]:
        """The `tool_call` for a call, its kind asked of the tool itself."""
        kind = self.session.toolbox.resolve(call["name"]).kind if self.session else "other"
        return updates.tool_call(ident, call, kind, self.cwd)

    def interrupted(self) -> None:
        """Calls a cancel cut short end as failed, so no client shows them running."""
        for ident in self._ids.values():
            self.update(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": ident,
                    "status": "failed",
                    "rawOutput": {"error": "cancelled", "ok": False},
                }
            )
        self._ids.clear()
        self.current = None

    def next_id(self) -> str:
        self._count += 1
        return f"{self._prefix}{self._count}"

    @property
    def cwd(self) -> Path:
        return self.session.cwd if self.session else Path.cwd()


class AcpInput(NullInput):
    """No lines to read (prompts arrive as requests); questions go to the client."""

    def __init__(self, connection: Connection, output: AcpOutput, elicits: bool) -> None:
        super().__init__()
        self.connection = connection
        self.output = output
        self.elicits = elicits  # the client takes `elicitation/create` in form mode

    async def readline(self, prompt: str = "> ") -> str | None:
        return None

    async def ask(
        self,
        prompt: str,
        options: list[str] | None = None,
        kind: str = "question",
        tool: dict[str, Any] | None = None,
        user_only: bool = False,
        **_: Any,
    ) -> str | None:
        """A question becomes a form (`elicitation/create`) when the client takes them;
        a permission, or a question with choices otherwise, `session/request_permission`.

        A question without choices for a client without forms cannot be asked: it gets
        no answer, and the model reads that the user gave none. A `user_only` question
        is a form, its refusing choices first (a form sent back with its first value
        allows nothing), or, for a client without forms, raises CannotAsk.
        """
        if user_only:
            if not self.elicits:
                raise CannotAsk(NO_FORMS)
            first = sorted(options or [], key=lambda option: option not in REFUSING)
            return await self._elicit(prompt, first, tool)
        if kind != "permission" and self.elicits:
            return await self._elicit(prompt, options, tool)
        if not options:
            return None
        choices, named = self._options(options, kind)
        alone = self.output.current is None  # a question of no running call (/rewind, trust)
        call = self._tool_call(prompt, tool, choices, named, alone)
        if alone:  # announced first: a request about a call never seen is "Tool call"
            self.output.update({"sessionUpdate": "tool_call", **call})
        params = {"sessionId": self._session_id(), "toolCall": call, "options": choices}
        chosen = await self._permission(params, choices, options)
        if alone:  # nothing else will end the call the question showed
            status = "failed" if chosen in (None, "deny", "never", "no") else "completed"
            self.output.update(
                {"sessionUpdate": "tool_call_update", "toolCallId": call["toolCallId"],
                 "status": status}
            )  # fmt: skip
        return chosen

    async def _permission(
        self, params: dict[str, Any], choices: list[dict[str, str]], options: list[str]
    ) -> str | None:
        try:
            answer = await self.connection.request("session/request_permission", params)
        except (RpcError, ConnectionError) as exc:
            log.warning("acp: permission request failed: %s", exc)
            return None
        outcome = answer.get("outcome") if isinstance(answer, dict) else None
        if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
            return None  # cancelled, or not an answer: no answer
        chosen = outcome.get("optionId")  # absent (avante's auto-approval): no answer
        picked = {
            choice["optionId"]: option for choice, option in zip(choices, options, strict=True)
        }
        return picked.get(chosen) if isinstance(chosen, str) else None

    async def _elicit(
        self, prompt: str, options: list[str] | None, tool: dict[str, Any] | None
    ) -> str | None:
        """A form: the whole question as its `message`, its meaning (a rewind's files)
        as its title, one required string `answer` (one of the choices, if any)."""
        answer: dict[str, Any] = {"type": "string", "title": "Answer"}
        if options:
            answer["enum"] = list(options)
        params: dict[str, Any] = {
            "sessionId": self._session_id(),
            "mode": "form",
            "message": prompt,
            "requestedSchema": {
                "type": "object",
                "title": updates.question_title(prompt, tool or {}),
                "properties": {"answer": answer},
                "required": ["answer"],
            },
        }
        if self.output.current is not None:
            params["toolCallId"] = self.output.current[0]
        try:
            reply = await self.connection.request("elicitation/create", params)
        except (RpcError, ConnectionError) as exc:
            log.warning("acp: elicitation failed: %s", exc)
            return None
        if not isinstance(reply, dict) or reply.get("action") != "accept":
            return None  # declined or dismissed: no answer
        value = (reply.get("content") or {}).get("answer")
        if not isinstance(value, str) or (options and value not in options):
            return None
        return value

    def _session_id(self) -> str | None:
        return self.output.session.id if self.output.session else None

    @staticmethod
    def _options(options: list[str], kind: str) -> tuple[list[dict[str, str]], bool]:
        """A permission's answers as ACP's four kinds, a confirmation's as yes and no
        (named: True); a question's choices as distinct options: ids `choice-1`...,
        the choice as the name, the kinds in turn."""
        known = NAMED.get(kind, {})
        if known and all(o in known for o in options):
            named = [{"optionId": o, "name": known[o][1], "kind": known[o][0]} for o in options]
            return named, True
        choices = [
            {
                "optionId": f"{CHOICE_ID}{n}",
                "name": option,
                "kind": CHOICE_KINDS[(n - 1) % len(CHOICE_KINDS)],
            }
            for n, option in enumerate(options, 1)
        ]
        return choices, False

    def _tool_call(
        self,
        prompt: str,
        tool: dict[str, Any] | None,
        choices: list[dict[str, str]],
        named: bool,
        alone: bool,
    ) -> dict[str, Any]:
        """The call the question is about, with the question (and its choices,
        numbered, for clients that draw options by kind alone) and any diff. Its title
        says what the question means when the call's own title cannot (a question of
        no running call, or choices): updates.question_title."""
        current = self.output.current
        ident, call = current or (self.output.next_id(), {"name": "ask", "arguments": {}})
        if tool and tool.get("name"):
            call = {"name": tool["name"], "arguments": tool.get("arguments") or call["arguments"]}
        update = self.output.announce(ident, call)
        del update["sessionUpdate"]
        update["status"] = "pending"
        cwd = self.output.cwd
        if alone or not named:
            about = {**(tool or {}), **call}
            update["title"] = updates.question_title(prompt, about, None if named else choices)
            where = updates.question_locations(about, cwd)
            if where:
                update["locations"] = where
            if alone:
                update["kind"] = updates.QUESTION_KINDS.get(call["name"], update["kind"])
        asked = prompt
        if not named:
            asked += "\n\n" + "\n".join(f"{n}. {c['name']}" for n, c in enumerate(choices, 1))
        content: list[dict[str, Any]] = [{"type": "content", "content": updates.text(asked)}]
        diff = updates.diff_content((tool or {}).get("diff"), call["arguments"], cwd)
        update["content"] = [*diff, *content]
        return update
