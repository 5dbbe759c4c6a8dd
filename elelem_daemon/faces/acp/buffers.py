"""The editor's files over ACP: `fs/read_text_file` and `fs/write_text_file` as the
core's `EditorFiles` (filesystem.py) takes them, so the tools and attachments read
unsaved buffers and edits land in the editor's undo history.

Each direction is used only when the client offered it in `initialize`; otherwise
that direction stays on the local disk. An editor that answers a read with
"resource not found" (-32002) does not have the file: it is read from the disk (and
is missing if not there either); another failure fails the read.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...filesystem import EditorFiles
from ...jsonrpc.errors import RESOURCE_NOT_FOUND, RpcError

if TYPE_CHECKING:
    from .connection import Connection


def editor_files(connection: Connection, session_id: str, read: bool, write: bool) -> EditorFiles:
    async def read_text(path: Path) -> str | None:
        try:
            answer = await connection.request(
                "fs/read_text_file", {"sessionId": session_id, "path": str(path)}
            )
        except RpcError as exc:
            if exc.code == RESOURCE_NOT_FOUND:  # the editor does not have it: the disk
                return None
            if not path.exists():
                raise FileNotFoundError(str(path)) from None
            raise OSError(f"the editor could not read {path}: {exc.message}") from None
        if not isinstance(answer, dict) or not isinstance(answer.get("content"), str):
            raise OSError(f"the editor sent no content for {path}")
        return answer["content"]

    async def write_text(path: Path, text: str) -> None:
        try:
            await connection.request(
                "fs/write_text_file", {"sessionId": session_id, "path": str(path), "content": text}
            )
        except RpcError as exc:
            raise OSError(f"the editor could not write {path}: {exc.message}") from None

    return EditorFiles(read_text if read else None, write_text if write else None)
