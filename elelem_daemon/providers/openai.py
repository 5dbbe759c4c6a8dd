"""The `openai` provider: Chat Completions, streamed, for OpenAI and compatible servers
(llama.cpp's server, vLLM, LM Studio, OpenRouter, Ollama's /v1).

Settings (environment):

    OPENAI_API_KEY        required for api.openai.com; optional for other servers
    OPENAI_MODEL          default gpt-4o
    OPENAI_BASE_URL       default https://api.openai.com/v1 (`/chat/completions` is added)
    OPENAI_MAX_TOKENS     a reply cap, sent as `max_completion_tokens` to api.openai.com
                          and as `max_tokens` elsewhere; unset sends none, except to
                          llama.cpp's server: an eighth of its context (served.py)
    OPENAI_STREAM_USAGE   `0` stops asking for usage (`stream_options`), for servers
                          that reject it; default 1
    OPENAI_VISION         `0` says the model does not read images: a turn with an image
                          then fails before anything is sent, and images already in
                          the conversation go as text (`[image: image/png, N bytes]`);
                          default 1: images go as `image_url` parts with data: URLs
    OPENAI_TOOL_CHOICE    `auto` (default), `required` or `none`, sent with tools; or two,
                          `FIRST,AFTER`: FIRST while the conversation ends with the user's
                          message, AFTER once tool results follow (`required,none` makes
                          a small local model call a tool, then answer; on llama.cpp
                          `required` also sends the call's JSON schema, and `none`
                          sends no tools: served.py)
                          A compaction's summary (context/compaction.py) is sent with
                          `tool_choice: "none"` and the tools exactly when the last
                          request carried them, on llama.cpp too: its template keeps
                          the tools in the prompt under `none`, so the summary reads
                          the conversation's cached prefix (docs/providers.md)
    OPENAI_PROMPT_CACHE   `0` sends neither `prompt_cache_key` nor `cache_prompt`; default 1

A server other than api.openai.com is asked what it is and serves (`Served`, served.py:
llama.cpp's `/props`, `/v1/models`) once per endpoint, in the background from the moment
a session's provider is made, within 5 s, and every session of that endpoint shares the
answer. No request waits for it, except one forcing a call (`required`, whose shape
depends on it); the window waits for it only when the context asks (compaction.py's
LOOKUP_FROM rule). Until it has answered, a request with no model chosen names none
(llama.cpp, vLLM and LM Studio then use the model they serve) and carries no default
token cap. `answering` is the `model` the server's answers name.

Prompt caching: every request carries `prompt_cache_key`, the session's id (the session
sets `cache_key`), so OpenAI routes a session's requests to the cache that holds its
prefix, as Codex does. A server other than api.openai.com also gets `cache_prompt:
true`: llama.cpp's server then reuses its slot's KV cache for the common prefix
(servers that do not know the field ignore it). No `id_slot` is sent: llama.cpp
already gives a request the slot whose cached prompt shares the most with it, and a
pinned slot would make a second session wait for the first. Usage: `input_tokens` is
`prompt_tokens`, `cache_read_tokens` is `prompt_tokens_details.cached_tokens`, or
llama.cpp's `timings.cache_n` when only that is sent.

`delta.reasoning_content` and `delta.reasoning` are thinking; reasoning is never sent back.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncIterator
from typing import Any

import httpx

from ..base import keys
from ..base.errors import ProviderError
from ..ports import TOOL_CHOICE
from . import clients
from .calls import CUT_OFF, clip
from .chat import counts, doings, encode, gather, parts, timed
from .http import RETRY_STATUS, Failure, HTTPProvider
from .served import ForcedCall, Served, ask, call_schema
from .window import tokens

log = logging.getLogger(__name__)
DEFAULT_MODEL = "gpt-4o"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
TOOL_CHOICES = ("auto", "required", "none")


class OpenAIProvider(HTTPProvider):
    name = "openai"

    def __init__(
        self,
        model: str | None = None,
        client: httpx.AsyncClient | None = None,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
    ) -> None:
        env = os.environ
        self.base_url = (base_url or keys.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if not self.base_url.startswith(("http://", "https://")):
            raise ProviderError(
                f"OPENAI_BASE_URL must start with http:// or https://, got {self.base_url!r}"
            )
        self.api_key = api_key or keys.get("OPENAI_API_KEY")
        self.official = httpx.URL(self.base_url).host == "api.openai.com"
        self.billed = self.official  # a local server's model name says nothing of a price
        if self.official and not self.api_key:
            raise ProviderError("openai: set OPENAI_API_KEY, or OPENAI_BASE_URL for a local server")
        self.chosen = model or env.get("OPENAI_MODEL") or None  # None: the default
        self.model = self.chosen or DEFAULT_MODEL
        raw = env.get("OPENAI_MAX_TOKENS", "").strip()
        if raw and not raw.isdigit():
            raise ProviderError(f"OPENAI_MAX_TOKENS must be a whole number of tokens, got {raw!r}")
        self.max_tokens = int(raw) if raw else None
        self.stream_usage = switch(env.get("OPENAI_STREAM_USAGE", "1"))
        self.tool_choice = tool_choice(env.get("OPENAI_TOOL_CHOICE", ""))
        self.vision = switch(env.get("OPENAI_VISION", "1"))
        self.prompt_cache = switch(env.get("OPENAI_PROMPT_CACHE", "1"))
        super().__init__(client)
        self.secrets = [self.api_key]
        self.models: list[str] = []  # what the server serves, once asked (`/model`)
        self.answering: str | None = None  # the model the last answer named
        self.served: Served | None = None
        self._served: asyncio.Future[Served] | None = None
        self._forced = False  # the request being read was forced into a call's shape
        if not self.official:
            self.look_up()  # at once, in the background: the first request does not wait
        self.offered: bool | None = None  # whether the last request carried the tools

    def look_up(self) -> asyncio.Future[Served] | None:
        """Start, or join, the endpoint's lookup (served.py) in the background: one per
        endpoint (base URL and key), shared by every session's provider (clients.once);
        this provider takes its answer when it comes. None outside an event loop."""
        if self._served is None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return None
            self._served = clients.once(("served", self.base_url, self.api_key), self._ask_server)
            self._served.add_done_callback(self._adopt)
        return self._served

    def _adopt(self, done: asyncio.Future[Served]) -> None:
        if done.cancelled() or done.exception() is not None:
            return
        served = done.result()
        self.served, self.models = served, served.models
        if self.chosen is None and not self.official and served.models:
            self.model = served.models[0]  # a local server's own model, not gpt-4o
        if self.answering is None and served.models and (served.llama or self.chosen is None):
            self.answering = served.models[0]  # the one it serves, until an answer names it

    async def server(self) -> Served:
        """What the server says of itself (served.py), asked once per endpoint;
        `Served()` when it says nothing within LOOKUP_TIMEOUT: never an error."""
        found = self.look_up()
        assert found is not None  # called on the loop
        served = await asyncio.shield(found)
        self._adopt(found)
        return served

    async def _ask_server(self) -> Served:
        return await ask(self, self.base_url, self.api_key, self.official)

    @property
    def asks_server(self) -> bool:
        """Whether a request waits for `server()`: only a forced call (`required`) on a
        server other than OpenAI's, whose shape depends on what the server is. The model
        name and the token cap never make a request wait (the lookup runs beside it)."""
        return not self.official and "required" in self.tool_choice

    async def list_models(self) -> list[str]:
        """The ids the server serves (`GET /models`), for `/model`."""
        return list((await self.server()).models)

    async def fetch(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[dict[str, Any]]:
        if self.asks_server:
            await self.server()  # once: what the server is decides the request's shape
        elif not self.official:
            self.look_up()  # in the background, if not started yet
        async for event in super().fetch(messages, tools):
            yield event

    async def window_lookup(self) -> int | None:
        """llama.cpp's `/props` (`n_ctx`: the context the server runs with), else the
        model's entry in `/models` (vLLM's `max_model_len`, LM Studio's and OpenRouter's
        `context_length`). OpenAI's own API says neither: the known table answers."""
        served = await self.server()
        if served.n_ctx is not None:
            return served.n_ctx
        for entry in served.entries:
            if entry.get("id") == self.model:
                for key in ("max_model_len", "context_length", "context_window"):
                    if (found := tokens(entry.get(key))) is not None:
                        return found
        return None

    def request(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> tuple[str, dict[str, str], dict[str, Any]]:
        headers = {"content-type": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        body: dict[str, Any] = {"model": self.model, "stream": True}
        if self.chosen is None and not self.official and self.served is None:
            del body["model"]  # not known yet: the server answers with its own
        if self.stream_usage:
            body["stream_options"] = {"include_usage": True}
        served = self.served or Served()
        if cap := self.max_tokens or served.cap:
            body["max_completion_tokens" if self.official else "max_tokens"] = cap
        if self.prompt_cache and self.cache_key:
            body["prompt_cache_key"] = self.cache_key
        if self.prompt_cache and not self.official:
            body["cache_prompt"] = True
        self._forced = False
        after_results = bool(messages) and messages[-1].get("role") == "tool"
        choice = self.tool_choice[-1 if after_results else 0]
        asked = TOOL_CHOICE.get()  # a compaction's summary: `none`, tools kept (ports.py)
        offered = bool(tools) and not (choice == "none" and served.llama)  # llama: none, none
        if asked == "none":  # the tools as the last request had them (its cached prefix)
            offered, choice = bool(tools) and self.offered is not False, "none"
        self.offered = offered
        if offered:
            body["tools"] = tools
            body["tool_choice"] = choice
            if choice == "required" and served.llama and (shape := call_schema(tools)):
                body["response_format"] = shape  # the whole answer is one call (served.py)
                self._forced = True
        body["messages"] = encode(messages, self.vision)
        return f"{self.base_url}/chat/completions", headers, body

    async def decode(self, response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
        calls: dict[int, dict[str, str]] = {}
        usage: dict[str, int] = {}
        timing: dict[str, int] = {}
        finished = False
        done = False
        forced = ForcedCall() if self._forced else None
        async for events in self.events(response):
            for _, data in events:
                if data.strip() == "[DONE]":
                    done = True
                    break
                chunk = self.parse(data)
                if not isinstance(chunk, dict):
                    raise ProviderError(f"openai: unexpected stream data: {data[:120]!r}")
                if "error" in chunk or chunk.get("object") == "error":
                    raise stream_error(chunk)
                if isinstance(chunk.get("usage"), dict):
                    usage = counts(chunk["usage"]) or usage
                if isinstance(chunk.get("model"), str) and chunk["model"]:
                    self.answering = chunk["model"][:200]
                if isinstance(chunk.get("timings"), dict):  # llama.cpp's own counts
                    timing = timed(chunk["timings"])
                for choice in chunk.get("choices") or []:
                    delta = choice.get("delta") or {}
                    reasoning = delta.get("reasoning_content") or delta.get("reasoning")
                    if isinstance(reasoning, str) and reasoning:
                        yield {"type": "thinking", "text": reasoning}
                    content = delta.get("content")
                    if content and isinstance(content, str):
                        if forced is not None:
                            forced.add(content)  # a call's JSON, read at the end
                        else:
                            yield {"type": "saying", "text": content}
                    if "tool_calls" in delta:
                        for fragment in delta["tool_calls"] or []:
                            gather(calls, fragment)
                    finish = choice.get("finish_reason")
                    if finish == "error":
                        raise stream_error(chunk)
                    if finish and not finished:
                        finished = True
                        settle(forced, calls)
                        for event in doings(calls):
                            yield event
                        if finish == "length":
                            log.info("openai: the reply hit the model's token limit")
                            yield dict(CUT_OFF)
            if done:
                break
        if not done and not finished:
            raise ProviderError("openai: the stream ended before finish_reason or [DONE]")
        if not finished:
            settle(forced, calls)
            for event in doings(calls):
                yield event
        if usage or timing:
            yield {"type": "usage", **timing, **usage}


def settle(forced: ForcedCall | None, calls: dict[int, dict[str, str]]) -> None:
    """A forced answer becomes its call. One that is not a call (a string the model never
    closed, cut off by the token cap) fails as retryable: nothing of it was shown, so it
    is asked again (ELELEM_RETRIES), and then the turn ends with the error."""
    if forced is None:
        return
    if (call := forced.call()) is not None:
        calls[len(calls)] = call
        return
    raise Failure(
        "openai: the answer forced into a tool call is not one (cut off by the token cap?): "
        f"{clip(forced.leftover(), 80)!r}",
        retryable=True,
    )


def switch(raw: str) -> bool:
    """A setting that is on unless it says `0`, `false`, `no` or `off`."""
    return raw.strip().lower() not in ("0", "false", "no", "off")


def tool_choice(raw: str) -> tuple[str, ...]:
    """`OPENAI_TOOL_CHOICE`: one choice for every request, or FIRST,AFTER (tool results)."""
    choices = tuple(part.strip().lower() for part in raw.split(",")) if raw.strip() else ("auto",)
    if len(choices) > 2 or any(choice not in TOOL_CHOICES for choice in choices):
        raise ProviderError(
            "OPENAI_TOOL_CHOICE must be auto, required or none, or two of them as "
            f"FIRST,AFTER (e.g. required,none), got {raw[:80]!r}"
        )
    return choices


def stream_error(chunk: dict[str, Any]) -> Failure:
    error = chunk.get("error", chunk)
    if isinstance(error, dict):
        message, code = error.get("message") or json.dumps(error), error.get("code")
    else:
        message, code = str(error), None
    retryable = code in RETRY_STATUS or code in ("server_error", "rate_limit_exceeded")
    return Failure(f"openai: {message}", retryable=retryable)


__all__ = ["OpenAIProvider", "encode", "parts", "tool_choice", "switch"]
