"""Questions in the terminal: the permission question takes one key, a question from
the model (the `interview` tool) takes a line.

The permission question is printed whole, however long, with control characters made
visible (visible.py), so what will run is what is read. Then one key answers it:
`y` allow, `n` deny, `a` always, `N` never; any other key asks again. Ctrl-C or
Ctrl-D answers "no answer" (None), and the terminal's Input then cancels the turn.

Read line by line (a script), the same words or keys answer (`allow`, `yes`, `y`,
`no`, ...); anything else asks again; the end of the input is no answer.

A confirmation (`kind: "confirm"`, `/undo` and `/rewind`) takes a line: `y` or `yes`,
`n` or `no` (any case), then Enter; anything else asks again. A line, not one key as
the permission question: a rewind is not undone by the next keystroke, and a user who
types `yes` and Enter does not send `es` to the model.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .visible import visible

KEYS = {"y": "allow", "n": "deny", "a": "always", "N": "never"}
WORDS = {"yes": "allow", "no": "deny"}
AGAIN = "  answer y (allow), n (deny), a (always) or N (never)"
CONFIRM = {"y": "yes", "yes": "yes", "n": "no", "no": "no"}
CONFIRM_AGAIN = "  answer y (yes) or n (no), then Enter"


def is_confirm(options: list[str] | None, details: dict[str, Any]) -> bool:
    """A yes/no confirmation (a rewind's)."""
    return details.get("kind") == "confirm" and sorted(options or []) == ["no", "yes"]


def confirmed(line: str) -> str | None:
    """`yes` or `no` for a typed line, or None when it says neither."""
    return CONFIRM.get(line.strip().lower())


def keys_for(options: list[str] | None, details: dict[str, Any]) -> dict[str, str] | None:
    """The key for each answer, when this is a permission question asked with the
    policy's answers (some of allow, deny, always, never)."""
    if details.get("kind") != "permission" or not options:
        return None
    keys = {key: word for key, word in KEYS.items() if word in options}
    return keys if len(keys) == len(options) else None


def answer_of(line: str, keys: dict[str, str]) -> str | None:
    """The answer a typed line gives, or None when it gives none."""
    text = line.strip()
    if text in keys:
        return keys[text]
    word = WORDS.get(text.lower(), text.lower())
    return word if word in keys.values() else None


async def by_line(
    read: Callable[[str], Awaitable[str | None]],
    prompt: str,
    options: list[str] | None,
    details: dict[str, Any],
) -> str | None:
    hint = f" [{'/'.join(options)}]" if options else ""
    keys = keys_for(options, details)
    confirm = is_confirm(options, details)
    hint = " [y/n]" if confirm else hint
    while True:
        line = await read(f"{prompt}{hint} ")
        if line is not None and confirm:
            if (word := confirmed(line)) is not None:
                return word
            print(CONFIRM_AGAIN, flush=True)
            continue
        if line is None or keys is None:
            return line
        if (answer := answer_of(line, keys)) is not None:
            return answer
        print(AGAIN, flush=True)


async def on_terminal(
    prompt: str, options: list[str] | None, details: dict[str, Any]
) -> str | None:
    from prompt_toolkit import PromptSession
    from prompt_toolkit.formatted_text import FormattedText

    keys = keys_for(options, details)
    print(f"\033[1;33m?\033[0m {visible(prompt)}", flush=True)
    if is_confirm(options, details):
        return await _confirm()
    if keys is None:
        hint = f"[{'/'.join(visible(o) for o in options)}] " if options else ""
        session: PromptSession[str] = PromptSession()
        try:
            return await session.prompt_async(
                FormattedText([("bold", f"  {hint}› ")]), handle_sigint=False
            )
        except (KeyboardInterrupt, EOFError):
            return None
    message = FormattedText(
        [("bold", "  "), *_choices(keys), ("bold", " › ")],
    )
    while True:
        answer = await _one_key(message, keys)
        if answer != "":
            return answer
        print(AGAIN, flush=True)


async def _confirm() -> str | None:
    """`yes` or `no` from a typed line (`y`, `n`, ...); None for Ctrl-C or Ctrl-D."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.formatted_text import FormattedText

    session: PromptSession[str] = PromptSession()
    while True:
        try:
            line = await session.prompt_async(
                FormattedText([("bold", "  [y/n] › ")]), handle_sigint=False
            )
        except (KeyboardInterrupt, EOFError):
            return None
        if (word := confirmed(line)) is not None:
            return word
        print(CONFIRM_AGAIN, flush=True)


def _choices(keys: dict[str, str]) -> list[tuple[str, str]]:
    parts: list[tuple[str, str]] = []
    for key, word in keys.items():
        if parts:
            parts.append(("", " · "))
        parts += [("bold", key), ("", f" {word}")]
    return parts


async def _one_key(message: Any, keys: dict[str, str]) -> str | None:
    """The answer of one key press: a word, "" for any other key, None for Ctrl-C/D."""
    from prompt_toolkit import PromptSession
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    def answer(key: str, word: str | None) -> None:
        @bindings.add(key, eager=True)
        def _(event: Any) -> None:
            if word:
                event.current_buffer.insert_text(key)
            event.app.exit(result=word)

    for key, word in keys.items():
        answer(key, word)
    for key in ("c-c", "c-d"):
        answer(key, None)

    @bindings.add("<any>")
    @bindings.add("enter")
    def _other(event: Any) -> None:
        event.app.exit(result="")

    session: PromptSession[str | None] = PromptSession(key_bindings=bindings)
    return await session.prompt_async(message, handle_sigint=False)


async def line_on_terminal(prompt: str) -> str | None:
    """One typed line after `prompt` (shown visible); None for Ctrl-C or Ctrl-D. The
    terminal's review (review.py) reads its y/n/a/d/q answers with it."""
    from prompt_toolkit import PromptSession

    session: PromptSession[str] = PromptSession()
    try:
        return await session.prompt_async(visible(prompt), handle_sigint=False)
    except (KeyboardInterrupt, EOFError):
        return None
