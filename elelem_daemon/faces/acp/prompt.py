"""A `session/prompt`'s content blocks as the one text the core takes.

Text blocks are kept as they are. An embedded resource (a file the user attached,
with its text) becomes a fenced block headed by its path; a resource link becomes
a line naming it, which the model may read with its tools. Images and audio are
refused: `initialize` says they are not supported.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ...jsonrpc.errors import invalid_params
from .updates import fenced

COMMAND = re.compile(r"^/[\w-]+(\s|$)")


def uri_path(uri: str, cwd: Path) -> str:
    """A file: URI as a path relative to cwd when inside it; other URIs unchanged."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return uri
    path = Path(unquote(parsed.path))
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


def block_text(block: Any, index: int, cwd: Path) -> str:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        raise invalid_params(f"prompt[{index}]: a content block needs a type", index=index)
    kind = block["type"]
    if kind == "text":
        if not isinstance(block.get("text"), str):
            raise invalid_params(f"prompt[{index}]: a text block needs a text", index=index)
        return block["text"]
    if kind == "resource_link":
        if not isinstance(block.get("uri"), str):
            raise invalid_params(f"prompt[{index}]: a resource_link needs a uri", index=index)
        return f"[@{block.get('name') or block['uri']}]({uri_path(block['uri'], cwd)})"
    if kind == "resource":
        return embedded(block.get("resource"), index, cwd)
    if kind in ("image", "audio"):
        raise invalid_params(
            f"prompt[{index}]: {kind} content is not supported "
            f"(promptCapabilities.{kind} is false)",
            index=index,
        )
    raise invalid_params(f"prompt[{index}]: unknown content block type: {kind}", index=index)


def embedded(resource: Any, index: int, cwd: Path) -> str:
    if not isinstance(resource, dict) or not isinstance(resource.get("uri"), str):
        raise invalid_params(f"prompt[{index}]: a resource needs a uri", index=index)
    where = uri_path(resource["uri"], cwd)
    if isinstance(resource.get("text"), str):
        return f"File: {where}\n{fenced(resource['text'])}"
    mime = resource.get("mimeType") or "binary"
    return f"File: {where} ({mime} content not shown)"


def prompt_text(blocks: Any, cwd: Path) -> str:
    """The text of the user's message ("" for no blocks: the schema allows an empty
    prompt); RpcError for a malformed or unsupported block."""
    if not isinstance(blocks, list):
        raise invalid_params("prompt: expected an array of content blocks")
    parts = [block_text(block, index, cwd) for index, block in enumerate(blocks)]
    return "\n\n".join(part for part in parts if part)


def command_line(text: str) -> str | None:
    """The slash-command line if the prompt is one (`/name` then its arguments)."""
    stripped = text.strip()
    return stripped if COMMAND.match(stripped) else None
