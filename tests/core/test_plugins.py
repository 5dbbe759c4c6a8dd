import sys
import textwrap

import pytest

from elelem_daemon.base.errors import UnknownProvider
from elelem_daemon.plugins import core_registry, load_entry_points, load_folder
from elelem_daemon.registry import Registry
from elelem_daemon.session import start


def write(folder, name, body):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(textwrap.dedent(body))


def test_builtins_register_through_the_plugin_door():
    registry = core_registry(entry_points=False)
    assert {o.name for o in registry.origins} >= {"providers", "files", "shell", "commands"}
    assert all(o.source == "builtin" and o.error is None for o in registry.origins)
    assert "stub" in registry.provider_names()


def test_plugin_files_load_in_sorted_order_user_then_project(tmp_path, isolated_home):
    log = tmp_path / "log"
    body = """
        def register(plugin):
            with open({log!r}, "a") as f:
                f.write("{name}\\n")
    """
    user = isolated_home / ".agents" / "plugins"
    project = tmp_path / "proj" / ".agents" / "plugins"
    for folder, names in ((user, ["b.py", "a.py"]), (project, ["zz_last.py", "c.py"])):
        for name in names:
            write(
                folder, name, body.format(log=str(log), name=f"{folder.parent.parent.name}/{name}")
            )
    start(core_registry(entry_points=False), cwd=tmp_path / "proj")
    home = isolated_home.name
    assert log.read_text().split() == [
        f"{home}/a.py",
        f"{home}/b.py",
        "proj/c.py",
        "proj/zz_last.py",
    ]


def test_project_plugins_can_be_turned_off(tmp_path):
    write(
        tmp_path / ".agents" / "plugins",
        "p.py",
        """
        def register(plugin):
            plugin.tool("mine")(lambda session, args: {})
    """,
    )
    registry = core_registry(entry_points=False)
    assert "mine" in start(registry, cwd=tmp_path).toolbox
    assert "mine" not in start(registry, cwd=tmp_path, project=False).toolbox


def test_a_broken_plugin_warns_and_the_rest_load(tmp_path, capsys):
    folder = tmp_path / "plugins"
    write(folder, "a_broken.py", "def register(plugin:\n")
    write(folder, "b_raises.py", "def register(plugin):\n    raise RuntimeError('nope')\n")
    write(folder, "c_good.py", "def register(plugin):\n    plugin.provider('good', object)\n")
    registry = load_folder(Registry(), folder, "project")
    err = capsys.readouterr().err
    assert f"elelem: failed to load plugin {folder / 'a_broken.py'}: " in err
    assert f"elelem: failed to load plugin {folder / 'b_raises.py'}: nope" in err
    assert capsys.readouterr().out == ""
    assert registry.provider_names() == ["good"]
    assert [o.error is None for o in registry.origins] == [False, False, True]


def test_entry_points_load_installed_packages(tmp_path, monkeypatch):
    pkg = tmp_path / "site"
    write(
        pkg,
        "elelem_hello.py",
        """
        def register(plugin):
            plugin.provider("hello", lambda model=None: "hello-provider")
    """,
    )
    dist = pkg / "elelem_hello-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: elelem-hello\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[elelem.plugins]\nhello = elelem_hello\n")
    monkeypatch.syspath_prepend(str(pkg))
    registry = load_entry_points(Registry())
    assert registry.build_provider("hello") == "hello-provider"
    assert registry.origins[0].source == "entry-point"


