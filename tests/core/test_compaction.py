"""The window is managed, not hit (context/compaction.py): sessions against a fake
llama.cpp with a 2,048-token window on 127.0.0.1 (tests/support/small_window.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.outputs import SpyOutput
from support.small_window import SmallWindow

from elelem_daemon.budget import RoundBudget, cut
from elelem_daemon.context import compaction, summary
from elelem_daemon.conversation import text_of
from elelem_daemon.plugins import core_registry
from elelem_daemon.result import Result
from elelem_daemon.session import start

N_CTX = 2048


@pytest.fixture
def small() -> SmallWindow:
    with SmallWindow(N_CTX) as server:
        yield server


@pytest.fixture
def openai(small: SmallWindow, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("OPENAI_BASE_URL", f"{small.url}/v1")
    monkeypatch.setenv("OPENAI_MODEL", "local")
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-key")
    (tmp_path / "big.txt").write_text("0123456789abcdef\n" * 4000)

    def make(output: SpyOutput):
        return start(
            core_registry(entry_points=False), "openai", cwd=tmp_path, output=output, face="editor"
        )

    return make


def prompt(i: int) -> str:
    return f"question {i}: read big.txt" if i % 7 == 3 else f"question {i}: tell me about item {i}"


def said(output: SpyOutput, kind: str) -> list[str]:
    return [text for name, (text, k) in [c for c in output.calls if c[0] == "say"] if k == kind]


def kept_text(session) -> str:
    return "\n".join(text_of(m["content"]) for m in session.conversation)


async def test_forty_turns_in_a_small_window_end_with_no_error(openai, small) -> None:
    output = SpyOutput()
    session = openai(output)
    for i in range(40):
        result = await session.turn(prompt(i))
        assert (i, result.stop_reason) == (i, "end_turn"), result.reply
        assert not result.reply.startswith("Error")
    assert said(output, "error") == []
    announced = [t for t in said(output, "info") if t.startswith("context compacted")]
    assert len(announced) >= 3  # ahead of time (ELELEM_COMPACT_AT) ...
    assert any("ELELEM_COMPACT_AT" in t for t in announced)
    assert "Error" not in kept_text(session)
    assert session.conversation[-1]["role"] == "assistant"


async def test_a_refused_request_is_compacted_and_sent_again(openai, small, monkeypatch) -> None:
    monkeypatch.setenv("ELELEM_COMPACT_AT", "0")  # only the server's refusal compacts
    output = SpyOutput()
    session = openai(output)
    for i in range(12):  # a reply may be cut (`max_tokens`): no room was kept for it
        result = await session.turn(f"question {i}: tell me about item {i}")
        assert result.stop_reason in ("end_turn", "max_tokens"), result.reply
    refused = [r for r in small.requests if r[1] == 400]
    assert refused  # the window was hit ...
    assert said(output, "error") == []  # ... and no face shows an error
    assert any("refused the request as too long" in t for t in said(output, "info"))
    assert "Error" not in kept_text(session)
    assert "exceeds the available context size" not in kept_text(session)


async def test_a_refused_prompt_is_not_kept_when_the_retry_is_off(
    openai, small, monkeypatch
) -> None:
    monkeypatch.setenv("ELELEM_COMPACT_AT", "0")
    monkeypatch.setenv("ELELEM_COMPACT_RETRY", "0")
    output = SpyOutput()
    session = openai(output)
    for i in range(12):  # nothing compacts ahead: the window is hit (a reply may be
        # cut on the way, `max_tokens`, as llama.cpp cuts one that does not fit)
        result = await session.turn(f"question {i}: tell me about item {i}")
        if result.stop_reason == "error":
            break
    assert result.stop_reason == "error"
    assert not result.kept
    assert "/compact" in result.reply and "exceeds the available context size" in result.reply
    (error,) = said(output, "error")
    assert error == result.reply.removeprefix("Error: ")
    assert error.endswith("; the prompt was not kept")
    kept = kept_text(session)
    assert f"question {i}:" not in kept  # neither the prompt ...
    assert "Error" not in kept  # ... nor its error reply grows every later request
    roles = [m["role"] for m in session.conversation]
    assert roles == ["user", "assistant"] * (len(roles) // 2)
    before = len(small.requests)
    await session.turn("again")  # the next request is no larger for the refused one
    assert small.requests[before][2] == "again"


async def test_compact_succeeds_on_a_history_that_already_overflows(
    openai, small, monkeypatch
) -> None:
    monkeypatch.setenv("ELELEM_COMPACT_AT", "0")
    output = SpyOutput()
    session = openai(output)
    await session.turn("hello")  # the window is known from here on
    for i in range(30):  # about 4,000 tokens: twice the window
        session.conversation.add("user", f"question {i}: " + "tell me more " * 40)
        session.conversation.add("assistant", f"answer {i}: " + "here it is " * 10)
    done = await session.command("/compact")
    assert "compacted: 62 messages became 1" in done.output, done.output
    assert "error" not in done.output
    (summary,) = list(session.conversation)
    assert summary["content"].startswith("Context: Summary:")
    pieces = [r for r in small.requests if "Summarize" in r[2]]
    assert len(pieces) >= 3  # in pieces, oldest first
    assert all(r[1] == 200 for r in pieces)
    result = await session.turn("and now?")
    assert result.stop_reason == "end_turn"


async def test_compact_on_an_unknown_window_halves_a_refused_piece(small, monkeypatch) -> None:
    from elelem_daemon.plugins import core_registry

    monkeypatch.setenv("OPENAI_BASE_URL", f"{small.url}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-key")
    provider = core_registry(entry_points=False).build_provider("openai", model="local")
    messages = [{"role": "user", "content": "words " * 4000}]  # 6,000 tokens
    summary = await compaction.summarise(provider, messages, None)
    assert summary.startswith("Summary:")
    statuses = [r[1] for r in small.requests]
    assert statuses[0] == 400 and statuses[-1] == 200  # refused whole, then in halves
    await provider.aclose()


async def test_a_large_tool_result_is_cut_to_a_share_of_the_window(openai, small) -> None:
    session = openai(SpyOutput())
    await session.turn("hello")  # the window is known from here on
    await session.turn("read big.txt")
    sent = [r for r in small.requests if "ELELEM_TOOL_SHARE" in r[2]]
    assert sent, small.requests
    assert all(len(text) <= int(N_CTX * 0.25 * 4) for _, _, text in sent)


async def test_the_tool_share_is_a_setting(openai, small, monkeypatch) -> None:
    monkeypatch.setenv("ELELEM_TOOL_SHARE", "0")
    monkeypatch.setenv("ELELEM_COMPACT_RETRY", "0")
    output = SpyOutput()
    session = openai(output)
    await session.turn("hello")
    result = await session.turn("read big.txt")
    assert not [r for r in small.requests if "ELELEM_TOOL_SHARE" in r[2]]
    assert result.stop_reason == "error" and not result.kept  # 68 KB is past the window


async def test_compaction_ahead_of_time_is_a_setting(openai, small, monkeypatch) -> None:
    monkeypatch.setenv("ELELEM_COMPACT_AT", "0")
    output = SpyOutput()
    session = openai(output)
    for i in range(4):
        await session.turn(f"question {i}")
    assert not any("ELELEM_COMPACT_AT" in t for t in said(output, "info"))


def test_the_gauge_counts_from_the_providers_last_count() -> None:
    gauge = compaction.Gauge()
    assert gauge.estimate(4000) == 1000  # nothing measured: four characters a token
    gauge.measure(8000, 1000)  # the provider counted 1,000 tokens for 8,000 characters
    assert gauge.estimate(8400) == 1100  # plus what was added since
    assert gauge.estimate(4000) == 500  # a shorter history: the same ratio
    gauge.measure(8000, -5)  # a count that makes no sense is not taken
    assert gauge.estimate(8400) == 1100


def test_cut_keeps_the_start_and_says_so() -> None:
    text = Result.wrap({"output": "x" * 10_000}).to_json()
    short = cut(text, 1000)
    assert len(short) <= 1000 and short.startswith(text[:100]) and "ELELEM_TOOL_SHARE" in short
    assert cut(text, None) == text
    budget = RoundBudget(each=500)
    assert len(budget.admit(Result.wrap({"output": "y" * 5000}))) <= 500


def test_size_counts_an_image_as_tokens_not_base64() -> None:
    image = {"type": "image", "mimeType": "image/png", "data": "A" * 4_000_000}
    small = compaction.size([{"role": "user", "content": [image]}])
    assert small < 10 * compaction.IMAGE_TOKENS * compaction.CHARS_PER_TOKEN


def test_json_of_the_llama_overflow_body_is_flagged(small) -> None:
    """The fake says what llama.cpp says (providers.md), which providers/http.py flags."""
    from support.small_window import overflow_body

    from elelem_daemon.providers.failures import error_detail
    from elelem_daemon.providers.http import CONTEXT_CODES

    message, codes = error_detail(json.dumps(overflow_body(2100, 2048)).encode())
    assert codes & CONTEXT_CODES and "exceeds the available context size" in message


async def test_a_server_that_refuses_everything_costs_a_bounded_number_of_requests(
    openai, monkeypatch
) -> None:
    with SmallWindow(n_ctx=50) as tiny:  # not even the tools fit
        monkeypatch.setenv("OPENAI_BASE_URL", f"{tiny.url}/v1")
        output = SpyOutput()
        session = openai(output)
        session.conversation.add("user", "an old question " * 200)
        session.conversation.add("assistant", "an old answer " * 200)
        result = await session.turn("hello")
        assert result.stop_reason == "error" and not result.kept
        assert said(output, "error")[-1].endswith("; the prompt was not kept")
        assert [m["content"][:16] for m in session.conversation] == [
            "an old question ",
            "an old answer an",
        ]  # the history is as it was: no summary came
        done = await session.command("/compact")
        assert "compact failed" in done.output
        assert len(session.conversation) == 2
    assert len(tiny.requests) < 2 * 2**summary.MAX_SPLITS + 4


async def test_a_cancel_while_compacting_keeps_the_history_and_no_turn_runs(
    openai, small, monkeypatch
) -> None:
    import asyncio

    import elelem_daemon.context.compaction as module

    output = SpyOutput()
    session = openai(output)
    await session.turn("hello")
    for i in range(20):
        session.conversation.add("user", f"question {i}: " + "tell me more " * 20)
        session.conversation.add("assistant", f"answer {i}")
    before = list(session.conversation)
    started = asyncio.Event()

    async def stuck(*args, **kwargs):
        started.set()
        await asyncio.Event().wait()

    monkeypatch.setattr(module, "summarise", stuck)
    task = asyncio.create_task(session.turn("next"))
    await asyncio.wait_for(started.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert list(session.conversation) == before
    assert not session.steerable  # no turn is said to run
    assert session.turn_id is None


async def test_a_prompt_too_long_on_its_own_is_not_kept(openai, small) -> None:
    output = SpyOutput()
    session = openai(output)
    result = await session.turn("hello " * 3000)
    assert result.stop_reason == "error" and not result.kept
    assert result.reply.endswith(
        "(the prompt alone is too long for the model's context: it was not kept)"
    )
    assert len(session.conversation) == 0
    assert [r[1] for r in small.requests] == [400]  # nothing to compact: not sent again


@pytest.mark.parametrize(
    "words",
    [
        "anthropic 400: prompt is too long: 210033 tokens > 200000 maximum",
        "ollama 400: input length exceeds the context length",
        "openai 400: This model's maximum context length is 128000 tokens",
    ],
)
async def test_each_providers_refusal_is_compacted_and_sent_again(words, tmp_path) -> None:
    from support.outputs import Scripted

    from elelem_daemon.base.errors import ProviderError

    provider = Scripted(
        ProviderError(words, context_overflow=True),  # the turn's request: refused
        [{"type": "saying", "text": "Summary: they talked."}],  # the summary
        [{"type": "saying", "text": "the answer"}],  # the request, sent again
    )
    output = SpyOutput()
    session = start(core_registry(entry_points=False), "stub", cwd=tmp_path, output=output)
    session.agent.provider = provider
    session.conversation.add("user", "an old question")
    session.conversation.add("assistant", "an old answer")
    result = await session.turn("a new question")
    assert (result.reply, result.stop_reason) == ("the answer", "end_turn")
    assert said(output, "error") == []
    assert [m["content"].split("\n\n")[0] for m in session.conversation] == [
        "Context: Summary: they talked.",
        "a new question",
        "the answer",
    ]
    assert "<user-words>\nan old question\n</user-words>" in session.conversation[0]["content"]
    summary_request, resent = provider.requests[1], provider.requests[2]
    assert summary_request[1] == []  # the summary goes with no tools
    assert "an old question" in summary_request[0][-1]["content"]
    assert [m["content"].split("\n\n")[0] for m in resent[0][1:]] == [
        "Context: Summary: they talked.",
        "a new question",
    ]


async def test_a_request_after_a_tool_round_compacts_before_it_would_pass(openai, small) -> None:
    output = SpyOutput()
    session = openai(output)
    await session.turn("hello")  # the gauge has the server's count from here on
    for i in range(4):
        session.conversation.add("user", f"question {i}: " + "tell me more " * 20)
        session.conversation.add("assistant", f"answer {i}: " + "here it is " * 10)
    ask = [{"role": "user", "content": "read big.txt"}]
    estimate = session.agent.gauge.estimate(compaction.request_chars(session.agent, ask))
    assert estimate < 0.85 * N_CTX  # the turn starts with the history as it is
    result = await session.turn("read big.txt")
    assert result.stop_reason == "end_turn", result.reply
    assert [r[1] for r in small.requests].count(400) == 0  # compacted before, not refused
    (announced,) = [t for t in said(output, "info") if t.startswith("context compacted")]
    assert "ELELEM_COMPACT_AT" in announced
    assert [m["role"] for m in session.conversation] == ["user", "user", "assistant"]
    assert session.conversation[1]["content"] == "read big.txt"


@pytest.mark.parametrize(
    ("raw", "read"),
    [("0.5", 0.5), ("85", 0.85), ("100", 1.0), ("250", 1.0), ("0", 0.0), ("x", 0.85)],
)
def test_a_share_reads_as_a_fraction_or_a_percentage(raw, read, monkeypatch) -> None:
    monkeypatch.setenv("ELELEM_COMPACT_AT", raw)
    assert compaction.compact_at() == read
