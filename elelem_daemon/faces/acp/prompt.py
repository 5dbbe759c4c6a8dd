"""A `session/prompt`'s content blocks as the core takes a prompt: a text and the
attachments beside it (docs/context.md), so an ACP client's context reaches the model
in the same blocks as every other face's.

- `text`: the text, as it is (its `@` mentions are resolved by the core);
- `resource_link` to a `file:` URI: `{type: file, path}` (`{type: folder}` for a
  folder), read by the core through the editor when it serves reads; another URI
  stays a line `[@name](uri)` in the text (name and URI through `blocks.visible`:
  control characters written as escapes, as every editor-sent name is);
- `resource` (embedded) with a `file:` URI: `{type: file, path, text}` with the text
  the client sent; an image blob: `{type: image}`; another blob, or a resource of
  another URI, becomes a line (and its text a fenced block) in the text;
- `image`: `{type: image, mimeType, data}` (a provider without vision then fails the
  prompt with invalid_attachment, before anything is sent);
- `audio` is refused: `initialize` says it is not supported.

The texts are joined with blank lines. Checking the attachments is the core's
(`Session.turn`); this checks only the blocks' own shape.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ...context.attachments import IMAGE_TYPES
from ...context.blocks import visible
from ...jsonrpc.errors import invalid_params
from .updates import fenced

COMMAND = re.compile(r"^/[\w-]+(\s|$)")


def file_path(uri: str) -> Path | None:
    """The path of a `file:` URI, None for any other."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or not parsed.path:
        return None
    return Path(unquote(parsed.path))


def uri_path(uri: str, cwd: Path) -> str:
    """A file: URI as a path relative to cwd when inside it; other URIs unchanged."""
    path = file_path(uri)
    if path is None:
        return uri
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def need(block: dict[str, Any], key: str, index: int, what: str) -> str:
    value = block.get(key)
    if not isinstance(value, str):
        raise invalid_params(f"prompt[{index}]: {what} needs a {key}", index=index)
    return value


def block_parts(block: Any, index: int, cwd: Path) -> tuple[str, dict[str, Any] | None]:
    """One block as (text, attachment or None)."""
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise invalid_params(f"prompt[{index}]: a content block needs a type", index=index)
    kind = block["type"]
    if kind == "text":
        return need(block, "text", index, "a text block"), None
    if kind == "resource_link":
        uri = need(block, "uri", index, "a resource_link")
        path = file_path(uri)
        if path is None:
            name = block.get("name") if isinstance(block.get("name"), str) else None
            return f"[@{visible(name or uri)}]({visible(uri)})", None
        return "", {"type": "folder" if path.is_dir() else "file", "path": str(path)}
    if kind == "resource":
        return embedded(block.get("resource"), index, cwd)
    if kind == "image":
        mime = need(block, "mimeType", index, "an image")
        return "", {
            "type": "image",
            "mimeType": mime,
            "data": need(block, "data", index, "an image"),
        }
    if kind == "audio":
        raise invalid_params(
            f"prompt[{index}]: audio content is not supported (promptCapabilities.audio is false)",
            index=index,
        )
    raise invalid_params(f"prompt[{index}]: unknown content block type: {kind}", index=index)


def embedded(resource: Any, index: int, cwd: Path) -> tuple[str, dict[str, Any] | None]:
    if not isinstance(resource, dict) or not isinstance(resource.get("uri"), str):
        raise invalid_params(f"prompt[{index}]: a resource needs a uri", index=index)
    uri = resource["uri"]
    path = file_path(uri)
    mime = resource.get("mimeType")
    if isinstance(resource.get("text"), str):
        if path is not None:
            return "", {"type": "file", "path": str(path), "text": resource["text"]}
        return f"File: {visible(uri)}\n{fenced(resource['text'])}", None
    if isinstance(resource.get("blob"), str) and mime in IMAGE_TYPES:
        return "", {"type": "image", "mimeType": mime, "data": resource["blob"]}
    shown = visible(uri_path(uri, cwd))
    kind = visible(mime) if isinstance(mime, str) and mime else "binary"
    return f"File: {shown} ({kind} content not shown)", None


def prompt_parts(blocks: Any, cwd: Path) -> tuple[str, list[dict[str, Any]]]:
    """The user's text and attachments ("" and none for no blocks: the schema allows an
    empty prompt); RpcError for a malformed or unsupported block."""
    if not isinstance(blocks, list):
        raise invalid_params("prompt: expected an array of content blocks")
    texts, attachments = [], []
    for index, block in enumerate(blocks):
        text, attachment = block_parts(block, index, cwd)
        if text:
            texts.append(text)
        if attachment is not None:
            attachments.append(attachment)
    return "\n\n".join(texts), attachments


def command_line(text: str) -> str | None:
    """The slash-command line if the prompt is one (`/name` then its arguments)."""
    stripped = text.strip()
    return stripped if COMMAND.match(stripped) else None
