"""A fake llama.cpp server with a small window, on 127.0.0.1, for the window tests.

OpenAI-compatible (`POST /v1/chat/completions`, streamed, with usage counts) and
llama.cpp's `GET /props` (`n_ctx`). A request counts one token per four characters
of its messages and tools as JSON; one past `n_ctx` is refused with llama.cpp's own
400 body (/work/shared/reference/providers.md), as the real server refuses it. A
reply and its prompt past `n_ctx` are cut, with `finish_reason: length`.

What it answers:
- a request whose last message asks to summarise (context/compaction.py's
  piece, or `/compact`'s turn): a short summary;
- a prompt saying `read NAME` (and no tool result yet): a `read` call of NAME;
- after a tool result: a short line saying how much it read;
- anything else: `reply_chars` characters of words.

Every request is recorded in `requests` as (tokens, status, last message's text).
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

READ = re.compile(r"\bread (\S+)")


def overflow_body(tokens: int, n_ctx: int) -> dict[str, Any]:
    """llama.cpp's answer to a prompt past its context (providers.md)."""
    return {
        "error": {
            "code": 400,
            "type": "exceed_context_size_error",
            "n_prompt_tokens": tokens,
            "n_ctx": n_ctx,
            "message": (
                f"request ({tokens} tokens) exceeds the available context size "
                f"({n_ctx} tokens), try increasing it"
            ),
        }
    }


def text_of(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


class SmallWindow:
    def __init__(self, n_ctx: int = 2048, reply_chars: int = 480) -> None:
        self.n_ctx = n_ctx
        self.reply_chars = reply_chars
        self.requests: list[tuple[int, int, str]] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/props"):
                    self.json(200, {"default_generation_settings": {"n_ctx": owner.n_ctx}})
                elif self.path.rstrip("/").endswith("/models"):
                    self.json(200, {"object": "list", "data": [{"id": "local"}]})
                else:
                    self.json(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                status, answer = owner.answer(body)
                if status != 200:
                    self.json(status, answer)
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                for chunk in answer["chunks"]:
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def json(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> SmallWindow:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def count(self, body: dict[str, Any]) -> int:
        return len(json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", []))) // 4

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        tokens = self.count(body)
        messages = body.get("messages") or [{}]
        last = messages[-1]
        with self.lock:
            self.requests.append(
                (tokens, 400 if tokens > self.n_ctx else 200, text_of(last.get("content")))
            )
        if tokens > self.n_ctx:
            return 400, overflow_body(tokens, self.n_ctx)
        delta: dict[str, Any] = {"role": "assistant"}
        text = text_of(last.get("content"))
        if last.get("role") == "tool":
            delta["content"] = f"I read {len(text)} characters of it."
        elif "Summarize" in text:
            delta["content"] = "Summary: the user asked numbered questions; each was answered."
        elif (found := READ.search(text)) and last.get("role") == "user":
            delta["tool_calls"] = [
                {
                    "index": 0,
                    "id": f"call_{len(self.requests)}",
                    "type": "function",
                    "function": {"name": "read", "arguments": json.dumps({"path": found[1]})},
                }
            ]
        else:
            words = ("lorem ipsum dolor sit amet " * (self.reply_chars // 20 + 1))[
                : self.reply_chars
            ]
            delta["content"] = words
        out = len(json.dumps(delta)) // 4
        finish = "tool_calls" if "tool_calls" in delta else "stop"
        if tokens + out > self.n_ctx and "content" in delta:  # cut, as llama.cpp does
            room = max(self.n_ctx - tokens, 0)
            delta["content"], out, finish = delta["content"][: room * 4], room, "length"
        usage = {"prompt_tokens": tokens, "completion_tokens": out, "total_tokens": tokens + out}
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "local"}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {**base, "choices": [], "usage": usage},
        ]
        return 200, {"chunks": chunks}
