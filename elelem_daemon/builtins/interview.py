"""Built-in tool `interview`: the model asks the user a question through the Input."""

from __future__ import annotations

from typing import Any

from ..ports import SessionView
from ..registry import Plugin


def register(plugin: Plugin) -> None:
    @plugin.tool(
        "interview",
        "Ask the user a question and wait for the answer",
        {
            "question": {"type": "string", "description": "What to ask"},
            "options": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Answers to choose from, if any",
            },
        },
        ["question"],
    )
    async def interview(session: SessionView, args: dict[str, Any]) -> dict[str, Any]:
        answer = await session.input.ask(args["question"], args.get("options"))
        if answer is None:
            return {"error": "the user gave no answer"}
        return {"answer": answer}
