"""Files: where the file tools read and write. A face may put the editor in its place.

`session.files` is a `LocalFiles` unless a face replaces it, e.g. the ACP face with
the editor's buffers (`fs/read_text_file`, `fs/write_text_file`), so the tools see
unsaved changes and their edits land in the editor's undo history. `Files` is what
every replacement has.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Protocol


class Files(Protocol):
    async def read_text(self, path: Path, errors: str = "strict") -> str: ...

    async def write_text(self, path: Path, text: str) -> int: ...


class LocalFiles:
    """The local disk."""

    async def read_text(self, path: Path, errors: str = "strict") -> str:
        """The file's text; FileNotFoundError when there is no such file."""
        if not path.is_file():
            raise FileNotFoundError(str(path))
        return await asyncio.to_thread(path.read_text, encoding="utf-8", errors=errors)

    async def write_text(self, path: Path, text: str) -> int:
        """Write the whole text (creating folders); return the number of bytes written."""
        data = text.encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        await asyncio.to_thread(path.write_bytes, data)
        return len(data)
