"""What an OpenAI-compatible server says about itself, and what the `openai` provider does
with it for llama.cpp's server (docs/providers.md, "A local model").

One lookup per provider (`Served.lookup`), within `window.LOOKUP_TIMEOUT`, never an error
for a turn: llama.cpp's `GET /props` (its context, `n_ctx`) and the server's
`GET /v1/models` (the ids it serves; llama.cpp's entries are `owned_by: "llamacpp"`).

What it changes, on a llama.cpp server only:

- **A forced call has the call's shape.** llama.cpp's `tool_choice: "required"` lets the
  model write any text before the call it requires, and a small model writes text until
  its token cap (1 call in 12 prompts with SmolLM2-135M). So a request whose tool choice
  is `required` also sends `response_format` with a JSON schema of one call:
  `{"name": <one of the tools>, "arguments": <that tool's parameters>}`. llama.cpp turns
  the schema into a grammar, so the whole answer is that object, which `ForcedCall`
  reads back as the call (the server returns it as content, not as `tool_calls`). An
  answer that is not a call (a string never closed, cut off by the cap) is asked again,
  as a failed request is (`ELELEM_RETRIES`), then ends the turn with an error.
- **`none` sends no tools.** llama.cpp's chat templates list the tools in the prompt,
  and a small model told of tools writes calls as text even when it may not call one;
  without them it answers in words.
- **A default token cap**: without `OPENAI_MAX_TOKENS`, `max_tokens` is an eighth of the
  server's context (512 for a 4096-token context): llama.cpp's own default is to go on
  until the context is full.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass, field
from typing import Any

from ..base import figures
from ..base.errors import ProviderError
from .window import LOOKUP_TIMEOUT, tokens

log = logging.getLogger(__name__)

CAP_SHARE = 8  # the default reply cap on llama.cpp: n_ctx // CAP_SHARE tokens
MIN_CAP = 64
MAX_MODELS = 200  # ids kept from /v1/models
MAX_ID = 200  # characters of one model id


@dataclass
class Served:
    """The server's own word, or nothing (`Served()`) when it said nothing usable."""

    llama: bool = False  # llama.cpp's server
    n_ctx: int | None = None  # its context size in tokens (`/props`)
    models: list[str] = field(default_factory=list)  # the ids `/v1/models` lists
    entries: list[dict[str, Any]] = field(default_factory=list)  # those entries

    @property
    def cap(self) -> int | None:
        """The default reply cap: on llama.cpp with a known context, an eighth of it."""
        if not self.llama or (n_ctx := figures.window(self.n_ctx)) is None:
            return None  # unknown, or a figure no model works in (base/figures.py)
        return max(MIN_CAP, n_ctx // CAP_SHARE)


def read_props(props: Any) -> tuple[bool, int | None]:
    """(is llama.cpp, n_ctx) from a `GET /props` answer."""
    if not isinstance(props, dict):
        return False, None
    settings = props.get("default_generation_settings")
    n_ctx = tokens(settings.get("n_ctx")) if isinstance(settings, dict) else None
    return isinstance(settings, dict), n_ctx or tokens(props.get("n_ctx"))


def read_models(listed: Any) -> tuple[bool, list[str], list[dict[str, Any]]]:
    """(is llama.cpp, ids, entries) from a `GET /v1/models` answer, bounded."""
    entries = listed.get("data") if isinstance(listed, dict) else None
    kept = [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    kept = kept[:MAX_MODELS]
    ids = [e["id"][:MAX_ID] for e in kept if isinstance(e.get("id"), str) and e["id"]]
    return any(e.get("owned_by") == "llamacpp" for e in kept), ids, kept


async def ask(provider: Any, base_url: str, api_key: str | None, official: bool) -> Served:
    """What the server at `base_url` says of itself, asked through `provider`'s
    `get_json` (its client and limits): llama.cpp's `/props` (not on api.openai.com),
    then `/models`; `Served()` when it says nothing within LOOKUP_TIMEOUT: never an error."""
    headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
    served = Served()
    try:
        async with asyncio.timeout(LOOKUP_TIMEOUT):
            if not official:
                root = base_url.removesuffix("/v1")
                try:
                    served.llama, served.n_ctx = read_props(
                        await provider.get_json(f"{root}/props", headers)
                    )
                except ProviderError:
                    pass
            llama, served.models, served.entries = read_models(
                await provider.get_json(f"{base_url}/models", headers)
            )
            served.llama = served.llama or llama
    except Exception as exc:  # metadata is a nicety: never an error for a turn
        log.info("openai: %s says nothing of itself: %s", base_url, provider.redact(str(exc)))
    return served


def call_schema(tools: list[dict[str, Any]]) -> dict[str, Any] | None:
    """`response_format` for one call of one of `tools` (Chat Completions tool entries)."""
    shapes = []
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            continue
        parameters = function.get("parameters")
        if not isinstance(parameters, dict):
            parameters = {"type": "object"}
        shapes.append(
            {
                "type": "object",
                "properties": {"name": {"const": function["name"]}, "arguments": parameters},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    if not shapes:
        return None
    schema = shapes[0] if len(shapes) == 1 else {"anyOf": shapes}
    return {"type": "json_schema", "json_schema": {"name": "tool_call", "schema": schema}}


class ForcedCall:
    """The content of an answer forced into a call's shape, gathered and read back."""

    def __init__(self) -> None:
        self.text: list[str] = []

    def add(self, text: str) -> None:
        self.text.append(text)

    def call(self) -> dict[str, str] | None:
        """The call (`id`, `name`, `arguments` as JSON text), or None when the answer is
        not one (cut off by the token cap, say)."""
        raw = "".join(self.text)
        try:
            found = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(found, dict) or not isinstance(found.get("name"), str):
            return None
        arguments = found.get("arguments")
        if not isinstance(arguments, dict):
            return None
        self.text.clear()
        return {"id": "", "name": found["name"], "arguments": json.dumps(arguments)}

    def leftover(self) -> str:
        return "".join(self.text)
