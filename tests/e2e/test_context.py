"""The editor's context through the real daemon (issue 21): `session/turn` attachments
and `@` mentions, each as the exact user message a real local model server receives
(an OpenAI-style stream on 127.0.0.1 that records every request); caps and refusals
(`invalid_attachment`, nothing sent or kept, no turn number used); `session/complete`
of `@` paths; `editor/state` in the next fetch's system prompt and never in the kept
or stored conversation."""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import model as models
from support.model import Model

from elelem_daemon.jsonrpc.client import Client, RpcError

from .conftest import within

pytestmark = pytest.mark.e2e

APP = "def main():\n    return x\n"
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 24
PNG64 = base64.b64encode(PNG).decode()


def span(line: int, character: int, end: int, end_character: int) -> dict[str, Any]:
    return {
        "start": {"line": line, "character": character},
        "end": {"line": end, "character": end_character},
    }


@pytest.fixture
def model() -> Iterator[Model]:
    yield from models.serving()


@pytest.fixture
def project(workdir: Path) -> Path:
    (workdir / "src").mkdir()
    (workdir / "src" / "app.py").write_text(APP)
    (workdir / "src" / "util.py").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    (workdir / "notes.md").write_text("# notes\n")
    return workdir


@pytest.fixture
async def daemon(spawn: Any, env: dict[str, str], model: Model, project: Path) -> Any:
    """A client of `elelem daemon -p openai` whose model is `model`."""

    async def start(*, editor_state: bool = False, **more: str) -> tuple[Client, str]:
        client = await spawn("-p", "openai", env=models.env(model, env, **more))
        caps = {"editorState": True} if editor_state else {}
        await within(client.initialize(**caps), 30)
        session = await within(client.new_session(cwd=str(project)), 30)
        assert session["provider"] == "openai"
        return client, session["sessionId"]

    return start


async def test_each_attachment_type_is_one_block_of_the_user_message(
    daemon: Any, model: Model
) -> None:
    client, sid = await daemon()
    cases: list[tuple[str, list[dict[str, Any]], str]] = [
        (
            "explain",
            [{"type": "file", "path": "src/app.py"}],
            f'explain\n\n<attachment type="file" path="src/app.py">\n{APP}</attachment>',
        ),
        (
            "these lines",
            [{"type": "file", "path": "src/util.py", "range": span(2, 0, 4, 0)}],
            'these lines\n\n<attachment type="file" path="src/util.py" lines="3-4">\n'
            "line 3\nline 4\n</attachment>",
        ),
        (
            "what is here",
            [{"type": "folder", "path": "src"}],
            'what is here\n\n<attachment type="folder" path="src/">\n'
            "src/app.py\nsrc/util.py\n</attachment>",
        ),
        (
            "this",
            [
                {
                    "type": "selection",
                    "path": "src/app.py",
                    "range": span(1, 4, 1, 12),
                    "text": "return x",
                }
            ],
            'this\n\n<attachment type="selection" path="src/app.py" lines="2-2">\n'
            "return x\n</attachment>",
        ),
        (
            "fix",
            [
                {
                    "type": "diagnostics",
                    "path": "src/app.py",
                    "items": [
                        {
                            "range": span(1, 11, 1, 12),
                            "severity": "error",
                            "message": '"x" is not defined',
                            "source": "pyright",
                        }
                    ],
                }
            ],
            'fix\n\n<attachment type="diagnostics" path="src/app.py">\n'
            'src/app.py:2:12: error: "x" is not defined (pyright)\n</attachment>',
        ),
        (
            "explain it",
            [{"type": "symbol", "name": "main", "path": "src/app.py", "range": span(0, 4, 1, 12)}],
            'explain it\n\n<attachment type="symbol" name="main" path="src/app.py" lines="1-2">\n'
            f"{APP}</attachment>",
        ),
        (
            "see @src/util.py:2-3 and @notes.md",
            [],
            "see @src/util.py:2-3 and @notes.md\n\n"
            '<attachment type="file" path="src/util.py" lines="2-3">\nline 2\nline 3\n'
            '</attachment>\n\n<attachment type="file" path="notes.md">\n# notes\n</attachment>',
        ),
    ]
    for n, (text, attachments, expected) in enumerate(cases, 1):
        answer = await within(client.turn(sid, text, attachments=attachments), 30)
        assert (answer["reply"], answer["turnId"]) == ("ok", n)
        assert model.user() == expected, text
    context = await client.context(sid)
    kept = [m["content"] for m in context if m["role"] == "user"]
    assert kept == [expected for _, _, expected in cases]  # what the model read, kept


