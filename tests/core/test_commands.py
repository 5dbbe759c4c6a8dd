import json

from elelem_daemon.commands import Commands
from elelem_daemon.control.editing import tokens
from elelem_daemon.session import CommandResult


async def test_register_run_names_and_completions():
    commands = Commands()
    ran = []
    commands.register("provider", "Switch provider", ["anthropic", "openai"], ran.append)
    assert await commands.run("/provider", "openai") is True
    assert await commands.run("nope") is False
    assert ran == ["openai"]
    assert commands.names() == ["/provider"]
    assert list(commands) == [("/provider", "Switch provider")]
    assert commands.completions_for("provider", "op") == ["openai"]
    assert Commands.parse("/provider  openai ") == ("provider", "openai")
    assert Commands.parse("/clear") == ("clear", None)


async def test_unknown_command_lists_the_known_ones(session):
    out = (await session.command("/nope")).output
    assert out.startswith("error: unknown command: /nope. Commands: /help /context /clear")


async def test_help_lists_every_command(session):
    out = (await session.command("/help")).output
    assert "/context     Show conversation context" in out.splitlines()
    assert len(out.splitlines()) == len(session.commands.names())


async def test_context_shows_exactly_what_is_kept(session):
    await session.turn("hi")
    assert (await session.command("/context")).output == (
        f"  1. system: You are a terminal coding agent.... (~{tokens(session.context[0])} tokens)\n"
        "  2. user: hi (~1 tokens)\n"
        "  3. assistant: done. (~2 tokens)"
    )
    raw = json.loads((await session.command("/context json")).output)
    assert raw == session.context
    assert (await session.command("/context 2")).output == "hi"
    assert (await session.command("/context x")).output == (
        "  Usage: /context [json|<number>|delete <numbers>|edit <number>]"
    )


async def test_clear_empties_the_conversation(session):
    await session.turn("hi")
    assert (await session.command("/clear")).output == "  → context cleared"
    assert len(session.conversation) == 0


async def test_tools_lists_params_and_aliases(session):
    out = (await session.command("/tools")).output
    assert "- **read** - Read file" in out
    assert "  - `path` (string, required) - File path, relative to the working directory" in out
    assert "  - aliases: bash, sh, exec\n" in out
    assert "<|channel|>" not in out  # hidden: still an alias, not a name to show


async def test_a_hidden_alias_still_resolves(session):
    assert session.toolbox.resolve("execute<|channel|>").name == "execute"
    assert session.toolbox.resolve("write<|channel|>").name == "write"


async def test_provider_and_model(session):
    available = "  → available: anthropic, ollama, openai, stub (active)"
    assert (await session.command("/provider")).output == available
    assert (await session.command("/provider stub")).output == "  → switched to stub"
    assert (await session.command("/model")).output == "  → model: stub"
    assert (await session.command("/model tiny")).output == "  → model: tiny"
    assert session.provider.model == "tiny"
    out = (await session.command("/provider nosuch")).output
    assert out == 'error: unknown provider: "nosuch". Available: anthropic, ollama, openai, stub.'
    assert session.provider_name == "stub"


async def test_model_marks_the_active_one_among_the_providers_models(session):
    session.provider.models = ["tiny", "stub", "big"]
    assert (await session.command("/model")).output == (
        "  → model: stub\n  → available: tiny, stub (active), big"
    )
    assert session.commands.completions_for("model", "t") == ["tiny"]


async def test_compact_summarises_into_one_message(session):
    await session.turn("hi")
    assert (await session.command("/compact")).output == "  → compacted: 2 messages became 1"
    ((message),) = list(session.conversation)
    assert message["role"] == "user" and message["content"].startswith("Context: done.\n\n")
    assert "<user-words>\nhi\n</user-words>" in message["content"]  # kept word for word


async def test_a_failed_compact_keeps_the_conversation(session):
    from support.outputs import Scripted

    from elelem_daemon.base.errors import ProviderError

    await session.turn("hi")
    session.agent.provider = Scripted(ProviderError("openai 400: context size exceeded"))
    out = (await session.command("/compact")).output
    assert out.splitlines() == [
        "error: openai 400: context size exceeded",
        "compact failed: the conversation is kept (/clear starts over)",
    ]
    assert list(session.conversation) == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "done."},
    ]  # the failed summary turn added nothing: no prompt, no `Error:` reply


async def test_a_failed_compact_tells_no_listener(session):
    """Nothing reaches the store: the summary turn runs aside, heard by no listener."""
    from support.outputs import Scripted

    from elelem_daemon.base.errors import ProviderError

    await session.turn("hi")
    heard = []
    session.conversation.listeners.append(lambda event, message: heard.append(event))
    session.agent.provider = Scripted(ProviderError("connection refused"))
    await session.command("/compact")
    assert heard == []
    session.agent.provider = Scripted([{"type": "saying", "text": "sum"}])
    assert (await session.command("/compact")).output == "  → compacted: 2 messages became 1"
    assert heard == ["clear", "add"]  # a success: the history replaced, once


async def test_a_cut_off_summary_does_not_replace_the_history(session):
    from support.outputs import Scripted

    await session.turn("hi")
    session.agent.provider = Scripted(
        [{"type": "saying", "text": "half a summ"}, {"type": "stop", "reason": "max_tokens"}]
    )
    out = (await session.command("/compact")).output
    assert out.splitlines() == [
        "error: the summary was cut off by the model's token limit",
        "compact failed: the conversation is kept (/clear starts over)",
    ]
    assert len(session.conversation) == 2


async def test_reload_rereads_plugin_files(session, workdir):
    folder = workdir / ".agents" / "plugins"
    folder.mkdir(parents=True)
    (folder / "p.py").write_text(
        "def register(plugin):\n    plugin.tool('fresh')(lambda session, args: {})\n"
    )
    assert "fresh" not in session.toolbox
    assert (await session.command("/reload")).output == "  → reloaded"
    assert "fresh" in session.toolbox and "read" in session.toolbox


async def test_exit_marks_the_session(session):
    result = await session.command("/exit")
    assert result == CommandResult("", exit=True)  # the client decides what that means
    assert (await session.command("/help")).exit is False


async def test_a_failing_command_is_one_error_line(session):
    def boom(args):
        raise RuntimeError("kaput")

    session.commands.register("boom", "", None, boom)
    assert (await session.command("/boom")).output == "error: kaput"


def test_complete_commands_arguments_and_files(tmp_path):
    commands = Commands()
    commands.register("provider", "", ["anthropic", "openai"], print)
    commands.register("context", "", ["json"], print)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("")
    (tmp_path / "setup.py").write_text("")
    assert commands.complete("/pro") == ["/provider"]
    assert commands.complete("/") == ["/provider", "/context"]
    assert commands.complete("/provider o") == ["openai"]
    assert commands.complete("look at s", tmp_path) == ["setup.py", "src/"]
    assert commands.complete("src/a", tmp_path) == ["src/app.py"]
    assert commands.complete("nothing/x", tmp_path) == []
