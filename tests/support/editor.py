"""A scripted reviewing editor: what the VS Code and Neovim clients do with `files/read`
and `files/propose`, written from protocol.md alone (it does not use the daemon's
hunks.py), so the tests check the contract as a client engineer reads it.

    editor = ReviewingEditor()
    editor.open(path, "unsaved text")          # a buffer with changes not on disk
    client = await spawn(on_request=editor.handlers())
    await client.initialize(**editor.capabilities)
    editor.decide = lambda params: {"accept": [1]}   # the user's review of each change

A decision is a dict: `accept` ("all", or a list of hunk ids; absent: none), `reason`,
`acceptAllForTurn`, `conflict` (answer conflict), `edit` (the user types this text
into the buffer while reviewing), `hang` (never answer), or `answer` (sent as it is:
a hostile client).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def split_lines(text: str) -> list[str]:
    """protocol.md: a line is text up to and including a "\\n"; the last may lack it."""
    out, start = [], 0
    while start < len(text):
        end = text.find("\n", start)
        end = len(text) if end < 0 else end + 1
        out.append(text[start:end])
        start = end
    return out


def apply_hunks(old: str | None, new: str, hunks: list[dict[str, Any]], ids: list[int]) -> str:
    """protocol.md's recipe: for each accepted hunk, last first, replace oldText's lines
    oldStart..oldStart+oldLines-1 by newText's lines newStart..newStart+newLines-1
    (a range of 0 lines sits after its start line)."""
    a, b = split_lines(old or ""), split_lines(new)
    for hunk in sorted((h for h in hunks if h["id"] in ids), key=lambda h: -h["oldStart"]):
        at = hunk["oldStart"] if hunk["oldLines"] == 0 else hunk["oldStart"] - 1
        first = hunk["newStart"] - 1
        replacement = b[first : first + hunk["newLines"]] if hunk["newLines"] else []
        a[at : at + hunk["oldLines"]] = replacement
    return "".join(a)


@dataclass
class Buffer:
    text: str
    version: int = 1
    undo: list[str] = field(default_factory=list)

    def set(self, text: str, undoable: bool = True) -> None:
        if undoable:
            self.undo.append(self.text)
        self.text = text
        self.version += 1


class ReviewingEditor:
    capabilities: dict[str, Any] = {"files": {"read": True, "apply": True, "review": True}}

    def __init__(self) -> None:
        self.buffers: dict[str, Buffer] = {}
        self.reads: list[dict[str, Any]] = []
        self.proposals: list[dict[str, Any]] = []
        self.answers: list[Any] = []
        self.withdrawn: list[dict[str, Any]] = []
        self.decide: Callable[[dict[str, Any]], dict[str, Any]] = lambda params: {"accept": "all"}
        self.asked = asyncio.Event()  # set when a proposal arrives
        self.saves = False  # True: an applied change is also saved (the disk holds it)

    def handlers(self) -> dict[str, Callable[[Any], Any]]:
        return {"files/read": self.read, "files/propose": self.propose}

    def open(self, path: Any, text: str) -> Buffer:
        self.buffers[str(path)] = buffer = Buffer(text)
        return buffer

    def type(self, path: Any, text: str) -> None:
        """The user changes the buffer (not saved)."""
        self.buffers[str(path)].set(text)

    # -- the daemon's requests -----------------------------------------------------------
    async def read(self, params: dict[str, Any]) -> dict[str, Any] | None:
        self.reads.append(params)
        buffer = self.buffers.get(params["path"])
        return None if buffer is None else {"text": buffer.text, "version": buffer.version}

    async def propose(self, params: dict[str, Any]) -> Any:
        self.proposals.append(params)
        self.asked.set()
        buffer = self.buffers.get(params["path"])
        if buffer is not None and params["baseVersion"] != buffer.version:
            return self._answer({"outcome": "conflict", "acceptedHunks": []})
        decision = self.decide(params) if params["review"] else {"accept": "all"}
        if decision.get("hang"):
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.withdrawn.append(params)
                raise
        if "answer" in decision:
            return self._answer(decision["answer"])
        if decision.get("edit") is not None and buffer is not None:
            buffer.set(decision["edit"])  # the user typed while the review was open
        if decision.get("conflict") or (
            buffer is not None and buffer.text != (params["oldText"] or "")
        ):
            return self._answer({"outcome": "conflict", "acceptedHunks": []})
        ids = [h["id"] for h in params["hunks"]]
        accept = decision.get("accept") or []
        chosen = ids if accept == "all" else [i for i in ids if i in accept]
        answer: dict[str, Any] = {"acceptedHunks": chosen}
        if decision.get("reason"):
            answer["reason"] = decision["reason"]
        if not chosen and ids:
            return self._answer({**answer, "outcome": "rejected"})
        text = apply_hunks(params["oldText"], params["newText"], params["hunks"], chosen)
        answer["outcome"] = "accepted" if len(chosen) == len(ids) else "partial"
        answer["text"] = text
        answer["applied"] = buffer is not None
        if decision.get("acceptAllForTurn"):
            answer["acceptAllForTurn"] = True
        if buffer is not None:
            buffer.set(text)  # one undo step
            if self.saves:
                Path(params["path"]).write_text(text)
        return self._answer(answer)

    def _answer(self, answer: Any) -> Any:
        self.answers.append(answer)
        return answer
