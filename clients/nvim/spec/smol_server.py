"""A local OpenAI-compatible server for spec/served_tui_spec.lua: it answers as a local
llama.cpp serving SmolLM2 does, whatever model the request asks for. On 127.0.0.1, on a
free port it prints (one line) once listening; it stops when its stdin closes."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SERVED = "SmolLM2-135M-Instruct"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            body = {"object": "list", "data": [{"id": SERVED, "owned_by": "llamacpp"}]}
            self.answer(200, body)
        elif self.path.rstrip("/").endswith("/props"):
            self.answer(200, {"default_generation_settings": {"n_ctx": 8192}})
        else:
            self.answer(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = min(int(self.headers.get("content-length") or 0), 1 << 24)
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": SERVED}
        delta = {"role": "assistant", "content": "hello from the small model"}
        usage = {"prompt_tokens": 120, "completion_tokens": 6, "total_tokens": 126}
        for chunk in (
            {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {**base, "choices": [], "usage": usage},
        ):
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True

    def answer(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    sys.stdin.read()  # until the spec closes it (or ends)
    server.shutdown()


if __name__ == "__main__":
    main()
