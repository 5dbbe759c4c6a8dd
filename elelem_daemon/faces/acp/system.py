"""The client's system prompt (ACP's `systemPrompt {mode, content}` on `session/new`,
`session/load`, `session/resume` and `session/fork`; unstable in schema 2.4.0).

`append`: the client's text is the last stable section of the system prompt, the same
bytes on every request of the session, so the prefix before it (elelem's own prompt,
the environment, AGENTS.md, the mode) stays byte-stable and cached; `override`: the
client's text replaces elelem's opening line (`transcript.FACES`), and the rest (the
environment, AGENTS.md, the mode, skills) follows as ever. Text blocks only (anything
else is invalid params, as the schema asks: an agent that cannot apply it errs), at
most MAX_BLOCKS blocks and MAX_CHARS characters. Not stored: a load or resume that
sends one replaces the one the open session had; one that sends none keeps it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...jsonrpc.errors import invalid_params

if TYPE_CHECKING:
    from ...session import Session

MODES = ("append", "override")
MAX_BLOCKS = 64
MAX_CHARS = 256 * 1024


class ClientPrompt:
    """The client's appended text, a stable section of the system prompt."""

    def __init__(self, text: str) -> None:
        self.text = text

    def section(self) -> str:
        return self.text


def capabilities() -> dict[str, Any]:
    """`sessionCapabilities.systemPrompt`: append, and override too."""
    return {"mode": {"override": {}}}


def parse(params: dict[str, Any]) -> tuple[str, str] | None:
    """The request's `(mode, text)`, or None when it sends no system prompt."""
    value = params.get("systemPrompt")
    if value is None:
        return None
    if not isinstance(value, dict):
        raise invalid_params("systemPrompt: not an object")
    mode, content = value.get("mode"), value.get("content")
    if mode not in MODES:
        shown = str(mode)[:40]
        raise invalid_params(f"systemPrompt.mode: not supported: {shown!r} (append, override)")
    if not isinstance(content, list) or len(content) > MAX_BLOCKS:
        raise invalid_params(f"systemPrompt.content: not an array of at most {MAX_BLOCKS} blocks")
    texts = []
    for index, block in enumerate(content):
        if not isinstance(block, dict) or block.get("type") != "text":
            raise invalid_params(f"systemPrompt.content[{index}]: only text blocks are taken")
        text = block.get("text")
        if not isinstance(text, str):
            raise invalid_params(f"systemPrompt.content[{index}].text: not a string")
        texts.append(text)
    joined = "\n\n".join(texts)
    if len(joined) > MAX_CHARS:
        raise invalid_params(f"systemPrompt: longer than {MAX_CHARS} characters")
    return mode, joined


def apply(session: Session, asked: tuple[str, str] | None) -> None:
    """Give the session the client's system prompt (`parse`'s); None changes nothing."""
    if asked is None:
        return
    from ...transcript import face_template

    mode, text = asked
    prompt = session.agent.transcript.system_prompt
    prompt.sections[:] = [s for s in prompt.sections if not _ours(s)]
    if mode == "override":
        prompt.template = text
        return
    prompt.template = face_template("editor")  # the face's own opening line
    prompt.sections.append(ClientPrompt(text).section)


def _ours(section: Any) -> bool:
    return isinstance(getattr(section, "__self__", None), ClientPrompt)
