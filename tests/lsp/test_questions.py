"""Stop and ask, over LSP: cancelling a turn's progress (or `elelem.cancel`) kills its
running command, process group and all; a permission question is a
`window/showMessageRequest` where the client declares it, and elsewhere a rule set
ahead decides, or the call is refused with a message the model reads and the user sees
once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from lsprotocol import types as t
from support.lsp import Editor, call, capabilities
from support.model import Model, reply

SLEEPER = "echo $$ > pid; exec sleep 300"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purposes
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def tool_results(model: Model) -> list[str]:
    return [m["content"] for m in model.sent(-1) if m["role"] == "tool"]


@pytest.mark.parametrize("how", ["progress", "command"])
async def test_cancel_kills_the_running_command(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path, how: str
) -> None:
    model.queue(call("execute", {"command": SLEEPER}), reply("never read"))
    await editor.start(environ, "--allow", "execute")
    await editor.initialize(capabilities(progress=how == "progress"))
    uri = editor.open("a.py")
    await editor.execute("elelem.ask", "run the sleeper", uri, 0)
    pid_file = folder / "pid"
    await editor.until(lambda: pid_file.exists() and pid_file.read_text().strip())
    pid = int(pid_file.read_text())
    assert alive(pid)
    if how == "progress":
        token = editor.of("create")[0].token
        editor.client.window_work_done_progress_cancel(t.WorkDoneProgressCancelParams(token=token))
    else:
        assert (await editor.execute("elelem.cancel"))["cancelled"] is True
    await editor.until(editor.ended)
    await editor.until(lambda: not alive(pid))
    assert (await editor.execute("elelem.cancel"))["cancelled"] is False  # nothing runs now


async def test_a_permission_question_is_a_show_message_request(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    model.queue(call("execute", {"command": "echo asked > out"}), reply("ran it"))
    await editor.start(environ)
    await editor.initialize(capabilities())
    editor.answer = lambda params: "allow"
    uri = editor.open("a.py")
    await editor.execute("elelem.ask", "write out", uri, 0)
    await editor.until(editor.ended)
    asked = editor.of("showMessageRequest")
    assert len(asked) == 1
    assert "echo asked > out" in asked[0].message
    assert [a.title for a in asked[0].actions][:1] == ["allow"]
    assert (folder / "out").read_text() == "asked\n"


async def test_a_refused_answer_refuses(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    model.queue(call("execute", {"command": "echo asked > out"}), reply("ok"))
    await editor.start(environ)
    await editor.initialize(capabilities())
    editor.answer = lambda params: "deny"
    await editor.execute("elelem.ask", "write out")
    await editor.until(editor.ended)
    assert not (folder / "out").exists()
    assert "User denied permission: execute" in tool_results(model)[-1]


async def test_without_questions_a_rule_set_ahead_decides(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    model.queue(call("execute", {"command": "touch ruled"}), reply("ok"))
    await editor.start(environ, "--allow", "execute:touch*")
    await editor.initialize(capabilities(questions=False))  # Helix: no showMessageRequest
    await editor.execute("elelem.ask", "write out")
    await editor.until(editor.ended)
    assert editor.of("showMessageRequest") == []
    assert (folder / "ruled").exists()


async def test_without_questions_or_rules_the_call_is_refused_and_said_once(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    model.queue(
        call("execute", {"command": "echo no > out"}, "call_1"),
        call("execute", {"command": "echo no > out2"}, "call_2"),
        reply("ok"),
    )
    await editor.start(environ)
    await editor.initialize(capabilities(questions=False))
    await editor.execute("elelem.ask", "write out")
    await editor.until(editor.ended)
    assert editor.of("showMessageRequest") == []
    assert not (folder / "out").exists() and not (folder / "out2").exists()
    results = tool_results(model)
    assert all("Permission denied: execute" in r for r in results[-2:])
    told = [p.message for p in editor.of("showMessage") if "could not ask" in p.message]
    assert len(told) == 1  # the user sees it once
    assert "--allow" in told[0]


async def test_project_rules_apply_once_the_folder_is_trusted(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    """`.agents/permissions` is the folder's: it loads once the trust question is
    answered yes, and then its deny holds without a question."""
    (folder / ".agents").mkdir()
    (folder / ".agents" / "permissions").write_text("execute deny\n")
    model.queue(call("execute", {"command": "echo trusted > out"}), reply("ok"))
    await editor.start(environ)
    await editor.initialize(capabilities())
    answers = []

    def answer(params: object) -> str:
        message = getattr(params, "message", "")
        answers.append(message)
        return "yes, this session" if "Trust" in message else "allow"

    editor.answer = answer
    await editor.execute("elelem.ask", "write out")
    await editor.until(editor.ended)
    assert "Trust the plugins and rules" in answers[0]
    assert len(answers) == 1  # trusted: the folder's rule denied it unasked
    assert not (folder / "out").exists()
    assert "Permission denied: execute" in tool_results(model)[-1]


def server_pid(folder: Path) -> int:
    """The `elelem lsp` process working in folder."""
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cwd").resolve() == folder.resolve():
                if b"elelem_daemon\x00lsp" in (entry / "cmdline").read_bytes():
                    return int(entry.name)
        except OSError:
            continue
    raise AssertionError("no elelem lsp process")


async def test_sigterm_ends_the_server_and_kills_the_running_command(
    editor: Editor, environ: dict[str, str], model: Model, folder: Path
) -> None:
    import signal

    model.queue(call("execute", {"command": SLEEPER}), reply("never read"))
    await editor.start(environ, "--allow", "execute")
    await editor.initialize(capabilities())
    await editor.execute("elelem.ask", "run the sleeper")
    pid_file = folder / "pid"
    await editor.until(lambda: pid_file.exists() and pid_file.read_text().strip())
    sleeper, server = int(pid_file.read_text()), server_pid(folder)
    os.kill(server, signal.SIGTERM)
    await editor.until(lambda: not alive(sleeper) and not alive(server))
    stored = Path(environ["XDG_STATE_HOME"]) / "elelem" / "sessions"
    kept = "".join(path.read_text() for path in stored.glob("*.jsonl"))
    assert "[cancelled]" in kept  # the turn was ended, not cut off: it is stored so
