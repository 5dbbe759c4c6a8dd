"""A compaction's summary asks for no tool call (ports.TOOL_CHOICE `none`), and each
provider says so in its own words while keeping the tools, so the request's prefix is
the conversation's cached one (context/summary.py, docs/providers.md)."""

from __future__ import annotations

import pytest

from elelem_daemon.ports import TOOL_CHOICE
from elelem_daemon.providers.anthropic import AnthropicProvider
from elelem_daemon.providers.ollama import OllamaProvider
from elelem_daemon.providers.openai import OpenAIProvider
from elelem_daemon.providers.served import Served

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read",
            "description": "Read a file",
            "parameters": {"type": "object"},
        },
    }
]
ASK = [{"role": "user", "content": "Summarize: accomplishments, state, next steps. Brief."}]


def summary_body(provider):
    token = TOOL_CHOICE.set("none")
    try:
        return provider.request(ASK, TOOLS)[2]
    finally:
        TOOL_CHOICE.reset(token)


def test_openai_sends_the_tools_with_tool_choice_none(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    provider = OpenAIProvider(base_url="https://api.openai.com/v1")
    before = provider.request(ASK, TOOLS)[2]
    body = summary_body(provider)
    assert before["tool_choice"] == "auto" and body["tool_choice"] == "none"
    assert body["tools"] == before["tools"] == TOOLS


@pytest.mark.parametrize("setting", ["auto", "required,none", "none"])
def test_on_llama_cpp_the_tools_go_as_the_last_request_sent_them(monkeypatch, setting):
    monkeypatch.setenv("OPENAI_TOOL_CHOICE", setting)
    provider = OpenAIProvider(base_url="http://127.0.0.1:9/v1")
    provider.served = Served(llama=True, n_ctx=2048)
    before = provider.request(ASK, TOOLS)[2]
    body = summary_body(provider)
    if "tools" in before:  # the summary's prefix is the last request's: tools and all
        assert body["tools"] == TOOLS and body["tool_choice"] == "none"
        assert "response_format" not in body  # no call is forced
    else:  # `none` on llama.cpp sends no tools: neither does the summary
        assert "tools" not in body and "tool_choice" not in body
    assert ("tools" in before) == (setting != "none")


def test_outside_a_summary_the_choice_is_the_providers_own(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    provider = OpenAIProvider(base_url="https://api.openai.com/v1")
    summary_body(provider)
    assert provider.request(ASK, TOOLS)[2]["tool_choice"] == "auto"  # reset after it


def test_anthropic_keeps_the_tools_and_their_cache_mark_with_tool_choice_none(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    provider = AnthropicProvider()
    before = provider.request(ASK, TOOLS)[2]
    body = summary_body(provider)
    assert body["tools"] == before["tools"] and body["tools"][-1].get("cache_control")
    assert body["tool_choice"] == {"type": "none"} and "tool_choice" not in before


def test_ollama_has_no_tool_choice_and_keeps_the_tools():
    body = summary_body(OllamaProvider())
    assert body["tools"] == TOOLS and "tool_choice" not in body
