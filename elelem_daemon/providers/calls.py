"""Tool calls as the providers hand them to the agent: the `doing` event; and the
`stop` event a provider yields when the model's reply was cut off by its token limit
(Anthropic `stop_reason: max_tokens`, OpenAI `finish_reason: length`, Ollama
`done_reason: length`), which makes the turn's stop reason `max_tokens`.

Arguments are parsed with `jsonsafe.loads(finite=True)`: text nested past
`jsonsafe.MAX_DEPTH`, or holding `NaN`, `Infinity` or a number too large for a float
(`1e999`), is an `error` the model reads, as any text that is not JSON.

A call is bounded before anything keeps it (issue 36): a name past NAME_CAP characters
(no provider accepts a tool name that long) is an unknown tool, its name cut to
NAME_CAP characters plus `...` in the event, so what the model reads back, what the
faces show and what is stored are cut; arguments past ELELEM_TOOL_ARGS_CAP characters
(8 MiB by default) are an `error` the model reads, and `{}` is kept in their place.
"""

from __future__ import annotations

import json
from typing import Any

from ..base.config import number
from ..base.jsonsafe import loads

NAME_CAP = 256
ARGS_CAP = int(number("ELELEM_TOOL_ARGS_CAP", 8 * 1024 * 1024, minimum=1))
CUT_OFF: dict[str, Any] = {"type": "stop", "reason": "max_tokens"}


def doing(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    """A `doing` event. `arguments` is a dict, or the JSON text the model streamed.

    Text that does not parse to an object gives `arguments: {}` plus an `error`,
    which the agent turns into a failed tool result the model can read.
    """
    event: dict[str, Any] = {"type": "doing", "id": call_id, "name": name, "arguments": {}}
    if len(name) > NAME_CAP:
        event["name"] = name[:NAME_CAP] + "..."
        event["error"] = (
            f'unknown tool: "{event["name"]}" (a name of {len(name)} characters; '
            f"tool names take at most {NAME_CAP})"
        )
        return event
    if (size := length(arguments)) > ARGS_CAP:
        event["error"] = (
            f"tool arguments of {size} characters, past ELELEM_TOOL_ARGS_CAP ({ARGS_CAP}); "
            "send less at a time"
        )
        return event
    if isinstance(arguments, dict):
        event["arguments"] = arguments
        return event
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return event
    if not isinstance(arguments, str):
        event["error"] = (
            f"tool arguments must be a JSON object, got {clip(json.dumps(arguments, default=str))}"
        )
        return event
    try:
        parsed = loads(arguments, finite=True)
    except json.JSONDecodeError as exc:
        event["error"] = f"invalid JSON in tool arguments: {exc}: {clip(arguments)}"
        return event
    except ValueError as exc:  # JSON, but not plain: NaN, 1e999, nested too deep
        event["error"] = f"unusable tool arguments: {exc}: {clip(arguments)}"
        return event
    if isinstance(parsed, dict):
        event["arguments"] = parsed
    else:
        event["error"] = f"tool arguments must be a JSON object, got {clip(arguments)}"
    return event


def clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def length(arguments: Any) -> int:
    """The characters of arguments as text (a dict measured as its JSON)."""
    if isinstance(arguments, str):
        return len(arguments)
    if isinstance(arguments, dict):
        try:
            return len(json.dumps(arguments, default=str))
        except (ValueError, RecursionError):  # too deep or circular: checked later
            return 0
    return 0