def test_unknown_provider_imports_the_package_once_then_explains(tmp_path, monkeypatch):
    write(
        tmp_path,
        "elelem_late.py",
        """
        def register(plugin):
            plugin.provider("late", lambda model=None: ("late", model))
    """,
    )
    write(tmp_path, "elelem_silent.py", "x = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = core_registry(entry_points=False)
    assert registry.build_provider("late", model="m") == ("late", "m")
    with pytest.raises(UnknownProvider) as err:
        registry.build_provider("silent")
    assert str(err.value) == 'elelem-silent did not register a provider named "silent"'
    with pytest.raises(UnknownProvider) as err:
        registry.build_provider("nosuch")
    assert str(err.value) == (
        'unknown provider: "nosuch". Available: anthropic, late, ollama, openai, stub.'
    )
    sys.modules.pop("elelem_late", None)


def test_unknown_provider_suggests_a_close_name_and_only_known_packages(monkeypatch):
    from elelem_daemon import registry as module

    registry = core_registry(entry_points=False)
    with pytest.raises(UnknownProvider) as err:
        registry.build_provider("opnai")
    assert str(err.value) == (
        'unknown provider: "opnai". Available: anthropic, ollama, openai, stub. '
        'Did you mean "openai"?'
    )
    monkeypatch.setitem(module.KNOWN_PACKAGES, "vouched", "elelem-vouched")
    with pytest.raises(UnknownProvider) as err:
        registry.build_provider("vouched")
    assert str(err.value) == (
        'unknown provider: "vouched". Available: anthropic, ollama, openai, stub. '
        "Run: pip install elelem-vouched"
    )


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("pkg.sub", "pkg.sub"),
        ("../pkg", "../pkg"),
        ("Pkg", "Pkg"),
        ("daemon", "daemon"),
        ("bad\nname\x1b[2J", "bad\\nname\\u001b[2J"),
        ("p" * 300, "p" * 64 + "..."),
    ],
)
def test_a_name_unlike_a_package_is_never_imported(tmp_path, monkeypatch, name, shown):
    folder = tmp_path / "elelem_pkg"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "sub.py").write_text("raise SystemExit('imported')\n")
    write(tmp_path, "elelem_Pkg.py", "raise SystemExit('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    imported = set(sys.modules)
    with pytest.raises(UnknownProvider) as err:
        core_registry(entry_points=False).build_provider(name)
    assert str(err.value) == (
        f'unknown provider: "{shown}". Available: anthropic, ollama, openai, stub.'
    )
    assert not {m for m in set(sys.modules) - imported if m.startswith("elelem_")}


def sugar_session(tmp_path):
    registry = Registry()
    plugin = registry.plugin("demo")
    plugin.provider(
        "stub",
        lambda model=None: __import__("elelem_daemon.providers.stub", fromlist=["x"]).StubProvider(
            model
        ),
    )
    seen = []

    @plugin.tool("hello", "Say hello", {"name": {"type": "string"}}, ["name"], ["hi"])
    def hello(session, args):
        return {"greeting": f"hello {args['name']} from {session.cwd.name}"}

    @plugin.before("hello")
    def before(session, args):
        seen.append(("before", args["name"]))

    @plugin.after()
    async def after(session, args, result, tool_name):
        seen.append(("after", tool_name, result["greeting"]))

    @plugin.command("greet", "Greet", completions=["world"])
    def greet(session, args):
        session.output.say(f"hello {args}")

    @plugin.setup
    def mark(session):
        seen.append("setup")

    session = start(registry, cwd=tmp_path, plugin_files=False)
    assert seen == ["setup"]
    assert session.commands.completions_for("greet", "w") == ["world"]
    return session, seen


async def test_sugar_tools_hooks_and_commands_work(tmp_path):
    session, seen = sugar_session(tmp_path)
    result = await session.toolbox.run("hi", {"name": "you"})
    assert result.payload == {"greeting": f"hello you from {tmp_path.name}"}
    assert seen[1:] == [("before", "you"), ("after", "hello", result.payload["greeting"])]
    assert (await session.command("/greet world")).output == "hello world"


def test_registering_a_name_again_replaces_it():
    registry = Registry()
    registry.plugin("a").provider("p", lambda model=None: 1)
    registry.plugin("b").provider("p", lambda model=None: 2)
    assert registry.build_provider("p") == 2


def test_factories_for_input_and_output(tmp_path):
    registry = core_registry(entry_points=False).child()
    made = []
    plugin = registry.plugin("io")
    plugin.output(
        lambda: made.append("output") or __import__("elelem_daemon.io", fromlist=["x"]).NullOutput()
    )
    plugin.input(
        lambda commands: (
            made.append(("input", commands is not None))
            or __import__("elelem_daemon.io", fromlist=["x"]).NullInput()
        )
    )
    from elelem_daemon.faces.terminal.chat import console

    start(registry, cwd=tmp_path, make_io=console(keep_stdout=False))  # the terminal's
    assert made == ["output", ("input", True)]
    made.clear()
    start(registry, cwd=tmp_path)  # faces other than the terminal bring their own I/O
    assert made == []


def test_a_tool_has_the_kind_it_registers_with(tmp_path):
    registry = core_registry(entry_points=False).child()
    plugin = registry.plugin("kinds")
    plugin.tool("fetch_page", "Fetch a page", kind="fetch")(lambda session, args: {})
    plugin.tool("plain")(lambda session, args: {})
    with pytest.raises(ValueError, match="unknown tool kind: 'web'. Kinds: read, edit"):
        plugin.tool("bad", kind="web")
    session = start(registry, cwd=tmp_path, plugin_files=False)
    kinds = {tool.name: tool.kind for tool in session.toolbox}
    assert (kinds["fetch_page"], kinds["plain"], kinds["read"], kinds["execute"]) == (
        "fetch",
        "other",
        "read",
        "execute",
    )
    assert session.toolbox.resolve("nope").kind == "other"  # the NullTool
