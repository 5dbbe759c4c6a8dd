"""`/context delete` and `/context edit` (elelem backlog 021); the rules are the core's
(editing.py: numbering, bounds, the store's record of each edit).

- `/context delete 3,4`, `/context delete 3-5`, or both (`2, 4-6`): those messages go.
- `/context edit N`: message N's text opens in an editor (the Input's `edit`: the
  terminal runs `$EDITOR`, faces/terminal/edit_text.py); what is saved replaces it, an
  empty save deletes it, an unchanged one changes nothing. An Input with no editor (the
  editor faces) says so: their clients edit through `session/editContext` (daemon,
  protocol.md) instead. A message with images is edited as its text (the images stay).

Bad input is one line that says why (EditError), and nothing changes. Tool calls
between messages are not messages here: they live for their turn only.
"""

from __future__ import annotations

from ..control.editing import EditError, check, delete, numbers, replace
from ..conversation import text_of
from ..ports import SessionView

USAGE = "  Usage: /context [json|<number>|delete <numbers>|edit <number>]"


async def edit(session: SessionView, spec: str) -> str:
    """`/context edit N`: through the Input's editor, when it has one."""
    if not spec.strip().isdigit():
        raise EditError("which message? e.g. /context edit 3")
    number = int(spec.strip()[:9])
    check(number, len(session.context))
    editor = getattr(session.input, "edit", None)
    if not callable(editor):
        return (
            f"  no editor here: /context edit {number} opens $EDITOR in the terminal"
            " (elelem chat); editor clients of the daemon send session/editContext"
        )
    current = text_of(session.conversation[number - 2]["content"])
    saved = await editor(current, f"message-{number}")
    if saved is None:
        return f"  → message {number} unchanged (the editor was closed without saving)"
    return replace(session, number, saved)


async def run(session: SessionView, args: str) -> str | None:
    """`/context delete ...` or `/context edit ...`; None for any other arguments."""
    verb, _, rest = args.strip().partition(" ")
    if verb == "delete":
        return delete(session, numbers(rest, len(session.context)))
    if verb == "edit":
        return await edit(session, rest)
    return None
