"""EditorState: what the user is looking at in the editor, for the model.

A client that opts in (`capabilities.editorState`) sends `editor/state` notifications:

    {sessionId?, activeFile: path | null, selection?: {range, text?},
     visibleRanges?: [range], diagnostics?: [{range, severity?, message, source?, path?}]}

Each replaces the whole state (a field left out is gone). A diagnostic without its
own `path` is one of the active file. `update` checks it as
attachments are checked (ranges, paths, severities) and raises AttachmentError for a
malformed one; what is too long is cut, never refused: at most MAX_VISIBLE ranges,
SELECTION_CAP bytes of selected text, MAX_PROBLEMS problems, so `render` is at most
about STATE_CAP characters.

`attach(system_prompt)` adds `render` to the system prompt's `fresh` sections: the
state goes, when it changed, as a note ahead of the turn's prompt (transcript.py), so
the system prompt stays byte-stable and a provider's prompt cache holds; it never
enters the kept conversation or the store.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import attachments as shapes
from . import blocks
from .attachments import Attachment, Lines, _Check
from .expansion import diagnostics_block, excerpt

MAX_VISIBLE = 8
SELECTION_CAP = 4000
MAX_PROBLEMS = 20
STATE_CAP = 16_000
HEADER = (
    "The user's editor, as it was when this message was sent (it changes as they work; "
    "it is not part of the conversation):"
)


class EditorState:
    def __init__(self, cwd: Path) -> None:
        self.cwd = Path(cwd).resolve()
        self.active: str | None = None
        self.visible: list[Lines] = []
        self.selection: tuple[Lines, str, str | None] | None = None  # lines, text, note
        self.problems: Attachment | None = None
        self.updates = 0

    def update(self, params: Any) -> None:
        """Replace the state with an `editor/state`'s params; AttachmentError if malformed
        (the state is then unchanged)."""
        check = _Check("editor/state", "editorState", params)
        if not isinstance(params, dict):
            raise check.fail("invalid", "params: expected an object")
        active = None
        if params.get("activeFile") is not None:
            active = shapes.located(check, self.cwd, "activeFile")[1]
        visible = []
        for n, rng in enumerate(_array(check, "visibleRanges")[:MAX_VISIBLE]):
            name = f"visibleRanges[{n}]"
            visible.append(_Check(check.where, check.kind, {name: rng}).lines(name))
        selection = None
        if params.get("selection") is not None:
            chosen = _Check(check.where, check.kind, check.field("selection", dict), "selection.")
            lines = chosen.lines("range")
            text = chosen.field("text", str) if "text" in chosen.value else ""
            cut = text.encode("utf-8", "surrogatepass")[:SELECTION_CAP].decode("utf-8", "ignore")
            note = f"cut at {SELECTION_CAP} bytes" if len(cut) < len(text) else None
            selection = (lines, cut, note)
        problems = None
        items = _array(check, "diagnostics")
        if items:
            kept: dict[str, Any] = {"items": items[:MAX_PROBLEMS]}
            if active is not None:  # a problem without its own path is in the open file
                kept["path"] = params["activeFile"]
            problems = shapes.diagnostics(_Check(check.where, check.kind, kept), self.cwd)
            problems = Attachment(
                "diagnostics", items=problems.items, more=len(items) - len(problems.items)
            )
        if (selection or visible) and active is None:
            raise check.fail("invalid", "selection and visibleRanges need an activeFile")
        self.active, self.visible, self.selection, self.problems = (
            active,
            visible,
            selection,
            problems,
        )
        self.updates += 1

    def clear(self) -> None:
        self.active, self.visible, self.selection, self.problems = None, [], None, None

    def render(self) -> str:
        """The system prompt's editor section; empty when the editor said nothing. At
        most STATE_CAP characters: a part that would pass it is left out whole (a
        block is never cut open)."""
        if self.active is None and self.problems is None:
            return ""
        parts = [HEADER]
        if self.active is not None:
            parts.append(f"- open file: {blocks.escape(self.active)}")
        if self.visible:
            parts.append(f"- visible lines: {', '.join(str(v) for v in self.visible)}")
        if self.selection is not None:
            chosen, text, note = self.selection
            parts.append(f"- selected: lines {chosen}")
            if text:
                body = excerpt(text, 1, shapes.READ_LINES).text
                parts.append(
                    blocks.block("selection", body, path=self.active, lines=str(chosen), note=note)
                )
        if self.problems is not None:
            parts.append(f"- problems: {len(self.problems.items) + self.problems.more}")
            parts.append(diagnostics_block(self.problems))
        kept, size = [], 0
        for part in parts:
            if size + len(part) + 1 > STATE_CAP:
                kept.append("- (more was left out: too long)")
                break
            kept.append(part)
            size += len(part) + 1
        return "\n".join(kept)

    def attach(self, system_prompt: Any) -> EditorState:
        """Render this state into each turn's note (once, however often called)."""
        if self.render not in system_prompt.fresh:
            system_prompt.fresh.append(self.render)
        return self


def _array(check: _Check, name: str) -> list[Any]:
    if check.value.get(name) is None:
        return []
    return list(check.field(name, list))
