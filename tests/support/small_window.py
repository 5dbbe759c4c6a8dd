"""A fake llama.cpp server with a small window, on 127.0.0.1, for the window tests.

OpenAI-compatible (`POST /v1/chat/completions`, streamed, with usage counts) and
llama.cpp's `GET /props` (`n_ctx`). A request counts one token per four characters
of its messages and tools as JSON; one past `n_ctx` is refused with llama.cpp's own
400 body (/work/shared/reference/providers.md), as the real server refuses it. A
reply and its prompt past `n_ctx` are cut, with `finish_reason: length`.

What it answers:
- a request whose last message asks to summarise (context/compaction.py's
  piece, or `/compact`'s turn): a short summary;
- a prompt saying `read NAME [NAME ...]`: a `read` call of each NAME in turn, one a
  round, then a short line saying how much the last one read;
- a prompt saying `plan: [JSON]`: a `todo` call with those todos, then a short line;
- with `call_on_summary`, a summary request is answered with the summary and a `read`
  call of `secret.txt` besides (a call the compaction must ignore);
- anything else: `reply_chars` characters of words.

Every request is recorded in `requests` as (tokens, status, last message's text), and
its JSON body in `bodies`.
"""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

READ = re.compile(r"\bread ((?:\S+\.\w+ ?)+)")
PLAN = re.compile(r"\bplan: (\[.*\])", re.DOTALL)


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


def call(id_: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One tool call as a stream's delta carries it."""
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"index": 0, "id": id_, "type": "function", "function": function}


class SmallWindow:
    def __init__(
        self,
        n_ctx: int = 2048,
        reply_chars: int = 480,
        call_on_summary: bool = False,
        model: str = "local",
    ) -> None:
        self.n_ctx = n_ctx
        self.model = model  # the model it serves, whatever a request asks for
        self.reply_chars = reply_chars
        self.call_on_summary = call_on_summary
        self.requests: list[tuple[int, int, str]] = []
        self.bodies: list[dict[str, Any]] = []
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
                    self.json(200, {"object": "list", "data": [{"id": owner.model}]})
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
            self.bodies.append(body)
        if tokens > self.n_ctx:
            return 400, overflow_body(tokens, self.n_ctx)
        delta: dict[str, Any] = {"role": "assistant"}
        text = text_of(last.get("content"))
        prompt_at = max((n for n, m in enumerate(messages) if m.get("role") == "user"), default=0)
        prompt = text_of(messages[prompt_at].get("content"))
        done = sum(1 for m in messages[prompt_at:] if m.get("role") == "tool")
        reads = found[1].split() if (found := READ.search(prompt)) else []
        plan = PLAN.search(prompt)
        if "Summarize" in text and last.get("role") == "user":
            delta["content"] = "Summary: the user asked numbered questions; each was answered."
            if self.call_on_summary:
                delta["tool_calls"] = [call("call_summary", "read", {"path": "secret.txt"})]
        elif plan and done == 0:
            delta["tool_calls"] = [
                call(f"call_{len(self.requests)}", "todo", {"todos": json.loads(plan[1])})
            ]
        elif reads and done < len(reads) and last.get("role") in ("user", "tool"):
            path = reads[done]
            delta["tool_calls"] = [call(f"call_{len(self.requests)}", "read", {"path": path})]
        elif last.get("role") == "tool":
            delta["content"] = f"I read {len(text)} characters of it."
        else:
            words = ("lorem ipsum dolor sit amet " * (self.reply_chars // 20 + 1))[
                : self.reply_chars
            ]
            delta["content"] = words
        out = len(json.dumps(delta)) // 4
        finish = "tool_calls" if "tool_calls" in delta else "stop"
        if (
            tokens + out > self.n_ctx and "content" in delta and "tool_calls" not in delta
        ):  # cut, as llama.cpp does
            room = max(self.n_ctx - tokens, 0)
            delta["content"], out, finish = delta["content"][: room * 4], room, "length"
        usage = {"prompt_tokens": tokens, "completion_tokens": out, "total_tokens": tokens + out}
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": self.model}
        chunks = [
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
            {**base, "choices": [], "usage": usage},
        ]
        return 200, {"chunks": chunks}
