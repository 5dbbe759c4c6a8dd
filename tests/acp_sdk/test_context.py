"""ACP content blocks as the core's attachments (issue 21): the official Python SDK
client sends `resource`, `resource_link` and `image` blocks to the real
`elelem daemon --acp -p openai`, and a real local model server (tests/support/model.py)
records the exact user message it receives. A link to a file the editor has open is
read through the editor (its unsaved text); an image to a model without vision is
refused before anything is sent."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
from acp_editor import TIMEOUT, Editor, acp, daemon
from support import model as models
from support.model import Model

pytestmark = pytest.mark.e2e

PNG64 = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 24).decode()


@pytest.fixture
def model() -> Iterator[Model]:
    yield from models.serving()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("on disk\n")
    (folder / "notes.md").write_text("# notes\n")
    return folder


async def prompt(conn, session_id: str, *blocks):
    import asyncio

    async with asyncio.timeout(TIMEOUT):
        return await conn.prompt(session_id=session_id, prompt=list(blocks))


async def test_resource_link_image_and_mention_reach_the_model(
    tmp_path: Path, project: Path, model: Model
) -> None:
    editor = Editor()
    app = project / "src" / "app.py"
    editor.buffers[str(app)] = "unsaved in the editor\n"  # the link reads the editor's text
    args = ["daemon", "--acp", "-p", "openai"]
    async with daemon(tmp_path, editor, fs=True, args=args, env=models.env(model, {})) as (
        conn,
        _,
    ):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        embedded = acp.embedded_text_resource(
            (project / "lib.py").as_uri(), "def lib(): ...\n", mime_type="text/x-python"
        )
        answer = await prompt(
            conn,
            sid,
            acp.text_block("compare with @notes.md"),
            acp.resource_link_block("app.py", app.as_uri()),
            acp.resource_block(embedded),
            acp.image_block(PNG64, "image/png"),
        )
    assert answer.stop_reason == "end_turn"
    assert model.user() == [
        {
            "type": "text",
            "text": "compare with @notes.md\n\n"
            '<attachment type="file" path="notes.md">\n# notes\n</attachment>\n\n'
            '<attachment type="file" path="src/app.py">\nunsaved in the editor\n</attachment>\n\n'
            '<attachment type="file" path="lib.py">\ndef lib(): ...\n</attachment>',
        },
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
    ]


async def test_an_image_to_a_model_without_vision_is_refused_before_sending(
    tmp_path: Path, project: Path, model: Model
) -> None:
    editor = Editor()
    args = ["daemon", "--acp", "-p", "openai"]
    env = models.env(model, {}, OPENAI_VISION="0")
    async with daemon(tmp_path, editor, args=args, env=env) as (conn, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        with pytest.raises(acp.RequestError) as refused:
            await prompt(conn, sid, acp.text_block("what?"), acp.image_block(PNG64, "image/png"))
        assert refused.value.code == -32602
        assert refused.value.data["kind"] == "invalid_attachment"
        assert refused.value.data["reason"] == "vision"
        assert model.posts == 0
        await prompt(conn, sid, acp.text_block("still here"))
    assert model.user() == "still here"
