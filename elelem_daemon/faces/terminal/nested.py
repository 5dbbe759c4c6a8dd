"""TerminalNested: the terminal's Output for a `task` call's sub-agent (builtins/task.py).

Its tool calls, their folded output and marks, and what it says print under the task
call, each line indented by INDENT more than the call's, as VS Code and Neovim nest the
events that carry `parentToolCallId`. Its streamed text and thinking are not printed
(NullOutput's): only its final answer counts, as the task call's result. Once a child
call has its result, the task's own spinner comes back: the spinner of the call
`TerminalOutput.nested(call_id)` names (the call running, when that id was not drawn).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...io import NullOutput
from ...result import Result

if TYPE_CHECKING:
    from .console import TerminalOutput

INDENT = "    "


class TerminalNested(NullOutput):
    def __init__(self, parent: TerminalOutput, label: str | None) -> None:
        self.parent = parent
        self.label = label  # the task call's spinner

    def _under(self, draw: Callable[..., None], *args: Any) -> None:
        outer = self.parent.indent
        self.parent.indent = outer + INDENT
        try:
            draw(*args)
        finally:
            self.parent.indent = outer

    def say(self, text: str, kind: str = "plain") -> None:
        self._under(self.parent.say, text, kind)

    def doing(self, call: dict[str, Any]) -> None:
        self._under(self.parent.doing, call)

    def result(self, call: dict[str, Any], result: Result) -> None:
        self._under(self.parent.result, call, result)
        self.parent.spin_again(self.label)
