"""Images: checked, refused for a provider without vision before anything is sent, kept
as content parts, encoded by each provider, stored, and shown by /context."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from elelem_daemon.base.errors import AttachmentError
from elelem_daemon.builtins.commands import context_text
from elelem_daemon.context import attachments as shapes
from elelem_daemon.context import expansion
from elelem_daemon.conversation import text_of
from elelem_daemon.plugins import core_registry
from elelem_daemon.providers import anthropic, ollama, openai
from elelem_daemon.providers.stub import StubProvider
from elelem_daemon.session import resume, start
from elelem_daemon.store import Store

from .fakes import GIF, JPEG, PNG, PNG64, WEBP, Seen

IMAGE = {"type": "image", "mimeType": "image/png", "data": PNG64}
PARTS = [
    {"type": "text", "text": "what is this?"},
    {"type": "image", "mimeType": "image/png", "data": PNG64},
]


@pytest.fixture
def session(tmp_path: Path):
    s = start(core_registry(entry_points=False), cwd=tmp_path, plugin_files=False)
    s.provider = Seen()
    return s


async def test_an_image_is_a_part_after_the_text(session) -> None:
    content = await expansion.for_session(session, "what is this?", [IMAGE])
    assert content == PARTS
    await session.turn(content)
    assert session.provider.sent[0][-1] == {"role": "user", "content": PARTS}
    assert session.conversation[0]["content"] == PARTS


async def test_images_follow_the_text_and_its_blocks_in_order(session, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x\n")
    gif = {"type": "image", "mimeType": "image/gif", "data": base64.b64encode(GIF).decode()}
    content = await expansion.for_session(
        session, "compare", [IMAGE, {"type": "file", "path": "a.py"}, gif]
    )
    assert content == [
        {
            "type": "text",
            "text": 'compare\n\n<attachment type="file" path="a.py">\nx\n</attachment>',
        },
        {"type": "image", "mimeType": "image/png", "data": PNG64},
        {"type": "image", "mimeType": "image/gif", "data": gif["data"]},
    ]


@pytest.mark.parametrize(
    ("raw", "mime"),
    [(PNG, "image/png"), (JPEG, "image/jpeg"), (GIF, "image/gif"), (WEBP, "image/webp")],
)
def test_each_allowed_type_is_told_by_its_first_bytes(raw: bytes, mime: str) -> None:
    assert shapes.image(mime, base64.b64encode(raw).decode(), "attachments[0]").mime == mime


@pytest.mark.parametrize(
    ("image", "reason", "says"),
    [
        (
            {"mimeType": "image/svg+xml", "data": PNG64},
            "invalid",
            "mimeType: 'image/svg+xml' is not one of image/png",
        ),
        ({"mimeType": "image/png"}, "invalid", "data: expected a string, got nothing"),
        ({"mimeType": "image/png", "data": "not base64!"}, "invalid", "data: not base64"),
        ({"mimeType": "image/png", "data": ""}, "invalid", "data: empty"),
        (
            {"mimeType": "image/png", "data": f"data:image/png;base64,{PNG64}"},
            "invalid",
            "without a data: URL",
        ),
        ({"mimeType": "image/jpeg", "data": PNG64}, "invalid", "data is not a image/jpeg image"),
        (
            {"mimeType": "image/png", "data": base64.b64encode(b"GIF89a" + b"\0" * 10).decode()},
            "invalid",
            "data is not a image/png image",
        ),
    ],
)
async def test_a_bad_image_is_refused(session, image, reason, says) -> None:
    with pytest.raises(AttachmentError) as caught:
        await expansion.for_session(session, "x", [{"type": "image", **image}])
    assert caught.value.data["reason"] == reason and says in str(caught.value)


async def test_an_image_past_the_cap_is_refused_before_decoding(session, monkeypatch) -> None:
    monkeypatch.setattr(shapes, "IMAGE_CAP", 60)
    with pytest.raises(AttachmentError) as caught:
        await expansion.for_session(session, "x", [IMAGE])
    assert caught.value.data == {
        "reason": "too_large",
        "type": "image",
        "index": 0,
        "field": "attachments[0]",
    }
    assert "more than 60 bytes" in str(caught.value)


async def test_too_many_image_bytes_in_one_message_are_refused(session, monkeypatch) -> None:
    monkeypatch.setattr(shapes, "IMAGES_CAP", 100)
    await expansion.for_session(session, "x", [IMAGE])
    with pytest.raises(AttachmentError) as caught:
        await expansion.for_session(session, "x", [IMAGE, IMAGE])
    assert caught.value.data == {"reason": "too_large", "type": "image", "field": "attachments"}
    assert str(caught.value) == "the images come to 136 bytes; at most 100 in one message"


async def test_a_provider_of_no_name_is_this_provider(session) -> None:
    session.provider = object()
    with pytest.raises(AttachmentError) as caught:
        await expansion.for_session(session, "x", [IMAGE])
    assert "(image): this provider does not accept images" in str(caught.value)


async def test_more_than_eight_images_are_refused(session) -> None:
    with pytest.raises(AttachmentError) as caught:
        await expansion.for_session(session, "x", [IMAGE] * 9)
    assert caught.value.data["reason"] == "too_many"


# -- vision --------------------------------------------------------------------------------
async def test_a_provider_without_vision_refuses_before_anything_is_sent(session) -> None:
    session.provider = StubProvider()
    with pytest.raises(AttachmentError) as caught:
        await expansion.for_session(session, "x", [IMAGE])
    assert caught.value.data == {
        "reason": "vision",
        "type": "image",
        "index": 0,
        "field": "attachments[0]",
    }
    assert str(caught.value) == (
        "attachments[0] (image): the stub provider (model stub) does not accept images: switch "
        "to one that does (anthropic, openai, or ollama with a vision model), or leave the "
        "image out"
    )
    assert len(session.conversation) == 0


async def test_a_plugin_provider_sees_images_only_when_it_says_so(session) -> None:
    class Plain:
        name = "plain"

    session.provider = Plain()
    with pytest.raises(AttachmentError):
        await expansion.for_session(session, "x", [IMAGE])


async def test_an_image_file_mentioned_needs_vision_too(session, tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(PNG)
    content = await expansion.for_session(session, "see @shot.png", [])
    assert content == [{"type": "text", "text": "see @shot.png"}, IMAGE]
    session.provider = StubProvider()
    with pytest.raises(AttachmentError) as caught:
        await expansion.for_session(session, "see @shot.png", [])
    assert caught.value.data == {
        "reason": "vision",
        "type": "file",
        "mention": "@shot.png",
        "field": "text",
    }


async def test_the_stub_sees_images_as_the_vision_model(session) -> None:
    session.provider = StubProvider("vision")
    result = await session.turn("!echo hi", [IMAGE])
    assert result.reply == "saw 1 image(s): image/png 68 bytes. hi\n\n[image: image/png, 68 bytes]"


# -- providers -----------------------------------------------------------------------------
def test_anthropic_sends_image_blocks() -> None:
    assert anthropic.encode([{"role": "user", "content": PARTS}]) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": PNG64},
                },
            ],
        }
    ]
    assert anthropic.AnthropicProvider.vision is True


def test_openai_sends_image_url_parts_with_a_data_url(monkeypatch) -> None:
    assert openai.encode([{"role": "user", "content": PARTS}]) == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "what is this?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
            ],
        }
    ]
    monkeypatch.setenv("OPENAI_VISION", "0")
    provider = openai.OpenAIProvider(base_url="http://127.0.0.1:9/v1")
    assert provider.vision is False
    _, _, body = provider.request([{"role": "user", "content": PARTS}], [])
    assert body["messages"] == [
        {"role": "user", "content": "what is this?\n\n[image: image/png, 68 bytes]"}
    ]


def test_ollama_sends_images_beside_the_text(monkeypatch) -> None:
    assert ollama.encode([{"role": "user", "content": PARTS}]) == [
        {"role": "user", "content": "what is this?", "images": [PNG64]}
    ]
    monkeypatch.setenv("OLLAMA_VISION", "off")
    provider = ollama.OllamaProvider()
    assert provider.vision is False
    _, _, body = provider.request([{"role": "user", "content": PARTS}], [])
    assert body["messages"] == [
        {"role": "user", "content": "what is this?\n\n[image: image/png, 68 bytes]"}
    ]


# -- kept, stored, shown ---------------------------------------------------------------------
async def test_a_message_with_images_is_stored_and_restored(tmp_path: Path) -> None:
    store = Store(tmp_path / "sessions")
    registry = core_registry(entry_points=False)
    first = start(registry, "stub", "vision", cwd=tmp_path, store=store, plugin_files=False)
    await first.turn("look", [IMAGE])
    await first.close()
    lines = [json.loads(x) for x in (store.root / f"{first.id}.jsonl").read_text().splitlines()]
    assert [r["type"] for r in lines[1:3]] == ["turn", "message"]  # the turn begins, its prompt
    assert lines[2]["content"] == [{"type": "text", "text": "look"}, IMAGE]
    stored = store.load(first.id)
    assert stored.title == "look"
    again = resume(registry, store, stored, plugin_files=False)
    assert again.conversation[0]["content"] == [{"type": "text", "text": "look"}, IMAGE]
    await again.close()


def test_a_stored_content_of_another_shape_is_read_as_empty(tmp_path: Path) -> None:
    store = Store(tmp_path)
    path = store.path("abc")
    rows = [
        {"type": "session", "id": "abc", "cwd": str(tmp_path)},
        {"type": "message", "role": "user", "content": [{"type": "image", "mimeType": 1}]},
        {"type": "message", "role": "assistant", "content": {"x": 1}},
        {"type": "message", "role": "user", "content": [{"type": "text", "text": "ok"}]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert [m["content"] for m in store.load("abc").messages] == [
        "",
        "",
        [{"type": "text", "text": "ok"}],
    ]


async def test_context_previews_an_image_and_elides_its_data(session) -> None:
    await session.turn("what is this?", [IMAGE])
    listing = context_text(session, None)
    assert any(line.startswith("  2. user: what is this?... (~") for line in listing.splitlines())
    shown = json.loads(context_text(session, "json"))
    assert shown[1]["content"][1] == {
        "type": "image",
        "mimeType": "image/png",
        "data": "[68 bytes of base64, not shown]",
    }
    assert context_text(session, "2") == "what is this?\n\n[image: image/png, 68 bytes]"
    assert session.context[1]["content"][1]["data"] == PNG64  # the real thing is kept


def test_text_of_any_content() -> None:
    assert text_of("plain") == "plain"
    assert text_of(None) == ""
    assert text_of(PARTS) == "what is this?\n\n[image: image/png, 68 bytes]"
