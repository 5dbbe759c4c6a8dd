"""What the model reads from a server's answer (docs/mcp.md, Results)."""

from __future__ import annotations

import base64
import json

from elelem_daemon.mcp.results import RESULT_CAP, prompt_messages, read_result, tool_result

PNG = base64.b64encode(b"\x89PNG" + b"\0" * 96).decode()


def test_text_blocks_are_joined() -> None:
    result = tool_result(
        {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
    )
    assert result.to_dict() == {"content": "a\nb", "ok": True}


def test_structured_content_is_pretty_printed_once() -> None:
    data = {"city": "Oslo", "celsius": 21}
    result = tool_result(
        {"content": [{"type": "text", "text": json.dumps(data)}], "structured_content": data}
    )
    assert result.payload["content"] == json.dumps(data, indent=2)


def test_is_error_is_a_failure() -> None:
    result = tool_result({"content": [{"type": "text", "text": "no such repo"}], "is_error": True})
    assert result.to_dict() == {"error": "no such repo", "ok": False}
    assert tool_result({"content": [], "is_error": True}).error


def test_images_are_described_and_kept_as_attachments() -> None:
    result = tool_result({"content": [{"type": "image", "data": PNG, "mime_type": "image/png"}]})
    assert result.payload["content"] == "[image: image/png, 100 bytes]"
    assert result.attachments == ({"type": "image", "mimeType": "image/png", "data": PNG},)
    assert PNG not in result.to_json()


def test_resources_and_links_and_audio() -> None:
    result = tool_result(
        {
            "content": [
                {"type": "resource", "resource": {"uri": "file:///a", "text": "inside"}},
                {
                    "type": "resource",
                    "resource": {"uri": "file:///b", "blob": PNG, "mimeType": "image/png"},
                },
                {"type": "resource_link", "uri": "file:///c", "name": "c"},
                {"type": "audio", "data": PNG, "mimeType": "audio/wav"},
                {"type": "hologram"},
            ]
        }
    )
    assert result.payload["content"].splitlines() == [
        "[resource file:///a]",
        "inside",
        "[resource file:///b]",
        "[image/png resource file:///b, 100 bytes, not shown]",
        "[resource link: file:///c (c)]",
        "[audio: audio/wav, 100 bytes]",
        "[hologram content, not shown]",
    ]


def test_a_huge_result_is_capped_head_and_tail() -> None:
    text = "h" * RESULT_CAP + "t" * RESULT_CAP
    content = tool_result({"content": [{"type": "text", "text": text}]}).payload["content"]
    assert len(content) < RESULT_CAP + 100
    assert content.startswith("h") and content.endswith("t") and "truncated" in content


def test_read_and_prompt_results() -> None:
    assert read_result("note://a", {"contents": [{"uri": "note://a", "text": "hi"}]}) == {
        "uri": "note://a",
        "content": "hi",
    }
    messages = prompt_messages(
        {"messages": [{"role": "user", "content": {"type": "text", "text": "Review x"}}]}
    )
    assert messages == [("user", "Review x")]


def test_a_wrapped_plain_value_is_not_said_twice() -> None:
    said = tool_result(
        {"content": [{"type": "text", "text": "3"}], "structured_content": {"result": 3}}
    )
    assert said.payload["content"] == "3"
    other = tool_result(
        {"content": [{"type": "text", "text": "see below"}], "structured_content": {"n": 3}}
    )
    assert other.payload["content"] == 'see below\n{\n  "n": 3\n}'


def test_a_structured_result_that_repeats_the_text_is_not_said_twice() -> None:
    """Issue 33: the official filesystem server answers its text, then the same text
    as `structuredContent: {"content": TEXT}`; the model and the editor read it once."""
    listing = "[FILE] a.txt\n[DIR] src"
    once = tool_result(
        {
            "content": [{"type": "text", "text": listing}],
            "structured_content": {"content": listing},
        }
    )
    assert once.payload["content"] == listing
    parts = tool_result(
        {
            "content": [
                {"type": "text", "text": "[FILE] a.txt"},
                {"type": "text", "text": "[DIR] src"},
            ],
            "structured_content": {"content": listing},
        }
    )
    assert parts.payload["content"] == listing
