"""EditorFiles: `session.files` served by the editor through `fs/read_text_file` and
`fs/write_text_file`, so the tools read unsaved buffers and edits land in its undo history.

Each direction is used only when the client offered it in `initialize`; otherwise
that direction stays on the local disk. When the editor refuses a request, the tool's
error carries the editor's own words: its message and its data (cut at DATA_CAP), so
`Internal error` comes with the details the editor gave.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...filesystem import LocalFiles
from ...jsonrpc.errors import RpcError

if TYPE_CHECKING:
    from .connection import Connection

DATA_CAP = 500  # characters of the editor's error data quoted in the tool's error


def refusal(exc: RpcError) -> str:
    """The editor's answer to a refused request: `message (data)`."""
    words = exc.message.strip() or f"error {exc.code}"
    data: Any = exc.data
    if isinstance(data, dict) and set(data) <= {"details", "message", "error"} and data:
        data = "; ".join(str(v) for v in data.values())  # the SDKs' {details: "..."}
    if data is None or data == "" or data == {}:
        return words
    shown = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    if len(shown) > DATA_CAP:
        shown = shown[:DATA_CAP] + "..."
    return f"{words} ({shown})"


class EditorFiles(LocalFiles):
    def __init__(self, connection: Connection, session_id: str, read: bool, write: bool) -> None:
        self.connection = connection
        self.session_id = session_id
        self.read = read
        self.write = write

    async def read_text(self, path: Path, errors: str = "strict") -> str:
        if not self.read:
            return await super().read_text(path, errors)
        try:
            answer = await self.connection.request(
                "fs/read_text_file", {"sessionId": self.session_id, "path": str(path)}
            )
        except RpcError as exc:
            if not path.exists():
                raise FileNotFoundError(str(path)) from None
            raise OSError(f"the editor could not read {path}: {refusal(exc)}") from None
        if not isinstance(answer, dict) or not isinstance(answer.get("content"), str):
            raise OSError(f"the editor sent no content for {path}")
        return answer["content"]

    async def write_text(self, path: Path, text: str) -> int:
        if not self.write:
            return await super().write_text(path, text)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            await self.connection.request(
                "fs/write_text_file",
                {"sessionId": self.session_id, "path": str(path), "content": text},
            )
        except RpcError as exc:
            raise OSError(f"the editor could not write {path}: {refusal(exc)}") from None
        return len(text.encode("utf-8"))
