"""What the user is asked, and told, about a tool call the permission policy stops
(docs/permissions.md, "Asking"): permissions.py decides, this words it.
"""

from __future__ import annotations

import json
from typing import Any


def question(
    tool: str, args: dict[str, Any], why: str | None = None, held: str | None = None
) -> str:
    """`Allow TOOL: SUBJECT?`, the subject whole (the command, the path, or the
    arguments), however long: padding must not push what will really run out of sight
    (each face shows it whole, the terminal with its control characters made visible);
    for a protected path, why it asks; for a command a deny rule cannot check, why
    (`held`)."""
    subject = args.get("command") or args.get("path") or json.dumps(args, ensure_ascii=False)
    text = f"Allow {tool}: {subject}?"
    if held:
        return f"{text} ({held})"
    return f"{text} ({why}; what is written there decides what runs later)" if why else text


def refusal(tool: str, args: dict[str, Any], why: str, client: str) -> tuple[str, str]:
    """What the user is told in the chat, and what the model reads, when a write to a
    protected path (or a command a deny rule cannot check: `args` has a `command`) is
    refused unasked: `client` says why the client was not asked."""
    if isinstance(args.get("command"), str):
        told = (
            f"Refused: {tool} {args['command']}. {why}; {client}, and a permission request "
            'there may be answered without you (an "approve all" setting), so none was '
            "sent. Run it yourself, or allow it in elelem's terminal or the VS Code or "
            "Neovim client."
        )
        reason = (
            f"Refused: {tool} ({why}; {client}, so no one was asked). Do not retry it in "
            "another spelling; tell the user what you meant to run."
        )
        return told, reason
    subject = args.get("path") or tool
    told = (
        f"Refused: {tool} {subject}. {why}; {client}, and a permission request there may "
        'be answered without you (an "approve all" setting), so none was sent. To make '
        "this change, write the file yourself, or run the session in elelem's terminal or "
        "the VS Code or Neovim client and allow it there."
    )
    reason = (
        f"Refused: {tool} {subject} ({why}; a write there decides what runs later, and "
        f"{client}, so no one was asked). Do not retry it; tell the user what you meant to "
        "write: they can write the file themselves, or allow it from elelem's terminal or "
        "an editor client."
    )
    return told, reason
