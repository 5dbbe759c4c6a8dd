"""Built-in tool `todo`: the model writes its whole task list each time, as Claude
Code's TodoWrite does; the session's Plan (plans.py) tells the faces (`event/plan`,
ACP's `plan` update, the terminal's compact list).

`todo {todos: [{content, status}]}`, status `pending`, `in_progress` or `completed`,
checked by its JSON Schema (at most MAX_TODOS entries of at most MAX_CONTENT
characters, no other keys) before it runs. It is ordinary tool traffic: the model
reads its result for the turn; the store keeps the call, so a resumed session redraws
the last plan.
"""

from __future__ import annotations

from typing import Any

from ..ports import SessionView
from ..registry import Plugin
from ..turns.plans import STATUSES, TOOL, compact

MAX_TODOS = 50
MAX_CONTENT = 500

TODOS = {
    "type": "array",
    "maxItems": MAX_TODOS,
    "description": "The whole task list, in order; send it all again on every change",
    "items": {
        "type": "object",
        "properties": {
            "content": {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT},
            "status": {"type": "string", "enum": list(STATUSES)},
        },
        "required": ["content", "status"],
        "additionalProperties": False,
    },
}


def register(plugin: Plugin) -> None:
    @plugin.tool(
        TOOL,
        "Write the task list of the work in progress (the whole list each time): "
        "mark one task in_progress while you work on it, completed once done",
        {"todos": TODOS},
        ["todos"],
        kind="think",
    )
    async def todo(
        session: SessionView, args: dict[str, Any]
    ) -> dict[str, Any]:  # on the loop: faces hear it
        entries = [{"content": t["content"], "status": t["status"]} for t in args["todos"]]
        session.plan.update(entries)
        done = sum(1 for e in entries if e["status"] == "completed")
        return {"entries": len(entries), "completed": done, "plan": compact(entries)}