async def test_an_image_goes_to_the_model_as_image_content(daemon: Any, model: Model) -> None:
    client, sid = await daemon()
    image = {"type": "image", "mimeType": "image/png", "data": PNG64}
    await within(client.turn(sid, "what is this?", attachments=[image]), 30)
    assert model.user() == [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
    ]
    kept = [m for m in await client.context(sid) if m["role"] == "user"][-1]["content"]
    assert kept == [
        {"type": "text", "text": "what is this?"},
        {"type": "image", "mimeType": "image/png", "data": PNG64},
    ]


async def refused(client: Client, sid: str, model: Model, text: str, attachments: Any) -> Any:
    """The turn fails with invalid_attachment; nothing was sent or kept."""
    posts, context = model.posts, await client.context(sid)
    with pytest.raises(RpcError) as caught:
        await within(client.turn(sid, text, attachments=attachments), 30)
    assert (caught.value.code, caught.value.kind) == (-32602, "invalid_attachment")
    assert model.posts == posts
    assert await client.context(sid) == context
    return caught.value


async def test_refusals_send_nothing_and_use_no_turn(
    daemon: Any, model: Model, project: Path
) -> None:
    (project / "app.bin").write_bytes(b"\x7fELF\0\0\0binary")
    (project / "big.txt").write_text("x" * 5000)
    client, sid = await daemon(ELELEM_FILE_CAP="4096")
    binary = await refused(client, sid, model, "look", [{"type": "file", "path": "app.bin"}])
    assert binary.data == {
        "kind": "invalid_attachment",
        "reason": "binary",
        "type": "file",
        "index": 0,
        "field": "attachments[0]",
    }
    assert binary.message == "attachments[0] (file): app.bin is a binary file, not text"
    big = await refused(
        client,
        sid,
        model,
        "look",
        [{"type": "file", "path": "notes.md"}, {"type": "file", "path": "big.txt"}],
    )
    assert (big.data["reason"], big.data["field"]) == ("too_large", "attachments[1]")
    missing = await refused(client, sid, model, "x", [{"type": "file", "path": "nope.py"}])
    assert missing.data["reason"] == "not_found"
    odd = await refused(client, sid, model, "x", [{"type": "video", "path": "a"}])
    assert odd.data["reason"] == "invalid" and "type must be one of" in odd.message
    backwards = [{"type": "file", "path": "notes.md", "range": span(3, 0, 1, 0)}]
    assert (await refused(client, sid, model, "x", backwards)).data["reason"] == "invalid"
    proc = await refused(client, sid, model, "x", [{"type": "file", "path": "/proc/self/environ"}])
    assert proc.data["reason"] == "refused"
    bad = {"type": "image", "mimeType": "image/png", "data": base64.b64encode(b"GIF89a..").decode()}
    assert (await refused(client, sid, model, "x", [bad])).data["reason"] == "invalid"
    too_many = [{"type": "file", "path": "notes.md", "range": span(n, 0, n, 1)} for n in range(33)]
    assert (await refused(client, sid, model, "x", too_many)).data["reason"] == "too_many"
    with pytest.raises(RpcError) as shape:
        await client.request("session/turn", {"sessionId": sid, "text": "x", "attachments": {}})
    assert shape.value.kind == "invalid_params"
    assert shape.value.data["errors"] == ["attachments: expected an array, got an object"]
    answer = await within(client.turn(sid, "after all that"), 30)
    assert answer["turnId"] == 1  # the refused turns used no number


async def test_an_image_to_a_model_without_vision_is_refused_before_sending(
    daemon: Any, model: Model
) -> None:
    client, sid = await daemon(OPENAI_VISION="0")
    image = {"type": "image", "mimeType": "image/png", "data": PNG64}
    error = await refused(client, sid, model, "what is this?", [image])
    assert error.data["reason"] == "vision"
    assert "the openai provider (model local) does not accept images" in error.message


