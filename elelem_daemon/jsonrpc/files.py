"""The editor's files over JSON-RPC, for both editor faces: `fs/read_text_file
{sessionId, path}` -> `{content}` and `fs/write_text_file {sessionId, path, content}`,
as ACP names them, made into the core's `EditorFiles` (filesystem.py). The tools,
`@` mentions and attachments then read unsaved buffers, and edits land in the
editor's undo history.

`request(method, params)` is the face's request to its client; it raises an exception
with an integer `code` and a `message` for an error response (the ACP face's RpcError,
pygls's JsonRpcException in the daemon). A read answered with "resource not found"
(-32002) means the editor does not have the file: the disk answers then. Any other
failure, a malformed answer, or no answer within EDITOR_WAIT seconds (ELELEM_EDITOR_TIMEOUT,
default 30; the daemon face's `files/*` share it) fails that read
or write with a clear OSError (the tool's `{"error", "ok": false}`, an attachment's
refusal). A refusal carries the editor's own words: its message and its data (cut at
DATA_CAP), so `Internal error` comes with the details the editor gave. Each direction
is used only when the client offered it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..base.config import number
from ..edits.filesystem import EditorFiles, EditorRead, EditorWrite
from .errors import RESOURCE_NOT_FOUND

Request = Callable[[str, dict[str, Any]], Awaitable[Any]]
EDITOR_WAIT = number("ELELEM_EDITOR_TIMEOUT", 30)  # seconds an editor has to answer a request
DATA_CAP = 500  # characters of the editor's error data quoted in the tool's error


def refusal(exc: Exception) -> str:
    """The editor's answer to a refused request: `message (data)`."""
    message = getattr(exc, "message", None)
    code = getattr(exc, "code", None)
    words = (message if isinstance(message, str) else "").strip()
    words = words or (f"error {code}" if code is not None else str(exc))
    data: Any = getattr(exc, "data", None)
    if isinstance(data, dict) and set(data) <= {"details", "message", "error"} and data:
        data = "; ".join(str(v) for v in data.values())  # the SDKs' {details: "..."}
    if data is None or data == "" or data == {}:
        return words
    shown = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False, default=str)
    if len(shown) > DATA_CAP:
        shown = shown[:DATA_CAP] + "..."
    return f"{words} ({shown})"


def editor_files(request: Request, session_id: str, read: bool, write: bool) -> EditorFiles:
    """`session.files` for a client that serves reads (`read`), writes (`write`) or both."""
    return EditorFiles(*fs_methods(request, session_id, read, write))


def fs_methods(
    request: Request, session_id: str, read: bool, write: bool
) -> tuple[EditorRead | None, EditorWrite | None]:
    """`fs/read_text_file` and `fs/write_text_file` as `EditorFiles`' two functions (None
    for a direction the client did not offer)."""

    async def ask(method: str, params: dict[str, Any], path: Path, doing: str) -> Any:
        try:
            async with asyncio.timeout(EDITOR_WAIT):  # not wait_for: it can lose a cancel
                return await request(method, params)
        except TimeoutError:
            raise OSError(f"the editor did not {doing} {path} within {EDITOR_WAIT:g} s") from None

    async def read_text(path: Path) -> str | None:
        params = {"sessionId": session_id, "path": str(path)}
        try:
            answer = await ask("fs/read_text_file", params, path, "read")
        except OSError:
            raise
        except Exception as exc:  # an error response, or the client went away
            code = getattr(exc, "code", None)
            if code == RESOURCE_NOT_FOUND:  # the editor does not have it: the disk
                return None
            if not path.exists():
                raise FileNotFoundError(str(path)) from None
            raise OSError(f"the editor could not read {path}: {refusal(exc)}") from None
        if not isinstance(answer, dict) or not isinstance(answer.get("content"), str):
            raise OSError(f"the editor sent no content for {path}")
        return answer["content"]

    async def write_text(path: Path, text: str) -> None:
        params = {"sessionId": session_id, "path": str(path), "content": text}
        try:
            await ask("fs/write_text_file", params, path, "write")
        except OSError:
            raise
        except Exception as exc:
            raise OSError(f"the editor could not write {path}: {refusal(exc)}") from None

    return (read_text if read else None), (write_text if write else None)
