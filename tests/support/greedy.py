"""A model that asks for too much (issue 36): a real OpenAI-shaped server on 127.0.0.1
(tests/providers/replay.py) whose tool calls carry megabytes, and that keeps only the
size of what it is sent, so a test of the daemon's memory does not grow its own."""

from __future__ import annotations

import json
from typing import Any

from providers.replay import ReplayServer, Reply, Request


class Sizes(list[Request]):
    """The requests a server recorded, each body replaced by its length in bytes
    (`sizes`), but the newest POST's, kept whole in `last`."""

    def __init__(self) -> None:
        super().__init__()
        self.sizes: list[int] = []
        self.last = b""

    def append(self, request: Request) -> None:
        super().append(Request(request.method, request.path, request.headers, b""))
        self.sizes.append(len(request.body))
        if request.method == "POST":
            self.last = request.body


class Greedy(ReplayServer):
    """A ReplayServer that forgets the bodies it is sent."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: Sizes = Sizes()

    def posts(self) -> int:
        return sum(1 for r in self.requests if r.method == "POST")

    @property
    def sent(self) -> list[dict[str, Any]]:
        """The messages of the newest request."""
        messages: list[dict[str, Any]] = json.loads(self.requests.last)["messages"]
        return messages


def call(name: str, arguments: str = "{}") -> Reply:
    """One streamed answer asking for one tool call (built once: reuse it)."""

    def event(delta: dict[str, Any], finish: str | None = None) -> bytes:
        data = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return b"data: " + json.dumps(data).encode() + b"\n\n"

    fragment = {
        "index": 0,
        "id": "call_0",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    body = event({"tool_calls": [fragment]}) + event({}, "tool_calls") + b"data: [DONE]\n\n"
    return Reply([body])


# The daemon under a 1 GiB address-space limit (it idles at about 250 MiB of it): a
# regression fails the test with a MemoryError, not the machine's OOM killer.
CAPPED = (
    "import os, resource, sys; resource.setrlimit(resource.RLIMIT_AS, ({0}, {0}));"
    "os.execv(sys.executable, [sys.executable, '-m', 'elelem_daemon', *sys.argv[1:]])"
).format(1 << 30)


def peak_kib(pid: int) -> int:
    """The peak resident memory of a process (VmHWM in /proc/PID/status, in KiB)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError(f"no VmHWM for {pid}")
