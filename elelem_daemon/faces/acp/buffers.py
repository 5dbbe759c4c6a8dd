"""The editor's files over ACP: `fs/read_text_file` and `fs/write_text_file` through
the connection, as the shared `jsonrpc/files.py` makes them into the core's
`EditorFiles` (the daemon face does the same with its client). Each direction is used
only when the client offered it in `initialize`; an editor that answers a read with
"resource not found" (-32002) does not have the file, so the disk answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...edits.filesystem import EditorFiles
from ...jsonrpc.files import editor_files as over_jsonrpc

if TYPE_CHECKING:
    from .connection import Connection


def editor_files(connection: Connection, session_id: str, read: bool, write: bool) -> EditorFiles:
    return over_jsonrpc(connection.request, session_id, read, write)
