"""What a server answers, as the model reads it.

A `tools/call` result becomes a `Result`:
- text blocks joined with newlines; an embedded text resource as its text under a
  `[resource URI]` line; a resource link as `[resource link: URI (NAME)]`;
- `structuredContent` pretty-printed (2-space JSON) after the text blocks, a text block
  that is its serialization replaced by it; not at all when the text (a block, or the
  blocks together) already says the one value of a one-key object (`{"result": VALUE}`,
  how SDK servers wrap a plain return value; `{"content": TEXT}`, the filesystem
  server's);
- an image or audio block described (`[image: image/png, 1234 bytes]`); images are
  also kept, as data, in the result's `attachments` (never in its JSON), for a face or
  provider that can show them to a model (at most ATTACHMENT_CAP bytes each);
- `isError: true` becomes a failure, `{"error": TEXT, "ok": false}`;
- the text is capped at RESULT_CAP characters, head and tail around a marker.
A `resources/read` result and a prompt's messages use the same content rules.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any

from ..result import Result

RESULT_CAP = 100_000
ATTACHMENT_CAP = 5 << 20


@dataclass(frozen=True)
class McpResult(Result):
    """A Result that may carry attachments (images) besides its JSON payload."""

    attachments: tuple[dict[str, Any], ...] = ()


def failure(message: str) -> McpResult:
    return McpResult({"error": message}, ok=False)


def capped(text: str, cap: int = RESULT_CAP) -> str:
    if len(text) <= cap:
        return text
    half = cap // 2
    dropped = len(text) - 2 * half
    return f"{text[:half]}\n[... {dropped} characters truncated ...]\n{text[-half:]}"


def _size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def _field(block: Any, name: str, default: Any = None) -> Any:
    if isinstance(block, dict):
        return block.get(name, default)
    return getattr(block, name, default)


def resource_text(contents: Any) -> str:
    """One resource's contents (text, or a described blob)."""
    uri = str(_field(contents, "uri", ""))
    text = _field(contents, "text")
    if isinstance(text, str):
        return text
    blob = _field(contents, "blob")
    kind = _field(contents, "mime_type") or _field(contents, "mimeType") or "binary"
    size = _size(blob) if isinstance(blob, str) else 0
    return f"[{kind} resource {uri}, {size} bytes, not shown]"


def block_text(block: Any, attachments: list[dict[str, Any]] | None = None) -> str:
    """One content block as text; an image's data goes to attachments."""
    kind = _field(block, "type")
    if kind == "text":
        return str(_field(block, "text", ""))
    if kind in ("image", "audio"):
        data = _field(block, "data", "")
        mime = _field(block, "mime_type") or _field(block, "mimeType") or kind
        size = _size(data) if isinstance(data, str) else 0
        if kind == "image" and attachments is not None and isinstance(data, str):
            if size <= ATTACHMENT_CAP:
                attachments.append({"type": "image", "mimeType": mime, "data": data})
        return f"[{kind}: {mime}, {size} bytes]"
    if kind == "resource":
        contents = _field(block, "resource")
        return f"[resource {_field(contents, 'uri', '')}]\n{resource_text(contents)}"
    if kind == "resource_link":
        name = _field(block, "name")
        uri = _field(block, "uri", "")
        return f"[resource link: {uri}{f' ({name})' if name else ''}]"
    return f"[{kind} content, not shown]"


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _wrapped(value: Any) -> bool:
    """`{"result": VALUE}`, how SDK servers wrap a plain return value, or any one-key
    object (`{"content": TEXT}`: the official filesystem server's)."""
    return isinstance(value, dict) and len(value) == 1


def _the_one(value: dict[str, Any]) -> Any:
    return next(iter(value.values()))


def tool_result(result: Any) -> McpResult:
    """A CallToolResult as the model reads it (see the module docstring)."""
    attachments: list[dict[str, Any]] = []
    structured = _field(result, "structured_content")
    parts, said = [], False
    for block in _field(result, "content") or []:
        text = block_text(block, attachments)
        if structured is not None and _parsed(text) == structured:
            continue  # its serialization: the pretty form below replaces it
        if _wrapped(structured) and _the_one(structured) in (text, _parsed(text)):
            said = True  # the text says it already
        parts.append(text)
    if _wrapped(structured) and _the_one(structured) == "\n".join(parts):
        said = True  # said by the text blocks together
    if structured is not None and not said:
        parts.append(json.dumps(structured, indent=2, ensure_ascii=False, default=str))
    text = capped("\n".join(parts))
    if _field(result, "is_error"):
        message = text.strip() or "the tool reported an error and said nothing more"
        return McpResult({"error": message}, ok=False, attachments=tuple(attachments))
    return McpResult({"content": text}, attachments=tuple(attachments))


def read_result(uri: str, result: Any) -> dict[str, Any]:
    """A ReadResourceResult as `{uri, content}`."""
    parts = [resource_text(contents) for contents in _field(result, "contents") or []]
    return {"uri": uri, "content": capped("\n".join(parts))}


def prompt_messages(result: Any) -> list[tuple[str, str]]:
    """A GetPromptResult's messages as (role, text)."""
    out = []
    for message in _field(result, "messages") or []:
        role = str(_field(message, "role", "user"))
        out.append((role, capped(block_text(_field(message, "content")))))
    return out
