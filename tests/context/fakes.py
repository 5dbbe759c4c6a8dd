"""What the context tests share: a provider that records what it is sent, a files port
serving unsaved buffers, and tiny valid images."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

PNG = base64.b64decode(  # a 1x1 transparent PNG, 68 bytes
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
PNG64 = base64.b64encode(PNG).decode()
GIF = b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00"
WEBP = b"RIFF\x1a\x00\x00\x00WEBPVP8L"


class Seen:
    """A provider that answers `ok` and records every list of messages it was sent."""

    name = "seen"
    model = "seen-1"

    def __init__(self, vision: bool = True) -> None:
        self.vision = vision
        self.sent: list[list[dict[str, Any]]] = []

    async def fetch(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]):
        self.sent.append([dict(m) for m in messages])
        yield {"type": "saying", "text": "ok"}


class Buffers:
    """An editor's files port: unsaved texts from memory, the disk for the rest."""

    def __init__(self, texts: dict[Path, str]) -> None:
        self.texts = texts
        self.reads: list[Path] = []

    async def read_text(self, path: Path, errors: str = "strict") -> str:
        self.reads.append(path)
        if path in self.texts:
            return self.texts[path]
        if not path.is_file():
            raise FileNotFoundError(str(path))
        return path.read_bytes().decode("utf-8", errors)

    async def write_text(self, path: Path, text: str) -> int:
        raise AssertionError("attachments never write")


def lsp(first: int, last: int) -> dict[str, Any]:
    """The LSP range of 1-based lines first..last (whole lines)."""
    return {"start": {"line": first - 1, "character": 0}, "end": {"line": last, "character": 0}}