async def test_a_turn_with_attachments_on_a_busy_session_is_refused(
    spawn: Any, project: Path
) -> None:
    client = await spawn()
    await within(client.initialize())
    sid = (await within(client.new_session(cwd=str(project))))["sessionId"]
    turn = await client.start_turn(sid, "!stream 100000 5")
    with pytest.raises(RpcError) as busy:
        await client.turn(sid, "x", attachments=[{"type": "file", "path": "notes.md"}])
    assert busy.value.kind == "session_busy"
    await turn.cancel()
    assert (await within(turn.result()))["stopReason"] == "cancelled"


async def test_complete_gives_at_paths_honouring_gitignore_from_the_first(
    spawn: Any, project: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text("build/\n")
    (project / "build").mkdir()
    (project / "build" / "out.py").write_text("")
    (project / "src" / "api").mkdir()
    (project / "src" / "api" / "routes.py").write_text("")
    client = await spawn()
    await within(client.initialize())
    sid = (await within(client.new_session(cwd=str(project))))["sessionId"]
    assert await within(client.complete(sid, "see @")) == ["@.gitignore", "@notes.md", "@src/"]
    assert "@build/" not in await within(client.complete(sid, "see @b"))
    assert await within(client.complete(sid, "see @src/a")) == ["@src/api/", "@src/app.py"]
    assert await within(client.complete(sid, "@rou")) == ["@src/api/routes.py"]
    assert await within(client.complete(sid, "@out")) == []  # ignored by .gitignore


async def test_editor_state_goes_in_the_newest_prompt_and_the_prefix_stays_byte_stable(
    daemon: Any, model: Model, env: dict[str, str], project: Path
) -> None:
    client, sid = await daemon(editor_state=True)
    await within(client.turn(sid, "first"), 30)
    system = model.sent()[0]
    assert system["role"] == "system" and "open file" not in system["content"]
    await client.editor_state(
        sid,
        activeFile="src/app.py",
        selection={"range": span(1, 4, 1, 12), "text": "return x"},
        visibleRanges=[span(0, 0, 2, 0)],
        diagnostics=[{"range": span(1, 11, 1, 12), "severity": "warning", "message": "x?"}],
    )
    await within(client.turn(sid, "second"), 30)
    assert model.sent()[0] == system  # the system prompt never moves
    assert model.user() == (
        "<context-note>\n"
        "The user's editor, as it was when this message was sent (it changes as they work; "
        "it is not part of the conversation):\n"
        "- open file: src/app.py\n"
        "- visible lines: 1-2\n"
        "- selected: lines 2-2\n"
        '<attachment type="selection" path="src/app.py" lines="2-2">\nreturn x\n</attachment>\n'
        "- problems: 1\n"
        '<attachment type="diagnostics">\nsrc/app.py:2:12: warning: x?\n</attachment>'
        "\n</context-note>\n\nsecond"
    )
    # a malformed state is ignored (the last good one stays); a new one replaces it whole
    await client.editor_state(sid, activeFile=7)
    await client.editor_state(activeFile="notes.md")  # no sessionId: every open session
    await within(client.turn(sid, "third"), 30)
    assert "- open file: notes.md\n" in model.user() and "src/app.py" not in model.user()
    for n in range(4, 7):  # an update before every turn
        await client.editor_state(sid, activeFile="src/util.py", visibleRanges=[span(n, 0, n, 0)])
        await within(client.turn(sid, f"turn {n}"), 30)
    bodies = [r.body for r in model.requests if r.method == "POST"]
    for before, after in zip(bodies, bodies[1:], strict=False):
        assert before.endswith(b"]}")  # the messages close the body
        assert after.startswith(before[:-2] + b",")  # each request only grows at its end
    context = await client.context(sid)
    assert "open file: notes.md" in json.dumps(context[5])  # session/context: what was sent
    assert all("open file" not in json.dumps(m) for m in context[:5] if m["role"] != "user")
    stored = Path(env["XDG_STATE_HOME"]) / "elelem" / "sessions" / f"{sid}.jsonl"
    await client.close()
    text = stored.read_text()
    assert "first" in text and "third" in text
    assert "open file" not in text and "The user's editor" not in text


async def test_editor_state_without_the_capability_is_ignored(daemon: Any, model: Model) -> None:
    client, sid = await daemon()
    await client.editor_state(sid, activeFile="src/app.py")
    await asyncio.sleep(0.1)
    await within(client.turn(sid, "hi"), 30)
    assert "open file" not in model.sent()[0]["content"]
