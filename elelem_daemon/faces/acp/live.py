"""AcpSession: one core Session seen through ACP: its updates, tool calls, questions and
prompts. It decides nothing: the agent, its tools, commands and permission policy are
the core's; this only translates (see io.py for the Output and Input that feed it).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from . import updates
from .connection import RpcError
from .prompt import command_line, prompt_text

log = logging.getLogger(__name__)

SESSION_BUSY = -32001
PERMISSION_KINDS = {
    "allow": ("allow_once", "Allow"),
    "always": ("allow_always", "Always allow"),
    "deny": ("reject_once", "Reject"),
    "never": ("reject_always", "Always reject"),
}
EXIT_TEXT = "To end this session, close it in the editor."


class AcpSession:
    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.session: Any = None  # the core Session, attached once built
        self.running: asyncio.Task[Any] | None = None
        self._ids: dict[str, str] = {}
        self._count = 0
        self._current: tuple[str, dict[str, Any]] | None = None
        self.elicits = False  # the client takes `elicitation/create` in form mode

    @property
    def id(self) -> str:
        return self.session.id

    def update(self, payload: dict[str, Any]) -> None:
        self.connection.notify("session/update", {"sessionId": self.id, "update": payload})

    # -- tool calls ---------------------------------------------------------------
    def started(self, call: dict[str, Any]) -> None:
        """A call gets a toolCallId unique in the session (providers may reuse theirs)."""
        self._count += 1
        ident = f"call_{self._count}"
        self._ids[call["id"]] = ident
        self._current = (ident, call)
        self.update(updates.tool_call(ident, call, self.session.cwd))

    def finished(self, call: dict[str, Any], result: Any) -> None:
        ident = self._ids.pop(call["id"], None) or self._next_orphan()
        payload = dict(result.payload)
        self.update(updates.tool_result(ident, call, result.ok, payload, self.session.cwd))
        self._current = None

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
        self._current = None

    def _next_orphan(self) -> str:
        self._count += 1
        return f"call_{self._count}"

    # -- questions ---------------------------------------------------------------
    async def ask(
        self, prompt: str, options: list[str] | None, kind: str, tool: dict[str, Any] | None
    ) -> str | None:
        """A question becomes a form (`elicitation/create`) when the client takes them;
        a permission, or a question with choices otherwise, `session/request_permission`.

        A question without choices for a client without forms cannot be asked: it gets
        no answer, and the model reads that the user gave none.
        """
        if kind != "permission" and self.elicits:
            return await self._elicit(prompt, options)
        if not options:
            return None
        choices = [self._option(option, kind) for option in options]
        params = {
            "sessionId": self.id,
            "toolCall": self._tool_call(prompt, tool),
            "options": choices,
        }
        try:
            answer = await self.connection.request("session/request_permission", params)
        except (RpcError, ConnectionError) as exc:
            log.warning("acp: permission request failed: %s", exc)
            return None
        outcome = answer.get("outcome") if isinstance(answer, dict) else None
        if not isinstance(outcome, dict) or outcome.get("outcome") != "selected":
            return None  # cancelled, or not an answer: no answer
        chosen = outcome.get("optionId")
        return chosen if chosen in options else None

    async def _elicit(self, prompt: str, options: list[str] | None) -> str | None:
        answer: dict[str, Any] = {"type": "string", "title": "Answer"}
        if options:
            answer["enum"] = list(options)
        params: dict[str, Any] = {
            "sessionId": self.id,
            "mode": "form",
            "message": prompt,
            "requestedSchema": {
                "type": "object",
                "properties": {"answer": answer},
                "required": ["answer"],
            },
        }
        if self._current is not None:
            params["toolCallId"] = self._current[0]
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

    @staticmethod
    def _option(option: str, kind: str) -> dict[str, str]:
        known = PERMISSION_KINDS.get(option) if kind == "permission" else None
        if known is None:
            return {"optionId": option, "name": option, "kind": "allow_once"}
        return {"optionId": option, "name": known[1], "kind": known[0]}

    def _tool_call(self, prompt: str, tool: dict[str, Any] | None) -> dict[str, Any]:
        """The pending call the question is about, with the question and any diff."""
        ident, call = self._current or (self._next_orphan(), {"name": "ask", "arguments": {}})
        if tool and tool.get("name"):
            call = {"name": tool["name"], "arguments": tool.get("arguments") or call["arguments"]}
        update = updates.tool_call(ident, call, self.session.cwd)
        del update["sessionUpdate"]
        update["status"] = "pending"
        content: list[dict[str, Any]] = [{"type": "content", "content": updates.text(prompt)}]
        diff = updates.diff_content((tool or {}).get("diff"), call["arguments"], self.session.cwd)
        update["content"] = [*diff, *content]
        return update

    # -- prompts ----------------------------------------------------------------
    async def prompt(self, blocks: Any) -> dict[str, Any]:
        """Run one prompt: a slash command or a turn. Answers with the stop reason."""
        if self.running is not None and not self.running.done():
            raise RpcError(
                SESSION_BUSY,
                "a prompt is already running in this session",
                {"kind": "session_busy", "sessionId": self.id},
            )
        text = prompt_text(blocks, self.session.cwd)
        line = command_line(text)
        self.running = asyncio.create_task(self.command(line) if line else self.turn(text))
        try:
            return await self.running
        except asyncio.CancelledError:
            self.interrupted()
            return {"stopReason": "cancelled"}

    def cancel(self) -> None:
        if self.running is not None and not self.running.done():
            self.running.cancel()

    async def turn(self, text: str) -> dict[str, Any]:
        agent = self.session.agent
        await self.session.turn(text)
        answer: dict[str, Any] = {"stopReason": agent.stop_reason}
        if agent.stop_reason == "error":  # ACP has no such stop reason: the error was said
            answer = {"stopReason": "end_turn", "_meta": {"elelem": {"stopReason": "error"}}}
        counts = updates.usage(agent.usage)
        if counts:
            answer["usage"] = counts
        return answer

    async def command(self, line: str) -> dict[str, Any]:
        session = self.session
        before = (session.provider_name, session.model, self.commands())
        printed = await session.command(line)
        if session.exited:  # the editor owns the session's life
            session.exited = False
            printed = EXIT_TEXT
        if printed.strip():
            shown = printed if line.startswith("/tools") else updates.fenced(printed)
            self.update(updates.chunk("agent_message_chunk", shown))
        if before[:2] != (session.provider_name, session.model):
            self.update(
                {"sessionUpdate": "config_option_update", "configOptions": self.config_options()}
            )
            self.update(
                {"sessionUpdate": "current_mode_update", "currentModeId": session.provider_name}
            )
        if before[2] != self.commands():
            self.advertise()
        return {"stopReason": "end_turn"}

    def replay(self) -> None:
        """The kept conversation as updates, as `session/load` must send it."""
        kinds = {"user": "user_message_chunk", "assistant": "agent_message_chunk"}
        for message in self.session.conversation:
            kind = kinds.get(message["role"])
            if kind and message["content"]:
                self.update(updates.chunk(kind, str(message["content"])))

    # -- what the client can pick ----------------------------------------------------
    def commands(self) -> list[dict[str, Any]]:
        listed = []
        for slashed, description in self.session.commands:
            name = slashed.lstrip("/")
            if name == "exit":
                continue
            entry: dict[str, Any] = {"name": name, "description": description}
            hints = self.session.commands.completions_for(name)
            if hints:
                entry["input"] = {"hint": " | ".join(hints[:6])}
            listed.append(entry)
        return listed

    def advertise(self) -> None:
        self.update(
            {"sessionUpdate": "available_commands_update", "availableCommands": self.commands()}
        )

    def config_options(self) -> list[dict[str, Any]]:
        session = self.session
        providers = session.registry.provider_names()
        if session.provider_name not in providers:
            providers.append(session.provider_name)
        model = session.model or "default"
        models = [model] + [
            m for m in getattr(session.provider, "models", None) or [] if m != model
        ]
        return [
            {
                "id": "provider",
                "name": "Provider",
                "description": "Who runs the model",
                "type": "select",
                "currentValue": session.provider_name,
                "options": [{"value": name, "name": name} for name in providers],
            },
            {
                "id": "model",
                "name": "Model",
                "category": "model",
                "type": "select",
                "currentValue": model,
                "options": [{"value": m, "name": m} for m in models],
            },
        ]

    def modes(self) -> dict[str, Any]:
        """Providers as modes, for clients without config options."""
        options = self.config_options()[0]["options"]
        return {
            "currentModeId": self.session.provider_name,
            "availableModes": [
                {
                    "id": o["value"],
                    "name": o["name"],
                    "description": f"Use the {o['value']} provider",
                }
                for o in options
            ],
        }
