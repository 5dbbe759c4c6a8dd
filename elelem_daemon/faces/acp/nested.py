"""A sub-agent's events over ACP (builtins/task.py): the content of its task call.

ACP has no nested tool calls, so what the child does shows in the parent call's
`tool_call_update` (status `in_progress`): its `content` is one text block, the child's
progress so far, a line per tool call (`+ Read `a.py`` then `  ✓` or `  ✗ error`) and
the text it says, replaced whole at each step (ACP's `content` replaces the list).
It holds the last MAX_LOG characters. The task call's own `tool_call_update` that ends
it (the child's final answer as its result) comes from the parent's Output as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...io import NullOutput
from ...result import Result
from . import updates

if TYPE_CHECKING:
    from .editor import AcpOutput

MAX_LOG = 8000  # characters of the child's progress shown in the parent call


class AcpNested(NullOutput):
    def __init__(self, parent: AcpOutput, ident: str) -> None:
        self.parent = parent
        self.ident = ident  # the task call's toolCallId
        self.log = ""
        self._said = ""  # the reply streaming in this fetch

    def _add(self, text: str) -> None:
        self.log = (self.log + text)[-MAX_LOG:]
        self.parent.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": self.ident,
                "status": "in_progress",
                "content": [{"type": "content", "content": updates.text(self.log)}],
            }
        )

    def _line(self, text: str) -> str:
        return ("\n" if self.log and not self.log.endswith("\n") else "") + text + "\n"

    def say(self, text: str, kind: str = "plain") -> None:
        if text and text.strip():
            self._add(self._line(f"error: {text}" if kind == "error" else text))

    def saying(self, text: str) -> None:
        self._said += text

    def reply(self, text: str) -> None:
        said, self._said = self._said, ""
        if said.strip():
            self._add(self._line(said.strip()))

    def doing(self, call: dict[str, Any]) -> None:
        self.reply("")
        title = updates.tool_title(call["name"], call.get("arguments") or {}, self.parent.cwd)
        self._add(self._line(f"+ {title}"))

    def result(self, call: dict[str, Any], result: Result) -> None:
        failed = result.failed
        self._add(f"  ✗ {updates.one_line(result.why_failed)}\n" if failed else "  ✓\n")
